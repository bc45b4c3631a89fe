/* sweep.h: a scenario's sweep (global batches x node counts x any swept
 * paths) as independent points, run opt->jobs at a time in forked workers,
 * one shard of them, or merged from every shard's records; points, errors
 * and the run's description taken in sweep order, so the result never
 * depends on the jobs or the shards. run_sweep_points and run_record_bytes
 * (run.h) are its public half. */
#ifndef TT_SWEEP_H
#define TT_SWEEP_H

#include "common/error.h"
#include "sim/replay/cluster.h"
#include "sim/replay/run_ctx.h"

/* Runs x's sweep into out->points (a shard's: into out->records). base: the
 * scenario's own cluster (NULL when it could not be loaded); out->base is
 * the scenario's own point, reused by the sweep point that asks the same. */
int sweep_run(const run_ctx *x, const cluster *base, const run_options *opt, run_result *out, tt_error *err);

#endif
