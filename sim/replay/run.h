/* run.h: the main job's pipeline, stage by stage:
 * scenario -> platform + workload trace -> replay (collectives on SimGrid)
 * -> step cost -> steps to target -> time to accuracy, cost, energy. */
#ifndef TT_RUN_H
#define TT_RUN_H

#include <stddef.h>

#include "common/error.h"
#include "platforms/host_rows.h"
#include "sim/replay/cost.h"
#include "platforms/link_usage.h"
#include "sim/replay/scenario.h"
#include "sim/replay/step.h"
#include "trainer/profile.h"

/* One point: the scenario itself, or one combination of its sweep. */
typedef struct run_point {
    char label[160];    /* the swept paths' values ("platform.fabric.oversubscription=2"), "" otherwise */
    char error[1024];   /* why the point could not run (does not fit, batch does not split): its row says so */
    char platform[64];
    int nodes, ranks;
    int cpu_ranks;        /* the ranks are CPU sockets (platform.ranks "cpu") */
    double upi_bytes;     /* CPU ranks: bytes the step's collectives put on UPI links, per link crossed */
    long global_batch;
    int micro_batch, accumulation;
    char allreduce[96], alltoall[96]; /* algorithms that ran ("auto" resolved), with their options; "none" */
    double peak_flops;    /* a rank's at the precision (MFU's denominator) */
    step_result step;
    host_emb_time host; /* embeddings in host memory: per micro-step, phases weighted */
    size_t n_tables;      /* model-parallel tables of the workload (0: none, no plan) */
    sharding_kind plan;   /* of the model-parallel tables (the fastest that fits for "auto") */
    sharding_cost tables; /* the first phase's, on the accelerators (zero in host memory) */
    sharding_mix mix;     /* a plan per table group (n_groups 0: `plan` for every table), autos resolved */
    sharding_cost groups[SHARD_MAX_GROUPS]; /* the first phase's, per group */
    int group_tables[SHARD_MAX_GROUPS];
    double samples_per_s;
    double steps_to_target; /* median */
    double steps_p10, steps_p90; /* the band: 10th and 90th percentiles (convergence.h) */
    double samples_to_target, samples_p10, samples_p90; /* summed over a batch schedule's phases */
    int extrapolated;     /* steps from the fit, outside the profile's points */
    double failed_batch;  /* > 0: the profile's runs did not reach the target at this batch or below */
    double epochs;        /* 0 when the dataset size is unknown */
    double eval_s;        /* evaluation time in time_to_accuracy_s */
    double time_to_accuracy_s, time_to_accuracy_p10_s, time_to_accuracy_p90_s;
    cost per_step, total, total_p10, total_p90;
    cost_bill bill;     /* the cluster's capital cost by component */
    double tco_usd;     /* capex + the lifetime's electricity at this point's average draw */
    double scaling_efficiency; /* samples/s per rank against the sweep's first point */
    /* model parallelism (step_transformer.h): the layout's degrees (all 0
     * for data parallelism alone), chunks per pipeline stage, and tokens
     * per sample (its sequence: tokens_per_s) */
    int parallel[LAYOUT_DIMS];
    int chunks, sequence_parallel;
    double tokens_per_sample;
    resilience_result res; /* interruptions, checkpoints, goodput, stragglers (resilience.h) */
} run_point;

#define RUN_MAX_ASSUMPTIONS 64
/* The most samples one rank takes per step (2^24): far above any batch
 * trained, and its micro-batch search stays short. */
#define RUN_MAX_SAMPLES_PER_RANK (1 << 24)

typedef struct run_result {
    char platform[64], accelerator[64], precision[8], model[64], optimizer[32];
    char allreduce[96], alltoall[96]; /* the scenario's own point's (else the first sweep point's that ran) */
    char convergence[600], target[256];
    int has_recipe;
    profile_recipe recipe; /* the convergence profile's, when it has one */
    double price_per_h_usd, busy_w, idle_w, peak_flops;
    size_t n_assumptions;
    char *assumptions[RUN_MAX_ASSUMPTIONS]; /* "name = value (why)" */
    run_point base;
    size_t n_points; /* sweep points (0 without a sweep) */
    run_point *points;
    size_t n_records; /* a shard's run: every sweep point's record, its own present */
    struct point_outcome *records;
    int n_notes;
    char notes[4][512]; /* a value that has no effect because another overrides it (platform_note) */
    int links_shown;  /* run_options.links: N of `--links N` (0: no link report) */
    link_usage links; /* then: the scenario's own point's links over one step */
} run_result;

/* A sweep point as a worker hands it back, and as a shard records it
 * (sim/cli/shard_record.c): the point, or the error that stops the run. */
typedef struct point_outcome {
    int present, rc, reused;
    tt_error err;
    run_point pt;
} point_outcome;

/* How run_scenario runs the sweep. */
typedef struct run_options {
    int jobs;            /* points at a time in forked workers (<= 1: in this process) */
    int shard, shards;   /* shards > 0 (--shard): run only points i with i mod shards == shard, into records */
    const void *records; /* merge: every point's record from the shards, instead of running them */
    void (*progress)(size_t done, size_t total);
    int links;           /* count the link loads of the scenario's own point (run_result.links) */
    const step_sink *sink; /* not NULL: takes the scenario's own point's step graph (its first phase) */
} run_options;

/* Runs the scenario, then its sweep points as `opt` says; the result is the
 * same for any opt->jobs, and for a merge of every shard's records. With a
 * sweep, a point that cannot run (TT_EINPUT) gets its error and the others
 * run; without one, its error is returned. */
int run_scenario(const scenario *sc, const run_options *opt, run_result *out, tt_error *err);

/* The bytes of one sweep point's record (same build only), and how many points the sweep has. */
size_t run_record_bytes(void);
size_t run_sweep_points(const scenario *sc);
void run_result_free(run_result *r);

#endif
