/* step.h: one training step of a trace replayed on one accelerator of a
 * data-parallel group: compute timed per op (roofline with an efficiency that
 * saturates with the work per kernel, host dispatch per kernel, elementwise
 * and normalisation ops fused into their producer), backward overlapped with
 * bucketed allreduces, alltoall phases, the optimizer step.
 * Collective and host-embedding durations come from SimGrid (coll_timing.c,
 * host_embedding.c); this module is
 * the per-rank timeline and needs no simulator, so it is tested exactly. */
#ifndef TT_STEP_H
#define TT_STEP_H

#include <stddef.h>

#include "common/error.h"
#include "platforms/host_rows.h"
#include "sim/replay/framework.h"
#include "sim/replay/layout.h"
#include "sim/replay/sharding.h"
#include "sim/replay/device_model.h"
#include "sim/replay/workload.h"

typedef struct step_options {
    int micro_batch;           /* samples per rank per micro-step */
    int accumulation;          /* micro-steps per optimizer step (>= 1) */
    int dtype_bytes;           /* the scenario's precision */
    int grad_dtype_bytes;      /* gradients as stored and allreduced (fp32 on TPUs) */
    int overlap;               /* buckets start during backward (DDP); 0: after it (TF1 on TPU) */
    int ranks;                 /* data-parallel group (embedding tables are split over it) */
    int node_ranks;            /* of them on one node (0: all); HugeCTR's hybrid embedding crosses nodes beyond */
    int optimizer_state_words; /* fp32 words of state per parameter (momentum 1, Adam/LAMB 2) */
    embedding_placement embeddings;
    double host_forward_s;  /* EMB_HOST, per micro-step: the rows' lookup and trip (host_embedding.h) */
    double host_backward_s; /* EMB_HOST, per micro-step: gradient rows back and the sparse update */
    /* EMB_ACCELERATORS with a trace that describes its tables: the sharding
     * plan's lookups, updates, collectives and memory replace the trace's
     * own figures for the embedding layer (NULL: the trace's, scaled) */
    const sharding_cost *tables;
    int recompute;          /* activation recomputation: keep segment boundaries, rebuild them in backward */
    int fused_attention;    /* FlashAttention-style kernels: no S x S scores kept, recomputed in backward */
    int autograd_activations; /* activations as an autograd framework keeps them (trace kept_bytes) */
    /* fp8 recipe: linear layers keep their inputs for the weight gradient as the
     * fp8 cast they computed with (Transformer Engine's Linear saves inputmat_t) */
    int fp8_gemm_inputs;
    /* Context parallelism: each rank holds 1/context of a sequence's queries
     * against all its keys (<= 1: the whole sequence) */
    int context;
    framework framework;    /* the framework's unfused epilogue passes (framework.h) */
    /* A layer's weight gradient on a stream of its own, beside its input
     * gradient (HugeCTR's async_mlp_wgrad): the two share one partial wave. */
    int async_wgrad;
    /* Collectives in flight at once, each on its own context, taken in turn
     * (Caffe2's common worlds); <= 1: one communication stream. */
    int concurrent_ops;
    /* Per collective (as coll_s): the seconds its bytes hold the links, which
     * concurrent collectives take one after another; the rest of its time
     * (latencies) overlaps theirs. NULL: all of it. */
    const double *coll_wire_s;
    /* Not NULL: the scheduled step graph is handed to it with the step's
     * collectives (colls, n_colls; their order is coll_s's), for an export. */
    const struct step_sink *sink;
    const struct step_coll *colls;
    size_t n_colls;
    /* The distributed optimizer (ZeRO, Megatron's --use-distributed-optimizer):
     * 0 none; 1 each rank updates its 1/ranks of the parameters: gradients are
     * reduce-scattered per bucket instead of allreduced, the optimizer state
     * and fp32 master weights are sharded, the updated parameters all-gathered
     * per bucket; 2 the gradients sharded too; 3 (ZeRO-3, FSDP's FULL_SHARD)
     * the parameters too, each block's gathered before its forward and again
     * before its backward, its gradients reduce-scattered after it, every
     * micro-batch (step_transformer.c). */
    int zero;
    /* Every gradient, the buckets' and the plan's replicated rows', in one
     * allreduce after the backward (HugeCTR's grouped all-reduce). */
    int grouped;
    /* HugeCTR across nodes (its hybrid embedding's network path): the pooled
     * gradients' alltoall and the sparse update start after the top MLP's
     * backward, beside the bottom MLP's and the allreduce (overlap_ar_a2a);
     * 0: after the allreduce. */
    int overlap_ar_a2a;
    /* zero: the all-gathers run during the next step's forward, each layer
     * waiting for its bucket's (Megatron's --overlap-param-gather); 0: after
     * the optimizer, before the step ends. */
    int overlap_param_gather;
} step_options;

/* The most collectives collectives.concurrent_ops lets run at once. */
#define STEP_MAX_CONCURRENT_OPS 64

typedef enum { STEP_ALLREDUCE = 0, STEP_ALLTOALL, STEP_REDUCE_SCATTER, STEP_ALLGATHER, STEP_OPS } step_coll_op;

typedef struct step_coll {
    step_coll_op op;
    unsigned dims; /* the layout dimensions its communicator spans (LAYOUT_DIM bits) */
    double bytes; /* nccl-tests size: allreduce buffer, alltoall bytes each rank sends in all,
                     reduce-scatter input, all-gather output; 0: nothing to do */
} step_coll;

/* What takes a step's scheduled task graph (ttasim trace --chakra). */
struct taskgraph;
typedef struct step_sink {
    /* l: the job's layout, whose pipeline stage is a rank's graph rank (NULL: the graph's one rank
     * stands for all `ranks`) */
    int (*take)(void *ctx, const struct taskgraph *g, const step_coll *colls, size_t n_colls, const layout *l,
                int ranks, tt_error *err);
    void *ctx;
} step_sink;

typedef struct step_memory {
    double params_bytes, gradients_bytes, optimizer_bytes, activations_bytes, total_bytes;
} step_memory;

typedef struct step_result {
    double time_s;
    double compute_s;      /* forward + backward kernels */
    double comm_s;         /* collectives in flight, overlapped or not */
    double exposed_comm_s; /* compute stream waiting on collectives */
    double tp_comm_s;      /* tensor-parallel collectives, blocking (step_transformer.h) */
    double cp_comm_s;      /* context parallelism: the ring of keys and values beyond the attention it overlaps */
    double ep_comm_s;      /* expert parallelism: MoE layers' dispatch and combine alltoalls, blocking */
    double bubble_s;       /* the pipeline's: a stage waiting on the others */
    double forward_fill_s; /* a pipeline's (step_transformer.h): one micro-batch's forward through every stage */
    double forward_beat_s; /* and its busiest stage's forward of a micro-batch, the pace of the ones after */
    double optimizer_s;
    double host_embedding_s; /* compute stream waiting on embedding rows in host memory */
    double input_s;        /* the host input pipeline's time for the node's images of one step (0: none) */
    double input_wait_s;   /* accelerators waiting on it: the step is max(their step, input_s) */
    double idle_s;         /* accelerator doing no work: time - compute - optimizer
                              (exposed communication and host waits included) */
    double model_flops;    /* forward + backward FLOPs per rank per step */
    double compute_bytes;  /* device-memory traffic the forward and backward kernels charge, per rank per step */
    double mfu;            /* model_flops / (time x peak) */
    step_memory memory;
} step_result;

/* The collectives the step needs, in the order step_replay expects their
 * durations: one allreduce per gradient bucket (a reduce-scatter with the
 * distributed optimizer), then one per trace comm entry (the trace's alltoall,
 * or the plan's collective in its place; 0 bytes when embeddings live in host
 * memory), then the allreduce of the plan's replicated rows, then with the
 * distributed optimizer an all-gather of each bucket's parameters. Returns
 * how many: t->n_buckets + t->n_comm + 1 (+ t->n_buckets with zero). */
size_t step_collectives(const workload *t, const step_options *o, step_coll *out);
/* The most collectives step_collectives lists for t under any options: what
 * its out and step_replay's coll_s hold. */
size_t step_collectives_max(const workload *t);

/* The embedding traffic of one micro-step of a trace at the options' batch and
 * precision (with o->tables, the host's lookups and updates are the tables'). */
void step_host_load_of(const workload *t, const step_options *o, step_host_load *out);

/* Activations one micro-batch keeps for its backward. With recomputation
 * (activation checkpointing) only the outputs of the normalisation layers,
 * which bound the segments (a transformer sublayer, a convolution block),
 * are kept, and *rebuild is the widest segment, rebuilt one at a time
 * during the backward (else 0). */
double step_activation_bytes(const workload *t, const step_options *o, double *rebuild);

/* Memory of one rank: parameters, gradients, optimizer state, activations. */
void step_memory_of(const workload *t, const step_options *o, step_memory *out);

/* Replays the step with coll_s[i] the duration of collective i. Fails with
 * TT_EINPUT, naming the device and the breakdown, when memory does not fit. */
int step_replay(const workload *t, const device_model *d, const step_options *o,
                const double *coll_s, step_result *out, tt_error *err);

/* Roofline time of one kernel: max(flops / (peak x efficiency), bytes / bandwidth). */
double step_kernel_s(double flops, double bytes, double peak_flops, double efficiency,
                     double mem_Bps);

/* Time of one layer's pass (forward or backward) at the options' micro-batch
 * and precision on the accelerator: its kernels, fused or not (step.c). */
double step_layer_s(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward);

/* The busy part of that pass: the same work at the roofline, without partial
 * waves or launch floors; what it takes from kernels beside it on another
 * stream (HugeCTR's embedding stream, step_data.c). */
double step_layer_busy_s(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward);

/* The device-memory bytes one pass of a layer moves (its kernels and their
 * epilogue), as step_replay charges them to compute_bytes. */
double step_layer_bytes(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward);

/* The model's forward and backward FLOPs per rank per step (step_result's model_flops). */
double step_model_flops(const workload *t, const step_options *o);

/* A GEMM layer's reduction depth K: its forward FLOPs over 2 x its output
 * elements (activation_bytes at the trace's precision); 0 for any other
 * layer and for MoE layers, whose experts' GEMMs the layer does not split. */
double step_gemm_depth(const workload *t, size_t layer);

/* A forward-only pass of one micro-batch (evaluation, inference): the same
 * per-op model without backward, collectives or optimizer. */
double step_forward_s(const workload *t, const device_model *d, const step_options *o);

/* What layer `layer` keeps for its backward, in bytes at the options'
 * micro-batch and precision: the trace's activation_bytes, or with
 * o->autograd_activations its kept_bytes and kept_aux_bytes; with
 * o->fused_attention an attention layer's fp32 row statistics replace its scores;
 * with o->fp8_gemm_inputs its kept_gemm_bytes are 1 byte an element. */
double step_layer_kept_bytes(const workload *t, size_t layer, const step_options *o);

#endif
