/* layers.h: forward and backward kernels of every layer (llm.c style: plain
 * functions over float arrays, shapes in the comment, no allocation).
 * Conventions: activations are row-major with the batch first (images NCHW,
 * sequences (B,T,C)). Backward kernels OVERWRITE the input gradient dinp
 * (skipped when dinp is NULL: nothing upstream needs it) and ACCUMULATE into
 * parameter gradients (so tied weights and micro-batch accumulation work;
 * zero them once per step). All matrix products go through cblas_sgemm. */
#ifndef TT_LAYERS_H
#define TT_LAYERS_H

#include <stdint.h>

/* ---- linear ---- */
/* inp (B,C), w (OC,C), bias (OC) or NULL -> out (B,OC) */
void linear_forward(float *out, const float *inp, const float *w, const float *bias,
                    int B, int C, int OC);
/* dout (B,OC) -> dinp (B,C); dw (OC,C) += ; dbias (OC) += (may be NULL) */
void linear_backward(float *dinp, float *dw, float *dbias, const float *dout,
                     const float *inp, const float *w, int B, int C, int OC);

/* linear followed by relu in one pass over the output (the MLP fast path):
 * out (B,OC) = max(inp W^T + bias, 0) */
void linear_relu_forward(float *out, const float *inp, const float *w, const float *bias,
                         int B, int C, int OC);
/* dout (B,OC) is overwritten with the gradient before the relu; out as forward */
void linear_relu_backward(float *dinp, float *dw, float *dbias, float *dout, const float *out,
                          const float *inp, const float *w, int B, int C, int OC);

/* Output positions of a K-wide window at this stride over in + 2 pad inputs;
 * 0 when the window does not fit (C division would round -1/2 up to 0). */
static inline int window_out(int in, int K, int stride, int pad)
{
    return in + 2 * pad >= K ? (in + 2 * pad - K) / stride + 1 : 0;
}

/* ---- conv2d (im2col + sgemm; 1x1 stride-1 convolutions skip im2col) ---- */
typedef struct conv_shape {
    int C, H, W;        /* input channels and size */
    int OC, K, stride, pad;
    int OH, OW;         /* output size, from conv_shape_init */
} conv_shape;
void conv_shape_init(conv_shape *s, int C, int H, int W, int OC, int K, int stride, int pad);
/* Floats of the per-image im2col scratch (0 when the conv needs none). */
long conv2d_scratch_floats(const conv_shape *s);
/* inp (B,C,H,W), w (OC,C,K,K), bias (OC) or NULL -> out (B,OC,OH,OW); col: scratch */
void conv2d_forward(float *out, const float *inp, const float *w, const float *bias,
                    float *col, const conv_shape *s, int B);
/* dout (B,OC,OH,OW) -> dinp (B,C,H,W); dw (OC,C,K,K) +=; dbias (OC) += */
void conv2d_backward(float *dinp, float *dw, float *dbias, const float *dout,
                     const float *inp, const float *w, float *col, const conv_shape *s, int B);

/* ---- batchnorm2d ---- */
/* inp (B,C,HW), gamma/beta (C) -> out (B,C,HW). Train: normalises with the batch
 * statistics, saves mean/rstd (C) and updates running mean/var (C, unbiased var,
 * PyTorch momentum convention). Eval: uses the running statistics. relu: a
 * following ReLU fused into the output pass (ResNet's bn + relu). */
void batchnorm_forward(float *out, float *mean, float *rstd, float *run_mean, float *run_var,
                       const float *inp, const float *gamma, const float *beta,
                       int B, int C, int HW, int train, float momentum, float eps, int relu);
/* dout (B,C,HW) -> dinp; dgamma, dbeta (C) +=. mean/rstd as saved by forward.
 * out: the forward output when the ReLU is fused (masks dout), else NULL. */
void batchnorm_backward(float *dinp, float *dgamma, float *dbeta, const float *dout,
                        const float *out, const float *inp, const float *gamma,
                        const float *mean, const float *rstd, int B, int C, int HW, int train);

/* ---- elementwise activations, n elements ---- */
void relu_forward(float *out, const float *inp, long n);
void relu_backward(float *dinp, const float *dout, const float *out, long n);
/* GELU with erf (BERT, ViT) */
void gelu_forward(float *out, const float *inp, long n);
void gelu_backward(float *dinp, const float *dout, const float *inp, long n);
void tanh_forward(float *out, const float *inp, long n);
void tanh_backward(float *dinp, const float *dout, const float *out, long n);
/* inverted dropout with probability p; mask (n) saves 0 or 1/(1-p); the mask of
 * element i depends only on (seed, i) */
void dropout_forward(float *out, float *mask, const float *inp, long n, float p, uint64_t seed);
void dropout_backward(float *dinp, const float *dout, const float *mask, long n);
/* residual add: out = a + b (n); backward writes da = db = dout */
void add_forward(float *out, const float *a, const float *b, long n);
/* out = max(a + b, 0) (ResNet's block output); backward: relu_backward, then da = db */
void add_relu_forward(float *out, const float *a, const float *b, long n);

/* ---- pooling ---- */
typedef struct pool_shape {
    int C, H, W, K, stride, pad, OH, OW;
} pool_shape;
void pool_shape_init(pool_shape *s, int C, int H, int W, int K, int stride, int pad);
/* inp (B,C,H,W) -> out (B,C,OH,OW); argmax (B,C,OH,OW) saves the input index */
void maxpool_forward(float *out, int *argmax, const float *inp, const pool_shape *s, int B);
void maxpool_backward(float *dinp, const float *dout, const int *argmax, const pool_shape *s, int B);
/* inp (B,C,HW) -> out (B,C) */
void gap_forward(float *out, const float *inp, int B, int C, int HW);
void gap_backward(float *dinp, const float *dout, int B, int C, int HW);

/* ---- layernorm over the last dimension ---- */
/* inp (N,C), gamma/beta (C) -> out (N,C); saves mean, rstd (N) */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       const float *gamma, const float *beta, int N, int C, float eps);
void layernorm_backward(float *dinp, float *dgamma, float *dbeta, const float *dout,
                        const float *inp, const float *gamma, const float *mean,
                        const float *rstd, int N, int C);

/* ---- embeddings ---- */
/* tokens, types (B,T) ids; wte (V,C), wpe (maxT,C) or NULL, wtt (NT,C) or NULL
 * -> out (B,T,C) = wte[token] + wpe[t] + wtt[type] */
void embed_forward(float *out, const int *tokens, const int *types, const float *wte,
                   const float *wpe, const float *wtt, int B, int T, int C);
void embed_backward(float *dwte, float *dwpe, float *dwtt, const float *dout,
                    const int *tokens, const int *types, int B, int T, int C);
/* embedding bag, L ids per sample (rows of table (rows,D)), sum or mean
 * -> out rows of D floats, row b at out + b*out_stride. Backward scatter-adds
 * into the rows used only (a sparse gradient). */
enum { BAG_SUM = 0, BAG_MEAN = 1 };
void embbag_forward(float *out, long out_stride, const float *table, const int *ids,
                    long id_stride, int B, int L, int D, int mode);
void embbag_backward(float *dtable, const float *dout, long out_stride, const int *ids,
                     long id_stride, int B, int L, int D, int mode);

/* ---- multi-head self-attention core (bidirectional, padding mask) ---- */
/* qkv (B,T,3C) as [q|k|v], lengths (B) valid tokens per sequence (keys at
 * t >= length are masked) or NULL -> out (B,T,C); att (B,NH,T,T) saves the
 * probabilities. */
void attention_forward(float *out, float *att, const float *qkv, const int *lengths,
                       int B, int T, int C, int NH);
/* dout (B,T,C) -> dqkv (B,T,3C); scratch: T*T floats */
void attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                        const float *att, int B, int T, int C, int NH);

/* ---- softmax of one row, in place ---- */
/* row (n) <- exp(row) / sum exp(row) */
void softmax_row_forward(float *row, int n);
/* d (n) <- p (d - sum_j p_j d_j): d's gradient through the softmax whose output is p */
void softmax_row_backward(float *d, const float *p, int n);

/* ---- causal self-attention with grouped-query heads (decoders) ---- */
/* qkv (B,T,(NH+2KV)hs) as [NH query heads | KV key heads | KV value heads],
 * KV dividing NH (query head h reads kv head h/(NH/KV)); query i sees keys
 * j <= i -> out (B,T,NH*hs); att (B,NH,T,T) the probabilities (0 above the
 * diagonal). */
void causal_attention_forward(float *out, float *att, const float *qkv, int B, int T, int NH,
                              int KV, int hs);
/* dout (B,T,NH*hs) -> dqkv (B,T,(NH+2KV)hs); scratch: T*T floats */
void causal_attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                               const float *att, int B, int T, int NH, int KV, int hs);

/* ---- rotary position embeddings (rotate-half pairing) ---- */
#define ROPE_MAX_HEAD_DIM 1024
/* inp (B,T,W): the first nrot heads of hs (hs even, <= ROPE_MAX_HEAD_DIM) are
 * rotated, position t turning pair (i, i+hs/2) by t theta^(-2i/hs); the rest of
 * the row is copied -> out (B,T,W). Backward rotates back. */
void rope_forward(float *out, const float *inp, int B, int T, int W, int nrot, int hs,
                  float theta);
void rope_backward(float *dinp, const float *dout, int B, int T, int W, int nrot, int hs,
                   float theta);

/* ---- RMSNorm over the last dimension ---- */
/* inp (N,C), weight (C) -> out (N,C) = inp / sqrt(mean(inp^2) + eps) * weight; rstd (N) */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, int N, int C,
                     float eps);
void rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp,
                      const float *weight, const float *rstd, int N, int C);

/* ---- SwiGLU gate: out = silu(gate) * up, n elements ---- */
void swiglu_forward(float *out, const float *gate, const float *up, long n);
/* dout (n) -> dgate, dup (n); dup may be dout itself */
void swiglu_backward(float *dgate, float *dup, const float *dout, const float *gate,
                     const float *up, long n);

/* ---- mixture of experts: router, top-k SwiGLU experts, load-balancing loss ---- */
#define MOE_MAX_TOP_K 16
typedef struct moe_shape {
    int N;              /* tokens */
    int C, E, K, F;     /* hidden, experts, experts per token (<= MOE_MAX_TOP_K), expert FFN width */
    float aux_coef;     /* load-balancing loss coefficient */
} moe_shape;
/* router (E,C); per expert e: w1, w3 (E,F,C) gate and up, w2 (E,C,F) down */
typedef struct moe_weights {
    float *router, *w1, *w3, *w2;
} moe_weights;
/* What forward keeps for backward: moe_saved_floats / _ints of storage,
 * laid out by moe_saved_bind. */
typedef struct moe_saved {
    float *probs;       /* (N,E) router softmax */
    float *weight;      /* (N,K) gate weights of the chosen experts */
    float *xs;          /* (N*K,C) token rows grouped by expert */
    float *h1, *h3, *act; /* (N*K,F) gate and up projections, silu(h1) h3 */
    float *y;           /* (N*K,C) expert outputs */
    int *idx;           /* (N,K) the chosen experts */
    int *slot_pos, *pos_slot; /* (N*K) slot n*K+k <-> grouped row */
    int *offset;        /* (E+1) each expert's first grouped row */
} moe_saved;
long moe_saved_floats(const moe_shape *s);
long moe_saved_ints(const moe_shape *s);
long moe_scratch_floats(const moe_shape *s);
void moe_saved_bind(moe_saved *sv, float *f, int *ip, const moe_shape *s);
/* x (N,C) -> out (N,C) = sum over the top k of weight * expert(x); returns the
 * load-balancing loss */
float moe_forward(float *out, const moe_saved *sv, const float *x, const moe_weights *w,
                  const moe_shape *s);
/* dout (N,C), and 1 for the load-balancing loss -> dx (N,C) (NULL: skipped);
 * dw's tensors +=; scratch: moe_scratch_floats */
void moe_backward(float *dx, const moe_weights *dw, float *scratch, const float *dout,
                  const float *x, const moe_saved *sv, const moe_weights *w, const moe_shape *s);

/* ---- DLRM dot interaction ---- */
/* dense (B,D), emb (B,F,D) -> out (B, D + (F+1)F/2): dense, then the dots of
 * all pairs i>j of the F+1 vectors [dense, emb_0..emb_{F-1}] */
void interaction_forward(float *out, const float *dense, const float *emb, int B, int F, int D);
void interaction_backward(float *ddense, float *demb, const float *dout, const float *dense,
                          const float *emb, int B, int F, int D);

/* ---- DCN-v2 low-rank cross layer (torchrec LowRankCrossNet) ---- */
/* x0, xl (B,N), V (R,N), W (N,R), bias (N) -> out (B,N) = x0 * (xl V^T W^T + bias) + xl;
 * saves v = xl V^T (B,R) and u = v W^T + bias (B,N) for backward */
void cross_forward(float *out, float *v, float *u, const float *x0, const float *xl,
                   const float *V, const float *W, const float *bias, int B, int N, int R);
/* dout (B,N) -> dx0, dxl (B,N) (either may be NULL; they must differ); dV, dW,
 * dbias +=; scratch: B*(N+R) floats */
void cross_backward(float *dx0, float *dxl, float *dV, float *dW, float *dbias, float *scratch,
                    const float *dout, const float *x0, const float *xl, const float *v,
                    const float *u, const float *V, const float *W, int B, int N, int R);

/* ---- shape plumbing ---- */
/* a (B,NA), b (B,NB) -> out (B,NA+NB); backward splits dout (da or db may be NULL) */
void concat_forward(float *out, const float *a, const float *b, int B, int NA, int NB);
void concat_backward(float *da, float *db, const float *dout, int B, int NA, int NB);
/* inp (B,T,C) -> out (B,C): token 0 of each sequence */
void slice0_forward(float *out, const float *inp, int B, int T, int C);
void slice0_backward(float *dinp, const float *dout, int B, int T, int C);
/* inp (B,T,C), pos (B,P) -> out (B,P,C) (masked-LM positions) */
void gather_forward(float *out, const float *inp, const int *pos, int B, int T, int P, int C);
void gather_backward(float *dinp, const float *dout, const int *pos, int B, int T, int P, int C);
/* ViT: patches (B,C,N) from the patch conv, cls (C), pos (N+1,C)
 * -> out (B,N+1,C) = [cls; patches^T] + pos */
void vitembed_forward(float *out, const float *patches, const float *cls, const float *pos,
                      int B, int N, int C);
void vitembed_backward(float *dpatches, float *dcls, float *dpos, const float *dout,
                       int B, int N, int C);

/* ---- losses (mean over the N rows) ---- */
/* logits (N,V), labels (N) -> returns the mean loss; probs (N,V) saved.
 * smoothing: label smoothing epsilon (target = (1-eps) onehot + eps/V). */
float softmax_ce_forward(float *probs, const float *logits, const int *labels, int N, int V,
                         float smoothing);
/* -> dlogits (N,V), scaled by dloss/N */
void softmax_ce_backward(float *dlogits, const float *probs, const int *labels, int N, int V,
                         float smoothing, float dloss);
/* logits (N), targets (N) in [0,1] -> mean binary cross-entropy of sigmoid(logit) */
float bce_forward(const float *logits, const float *targets, int N);
void bce_backward(float *dlogits, const float *logits, const float *targets, int N, float dloss);

#endif
