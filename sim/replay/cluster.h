/* cluster.h: the scenario's platform at one node count, loaded once, with
 * what every point at that count reads from it: the summary, the priced bill
 * of materials and one node's host cores. A sweep builds one per node count,
 * not one per point and sharding plan. */
#ifndef TT_CLUSTER_H
#define TT_CLUSTER_H

#include "common/error.h"
#include "platforms/platform.h"
#include "sim/replay/cost.h"
#include "sim/replay/scenario.h"

typedef struct cluster {
    int nodes;  /* as asked (0: the scenario's own) */
    platform *p;
    platform_summary sum;
    cost_bill bill;
    int host_cores; /* of one node: its CPU components' cores */
} cluster;

/* Loads sc's platform at `nodes` (0: the scenario's); errors name the
 * scenario and $.platform. */
int cluster_open(const scenario *sc, int nodes, cluster *out, tt_error *err);
void cluster_close(cluster *c);

#endif
