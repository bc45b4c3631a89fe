/* point.h: one point of a run, the scenario at one node count (its cluster),
 * global batch and sharding plan: the batch split over the ranks, the step's
 * collectives and host-memory embeddings on SimGrid, each workload phase
 * replayed per rank (step.c), the input pipeline, then steps, time, cost and
 * energy to the target. */
#ifndef TT_POINT_H
#define TT_POINT_H

#include "common/error.h"
#include "platforms/link_usage.h"
#include "sim/replay/cluster.h"
#include "sim/replay/coll_timing.h"
#include "sim/replay/run_ctx.h"
#include "sim/replay/sharding.h"

/* The point under `plan` for every table, or with mix (not NULL) a plan per
 * table group. probe (a plan search's candidate): a plan whose memory does
 * not fit gives step.time_s = +inf instead of an error. links (not NULL):
 * the step's link loads. */
int point_run(const run_ctx *x, const cluster *c, long global_batch, sharding_kind plan, const sharding_mix *mix,
              int probe, link_usage *links, run_point *pt, tt_error *err);

/* How a point's collectives are timed: coll_timing_run (SimGrid), or a
 * search's estimate with the same contract. */
typedef int (*point_timer)(const scenario *sc, const layout *l, const platform *p, const step_coll *c, size_t n,
                           const double *per_step, coll_times *t, link_usage *links, tt_error *err);

/* The point under the scenario's plan with its collectives timed by `timer`
 * (a layout search's screen): no links. A phase that fails keeps its memory
 * in pt->step.memory (the busiest rank's when it does not fit). */
int point_screen(const run_ctx *x, const cluster *c, long global_batch, point_timer timer, run_point *pt,
                 tt_error *err);

/* The point's interruptions, checkpoints and goodput and its time to accuracy
 * with them (pt->res, resilience.h), once its time to accuracy is final
 * (after a batch schedule's phases). */
void point_failures(const run_ctx *x, const cluster *c, run_point *pt);

/* A point that cannot run (its batch does not split over the ranks, it does
 * not fit in memory, a swept value the platform refuses: TT_EINPUT) keeps
 * its error in pt; returns TT_OK then, other failures as they are. */
int point_failed(int rc, run_point *pt, tt_error *err);

#endif
