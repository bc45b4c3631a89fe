/* schedule.h: a collective as data: which rank sends which elements of its
 * buffer to whom, in which synchronous step. No SimGrid here: sim/ executes
 * schedules (timing), collectives/functional.c executes them on real buffers.
 *
 * A schedule is a list of stages; a stage is one or more parts (primitives
 * such as "ring reduce-scatter over these groups of ranks") that advance in
 * lockstep. Steps are generated on demand, so memory stays O(ranks) even for
 * a 4,096-rank ring with 8,190 steps. A stage marked `identical` has steps
 * that move the same bytes between the same ranks (only which block travels
 * differs): a timing executor may simulate one step and multiply. */
#ifndef TT_SCHEDULE_H
#define TT_SCHEDULE_H

#include <math.h>
#include <stddef.h>

#include "common/error.h"

typedef enum {
    OP_ALLREDUCE,
    OP_REDUCE_SCATTER,
    OP_ALLGATHER,
    OP_BROADCAST,
    OP_REDUCE,
    OP_ALLTOALL,
    OP_COUNT
} coll_op;

typedef enum {
    ALGO_AUTO,
    ALGO_RING,     /* ring (allreduce = reduce-scatter + allgather); chain for broadcast/reduce */
    ALGO_RHD,      /* recursive halving-doubling (Rabenseifner) */
    ALGO_RD,       /* recursive doubling */
    ALGO_BINOMIAL, /* binomial tree */
    ALGO_TREE,     /* pipelined binary tree */
    ALGO_DBTREE,   /* double binary tree (NCCL) */
    ALGO_TORUS2D,  /* per-dimension bidirectional rings on a 2-D grid */
    ALGO_TORUS,    /* the same on the platform's N-D grid (params.dims) */
    ALGO_HIER,     /* intra-node / inter-node / intra-node */
    ALGO_DIRECT,   /* everyone sends to everyone in one step */
    ALGO_PAIRWISE, /* alltoall: n-1 shifted exchanges */
    ALGO_BRUCK,    /* alltoall: log2 n steps of aggregated blocks */
    ALGO_NCCL,     /* what NCCL's tuner picks on the platform (collectives/nccl.h), run as one of the above */
    ALGO_PIPELINE, /* NCCL's pipelined kernels: chunks stream through an intra-node shape and an
                      inter-node one at once (pipe_intra, pipe_inter); built by nccl_plan, not asked for */
    ALGO_COUNT
} coll_algo;

typedef enum { XFER_COPY = 0, XFER_REDUCE = 1 } xfer_op;

/* Where hier allreduce's inter-node phase keeps its buffers. DEVICE: the
 * accelerators' memory (NCCL, GPUDirect). HOST: a CPU socket's memory, as
 * Gloo's CUDA algorithms do over TCP (CudaHostWorkspace): the node's reduced
 * vector is copied down over PCIe, the inter-node steps are summed on a CPU
 * thread, the result is copied back up before the broadcast. */
typedef enum { STAGING_DEVICE = 0, STAGING_HOST = 1, STAGING_COUNT } coll_staging;

/* ALGO_PIPELINE's shape inside a node: a chain of the node's GPUs per channel
 * (NCCL's tree and CollNet chain), every GPU to every channel head with the
 * heads reducing (CollNet direct), or the same through an NVSwitch that
 * reduces and multicasts (NVLS: the GPUs only copy). */
typedef enum { PIPE_CHAIN, PIPE_DIRECT, PIPE_SWITCH } coll_pipe_intra;
/* ... and between the nodes' heads: nothing (one node), NCCL's double binary
 * tree over the nodes (trees.cc), or the fabric's switches reducing
 * (InfiniBand SHARP: each head sends its share up once and receives the sum once). */
typedef enum { PIPE_NONE, PIPE_DTREE, PIPE_SHARP } coll_pipe_inter;

/* Offsets and lengths are in elements of the per-rank working buffer. */
typedef struct xfer {
    int src, dst; /* src == dst is a local copy (no network) */
    size_t src_off, dst_off, len;
    xfer_op op; /* REDUCE: dst[dst_off + i] += src[src_off + i] */
} xfer;

typedef struct coll_params {
    coll_op op;
    coll_algo algo;
    int ranks;
    double bytes;        /* nccl-tests size: the full vector per rank (alltoall: all blocks sent) */
    double chunk_bytes;  /* pipelining unit for tree/chain/dbtree, loop slice for ring; 0 = none */
    int ranks_per_node;  /* hier: ranks per node (0 = 1) */
    int nics_per_node;   /* hier allreduce: parallel inter-node rings per node (0 = ranks_per_node) */
    int dim_x;           /* torus2d: ranks per row (0 = dims[0], else the factor nearest sqrt(ranks)) */
    int dims[3];         /* torus: the grid, dims[0] fastest in rank order (0 = torus2d's); with pods, one pod's */
    int pods;            /* torus2d, torus: the ranks are this many pods of dims' grid, pod-major, joined by a
                            slower network (TPU multislice over the data-centre network): each pod reduce-
                            scatters over its grid, the pods' counterparts allreduce their shard in two
                            opposite rings over the pods, each pod all-gathers (0 or 1: one pod) */
    int channels;        /* ring allreduce: parallel rings (NCCL's channels),
                            each on 1/channels of the vector and entering every node at another of its
                            ranks, so each leaves by another NIC (0 = 1) */
    int node_order[8][16]; /* ring: channel j's order of a node's ranks (all 0 = rank order; j >= 8 reuse j % 8) */
    coll_algo inter;       /* hier allreduce: the inter-node phase, ring (AUTO = ring) or rhd (power-of-two nodes) */
    coll_staging staging;  /* hier allreduce: where the inter-node phase works */
    coll_pipe_intra pipe_intra; /* ALGO_PIPELINE: the shape inside a node (channels: chains, node_order) */
    coll_pipe_inter pipe_inter; /* ALGO_PIPELINE: the shape between the nodes */
    double switch_efficiency;   /* PIPE_SWITCH: what NVLS moves per byte of a port's payload rate (0: 1) */
    /* ALGO_NCCL: what NCCL's environment forces (collectives/nccl.h): NCCL_ALGO and
     * NCCL_PROTO as masks (0: NCCL's defaults) and NCCL_COLLNET_ENABLE. */
    unsigned nccl_algos, nccl_protos;
    int nccl_collnet;
} coll_params;

typedef struct sched_part sched_part;

typedef struct sched_stage {
    int first_part, parts; /* parts[first_part .. +parts) of the schedule */
    int first_step;        /* in the parts' own step numbering */
    int steps;
    int identical;
    int streamed; /* the receiver reduces slices as they arrive: the reduction overlaps the step's transfers */
    int pipelined; /* a pipelined tree's fill, steady state or drain */
    int on_host;   /* STAGING_HOST: the ranks work in their CPU socket's memory, reductions on a CPU thread */
    int staging;   /* +1: the stage's local copies move device memory to host memory; -1: back up */
} sched_stage;

/* When a rank's step ends that became ready at ready_s and whose transfers
 * end at transfers_end_s: its reduction follows them, or overlaps them when
 * the stage is streamed (the receiver reduces slices as they arrive). */
static inline double sched_step_end_s(int streamed, double ready_s, double transfers_end_s, double reduce_s)
{
    return streamed ? fmax(transfers_end_s, ready_s + reduce_s) : transfers_end_s + reduce_s;
}

typedef struct schedule {
    coll_params params;
    int ranks;
    size_t count;      /* elements of the vector (alltoall: all blocks of one rank) */
    size_t buf_elems;  /* per-rank working buffer (alltoall adds receive and scratch areas) */
    double unit_bytes; /* bytes per element */
    int nstages, nparts;
    sched_stage *stages;
    sched_part *parts;
    size_t max_step_xfers; /* an upper bound on the transfers of any step */
    int switched;          /* timing only: switches reduce (NVLS, SHARP), so GPUs copy what they would sum */
    int replicas;          /* independent copies of the collective at once, on consecutive blocks of
                              ranks / replicas ranks (schedule_replicate; 1: one) */
} schedule;

/* Builds the schedule of params (algo must not be AUTO) for a vector of
 * `count` elements of `unit_bytes` each (timing: count = bytes, unit 1). */
int schedule_build(const coll_params *params, size_t count, double unit_bytes, schedule *out,
                   tt_error *err);
void schedule_free(schedule *s);

/* Turns a built schedule into k copies of itself run at once, copy j on
 * ranks j n .. j n + n - 1 of the n k now (several communicators of one
 * layout doing the same collective: their flows share the links). */
void schedule_replicate(schedule *s, int k);

/* Total steps over all stages. */
long schedule_steps(const schedule *s);

/* The transfers timing stage `stage` of s generates, known without
 * generating them: its bound on a step's transfers times the steps
 * generated (an identical stage's one). The simulation's cost estimate
 * (collective_sim.c). */
double schedule_work_xfers(const schedule *s, int stage);

/* The transfers of step `step` of stage `stage` (0 <= step < steps);
 * out holds max_step_xfers entries. Returns how many were written. */
size_t schedule_step(const schedule *s, int stage, int step, xfer *out);

/* A step's network traffic from one rank to another. */
typedef struct coll_flow {
    int src, dst;
    double bytes;
} coll_flow;

/* The transfers of a step merged per (src, dst), sorted by src then dst;
 * local copies dropped. out holds nx entries. Returns how many flows. */
size_t schedule_merge_flows(const schedule *s, const xfer *xs, size_t nx, coll_flow *out);

/* The network shape of a step, known without generating it, so a timing
 * executor on a symmetric fabric can stand a class of identical flows by a
 * few representatives (sim/engine/collective_sim.c). */
typedef enum {
    STEP_GENERAL,     /* anything: generate the step */
    STEP_LOCAL,       /* local copies only: no flow, no reduction */
    STEP_PERMUTATION, /* every rank sends flow_bytes to one other rank and receives from one */
    STEP_ALL_PAIRS,   /* every rank sends flow_bytes to every other rank */
} step_pattern;

/* The pattern of step `step` of stage `stage`; flow_bytes receives the
 * bytes of each flow of a permutation or all-pairs step, reduce_bytes what
 * every rank then reduces (0: copies). */
step_pattern schedule_step_pattern(const schedule *s, int stage, int step, double *flow_bytes,
                                   double *reduce_bytes);

/* Names: "allreduce", "ring", ... Parse returns -1 for an unknown word. */
const char *coll_op_name(coll_op op);
const char *coll_staging_name(coll_staging staging);
/* hier allreduce's option words for a parser, NULL-terminated: stagings in
 * coll_staging order; inter-node phases, whose index coll_inter_algo maps to
 * ALGO_RING or ALGO_RHD. */
const char *const *coll_staging_words(void);
const char *const *coll_inter_words(void);
coll_algo coll_inter_algo(int word);
const char *coll_algo_name(coll_algo a);
int coll_op_parse(const char *word, coll_op *out);
int coll_algo_parse(const char *word, coll_algo *out);
/* The algorithms that exist for op (ALGO_AUTO excluded); returns how many. */
int coll_algos_for(coll_op op, coll_algo *out, int max);
/* Whether algo applies to op on n ranks (why names the reason when not). */
int coll_algo_applies(const coll_params *params, const char **why);

/* Pipeline chunks of a tree/chain for a vector of count elements (>= 1);
 * ALGO_PIPELINE: per channel (chunk_bytes is NCCL's per-channel chunk). */
int coll_chunks(const coll_params *params, size_t count);
/* ALGO_PIPELINE: its lanes (NCCL channels or heads, times the two trees)
 * and the chunks each lane's share of the vector is cut into. */
int coll_pipeline_lanes(const coll_params *params);
int coll_pipeline_chunks(const coll_params *params, size_t count);
/* torus2d: ranks per row. */
int coll_torus_dim_x(const coll_params *params);
/* The grid a torus algorithm runs on (dims[0] fastest): returns its dimensions.
 * With pods, one pod's grid (ranks / pods chips). */
int coll_torus_dims(const coll_params *params, int dims[3]);
/* The pods a torus algorithm spans (params.pods, at least 1). */
int coll_torus_pods(const coll_params *params);

/* nccl-tests' bus bandwidth factor: busbw = algbw * factor. */
double coll_busbw_factor(coll_op op, int ranks);

#endif
