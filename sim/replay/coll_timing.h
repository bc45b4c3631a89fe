/* coll_timing.h: the step's collectives timed on SimGrid, one simulation per
 * point. A collective's time on a fixed platform and algorithm is affine in
 * its size (each round costs latency plus bytes over its bandwidth share, and
 * the reductions are linear), so per operation only the smallest and largest
 * sizes are simulated and the other buckets interpolated between them: two
 * SimGrid runs per operation however many bucket sizes the trace has. */
#ifndef TT_COLL_TIMING_H
#define TT_COLL_TIMING_H

#include <stddef.h>

#include "common/error.h"
#include "platforms/link_usage.h"
#include "platforms/platform.h"
#include "sim/replay/layout.h"
#include "sim/replay/scenario.h"
#include "sim/replay/step.h"

#define COLL_TIMING_NAME_BYTES 96

typedef struct coll_times {
    double *coll_s;    /* per collective: its duration (0: nothing to move) */
    double *wire_s;    /* the part its bytes hold the links (step_options.coll_wire_s) */
    double *upi_bytes; /* NULL, or (CPU ranks) its bytes over each UPI link it crosses */
    /* the algorithms that ran ("auto" resolved) with their options, as the report names them; "none" */
    char allreduce[COLL_TIMING_NAME_BYTES], alltoall[COLL_TIMING_NAME_BYTES];
} coll_times;

/* Times the n collectives c (arrays of t sized n by the caller) with the
 * scenario's algorithms on p, each on every communicator of its layout
 * dimensions at once (step_coll.dims of layout l). links (not NULL): the step's link loads,
 * collective i counted per_step[i] times, each scaled from its operation's
 * largest simulated size (the bytes on a link are linear in the size too). */
int coll_timing_run(const scenario *sc, const layout *l, const platform *p, const step_coll *c, size_t n,
                    const double *per_step, coll_times *t, link_usage *links, tt_error *err);

#endif
