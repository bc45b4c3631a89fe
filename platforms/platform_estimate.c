/* What loading a platform into SimGrid 3.32 will cost, before it is written:
 * the writer's object counts (plat_xml_count) times per-object costs
 * measured on this machine. How each constant was measured is in
 * platforms/README.md ("Load estimate"); `platforms/calibration/measure-load.sh`
 * re-measures them. */
#include "platforms/platform.h"

#include "platforms/platform_impl.h"

/* Resident bytes per object (ru_maxrss slopes between 3 sizes, 2x apart). */
#define HOST_BYTES 1220.0       /* a <host> in a Dijkstra zone: 20k-80k hosts */
#define ROUTER_BYTES 210.0      /* a <router>: 20k-80k */
#define LINK_BYTES 1475.0       /* a SPLITDUPLEX <link> (two links): 20k-80k */
#define ROUTE_BYTES 84.0        /* a <route>, beyond its links: 40k-160k routes of 1, 4, 8 links */
#define ROUTE_LINK_BYTES 7.0    /* a <link_ctn> in a route (bypass routes: the same, 80k routes of 1 and 8 links) */
#define EDGE_BYTES 141.0        /* a <route> in a Dijkstra zone (graph edge), beyond its links: 40k-160k */
#define BYPASS_BYTES 130.0      /* a <bypassRoute>, beyond its links: 40k-160k */
#define ZONE_BYTES 1840.0       /* a <zone> nested 20 per Floyd group, as written: 1k-4k zones */
#define MEMBER_BYTES 2870.0     /* a FLAT <cluster>'s host with its private link: 20k-80k */
#define CELL_BYTES 8.0          /* a Full zone's V x V table, Floyd's three (1k-4k hosts in one Full zone) */
#define ACTOR_BYTES 13000.0     /* a simulated rank: its actor, stack pages, mailboxes and flows
                                 * (ring allreduce on star, 2,048-8,192 ranks, cluster subtracted) */
#define USER_XML_BYTES_PER_BYTE 1.0 /* a user's XML beyond its objects: SimGrid's parser buffers (U) */

/* CPU seconds per object, from the same runs (user time). */
#define HOST_S 5.9e-6
#define ROUTER_S 1.1e-6
#define LINK_S 6.7e-6
#define ROUTE_S 1.0e-6
#define ROUTE_LINK_S 0.8e-6
#define EDGE_S 3.1e-6
#define BYPASS_S 1.8e-6
#define MEMBER_S 10e-6
/* A FAT_TREE cluster's load grows with its members times its switches
 * (knl-cluster and the generic fattree at 8,192-32,768 nodes: the excess
 * over the linear terms; FLAT and TORUS clusters stay linear). */
#define TREE_PAIR_S 2.3e-7
/* SimGrid 3.32 seals each zone by filtering every host of the engine, and
 * checks each new host's name zone by zone: zones x hosts, measured with
 * 64-512 zones of 200 hosts, as platform_xml.c writes groups (the cost per
 * pair grows past the caches: 200 ns at 64 zones, 500 ns at 256-512; the
 * estimate takes the largest). */
#define ZONE_HOST_S 500e-9
#define FLOYD_STEP_S 4.2e-10 /* Floyd's inner step: one zone of 2,000-3,000 hosts (user XML) */
#define FULL_CELL_S 3e-8     /* a Full zone's table cell, user and system time (its pages zeroed): 8k-11k hosts */
#define ROUTE_QUERY_S 1e-6 /* sg_host_get_route between two ranks: dgx-a100 exports, 512-2,048 ranks */

void platform_estimate(const platform *p, int nodes, double actors_per_rank, platform_load_cost *out)
{
    plat_xml_counts c;
    plat_xml_count(p, nodes, &c);
    double ranks = (double)platform_ranks(p) * nodes / p->nodes;
    out->hosts = c.hosts + c.cluster_members;
    out->links = c.links + c.cluster_members;
    out->routes = c.routes + c.edges + c.bypass_routes;
    out->zones = c.zones;
    out->memory_bytes = c.hosts * HOST_BYTES + c.routers * ROUTER_BYTES + c.links * LINK_BYTES +
                        c.routes * ROUTE_BYTES + c.edges * EDGE_BYTES + c.bypass_routes * BYPASS_BYTES +
                        c.route_links * ROUTE_LINK_BYTES + c.zones * ZONE_BYTES +
                        c.cluster_members * MEMBER_BYTES + (c.full_cells + c.floyd_cells) * CELL_BYTES +
                        actors_per_rank * ranks * ACTOR_BYTES;
    out->cpu_s = c.hosts * HOST_S + c.routers * ROUTER_S + c.links * LINK_S + c.routes * ROUTE_S +
                 c.edges * EDGE_S + c.bypass_routes * BYPASS_S +
                 c.route_links * ROUTE_LINK_S + c.cluster_members * MEMBER_S +
                 c.zones * out->hosts * ZONE_HOST_S + c.floyd_steps * FLOYD_STEP_S + c.full_cells * FULL_CELL_S +
                 c.tree_pairs * TREE_PAIR_S;
    if (p->user_xml) { /* the engine checks routes between ranks */
        int n = platform_ranks(p);
        out->memory_bytes += p->user_bytes * USER_XML_BYTES_PER_BYTE;
        out->cpu_s += (n <= PLATFORM_ROUTE_CHECK_ALL_RANKS ? (double)n * n : 3.0 * n) * ROUTE_QUERY_S;
    }
}

int platform_route_pair(int ranks, long k, int *a, int *b)
{
    long n = ranks;
    if (n <= PLATFORM_ROUTE_CHECK_ALL_RANKS) {
        if (k >= n * n)
            return 0;
        *a = (int)(k / n);
        *b = (int)(k % n);
        return 1;
    }
    if (k >= 3 * n)
        return 0;
    long i = k % n;
    *a = k < n ? 0 : (int)i;
    *b = k < n ? (int)i : k < 2 * n ? 0 : (int)((i + 1) % n);
    return 1;
}

int platform_estimate_max_nodes(const platform *p, double actors_per_rank, double budget_bytes)
{
    platform_load_cost c;
    int lo = 0, hi = p->user_xml ? 0 : p->nodes; /* the largest count known to fit, the smallest not */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        platform_estimate(p, mid, actors_per_rank, &c);
        *(c.memory_bytes <= budget_bytes ? &lo : &hi) = mid;
    }
    return lo;
}
