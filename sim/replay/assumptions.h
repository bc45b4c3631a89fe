/* assumptions.h: what a run states it assumed, one "name = value (why)" each:
 * the platform's and the scenario's own, the convergence model's, the --set
 * values, then what the point's sharding plan, input pipeline, attention,
 * activations, optimizer and ownership take for granted. */
#ifndef TT_ASSUMPTIONS_H
#define TT_ASSUMPTIONS_H

#include "sim/replay/cluster.h"
#include "sim/replay/run_ctx.h"

/* Appends one (at most RUN_MAX_ASSUMPTIONS in all). */
void assumptions_add(run_result *r, const char *text);

/* The run's assumptions and the platform's notes, named by the point `pt`
 * that ran on c (r's accelerator and price already set). */
void assumptions_note(run_result *r, const run_ctx *x, const cluster *c, const run_point *pt);

#endif
