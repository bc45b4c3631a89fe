/* batch_schedule.h: a run whose global batch changes during training (GPT-3's
 * ramp given as its steps, Llama 3's doublings): phases at their own batch for
 * a number of tokens or samples, then the point's own batch until the target.
 *
 * A phase of n steps at batch b covers n / S(b) of the way to the target,
 * S(b) being the convergence source's steps at b (McCandlish et al. 2018's
 * model read as progress per step, 1 / S_min (1 + B_crit / b), whatever the
 * source); the run ends when the fractions sum to 1. Each phase runs at its own
 * step time and cost, the point simulated again at its batch. */
#ifndef TT_BATCH_SCHEDULE_H
#define TT_BATCH_SCHEDULE_H

#include "common/error.h"
#include "common/jsonx.h"
#include "platforms/link_usage.h"

#define BATCH_SCHEDULE_MAX 8

typedef struct batch_schedule {
    int n;                            /* phases before the point's own batch (0: none) */
    long global_batch[BATCH_SCHEDULE_MAX];
    double amount[BATCH_SCHEDULE_MAX]; /* tokens or samples the phase trains on */
    int in_tokens[BATCH_SCHEDULE_MAX];
} batch_schedule;

/* convergence.batch_schedule: [{"global_batch", "tokens" | "samples"}, ...]. */
int batch_schedule_load(const jx_obj *conv, batch_schedule *out);

/* The schedule in words, for the run's assumptions ("" without one). */
void batch_schedule_describe(const batch_schedule *s, char *buf, size_t len);

struct run_ctx;
struct cluster;
struct run_point;

/* The point at a global batch (plan_search_point), then, with the scenario's
 * schedule, its steps, tokens, time, cost and energy to the target summed over
 * the phases, each phase's step simulated at its batch. Also fills the tokens
 * to the target of a language model. */
int batch_schedule_point(const struct run_ctx *x, const struct cluster *c, long global_batch, link_usage *links,
                         struct run_point *pt, tt_error *err);

#endif
