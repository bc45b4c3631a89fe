/* sharding.h: how a DLRM's model-parallel embedding tables are spread over
 * the ranks (the plans of TorchRec and HugeCTR), and what one micro-step of a
 * plan costs the busiest rank: memory traffic of the lookups and of the sparse
 * update (by the rows a batch touches, from the index distribution), the
 * collectives the plan needs, and the tables' memory with their optimizer
 * state. No simulator: coll_timing.c times the collectives, step.c the timeline. */
#ifndef TT_SHARDING_H
#define TT_SHARDING_H

#include "sim/replay/workload.h"

typedef enum {
    SHARD_TABLE_WISE,    /* whole tables on ranks; alltoall of pooled vectors fwd and bwd */
    SHARD_ROW_WISE,      /* every table's rows split over the ranks; reduce-scatter fwd, all-gather bwd */
    SHARD_COLUMN_WISE,   /* every table's columns split over the ranks; alltoall fwd and bwd */
    SHARD_DATA_PARALLEL, /* every table on every rank; allreduce of the tables' gradients */
    SHARD_HYBRID,        /* hottest rows on every rank (allreduced), the rest table-wise */
    SHARD_HOST,          /* tables in the CPU sockets' memory (host_embedding.h) */
    SHARD_COUNT,
    SHARD_AUTO = SHARD_COUNT /* the fastest plan that fits (plan_search.c) */
} sharding_kind;

/* "table_wise", ..., "host", "auto", NULL: the scenario's choices. */
extern const char *const SHARDING_NAMES[];

/* Where a step's embedding tables live: the ranks' memory, or the CPU
 * sockets' (SHARD_HOST, workload.embeddings "host"). */
typedef enum { EMB_ACCELERATORS = 0, EMB_HOST = 1 } embedding_placement;

typedef enum { EMB_SGD = 0, EMB_ROWWISE_ADAGRAD = 1 } embedding_optimizer;
extern const char *const EMBEDDING_OPTIMIZER_NAMES[]; /* "sgd", "rowwise_adagrad", NULL */

/* How each shard gets the ids of its lookups: a reader per rank that loads
 * them from storage (NVIDIA's DLRM, HugeCTR), or TorchRec's input alltoall
 * of the batch's KeyedJaggedTensor (workload.embedding.ids). */
typedef enum { IDS_READER = 0, IDS_ALLTOALL = 1 } embedding_ids;
extern const char *const EMBEDDING_IDS_NAMES[]; /* "reader", "alltoall", NULL */

typedef struct sharding_options {
    int ranks;
    int micro_batch;         /* samples per rank per micro-step */
    int table_dtype_bytes;   /* the tables as stored */
    int act_dtype_bytes;     /* pooled vectors and their gradients (the scenario's precision) */
    int grad_dtype_bytes;    /* replicated rows' gradients as allreduced */
    int master_weights;      /* an fp32 master copy of low-precision tables */
    embedding_optimizer optimizer;
    double zipf_s;           /* the lookups' Zipf exponent */
    /* What the hybrid plan's per-step costs are timed with: the device's
     * achieved memory bandwidth and per-kernel dispatch, and its collectives
     * as the step runs them, latency + bytes per rank x seconds per byte
     * (point.c: NCCL's model of its allreduce, an alltoall at its links'). */
    double mem_Bps, dispatch_s;
    double allreduce_latency_s, allreduce_s_per_byte;
    double alltoall_latency_s, alltoall_s_per_byte;
    int node_ranks; /* ranks per node: more ranks than this is HugeCTR's multi-node path */
    embedding_ids ids;
} sharding_options;

/* Per micro-step on the busiest rank unless said otherwise; bytes per rank. */
typedef struct sharding_cost {
    sharding_kind kind;
    double lookup_bytes;   /* forward: rows read, pooled vectors written */
    double lookup_flops;   /* the pooling adds */
    double update_bytes;   /* backward: pooled gradients, their expansion per lookup, the sparse update */
    double update_flops;
    double lookups;        /* rows looked up */
    double unique_rows;    /* distinct rows updated */
    double alltoall_bytes; /* each direction (0: none) */
    double reduce_scatter_bytes, allgather_bytes; /* row-wise: forward, backward */
    double allreduce_bytes; /* replicated rows' gradients, once per optimizer step */
    double hot_rows;        /* hybrid: rows replicated on every rank (all tables) */
    double hot_lookup_share; /* hybrid: of the lookups, the share hitting replicated rows */
    /* hybrid: handling the batch's ids before the lookups (sorting each into
     * frequent or model-parallel, the per-rank index lists and counts) and
     * the frequent set's dense passes: bytes, kernels, and their device
     * seconds per micro-step (each kernel at least the dispatch time) */
    double index_bytes, index_kernels, index_s;
    /* forward, before the lookups: the ids (and per-sample lengths) this
     * rank's shards need for the micro-step's samples, and the seconds of
     * their input alltoall (0 when a reader per rank loads them) */
    double id_bytes, id_s;
    double params_bytes, optimizer_bytes, gradient_bytes; /* the tables' memory on the busiest rank */
} sharding_cost;

/* The cost of plan k (not SHARD_AUTO; SHARD_HOST: the memory on the
 * accelerator is none and the traffic is the host's, see step_host_load_of). */
void sharding_cost_of(const workload_embedding *e, sharding_kind k, const sharding_options *o,
                      sharding_cost *out);

/* A plan per table group (workload.embedding.sharding as an array): a table
 * joins the first group whose max_rows it does not exceed; the last group
 * has none (0) and takes the rest. Plans: not SHARD_HOST (node-wide); a
 * group's SHARD_AUTO is resolved by plan_search.c before costing. */
#define SHARD_MAX_GROUPS 8
typedef struct sharding_mix {
    int n_groups; /* 0: one plan for every table */
    double max_rows[SHARD_MAX_GROUPS];
    sharding_kind plan[SHARD_MAX_GROUPS];
} sharding_mix;

/* The group table `rows` belongs to. */
int sharding_group_of(const sharding_mix *m, double rows);

/* Whether the groups' collectives fit the step's one collective per
 * embedding comm point: row-wise (reduce-scatter, all-gather) does not mix
 * with the alltoall plans (table-, column-wise, hybrid); data-parallel mixes
 * with either (its allreduce is apart). NULL when they fit, else why. */
const char *sharding_mix_conflict(const sharding_mix *m);

/* Each group's cost (group[g], its tables' count in tables[g]) and their sum
 * in *out (kind: the first group's). Traffic, collectives and memory add up
 * over the groups: exact when at most one group places its tables unevenly
 * (table-wise, hybrid), else an upper bound on the busiest rank. */
void sharding_mix_cost_of(const workload_embedding *e, const sharding_mix *m, const sharding_options *o,
                          sharding_cost *out, sharding_cost group[SHARD_MAX_GROUPS], int tables[SHARD_MAX_GROUPS]);

#endif
