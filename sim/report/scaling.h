/* scaling.h: where more accelerators stop paying off. Over a sweep of node
 * counts (and batches), the fastest point to the target at each size, and
 * against the size before it how much of the ideal speedup (the ranks'
 * ratio) it kept and what took the rest: more tokens to the target (the
 * batch grew past the critical batch: data efficiency) or more accelerator
 * time per sample (communication, bubbles, smaller per-rank work). */
#ifndef TT_SCALING_H
#define TT_SCALING_H

#include <stddef.h>

#include "sim/replay/run.h"

typedef struct scaling_row {
    const run_point *best; /* the fastest to the target at this node count */
    double speedup;        /* its time to accuracy against the row before (0: the first row) */
    double efficiency;     /* speedup / the ranks' ratio */
    double tokens_ratio;   /* samples to the target against the row before's */
    double rank_time_ratio; /* accelerator-seconds per sample against the row before's */
} scaling_row;

/* The rows in increasing node count, at most cap; 0 when fewer than two node
 * counts ran or the sweep varies other paths (their points are not alike). */
size_t scaling_rows(const run_result *r, scaling_row *out, size_t cap);

/* What limited a row's efficiency: "data efficiency", "per-sample time" or
 * "-" (neither cost more than 5 %). */
const char *scaling_limit(const scaling_row *row);

#endif
