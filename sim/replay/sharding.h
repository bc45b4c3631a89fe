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
    SHARD_HYBRID,        /* frequent rows on every rank (allreduced), the rest dealt round-robin over the ranks */
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

/* HugeCTR's hybrid embedding as its HybridEmbeddingParam sets it
 * (HugeCTR/src/embeddings/hybrid_embedding/calibration_data.cu: which
 * categories are frequent; hybrid_sparse_embedding.cu: whether the data
 * reader computes a step's indices ahead of it). */
typedef struct hybrid_params {
    double p_dup_max; /* one node: the chance a frequent category repeats in a GPU's batch */
    /* across nodes: the bandwidths HugeCTR's threshold weighs (not the platform's) and their ratio's factor */
    double all_to_all_Bps, all_reduce_Bps, efficiency_bandwidth_ratio;
    int precomputed_indices; /* use_train_precompute_indices: the data reader sorts the ids ahead */
} hybrid_params;

/* HugeCTR's defaults (its JSON parser and HybridEmbeddingParam docs). */
#define HYBRID_PARAMS_DEFAULT ((hybrid_params){0.01, 1.9e11, 1.3e11, 1.0, 0})

typedef struct sharding_options {
    int ranks;
    int micro_batch;         /* samples per rank per micro-step */
    int table_dtype_bytes;   /* the tables as stored */
    int act_dtype_bytes;     /* pooled vectors and their gradients (the scenario's precision) */
    int grad_dtype_bytes;    /* replicated rows' gradients as allreduced */
    int master_weights;      /* an fp32 master copy of low-precision tables */
    embedding_optimizer optimizer;
    double zipf_s;           /* the lookups' Zipf exponent */
    /* What the hybrid plan's index kernels are timed with: the device's
     * achieved memory bandwidth and per-kernel launch; the ids' input
     * alltoall: latency + bytes per rank x seconds per byte (point.c: at
     * what bounds it, a node's NICs or a GPU's links). */
    double mem_Bps, dispatch_s;
    double alltoall_latency_s, alltoall_s_per_byte;
    int node_ranks; /* ranks per node: more ranks than this is HugeCTR's multi-node path */
    embedding_ids ids;
    hybrid_params hybrid;
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
     * the frequent set's own kernels and dense passes: bytes and kernels per
     * micro-step, and the device seconds the step waits for them (each
     * kernel at least the dispatch time; the index kernels not at all when
     * the data reader runs them ahead: hybrid_params.precomputed_indices) */
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
