/* platform_paths.c: the closed-form queries on a built platform (paths,
 * hops, link classes, rail relays, NVLink ring orders) that must agree with
 * what SimGrid routes on the XML of platform_xml.c. */
#include "platforms/platform.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "platforms/platform_impl.h"

int plat_fabric_hops(const platform *p, int x, int y)
{
    if (x == y)
        return 0;
    switch (p->fabric) {
    case FABRIC_NONE:
        return 0;
    case FABRIC_SWITCH:
        return 2;
    case FABRIC_FATTREE:
    case FABRIC_RAIL: {
        long div = 1;
        for (int l = 0; l < p->levels; l++) {
            div *= p->down[l];
            if (x / div == y / div)
                return 2 * (l + 1);
        }
        return 2 * p->levels;
    }
    case FABRIC_TORUS: {
        int h = 0;
        for (int d = 0; d < p->ndims; d++) {
            int dx = abs(x % p->dims[d] - y % p->dims[d]);
            h += dx < p->dims[d] - dx ? dx : p->dims[d] - dx;
            x /= p->dims[d];
            y /= p->dims[d];
        }
        return h + plat_pod_hops(p, x, y);
    }
    }
    return 0;
}

int plat_pod_hops(const platform *p, int x, int y)
{
    int k = platform_pods(p), d = abs(x - y);
    return k > 1 ? (d < k - d ? d : k - d) : 0;
}

double plat_dcn_cable_Bps(const platform *p)
{
    return p->dcn_Bps / p->nacc / (platform_pods(p) > 2 ? 2 : 1);
}

/* Fabric links between nodes carry a node's aggregate uplink; a torus's
 * links are the chip-to-chip links themselves. */
double plat_fabric_link_Bps(const platform *p)
{
    return p->fabric == FABRIC_TORUS ? p->fab_bw_Bps : p->port_bw_Bps;
}

int platform_torus_paired(const platform *p, int a, int b)
{
    if (p->fabric != FABRIC_TORUS || plat_fabric_hops(p, a, b) != 1)
        return 0;
    for (int d = 0; d < p->ndims; d++) {
        if (a % p->dims[d] != b % p->dims[d])
            return p->dims[d] == 2;
        a /= p->dims[d];
        b /= p->dims[d];
    }
    return 0;
}

int platform_path(const platform *p, int a, int b, double *latency_s, double *bw_Bps)
{
    *latency_s = 0;
    *bw_Bps = 0;
    if (a == b)
        return 0;
    if (p->user_xml) {
        *latency_s = p->user_lat_s;
        *bw_Bps = p->user_bw_Bps;
        return p->user_hops;
    }
    if (p->flat) {
        int hops = plat_fabric_hops(p, a, b), pod = platform_ranks(p) / platform_pods(p);
        int dcn = plat_pod_hops(p, a / pod, b / pod); /* SimGrid's torus routes the pods' dimension last */
        *latency_s = (hops - dcn) * p->fab_lat_s + dcn * p->dcn_lat_s;
        *bw_Bps = plat_fabric_link_Bps(p) * (platform_torus_paired(p, a, b) ? 2 : 1);
        if (dcn)
            *bw_Bps = hops > dcn ? fmin(*bw_Bps, plat_dcn_cable_Bps(p)) : plat_dcn_cable_Bps(p);
        return hops;
    }
    int n = p->ncomp, ka = a / p->nacc, kb = b / p->nacc;
    int ca = p->acc[a % p->nacc], cb = p->acc[b % p->nacc];
    if (ka == kb) {
        *latency_s = p->nlat[(size_t)ca * n + cb];
        *bw_Bps = p->nbw[(size_t)ca * n + cb];
        return p->nhops[(size_t)ca * n + cb];
    }
    int ja = p->comp_att[ca], jb = p->comp_att[cb];
    int xa = p->att[ja], xb = p->att[jb];
    int hops = plat_fabric_hops(p, ka, kb);
    double bw = fmin(p->att_uplink_Bps[ja], p->att_uplink_Bps[jb]);
    bw = fmin(bw, plat_fabric_link_Bps(p));
    *latency_s = hops * p->fab_lat_s;
    if (xa != ca) {
        hops += p->nhops[(size_t)ca * n + xa];
        *latency_s += p->nlat[(size_t)ca * n + xa];
        bw = fmin(bw, p->nbw[(size_t)ca * n + xa]);
    }
    if (xb != cb) {
        hops += p->nhops[(size_t)xb * n + cb];
        *latency_s += p->nlat[(size_t)xb * n + cb];
        bw = fmin(bw, p->nbw[(size_t)xb * n + cb]);
    }
    *bw_Bps = bw;
    return hops;
}

/* Links of class cls on the node route from component u to component v. */
static int route_class_links(const platform *p, int u, int v, const char *cls)
{
    int n = p->ncomp, links = 0;
    while (v >= 0 && v != u) { /* back along u's routing tree */
        links += strcmp(p->link[p->nvia[(size_t)u * n + v]].cls, cls) == 0;
        v = p->nnext[(size_t)u * n + v];
    }
    return links;
}

int platform_path_class_links(const platform *p, int a, int b, const char *cls)
{
    if (p->flat || p->user_xml || a == b)
        return 0;
    int ca = p->acc[a % p->nacc], cb = p->acc[b % p->nacc];
    if (a / p->nacc == b / p->nacc)
        return route_class_links(p, ca, cb, cls);
    return route_class_links(p, ca, p->att[p->comp_att[ca]], cls) + route_class_links(p, p->att[p->comp_att[cb]], cb, cls);
}

int platform_rail_relay(const platform *p, int a, int b)
{
    if (p->fabric != FABRIC_RAIL)
        return -1;
    const char *cls, *xa = platform_rank_exit(p, a), *xb = platform_rank_exit(p, b);
    int g = p->nacc, node = a / g;
    if (!xa || !xb || node == b / g || strcmp(xa, xb) == 0)
        return -1;
    for (int r = 0; r < g; r++)
        if (strcmp(platform_rank_exit(p, node * g + r), xb) == 0)
            return platform_rank_links(p, a, node * g + r, &cls) > 0 && strncmp(cls, "nvlink", 6) == 0 ? node * g + r
                                                                                                        : -1;
    return -1;
}

int platform_rank_links(const platform *p, int a, int b, const char **cls)
{
    *cls = NULL;
    if (p->flat || p->user_xml || a == b || a / p->nacc != b / p->nacc)
        return 0;
    int n = p->ncomp, ca = p->acc[a % p->nacc], v = p->acc[b % p->nacc], k = -1;
    while (v >= 0 && v != ca) { /* back along a's routing tree to its first link */
        k = p->nvia[(size_t)ca * n + v];
        v = p->nnext[(size_t)ca * n + v];
    }
    if (v != ca || k < 0)
        return 0;
    *cls = p->link[k].cls;
    return p->link[k].count;
}

/* Depth-first search for a cycle through the g ranks over direct links with
 * a free unit in the direction used (cap[a][b]), widest links first; open:
 * a path, without the link from the last rank back to the first. */
static int ring_extend(int g, int cap[16][16], int *order, int len, int *used, unsigned last_ok, int open)
{
    int a = order[len - 1];
    if (len == g)
        return (open || cap[a][order[0]] > 0) && (last_ok >> a & 1);
    for (int want = 8; want >= 1; want--) /* widest first: doubled NVLinks before single */
        for (int r = 0; r < g; r++)
            if (!used[r] && cap[a][r] == want) {
                used[r] = 1;
                order[len] = r;
                if (ring_extend(g, cap, order, len + 1, used, last_ok, open))
                    return 1;
                used[r] = 0;
            }
    return 0;
}

/* The zigzag path start, start+1, start-1, start+2, ... (mod g), if its links
 * are free: on g fully connected ranks (g even) the g paths, one from each
 * rank, steps of +1, -2, +3, ... use every directed link exactly once and end
 * at distinct ranks (start + g/2), which a search rank by rank does not find. */
static int zigzag(int g, int cap[16][16], int start, unsigned last_ok, int *order)
{
    for (int k = 0; k < g; k++) {
        int m = (k + 1) / 2, z = k % 2 ? m : -m;
        order[k] = ((start + z) % g + g) % g;
        if (k > 0 && cap[order[k - 1]][order[k]] < 1)
            return 0;
    }
    return g % 2 == 0 && (last_ok >> order[g - 1] & 1);
}

int platform_ring_orders(const platform *p, int c, int across, int orders[][16])
{
    int g = platform_ranks_per_node(p), cap[16][16];
    if (g > 16)
        g = 16;
    for (int a = 0; a < g; a++)
        for (int b = 0; b < g; b++) {
            const char *cls;
            int n = a != b && !p->flat && platform_hops(p, a, b) == 1 ? platform_rank_links(p, a, b, &cls) : 0;
            cap[a][b] = n > 8 ? 8 : n;
        }
    /* The node's NICs, in order of first use: channel j runs between NIC j's
     * ranks (enters at one, leaves at another), as NCCL opens a channel per NIC. */
    const char *nic[16];
    int nnic = 0;
    for (int r = 0; r < g; r++) {
        const char *x = platform_rank_exit(p, r);
        int seen = !x;
        for (int k = 0; k < nnic && !seen; k++)
            seen = strcmp(nic[k], x) == 0;
        if (!seen)
            nic[nnic++] = x;
    }
    int rings = 0;
    unsigned exits = 0; /* the ranks open chains leave by */
    for (int j = 0; j < c && j < 8; j++) {
        int used[16] = {0}, *o = orders[j], found = 0, open = 0;
        unsigned mine = 0;
        for (int r = 0; r < g && nnic; r++)
            if (strcmp(platform_rank_exit(p, r), nic[j % nnic]) == 0)
                mine |= 1u << r;
        /* from a rank of NIC j back to one (when there are NICs), else any ring */
        for (int start = 0; start < g && !found && g >= 3; start++) {
            if (nnic && !(mine >> start & 1))
                continue;
            memset(used, 0, sizeof used);
            used[start] = 1;
            o[0] = start;
            unsigned ends = nnic ? mine & ~(1u << start) : ~0u;
            /* A NIC per rank, across nodes: the channel enters at NIC j's
             * rank and leaves by its last rank's own NIC (a chain, not a
             * cycle: its closing link stays free for other channels). */
            if (across && !ends) { /* each NIC sends one channel, as it receives one */
                ends = ~(1u << start) & ~exits;
                open = 1;
            }
            found = open && zigzag(g, cap, start, ends, o);
            if (!found)
                found = ring_extend(g, cap, o, 1, used, ends, open);
            if (found && open)
                exits |= 1u << o[g - 1];
        }
        if (!found && g >= 3) {
            memset(used, 0, sizeof used);
            used[0] = 1;
            o[0] = 0;
            found = ring_extend(g, cap, o, 1, used, ~0u, 0);
        }
        if (found) {
            for (int k = 0; k < g - open; k++)
                cap[o[k]][o[(k + 1) % g]]--;
            rings++;
        } else if (rings > 0) {
            memcpy(o, orders[j - 1], sizeof orders[j]);
        } else { /* behind a switch: rank order entering at NIC j's first rank, as NCCL's ring per NIC */
            int first = nnic ? __builtin_ctz(mine) : 0;
            for (int k = 0; k < g; k++)
                o[k] = (first + k) % g;
        }
    }
    return rings;
}

int platform_fabric_sharp(const platform *p)
{
    return p->sharp;
}

int platform_hops(const platform *p, int a, int b)
{
    double lat, bw;
    return platform_path(p, a, b, &lat, &bw);
}

int platform_component_path(const platform *p, const char *from, const char *to, double *latency_s,
                            double *bw_Bps)
{
    int a = plat_find_comp(p, from), b = plat_find_comp(p, to);
    *latency_s = 0;
    *bw_Bps = 0;
    if (a < 0 || b < 0 || a == b || p->nhops == NULL || p->nhops[(size_t)a * p->ncomp + b] < 0)
        return -1;
    size_t i = (size_t)a * p->ncomp + b;
    *latency_s = p->nlat[i];
    *bw_Bps = p->nbw[i];
    return p->nhops[i];
}

int platform_component_links(const platform *p, const char *component, const char *link_class)
{
    int c = plat_find_comp(p, component);
    if (c < 0)
        return -1;
    int units = 0;
    for (int k = 0; k < p->nlink; k++)
        if ((p->link[k].a == c || p->link[k].b == c) && (!link_class || strcmp(p->link[k].cls, link_class) == 0))
            units += p->link[k].count;
    return units;
}

int platform_node_components(const platform *p, device_kind kind, const char **names,
                             const device_info **devs, int max)
{
    int n = 0;
    for (int c = 0; !p->flat && !p->user_xml && c < p->ncomp; c++)
        if (p->comp[c].dev->kind == kind) {
            if (n < max) {
                names[n] = p->comp[c].name;
                devs[n] = p->comp[c].dev;
            }
            n++;
        }
    return n;
}

const char *platform_component_host(const platform *p, int node, const char *component, char *buf,
                                    size_t buf_bytes)
{
    (void)p; /* node platforms name every host nN-COMPONENT (platform_xml.c) */
    snprintf(buf, buf_bytes, "n%d-%s", node, component);
    return buf;
}
