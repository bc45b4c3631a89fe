/* graph.h: building a model layer by layer (used by the zoo, trainer/zoo.c).
 * Each builder appends one layer reading existing tensors and returns its
 * output tensor id; tensors carry per-sample dimensions and the batch is
 * added by model_alloc. Shape errors are remembered and reported by
 * model_create. */
#ifndef TT_GRAPH_H
#define TT_GRAPH_H

#include "trainer/model.h"

/* How the following layers initialise their weights (biases: zero, except
 * INIT_TORCH where they are uniform like the weights; norms: one and zero). */
enum {
    INIT_TORCH,          /* PyTorch default: uniform(+-1/sqrt(fan_in)) */
    INIT_KAIMING_FANOUT, /* torchvision ResNet convs: normal(0, sqrt(2/fan_out)) */
    INIT_NORMAL_002,     /* BERT / ViT: normal(0, 0.02) */
};

model *g_new(const char *name);
void g_init_style(model *m, int style);
int g_fail(model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int g_input_image(model *m, int C, int H, int W);
int g_input_vector(model *m, int n);
int g_dims(const model *m, int t, int *dims); /* returns ndim */

int g_linear(model *m, const char *name, int x, int OC, int bias);
/* linear with relu fused into its output pass (one layer, one tensor) */
int g_linear_relu(model *m, const char *name, int x, int OC, int bias);
int g_linear_tied(model *m, const char *name, int x, const char *weight_view);
int g_conv(model *m, const char *name, int x, int OC, int K, int stride, int pad, int bias);
int g_bn(model *m, const char *name, int x);
/* batchnorm with the following relu fused into its output pass */
int g_bn_relu(model *m, const char *name, int x);
int g_layernorm(model *m, const char *name, int x, float eps);
int g_relu(model *m, const char *name, int x);
int g_gelu(model *m, const char *name, int x);
int g_tanh(model *m, const char *name, int x);
int g_dropout(model *m, const char *name, int x, float p); /* p <= 0: no layer, returns x */
int g_maxpool(model *m, const char *name, int x, int K, int stride, int pad);
int g_gap(model *m, const char *name, int x);
int g_add(model *m, const char *name, int a, int b);
/* residual add with the following relu fused */
int g_add_relu(model *m, const char *name, int a, int b);
int g_flatten(model *m, const char *name, int x);
/* token + position + segment embeddings of T tokens (inputs.tokens, .segments) */
int g_embed(model *m, const char *name, int T, int vocab, int maxpos, int ntypes, int C);
int g_attention(model *m, const char *name, int qkv, int NH);
/* decoders: token embeddings named <name>.<tok> (V, C), plus learned positions
 * <name>.<pos> (maxpos, C) unless pos is NULL */
int g_embed_tokens(model *m, const char *name, int T, int vocab, int C, const char *tok,
                   const char *pos);
int g_rmsnorm(model *m, const char *name, int x, float eps);
/* rotates the first nrot heads of hs in each row of x (queries and keys) */
int g_rope(model *m, const char *name, int x, int nrot, int hs, float theta);
/* causal attention on a (T, (NH + 2 KV) hs) qkv tensor -> (T, NH hs) */
int g_causal_attention(model *m, const char *name, int qkv, int NH, int KV, int hs);
int g_swiglu(model *m, const char *name, int gate, int up);
/* routed experts: E SwiGLU FFNs of width F, top K per token */
int g_moe(model *m, const char *name, int x, int E, int K, int F, float aux_coef);
/* tags the last layer (a linear) with its GEMM's kind and tensor-parallel
 * split (model_gemm) */
void g_tag(model *m, const char *kind, const char *split);
/* F tables of rows[f] x D, bags[f] ids per sample each, pooled (sum or mean) to (F, D) */
int g_embbag(model *m, const char *name, int F, const long *rows, const int *bags, int D,
             int mode);
int g_interaction(model *m, const char *name, int dense, int emb);
/* both inputs flattened per sample, side by side */
int g_concat(model *m, const char *name, int a, int b);
/* DCN-v2 low-rank cross layer of rank R on (N) vectors: x0 * (W V xl + b) + xl */
int g_cross(model *m, const char *name, int x0, int xl, int R);
int g_slice0(model *m, const char *name, int x);
int g_gather(model *m, const char *name, int x, int P);
int g_vitembed(model *m, const char *name, int x);
void g_softmax_ce(model *m, const char *name, int logits, float smoothing);
void g_bce(model *m, const char *name, int logits);

/* A decoder-only transformer's shape (trainer/decoder.c); model_opts override it. */
typedef struct decoder_shape {
    int family;            /* MODEL_FAMILY_GPT, _LLAMA or _MOE */
    int layers, hidden, ffn_hidden, heads, kv_heads, head_dim; /* head_dim 0: hidden / heads */
    int vocab, seq_len, tied;
    float rope_theta;
    int experts, top_k, shared_experts, expert_ffn_hidden;
    int dense_layers;      /* moe: the first layers keep a dense FFN of ffn_hidden */
} decoder_shape;
int decoder_build(model *m, const model_opts *o, const decoder_shape *base);

/* Builds the named architecture into m (trainer/zoo.c). */
int zoo_build(model *m, const char *name, const model_opts *o);

#endif
