/* trace.h: one training step of a model recorded as the workload trace the
 * simulator replays (format: HACKING.md, "Workload trace format"). */
#ifndef TT_TRACE_H
#define TT_TRACE_H

#include <jansson.h>

#include "common/error.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"

typedef struct trace_opts {
    int micro_batch;        /* samples per rank per step */
    const char *precision;  /* "fp32", "fp16", "bf16" or "fp8" (DTYPE_NAMES) */
    double bucket_bytes;    /* DDP bucket cap (first bucket: min(1 MiB, cap), as DDP) */
    const optim_info *optimizer; /* its update's cost per parameter (optimizer.h) */
    int run_batch;          /* micro-batch actually executed (0: as much of micro_batch as
                               fits in TRACE_RUN_BYTES of activations) */
} trace_opts;

#define TRACE_DEFAULT_BUCKET_BYTES (25.0 * 1024 * 1024) /* torch DDP bucket_cap_mb = 25 */
#define TRACE_RUN_BYTES 2e9
/* A step is executed only when its parameters, gradients and activations fit
 * in this; a larger model's trace comes from the plan alone (LLMs) */
#define TRACE_EXEC_LIMIT_BYTES 8e9
#define TRACE_RUN_TABLE_ROWS 10000 /* DLRM tables are capped at this many rows for the run */

void trace_opts_default(trace_opts *o);

/* Plans the model, runs one real forward + backward step on synthetic input
 * (at opts->run_batch or what fits; DLRM with its tables capped but reported
 * at full size; not at all past TRACE_EXEC_LIMIT_BYTES) and returns the trace
 * document. */
int trace_build(const char *model_name, const model_opts *mo, const trace_opts *to,
                json_t **out, tt_error *err);

/* A layer's GEMMs (model_gemm) as the trace lists them, at batch B (1: per sample). */
json_t *trace_gemms_json(const model_layer *L, int B);

#endif
