/* platform_summary.c: what a platform amounts to: its link classes and
 * counts, node and fabric bisection (max flow), and the fabric's bill of
 * materials. */
#include "platforms/platform.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "platforms/platform_impl.h"

static void add_class(platform_summary *s, const char *name, double bw_Bps, long count)
{
    for (int i = 0; i < s->n_link_classes; i++)
        if (strcmp(s->link_classes[i].name, name) == 0 && s->link_classes[i].bw_Bps == bw_Bps) {
            s->link_classes[i].count += count;
            return;
        }
    if (s->n_link_classes == (int)(sizeof s->link_classes / sizeof s->link_classes[0]))
        return;
    platform_link_class *c = &s->link_classes[s->n_link_classes++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->bw_Bps = bw_Bps;
    c->count = count;
}

/* Links in the fabric: a fat tree has up[l] uplinks per element of level l. */
static long fabric_link_count(const platform *p, int members)
{
    switch (p->fabric) {
    case FABRIC_NONE: return 0;
    case FABRIC_SWITCH: return members;
    case FABRIC_TORUS: return (long)members * p->ndims;
    case FABRIC_FATTREE:
    case FABRIC_RAIL: {
        /* Level l (0 = end points) holds E_l elements, each with up[l] uplinks;
         * E_{l+1} = E_l * up[l] / down[l]. */
        long elems = 1, total = 0;
        for (int l = 0; l < p->levels; l++)
            elems *= p->down[l];
        for (int l = 0; l < p->levels; l++) {
            total += elems * p->up[l];
            elems = elems * p->up[l] / p->down[l];
        }
        return total;
    }
    }
    return 0;
}

/* Max flow (Dinic) between two vertex sets of the node graph, per direction. */
typedef struct flownet {
    int n;
    double *cap; /* n x n residual capacities */
    int *level, *it;
} flownet;

static int flow_bfs(flownet *f, int s, int t, int *queue)
{
    for (int v = 0; v < f->n; v++)
        f->level[v] = -1;
    int head = 0, tail = 0;
    f->level[s] = 0;
    queue[tail++] = s;
    while (head < tail) {
        int u = queue[head++];
        for (int v = 0; v < f->n; v++)
            if (f->level[v] < 0 && f->cap[(size_t)u * f->n + v] > 1e-9) {
                f->level[v] = f->level[u] + 1;
                queue[tail++] = v;
            }
    }
    return f->level[t] >= 0;
}

static double flow_dfs(flownet *f, int u, int t, double pushed)
{
    if (u == t)
        return pushed;
    for (; f->it[u] < f->n; f->it[u]++) {
        int v = f->it[u];
        double *c = &f->cap[(size_t)u * f->n + v];
        if (*c > 1e-9 && f->level[v] == f->level[u] + 1) {
            double got = flow_dfs(f, v, t, fmin(pushed, *c));
            if (got > 0) {
                *c -= got;
                f->cap[(size_t)v * f->n + u] += got;
                return got;
            }
        }
    }
    return 0;
}

/* Min over balanced splits of the node's accelerators (the first on side A)
 * of the max flow from A to B. */
static double node_bisection_Bps(const platform *p)
{
    int n = p->ncomp + 2, s = n - 2, t = n - 1, m = p->nacc;
    if (m < 2 || m > 20)
        return 0;
    flownet f = {n, calloc((size_t)n * n, sizeof(double)), calloc((size_t)n, sizeof(int)), calloc((size_t)n, sizeof(int))};
    int *queue = calloc((size_t)n, sizeof *queue);
    double best = DBL_MAX;
    for (unsigned mask = 0; mask < (1u << m); mask++) {
        if (!(mask & 1u) || __builtin_popcount(mask) != m / 2)
            continue;
        memset(f.cap, 0, sizeof(double) * (size_t)n * n);
        for (int k = 0; k < p->nlink; k++) {
            const plink *l = &p->link[k];
            f.cap[(size_t)l->a * n + l->b] += l->bw_Bps * l->count;
            f.cap[(size_t)l->b * n + l->a] += l->bw_Bps * l->count;
        }
        for (int r = 0; r < m; r++) {
            if (mask & (1u << r))
                f.cap[(size_t)s * n + p->acc[r]] = DBL_MAX / 4;
            else
                f.cap[(size_t)p->acc[r] * n + t] = DBL_MAX / 4;
        }
        double flow = 0;
        while (flow_bfs(&f, s, t, queue)) {
            memset(f.it, 0, sizeof(int) * (size_t)n);
            double got;
            while ((got = flow_dfs(&f, s, t, DBL_MAX)) > 0)
                flow += got;
        }
        if (flow < best)
            best = flow;
    }
    free(f.cap);
    free(f.level);
    free(f.it);
    free(queue);
    return best;
}

static double fabric_bisection_Bps(const platform *p, int members)
{
    double link = plat_fabric_link_Bps(p);
    switch (p->fabric) {
    case FABRIC_NONE: return 0;
    case FABRIC_SWITCH: return members / 2 * link;
    case FABRIC_TORUS: {
        int dmax = 1;
        for (int d = 0; d < p->ndims; d++)
            if (p->dims[d] > dmax)
                dmax = p->dims[d];
        /* Halving the longest ring cuts two links per ring (one with wrap-around). */
        return dmax < 2 ? 0 : 2.0 * (members / dmax) * link;
    }
    case FABRIC_FATTREE:
    case FABRIC_RAIL:
        return members / 2 * link / (p->levels > 1 ? p->oversubscription : 1);
    }
    return 0;
}

void platform_summarize(const platform *p, platform_summary *s)
{
    memset(s, 0, sizeof *s);
    s->nodes = p->nodes;
    for (int c = 0; c < p->ncomp; c++) {
        device_kind k = p->comp[c].dev->kind;
        int i = 0;
        while (i < s->n_devices && s->devices[i].dev != p->comp[c].dev)
            i++;
        if (i < (int)(sizeof s->devices / sizeof s->devices[0])) {
            s->devices[i].dev = p->comp[c].dev;
            s->devices[i].count += (long)p->comp[c].planes * p->nodes;
            if (i == s->n_devices)
                s->n_devices++;
        }
        s->accelerators += (k == DEVICE_ACCELERATOR) * p->nodes;
        s->cpu_sockets += (k == DEVICE_CPU) * p->nodes;
        s->nics += (k == DEVICE_NIC) * p->nodes;
        s->switches += (k == DEVICE_SWITCH) * p->comp[c].planes * p->nodes;
    }
    for (int k = 0; k < p->nlink; k++)
        add_class(s, p->link[k].cls, p->link[k].bw_Bps, (long)p->link[k].count * p->nodes);
    int members = p->flat ? platform_ranks(p) : p->nodes;
    /* A node's port is natt cables (one per NIC, rails) at the NIC's rate. */
    if (p->fabric != FABRIC_NONE && (p->flat || p->nodes > 1)) {
        int per = p->flat ? 1 : p->natt;
        add_class(s, p->fab_cls, plat_fabric_link_Bps(p) / per, fabric_link_count(p, members) * per);
    }
    if (!p->user_xml) /* unknown for a user's XML */
        s->bisection_Bps = p->nodes == 1 && !p->flat ? node_bisection_Bps(p) : fabric_bisection_Bps(p, members);
    if (platform_pods(p) > 1) {
        /* every node's data-centre NIC; halving the pods' ring cuts each chip's
         * cables to its neighbouring pods: a pod's nodes' NICs */
        add_class(s, "dcn", p->dcn_Bps, p->nodes);
        double dcn = (double)p->nodes / platform_pods(p) * p->dcn_Bps;
        s->bisection_Bps = fmin(fabric_bisection_Bps(p, members / platform_pods(p)), dcn);
    }
    for (int b = 0; b < platform_ranks(p); b++) {
        int h = platform_hops(p, 0, b);
        for (int a = 1; a < p->nacc && a < platform_ranks(p); a++) {
            int h2 = platform_hops(p, a, b);
            if (h2 > h)
                h = h2;
        }
        if (h > s->diameter_hops)
            s->diameter_hops = h;
    }
    for (int r = 0; r < platform_ranks(p); r++)
        for (int d = 0; d < DTYPE_COUNT; d++)
            s->peak_flops[d] += platform_device(p, r)->peak_flops[d];
}

/* Switches of a tree: an element of level m has down[m-1] links down and
 * up[m] up (none at the top), each a node port of `per` cables (one per
 * rail on a rail-optimised tree, each rail its own switches). An element
 * wider than a switch takes several; smaller whole elements share one (the
 * narrow top elements of a PGFT are one spine with parallel links). */
static long tree_switches(const platform *p, long per, int radix)
{
    long elems = 1, total = 0;
    for (int l = 0; l < p->levels; l++)
        elems *= p->down[l];
    int rails = p->fabric == FABRIC_RAIL;
    long sets = rails ? per : 1, width = rails ? 1 : per;
    for (int m = 1; m <= p->levels; m++) {
        elems = elems * p->up[m - 1] / p->down[m - 1];
        long ports = width * (p->down[m - 1] + (m < p->levels ? p->up[m] : 0));
        long n = ports > radix ? elems * ((ports + radix - 1) / radix)
                               : (elems + radix / ports - 1) / (radix / ports);
        total += sets * n;
    }
    return total;
}

void platform_fabric_bom_of(const platform *p, int radix, platform_fabric_bom *out)
{
    memset(out, 0, sizeof *out);
    int members = p->flat ? platform_ranks(p) : p->nodes;
    if (p->fabric == FABRIC_NONE || p->user_xml || (!p->flat && p->nodes < 2))
        return;
    long per = p->flat ? 1 : p->natt;
    out->cables = fabric_link_count(p, members) * per;
    long ends = (long)members * per; /* end point to first switch: one switch port each */
    if (p->fabric == FABRIC_SWITCH)
        out->switch_ports = ends;
    else if (p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL)
        out->switch_ports = ends + 2 * (out->cables - ends);
    out->priced_by = !p->flat && p->natt > 0 ? p->comp[p->att[0]].dev : platform_device(p, 0);
    /* accelerators cabled to a generic fabric: the generic fabric's prices unless they carry their own */
    const device_info *generic = device_table_find(&p->devices, "generic-accelerator");
    if (out->priced_by->cable_usd <= 0 && generic)
        out->priced_by = generic;
    if (radix <= 0)
        radix = out->priced_by->switch_radix > 0 ? out->priced_by->switch_radix : 64;
    if (p->fabric == FABRIC_SWITCH)
        out->switches = (out->switch_ports + radix - 1) / radix;
    else if (p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL)
        out->switches = tree_switches(p, per, radix);
}
