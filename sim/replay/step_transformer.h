/* step_transformer.h: a transformer's training step under tensor, pipeline
 * and data parallelism, as Megatron-LM runs it: each pipeline stage holds an
 * equal share of the trace's blocks, the first and last fewer if asked (the layers before the first block on
 * the first stage, those after the last on the last), each block's GEMMs,
 * attention, vocabulary embedding and loss split over the tensor group (with
 * sequence parallelism its norms and elementwise ops too), two blocking
 * tensor-parallel collectives per block forward and two backward (allreduces,
 * or all-gathers and reduce-scatters with sequence parallelism), the
 * micro-batches through the pipeline as pipeline.c schedules them, and each
 * stage's gradients reduced over its data-parallel group in buckets that
 * start as its last micro-batch's backward produces them, then the optimizer
 * on the stage's parameters (its 1/data share with the distributed
 * optimizer, whose parameters are all-gathered after it). Context
 * parallelism splits every layer's tokens over its group, attention by its
 * queries, whose keys and values pass round the group (ring attention) beside
 * the attention's compute; the gradients are then reduced over the data and
 * context ranks. Expert parallelism (Megatron-Core's, carved out of the data
 * ranks) gives each rank of the expert group its share of a MoE layer's
 * experts, every token sent to its top-k experts and back by two blocking
 * alltoalls forward and two backward (routing balanced, no token dropped, as
 * Megatron-Bridge's MoE benchmarks force it); expert gradients are reduced
 * over the ranks that hold the same experts. One rank per stage stands for
 * its groups (they are alike). */
#ifndef TT_STEP_TRANSFORMER_H
#define TT_STEP_TRANSFORMER_H

#include "sim/replay/layout.h"
#include "sim/replay/step.h"

typedef struct tf_options {
    const layout *layout;  /* tensor, context, expert, pipeline and data degrees */
    int sequence_parallel; /* Megatron's --sequence-parallel */
    int chunks;            /* model chunks per pipeline stage (interleaved schedule: > 1) */
    int micro_batches;     /* per data-parallel rank per step (the accumulation) */
    double bucket_bytes;   /* gradients per data-parallel bucket */
    int first_blocks, last_blocks; /* blocks on the first and last virtual stage (0: an even share) */
    int dedup_tokens;      /* MoE dispatch sends a token once per node it goes to (DeepEP), not once per expert */
    int overlap_experts;   /* MoE alltoalls of one micro-batch beside the other's compute (Megatron-Core's
                              --overlap-moe-expert-parallel-comm: a forward and a backward run merged) */
} tf_options;

/* The step's collectives, in this order, each sized as step_coll says. */
typedef enum {
    TF_TP_ALLREDUCE,      /* a block's activations over the tensor group (no sequence parallelism) */
    TF_TP_ALLGATHER,      /* sequence parallelism: gathered before a column-parallel GEMM */
    TF_TP_REDUCE_SCATTER, /* sequence parallelism: scattered after a row-parallel GEMM */
    TF_CP_ALLGATHER,      /* context parallelism: an attention layer's ring of keys and values */
    TF_CP_REDUCE_SCATTER, /* context parallelism, backward: their gradients round the ring back */
    TF_EP_ALLTOALL,       /* a MoE layer's tokens to their experts (dispatch) or back (combine) */
    TF_DP_GRADS,          /* one bucket of a stage's gradients over its data-parallel group */
    TF_DP_PARAMS,         /* the distributed optimizer: one bucket of updated parameters gathered */
    TF_EP_GRADS,          /* one bucket of a stage's expert gradients over the ranks holding those experts */
    TF_EP_PARAMS,         /* the distributed optimizer: one bucket of updated expert parameters gathered */
    TF_DP_ROOT_PARAMS,    /* ZeRO-3: the layers outside the blocks (embedding, head), gathered before the forward */
    TF_DP_ROOT_GRADS,     /* ZeRO-3: their gradients, reduce-scattered after the backward */
    TF_COLLS
} tf_coll;

/* Checks that the trace has blocks that split evenly over the pipeline's
 * virtual stages (TT_EINPUT naming the counts and what to change). */
int tf_check(const workload *t, const tf_options *x, tt_error *err);

/* The step's collectives (out: TF_COLLS of them, unused ones 0 bytes). */
void tf_collectives(const workload *t, const step_options *o, const tf_options *x, step_coll out[TF_COLLS]);

/* How many times collective i runs in a step (the links' traffic). */
double tf_runs_per_step(const workload *t, const step_options *o, const tf_options *x, tf_coll i);

/* Activations (or their gradients) one micro-batch sends to the next stage. */
double tf_send_bytes(const workload *t, const step_options *o, const tf_options *x);

/* The step with coll_s[i] the duration of collective i and send_s of one
 * send between stages. out->memory is the busiest stage's rank (its
 * in-flight micro-batches' activations), TT_EINPUT naming it and the
 * breakdown when it does not fit; the step's breakdown: compute, the
 * tensor-parallel collectives (tp_comm_s), the context ring's time beyond
 * the attention it hides behind (cp_comm_s), the pipeline's bubble, the
 * data-parallel collectives exposed (with ZeRO-3 also each block's gathers
 * and reduce-scatters beyond the compute beside them), the optimizer. With
 * ZeRO-3 (o->zero 3, FSDP's FULL_SHARD, no pipeline) TF_DP_PARAMS and
 * TF_DP_GRADS are one block's gather and reduce-scatter. */
int tf_replay(const workload *t, const device_model *d, const step_options *o, const tf_options *x,
              const double coll_s[TF_COLLS], double send_s, step_result *out, tt_error *err);

#endif
