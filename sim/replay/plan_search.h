/* plan_search.h: the sharding plan of a point's model-parallel tables: the
 * scenario's, or for "auto" every plan tried and the fastest that fits kept
 * (host memory only on platforms with CPU sockets), or per table group each
 * "auto" group in turn. */
#ifndef TT_PLAN_SEARCH_H
#define TT_PLAN_SEARCH_H

#include "common/error.h"
#include "platforms/link_usage.h"
#include "sim/replay/cluster.h"
#include "sim/replay/run_ctx.h"

/* The point at c's node count and a global batch under its plan (point_run
 * for the search's winner); links (not NULL): the winner's step link loads. */
int plan_search_point(const run_ctx *x, const cluster *c, long global_batch, link_usage *links, run_point *pt,
                      tt_error *err);

#endif
