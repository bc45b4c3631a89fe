/* trace.h: a workload trace (HACKING.md, "Workload trace format"): the work of
 * one training step on one accelerator, as the trainer executed it. */
#ifndef TT_TRACE_H
#define TT_TRACE_H

#include <stddef.h>

#include "common/error.h"

/* Operation classes; a device keeps one roofline efficiency per class. */
typedef enum {
    OP_CONV, OP_GEMM, OP_ATTENTION, OP_NORM, OP_ELEMENTWISE, OP_POOL, OP_EMBEDDING, OP_LOSS,
    OP_CLASSES
} op_class;
extern const char *const TRACE_OP_CLASSES[]; /* names, NULL-terminated, in op_class order */

typedef struct trace_layer {
    char *name;
    op_class cls;
    double forward_flops, forward_bytes;
    double backward_flops, backward_bytes;
    double activation_bytes, param_bytes;
} trace_layer;

typedef struct trace_bucket {
    double bytes;
    int ready_after_layer; /* its last gradient comes out of this layer's backward */
} trace_bucket;

typedef enum { COMM_FORWARD = 0, COMM_BACKWARD = 1 } comm_phase;

typedef struct trace_comm {
    /* op: always "alltoall" (model-parallel embeddings), checked by the loader */
    comm_phase phase;
    int after_layer; /* forward: after this layer's forward; backward: after its backward */
    double bytes_per_rank;
} trace_comm;

typedef struct trace {
    char *path;
    char *model;
    int micro_batch;
    char *precision;
    int dtype_bytes;
    double params, param_bytes;
    double forward_flops, backward_flops;
    size_t n_layers, n_buckets, n_comm;
    trace_layer *layers;
    trace_bucket *buckets;
    trace_comm *comm;
    double gradient_bytes; /* sum of the gradient tensors' bytes */
    char *optimizer;
    double optimizer_flops, optimizer_bytes;
} trace;

#define TRACE_VERSION 1

/* Loads and validates (layer indices in range, buckets in backward order).
 * Keys beyond the documented ones are ignored: traces are written by ttasim. */
int trace_load(const char *path, trace *out, tt_error *err);
void trace_free(trace *t);

/* Makes a trace on the fly by running 'ttasim trace' (this binary) into a
 * temporary file, then loads it. micro_batch 0, precision and optimizer NULL
 * and bucket_bytes 0 keep the trace command's defaults. */
int trace_make(const char *model, int micro_batch, const char *precision, double bucket_bytes,
               const char *optimizer, trace *out, tt_error *err);

/* Bytes per element of a precision name ("fp32" 4, "fp16"/"bf16" 2), 0 if unknown. */
int trace_dtype_bytes(const char *precision);

#endif
