/* layout_search.h: the parallel layouts of a transformer scenario on its
 * platform, searched (`ttasim plan`). Every layout the model, the ranks and
 * the batch allow is enumerated: tensor degrees dividing the heads (and key
 * and value heads) within a node, pipeline stages splitting the blocks
 * evenly or with fewer on the first and last virtual stage, context, expert
 * (MoE models), virtual stages, micro-batch, ZeRO 1-2, recomputation, and
 * sequence parallelism whenever tensor > 1. Each is screened by the step with
 * contention-free closed-form collectives (one ring per communicator at its
 * slowest hop): a layout that does not fit in memory stops there, its reason
 * counted. The fastest screened are then simulated as `ttasim run` runs them
 * (collectives on SimGrid) and ranked by step time, the scenario's own layout
 * beside them. Same result for any number of jobs. The simulations (the
 * expensive part) can be split into shards, each simulating its share after
 * the whole screen, and merged back into the same result. */
#ifndef TT_LAYOUT_SEARCH_H
#define TT_LAYOUT_SEARCH_H

#include <stddef.h>

#include "common/error.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"

typedef enum { LS_RECOMPUTE_NONE, LS_RECOMPUTE_SELECTIVE, LS_RECOMPUTE_FULL } ls_recompute;

/* One layout, as the scenario's parallel and workload keys give it. */
typedef struct ls_layout {
    int tensor, pipeline, context, expert; /* degrees (expert: Megatron-Core's, carved out of the data ranks) */
    int data;                              /* dense data-parallel degree: the ranks over the others */
    int virtual_stages, first_stage_layers, last_stage_layers; /* ends: 0 for an even split */
    int stage_layers;                                          /* blocks on each other virtual stage */
    int micro_batch, zero, recompute, sequence_parallel;       /* recompute: an ls_recompute */
    long global_batch;
} ls_layout;

/* Why a screened layout was dropped. */
typedef enum {
    LS_PRUNE_STATE,       /* parameters, gradients and optimizer state alone exceed the device's memory */
    LS_PRUNE_ACTIVATIONS, /* with the activations of the micro-batches in flight */
    LS_PRUNE_OTHER,       /* another input error (the first is kept in layout_search_result.other) */
    LS_PRUNES
} ls_prune;

/* Why an enumerated combination is not a layout at all. */
typedef enum {
    LS_REJECT_RANKS, /* the degrees do not divide the ranks (or the expert size the data ranks) */
    LS_REJECT_MODEL, /* blocks, heads or experts do not split */
    LS_REJECT_BATCH, /* the global batch does not split into the micro-batch on the data ranks (in
                        rounds of the pipeline's stages for the interleaved schedule) */
    LS_REJECTS
} ls_reject;

/* A layout's communicators: tensor, context, expert, the dense gradients'
 * data-parallel group (data x context) and the pipeline's stages. */
typedef enum { LS_COMM_TP, LS_COMM_CP, LS_COMM_EP, LS_COMM_DP, LS_COMM_PP, LS_COMMS } ls_comm_kind;

/* Which links a communicator's group crosses (its first group; the others
 * are alike): the nodes it spans, the NICs a node's members leave it by, the
 * class of the links between members of one node, and the rate of a ring
 * over the group at its slowest hop, NCCL's channel per NIC counted (the
 * screen's rate). */
typedef struct ls_comm {
    int size;          /* ranks in a group (1: the layout has none) */
    int nodes;         /* nodes the group spans */
    int nics;          /* NICs per node it leaves by (0: it stays in a node) */
    char node_link[16]; /* class of the link between its members of a node ("nvlink4"; "" when one a node) */
    double ring_Bps;   /* 0 for a group of one rank */
} ls_comm;

typedef struct ls_row {
    ls_layout l;
    size_t index;    /* in the enumeration (ties broken by it) */
    double screen_s; /* the screen's step time */
    run_point pt;    /* simulated: pt.error says why when it could not run */
    ls_comm comm[LS_COMMS];
} ls_row;

typedef struct layout_search_options {
    int top;        /* rows to rank (>= 1) */
    int simulate;   /* the fastest screened layouts simulated (>= top) */
    int jobs;       /* tasks at a time in forked workers */
    int tensor_max; /* the largest tensor degree (0: a node's ranks) */
    int context_max; /* the largest context degree (0: 8) */
    unsigned zero_mask;      /* ZeRO stages searched, bit z for stage z (0: stages 1, 2 and 3) */
    unsigned recompute_mask; /* recomputations searched, bit r for ls_recompute r (0: all three) */
    int no_sequence_parallel; /* tensor > 1 without sequence parallelism (as before Korthikanti et al. 2022) */
    size_t n_batches; /* global batches searched (0: the scenario's) */
    const long *batches;
    void (*progress)(int stage, size_t done, size_t total); /* stage 0: screen, 1: simulation */
    /* Simulation k is the k-th fastest screened layout, the last the scenario's own. shards > 0: run only
     * those with k mod shards == shard, into the result's records. take_records (a merge): fill every
     * simulation's record (n of them) from the shards instead of running them. */
    int shard, shards;
    int (*take_records)(void *ctx, size_t n, point_outcome *records, tt_error *err);
    void *records_ctx;
} layout_search_options;

typedef struct layout_search_result {
    int ranks, ranks_per_node;
    double device_mem_bytes;
    size_t combinations;          /* degrees x micro-batch enumerated (ZeRO and recomputation apart) */
    size_t rejected[LS_REJECTS];  /* not a layout */
    size_t screened;              /* layouts screened */
    size_t pruned[LS_PRUNES];
    char other[1024];             /* the first LS_PRUNE_OTHER error */
    size_t feasible;              /* screened layouts that fit */
    size_t n_rows;                /* simulated, fastest step first (failures last) */
    ls_row *rows;
    ls_row own;                   /* the scenario's own layout, simulated (own.pt.error: why not) */
    int own_in_space;             /* the search enumerated it */
    double own_screen_rank;       /* its place among the feasible screened (1: first; 0: not screened) */
    size_t n_error;               /* rows the screen's error is taken over (simulated ones that ran) */
    double screen_err_mean, screen_err_max, screen_err_bias; /* |screen / simulated - 1|: mean and most; signed mean */
    int has_target;               /* the scenario has a convergence target (rows then have a time to it and a cost) */
    size_t n_records;             /* a shard: every simulation (rows and own are not filled), its own present */
    point_outcome *records;
} layout_search_result;

/* Searches sc's layouts on its platform at its node count. Fails (TT_EINPUT)
 * for a workload that is not one transformer phase, or when no layout fits. */
int layout_search_run(const scenario *sc, const layout_search_options *opt, layout_search_result *out,
                      tt_error *err);
void layout_search_free(layout_search_result *r);

/* The layout's scenario keys as `ttasim run --set` takes them, space-separated
 * "--set PATH=VALUE" words; returns the length written (truncated to len). */
int layout_search_sets(const ls_layout *l, char *buf, size_t len);

/* The layout in words: "tp 2 (sp) pp 4 x 2 chunks cp 1 ep 1 dp 2 mb 1 zero 1 recompute full". */
void layout_search_words(const ls_layout *l, char *buf, size_t n);

/* "tp", "cp", "ep", "dp", "pp". */
const char *layout_search_comm_name(ls_comm_kind k);

/* "none", "selective", "full". */
const char *layout_search_recompute_name(int recompute);

#endif
