/* workload.h: the workload trace read back for replay (HACKING.md, "Workload
 * trace format", written by trainer/trace.c): the work of one training step on
 * one accelerator, as the trainer executed it. */
#ifndef TT_WORKLOAD_H
#define TT_WORKLOAD_H

#include <stddef.h>

#include "common/error.h"
#include "common/vocab.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"

typedef struct workload_layer {
    char *name;
    op_class cls;
    double forward_flops, forward_bytes;
    double backward_flops, backward_bytes;
    double activation_bytes, param_bytes;
    int seq_len, heads, head_dim; /* attention layers (0: not recorded): heads x seq_len^2 scores per sample */
    int kv_heads; /* attention layers: key and value heads (grouped-query; the trace's heads when it does not say) */
    int hidden; /* attention and moe layers: the residual stream's width (attention: heads x head_dim when the
                   trace does not say) */
    int experts, top_k; /* moe layers: routed experts, and how many each token goes to (0: a dense layer) */
    double kept_bytes, kept_aux_bytes; /* what an autograd framework keeps (-1: not recorded): tensors at
                                          the precision; masks, fp32 statistics and indices */
    double kept_gemm_bytes; /* of kept_bytes, what only linear layers' weight gradients read (0: none or
                               not recorded): Transformer Engine keeps it in fp8 under an fp8 recipe */
    int block; /* the transformer block it belongs to (its "block", or N of "layer.N.", "layers.N." or
                  "h.N." in its name); -1: none (embeddings, head), what a pipeline stage split goes by */
} workload_layer;

typedef struct workload_bucket {
    double bytes;
    int ready_after_layer; /* its last gradient comes out of this layer's backward */
} workload_bucket;

typedef enum { COMM_FORWARD = 0, COMM_BACKWARD = 1 } comm_phase;

typedef struct workload_comm {
    /* op: always "alltoall" (model-parallel embeddings), checked by the loader */
    comm_phase phase;
    int after_layer; /* forward: after this layer's forward; backward: after its backward */
    double bytes_per_rank;
} workload_comm;

/* A model-parallel embedding table (DLRM) and how a sample uses it. */
typedef struct workload_table {
    double rows, dim;
    double lookups; /* rows one sample looks up (pooled into one vector) */
} workload_table;

/* The trace's model-parallel tables (n_tables 0: none): their layer and the
 * Zipf exponent of the lookups' row ids (rank 0 the hottest row). */
typedef struct workload_embedding {
    int layer;
    double zipf_s;
    size_t n_tables;
    workload_table *tables;
} workload_embedding;

typedef struct workload {
    char *path;
    char *model;
    int micro_batch;
    char *precision;
    int dtype_bytes;
    double params, param_bytes;
    double forward_flops, backward_flops;
    size_t n_layers, n_buckets, n_comm;
    workload_layer *layers;
    workload_bucket *buckets;
    workload_comm *comm;
    double gradient_bytes; /* sum of the gradient tensors' bytes */
    const optim_info *optimizer;
    double optimizer_flops, optimizer_bytes; /* dense parameters (tables: see emb) */
    workload_embedding emb;
} workload;

#define WORKLOAD_VERSION 1

/* Loads and validates (layer indices in range, buckets in backward order).
 * Keys beyond the documented ones are ignored: traces are written by ttasim. */
int workload_load(const char *path, workload *out, tt_error *err);
void workload_free(workload *t);

/* Makes a trace on the fly with the trainer's trace builder (trainer/trace.h:
 * one real step of the model, in this process, or its plan for a model too
 * large to run), as `ttasim trace` writes it. shape: the model's options
 * (NULL: its defaults); micro_batch 0, precision and optim NULL and
 * bucket_bytes 0 keep the builder's defaults. */
int workload_make(const char *model_name, const model_opts *shape, int micro_batch, const char *precision,
                  double bucket_bytes, const optim_info *optim, workload *out, tt_error *err);

#endif
