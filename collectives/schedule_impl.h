/* schedule_impl.h: the parts schedules are made of (private to collectives/). */
#ifndef TT_SCHEDULE_IMPL_H
#define TT_SCHEDULE_IMPL_H

#include "collectives/schedule.h"

typedef enum {
    P_RING_RS, P_RING_AG,          /* rings over each group, direction dir */
    P_RH_RS, P_RD_AG, P_RD_AR,     /* recursive halving / doubling, power-of-two groups */
    P_FOLD_IN, P_FOLD_OUT,         /* non-power-of-two pre/post step of the first fold_pairs pairs */
    P_BIN_REDUCE, P_BIN_BCAST,     /* binomial trees rooted at index 0, whole range */
    P_BIN_SCATTER, P_BIN_GATHER,   /* binomial trees moving blocks */
    P_TREE_REDUCE, P_TREE_BCAST,   /* pipelined heap trees of `arity` (1 = chain) */
    P_DIRECT_RS, P_DIRECT_AG,      /* one step, all pairs */
    P_A2A_PAIRWISE, P_A2A_DIRECT, P_A2A_BRUCK, P_A2A_HIER,
    P_STAGE,                       /* one step: every member copies its group's range onto itself (host staging) */
    P_PIPE,                        /* pipelined edges: chunk x crosses edge e at step x + e.delay (pipeline.c) */
} part_kind;

/* One edge of a pipelined part: ranks, the step chunk 0 crosses it, whether
 * the receiver adds, and how many of the chunk's bytes it carries per byte
 * (an NVSwitch moves NVLS's shares at (g+1)/(2(g-1)) of a direct exchange). */
typedef struct pipe_edge {
    int src, dst;
    int delay;
    xfer_op op;
    float wire;
} pipe_edge;

/* Index i of group g is rank g*gstride + i*istride. Group g works on
 * [off, off+len) of each member's buffer, or on its g-th of `groups` blocks
 * when split. Torus rings (tnd > 0) instead: group g counts the grid points
 * of the other dimensions, index i the coordinate along tdim, and the group
 * works on the nested block its coordinates in the dimensions torder[0..tnest)
 * select (what the earlier reduce-scatter phases left it). */
struct sched_part {
    part_kind kind;
    int groups, gsize, gstride, istride;
    int fold;       /* indices count the survivors of a fold of `fold` pairs */
    int fold_pairs; /* FOLD_IN/OUT: how many leading pairs fold */
    size_t off, len;
    int split;
    int dir;        /* rings: +1 or -1 */
    int arity;      /* trees: children per node (1 = chain) */
    int mirror;     /* trees: positions counted from the last index (NCCL's second tree) */
    int chunks;     /* trees: pipeline chunks */
    int tnd, tdim, tdims[4]; /* torus rings: the grid (tdims[0] fastest; a multi-pod's pods last), the
                                dimension the rings run along */
    int tnest, torder[4];    /* torus rings: the dimensions reduced before this one, in order */
    int node_size, rot;      /* channel rings: ranks per node and this ring's rotation inside each node */
    int order[16];           /* channel rings: a node's ranks in ring order */
    int sub, subs;  /* channel rings of reduce-scatter/allgather: each block's piece sub of subs */
    size_t block;   /* alltoall: elements per peer */
    int per_node;   /* alltoall hier: ranks per node */
    pipe_edge *edges; /* P_PIPE: owned by the schedule (schedule_free), by delay (stable) */
    int *delay_off;   /* P_PIPE: edges of delay d are edges[delay_off[d] .. delay_off[d + 1]), d < ndelays */
    int nedges, max_delay, ndelays;
};

int ilog2_floor(int n);
int ilog2_ceil(int n);
void block_of(size_t off, size_t len, int k, int j, size_t *b_off, size_t *b_len);
int part_steps(const sched_part *p);
int part_tree_depth(const sched_part *p);
size_t part_max_xfers(const sched_part *p);
size_t part_gen(const sched_part *p, int t, xfer *out, size_t n);
size_t gen_alltoall(const sched_part *p, int t, xfer *out, size_t n);
size_t gen_pipe(const sched_part *p, int t, xfer *out, size_t n);
/* ALGO_PIPELINE's parts and stages (pipeline.c). */
int build_pipeline(schedule *s, const coll_params *pp, size_t count);
int sched_add_part(schedule *s, const sched_part *p);
int sched_add_stage(schedule *s, int first_part, int parts, int first_step, int steps, int identical);
/* Marks stages [first, s->nstages) as working in host memory. */
void sched_mark_host(schedule *s, int first);

#endif
