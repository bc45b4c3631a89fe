/* link_tally.h: counting, inside a simulation, the bytes of every flow on
 * every link of its route (SimGrid's own route, so what is counted is what
 * SimGrid shared). Engine-private: it names SimGrid hosts. */
#ifndef TT_LINK_TALLY_H
#define TT_LINK_TALLY_H

#include <simgrid/forward.h>

#include "platforms/link_usage.h"

typedef struct link_tally link_tally;

/* NULL when out of memory. */
link_tally *link_tally_create(void);
/* bytes from src to dst, repeated times (an identical stage run once and
 * extrapolated counts all its steps). Returns -1 when out of memory. */
int link_tally_add(link_tally *t, sg_host_t src, sg_host_t dst, double bytes, double times);
/* bytes on link l, or (owner >= 0) on the link of the whole platform that l
 * of a folded one stands for (platform_owner_index; each such pair added
 * once). Returns -1 when out of memory. */
int link_tally_add_link(link_tally *t, sg_link_t l, long owner, double bytes);
/* The busiest links, described by the platform; then frees t. Returns -1
 * when out of memory (out is then empty). */
int link_tally_finish(link_tally *t, const platform *p, link_usage *out);

#endif
