/* collective_fluid.h: a round of thousands of flows timed without one huge
 * sharing solve (engine-private: it names SimGrid hosts).
 *
 * SimGrid re-solves the sharing of every flow coupled to a flow that ends,
 * and on a fat tree every flow crosses the leaf and spine links: a tree's
 * round of 32,000 flows re-solves 32,000 flows thousands of times. Links
 * that cannot limit anyone (what the slowest other link of each flow on them
 * can feed them is at most their bandwidth: a node's port behind its NICs, a
 * non-blocking fabric) couple nothing. Through the others flows fall into
 * small components, each solved here with SimGrid's own CM02 sharing: the
 * route's latency first, then max-min fair shares with equal weights, each
 * flow also loading its reverse route with 5 % of its rate (cross-traffic);
 * shares re-solved whenever a flow of the component starts or ends. */
#ifndef TT_COLLECTIVE_FLUID_H
#define TT_COLLECTIVE_FLUID_H

#include <stddef.h>

#include <simgrid/forward.h>

#include "collectives/schedule.h"
#include "platforms/platform.h"
#include "sim/engine/link_tally.h"

typedef struct coll_fluid coll_fluid;

/* Whether rounds on p may be solved here: a built-in platform (no user XML,
 * whose link classes are known) with one switch or a fat tree (rails
 * included) without oversubscription. */
int coll_fluid_applies(const platform *p);

/* For the n ranks on hosts (kept, not copied): SimGrid's routes between them
 * are cached across rounds. With fold (a platform loaded folded,
 * platform_fold_nodes), routes are the folded platform's between the ranks
 * standing for ranks[src] and ranks[dst] (platform ranks, kept), each link
 * told apart by the node or leaf it stands for. From an actor; NULL when out
 * of memory. */
coll_fluid *coll_fluid_create(const sg_host_t *hosts, int n, const platform *fold, const int *ranks);
void coll_fluid_free(coll_fluid *s);

/* One round: clock_s[r] (n entries) holds when rank r is ready (all 0: a
 * synchronous round); each flow (sorted by src) starts when both its ranks
 * are, the round's flows sharing links while they overlap (in a component of
 * more than 256 flows, as if they all overlapped); rank r then
 * reduces reduce_bytes[r] at gamma seconds per byte (alongside its transfers,
 * from its ready time, when streamed). clock_s[r] receives when rank r is
 * done (its ready time when idle). Returns -1 when out of memory. */
int coll_fluid_round(coll_fluid *s, const coll_flow *flows, size_t nf, const double *reduce_bytes, double gamma,
                     int streamed, double *clock_s);

/* --links: adds each flow's bytes, times over, to every link of its route
 * (the cached routes: no SimGrid route lookup per flow); with fold, to the
 * link of the whole platform each folded one stands for. -1 when out of
 * memory. */
int coll_fluid_tally(coll_fluid *s, const coll_flow *flows, size_t nf, double times);
/* Moves the counts into t (link_tally_add_link), links in order of first
 * use, and clears them. -1 when out of memory. */
int coll_fluid_tally_flush(coll_fluid *s, link_tally *t);

#endif
