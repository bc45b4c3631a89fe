/* run_ctx.h: what the stages of a run share, private to sim/replay/'s run
 * modules (run.c, point.c, plan_search.c, sweep.c, assumptions.c): a
 * scenario's workload traces and convergence model, loaded once and shared
 * by the points that agree on them. The stages read it and return their
 * results; only run.c fills the run_result. */
#ifndef TT_RUN_CTX_H
#define TT_RUN_CTX_H

#include "common/error.h"
#include "sim/replay/cluster.h"
#include "sim/replay/convergence.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"
#include "sim/replay/workload.h"

typedef struct run_ctx {
    const scenario *sc;
    workload tr[SCENARIO_MAX_PHASES];
    convergence *conv;
    /* the scenario's, else the first trace's */
    char model[64], precision[16];
    const optim_info *optimizer;
    char conv_notes[CONVERGENCE_MAX_NOTES + 1][512]; /* mismatches accepted, the run spread assumed */
    int n_conv_notes;
    struct chakra_trace *chakra; /* $.workload.chakra: the step replayed from it (chakra.h) */
    const step_sink *sink;       /* the own point's step graph goes there (run_options.sink) */
} run_ctx;

/* Loads sc's traces (a model's made at the scenario's samples per rank: c's
 * ranks when c is at sc's node count, else the platform loaded for them) and
 * its convergence model. */
int run_ctx_load(run_ctx *x, const scenario *sc, const cluster *c, tt_error *err);
void run_ctx_free(run_ctx *x);

/* Whether the workload has model-parallel tables a sharding plan applies to. */
int run_ctx_has_tables(const run_ctx *x);

/* The run's platform, algorithms and assumptions, named by the first point
 * that ran (the scenario's own, else the first of its sweep). */
void run_describe(run_result *r, const run_ctx *x, const cluster *c, const run_point *pt);

#endif
