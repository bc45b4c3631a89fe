/* model.h: a model of the zoo as a sequence of layers over one flat
 * parameter set (trainer/params.h), one activation arena and no allocation
 * inside a training step (llm.c style).
 *
 * Life cycle: model_create (plans the layers and counts parameters and FLOPs,
 * no memory: works for 24-billion-parameter DLRM too) -> model_alloc (batch
 * size, initialised parameters, activations) -> per step: fill
 * model_get_inputs(), model_zero_grad, model_forward, model_backward, update the
 * parameters (the optimizers live elsewhere). */
#ifndef TT_MODEL_H
#define TT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/vocab.h"
#include "trainer/params.h"

#define MODEL_MAX_WIDTHS 16
#define MODEL_MAX_TABLES 64
#define MODEL_MAX_GEMMS 4

/* Decoder families: gpt (LayerNorm, GeLU MLP, learned positions), llama
 * (RMSNorm, SwiGLU, RoPE, grouped-query attention), moe (llama with MoE FFNs). */
enum { MODEL_FAMILY_NONE, MODEL_FAMILY_GPT, MODEL_FAMILY_LLAMA, MODEL_FAMILY_MOE };
extern const char *const MODEL_FAMILY_NAMES[]; /* "", "gpt", "llama", "moe", NULL */

typedef struct model model;

typedef struct model_opts {
    int classes;           /* output classes (0: the model's default) */
    int image;             /* input height = width for image models (0: default) */
    int channels;          /* input channels of image models (0: default) */
    int seq_len;           /* BERT tokens per sequence (0: 128) */
    int vocab;             /* BERT vocabulary (0: 30522) */
    int widths[MODEL_MAX_WIDTHS]; /* mlp: input, hidden..., output (nwidths 0: 784-1024-1024-10) */
    int nwidths;
    long table_rows[MODEL_MAX_TABLES]; /* dlrm: rows per table (ntables 0: MLPerf Criteo 1TB) */
    int ntables;
    long table_rows_cap;   /* dlrm: cap every table at this many rows (0: the model's default) */
    int multi_hot[MODEL_MAX_TABLES]; /* dlrm: ids per sample of each table (nmulti_hot 0: the model's) */
    int nmulti_hot;
    /* decoder-only transformers (0 or -1: the named model's) */
    int family;            /* MODEL_FAMILY_*: must match the named model's */
    int layers, hidden, ffn_hidden, heads, kv_heads, head_dim; /* head_dim 0: hidden / heads */
    int tied_embeddings;   /* 1 tied, 0 untied, -1 the model's */
    float rope_theta;      /* llama, moe: RoPE base */
    int experts, top_k, expert_ffn_hidden; /* moe: routed experts, experts per token, their FFN */
    int shared_experts;    /* moe: always-active experts of expert_ffn_hidden (-1: the model's) */
    float moe_aux_loss_coef; /* moe: load-balancing loss coefficient (-1: 0.01) */
    float dropout;         /* dropout probability where the architecture has dropout (0: none) */
    float label_smoothing; /* softmax cross-entropy label smoothing */
    uint64_t seed;         /* parameter initialisation and dropout */
} model_opts;

/* What one step reads; the model owns the buffers (sized for the batch). The
 * data generators (trainer/synth.h) and the Fashion-MNIST reader fill them. */
typedef struct model_inputs {
    int batch;             /* samples this step: up to the allocated batch (may be lowered) */
    float *x;              /* (B, x_per_sample): images (C,H,W), features, DLRM dense */
    long x_per_sample;
    int channels, height, width; /* image models */
    int *tokens, *segments;/* (B, seq_len) BERT */
    int *lengths;          /* (B) valid tokens; the rest is padding (attention mask) */
    int seq_len, vocab;
    int *positions;        /* (B, npred) masked-LM positions; labels hold the true tokens */
    int npred;
    int *sparse;           /* (B, ids_per_sample) DLRM categorical ids: a sample's bags[0]
                              ids of table 0, then bags[1] of table 1, ... */
    int ntables, ids_per_sample;
    const int *bags;       /* (ntables) ids per sample of each table (multi-hot sizes) */
    const long *table_rows;/* (ntables) rows per table: ids must be below */
    int next_token;        /* decoders: labels[t] is the token after tokens[t] */
    int *labels;           /* (B, labels_per_sample) class ids */
    int labels_per_sample, classes;
    float *targets;        /* (B) click labels in {0,1} (DLRM) */
} model_inputs;

/* One matrix product of a layer's forward, m x k times k x n, `count` of them
 * per sample (a weight's GEMM: m = rows per sample, count 1; attention: m = T,
 * count = heads), and how a tensor-parallel split cuts it: "column" (output
 * features), "row" (input features, partial sums to reduce), "heads",
 * "replicated". Backward runs two of each (input and weight gradients). */
typedef struct model_gemm {
    const char *kind;      /* qkv, attn_out, mlp_gate, mlp_up, mlp_down, lm_head, attn_scores,
                              attn_context, router, expert_gate, expert_up, expert_down
                              (m: routed token rows), shared_gate, shared_up, shared_down */
    const char *split;
    double m, n, k, count;
    int count_scales;      /* 1: count grows with the batch (attention), 0: m does */
} model_gemm;

/* A layer as `ttasim model show` and the trace see it. Per-sample counts
 * scale linearly with the batch; *_fixed ones do not. */
typedef struct model_layer {
    const char *name;
    op_class cls;          /* the device's roofline efficiency applies per class */
    double params;         /* parameters this layer owns */
    double fwd_flops, bwd_flops;       /* per sample; a multiply-add is 2 */
    double fwd_elems, bwd_elems;       /* per sample: activation elements read + written */
    double fwd_elems_fixed, bwd_elems_fixed; /* parameters read (and gradients written) */
    double act_elems;      /* per sample: output and saved state kept for backward */
    int backward;          /* 1 if a gradient reaches this layer */
    int model_parallel;    /* its parameters are sharded across ranks (DLRM tables),
                              exchanged by alltoall rather than allreduced */
    double lookups;        /* embedding rows read per sample (embedding layers) */
    int seq_len, heads, head_dim; /* attention layers: heads x seq_len^2 scores per sample */
    int kv_heads;          /* causal attention: key/value heads (grouped-query) */
    int hidden;            /* causal attention and moe: the residual stream's width (what tensor, pipeline
                              and expert parallelism move per token), which heads x head_dim need not be */
    model_gemm gemms[MODEL_MAX_GEMMS]; /* decoders: the products a tensor-parallel split cuts */
    int ngemms;
    double gemm_fwd_flops, gemm_bwd_flops; /* per sample: the FLOPs of its sgemm calls */
    int experts, top_k;    /* moe layers */
    double routed;         /* moe: token-expert pairs per sample (tokens x top_k) */
    double kept_elems;     /* per sample, what an autograd framework keeps for backward: the
                              tensors backward kernels read, each once, at the precision */
    double kept_aux_bytes; /* per sample: dropout masks (1 byte), fp32 statistics, int64 indices */
    double kept_gemm_elems; /* per sample, the part of kept_elems only linear layers' weight gradients
                               read (what Transformer Engine keeps in fp8 under an fp8 recipe) */
    int first_view, nviews;/* its parameter views in model_params() */
} model_layer;

void model_opts_default(model_opts *o);
/* Sets one option from text, as on the command line: widths (784-1024-10),
 * image, channels, classes, seq-len, vocab, table-rows (1000,20,...),
 * table-rows-cap, multi-hot (3,2,1,...), dropout, label-smoothing, seed; for
 * decoders family (gpt|llama|moe), layers, hidden, ffn-hidden, heads,
 * kv-heads, head-dim, tied-embeddings (0|1), rope-theta, experts, top-k,
 * shared-experts, expert-ffn-hidden, moe-aux-loss-coef.
 * MODEL_OPTION_KEYS lists them for getopt tables. */
int model_opts_set(model_opts *o, const char *key, const char *value, tt_error *err);
#define MODEL_OPTION_KEYS                                                                      \
    "widths", "image", "channels", "classes", "seq-len", "vocab", "table-rows", "table-rows-cap", \
        "multi-hot", "dropout", "label-smoothing", "seed", "family", "layers", "hidden",          \
        "ffn-hidden", "heads", "kv-heads", "head-dim", "tied-embeddings", "rope-theta", "experts", \
        "top-k", "shared-experts", "expert-ffn-hidden", "moe-aux-loss-coef"

/* The zoo: the i-th model's name (NULL past the last), and a one-line description. */
const char *model_zoo_name(int i);
const char *model_describe(const char *name);

/* Plans the named model (no parameter or activation memory). */
int model_create(model **out, const char *name, const model_opts *o, tt_error *err);
void model_free(model *m);

/* Allocates parameters (initialised from the seed), gradients (zero) and the
 * activation arena for batches of up to `batch` samples. */
int model_alloc(model *m, int batch, tt_error *err);

param_set *model_params(model *m);
model_inputs *model_get_inputs(model *m);

/* Train mode (batch statistics, dropout) is the default; eval uses running
 * statistics and no dropout. */
void model_set_training(model *m, int training);

/* Forward over the inputs; returns the mean loss (NaN when inputs.batch is
 * not in 1..the allocated batch). */
float model_forward(model *m);
/* Backward from the loss: parameter gradients are ACCUMULATED (+=). */
void model_backward(model *m);
void model_zero_grad(model *m);
/* The loss layer's input (logits) after model_forward: (batch, *cols). */
const float *model_logits(const model *m, int *cols);
/* Calls fn(ctx, layer, 0) after each layer's forward and fn(ctx, layer, 1)
 * after its backward (NULL: none), to attribute work to layers as it runs. */
void model_set_observer(model *m, void (*fn)(void *ctx, int layer, int backward), void *ctx);
/* Plain SGD, params -= lr * grads: for tests and the benchmark. */
void model_sgd_step(model *m, float lr);

int model_nlayers(const model *m);
const model_layer *model_layer_at(const model *m, int i);
double model_forward_flops_per_sample(const model *m);
double model_backward_flops_per_sample(const model *m);
/* fp32 bytes per sample kept for backward: every layer's act_elems x 4 */
double model_activation_bytes_per_sample(const model *m);

#endif
