/* collective_fluid.c: a round's sharing solved per coupled component (collective_fluid.h). */
#include "sim/engine/collective_fluid.h"
#include "sim/engine/maxmin.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/config.h>
#include <xbt/dynar.h>

#include "trainer/rng.h"

/* CM02's acknowledgements: each flow also loads the links of its reverse
 * route with this fraction of its rate (SimGrid's network_cm02.cpp). */
#define CROSS_TRAFFIC 0.05

/* An open-addressing map from nonzero 64-bit keys to three words each (linear
 * probing, at most half full): links to dense ids, routes to their links,
 * the (link, cover) pairs already counted. */
typedef struct key_map {
    uint64_t *key; /* 0: empty */
    size_t (*val)[3];
    size_t cap, len;
} key_map;

static size_t map_slot(const key_map *m, uint64_t key)
{
    size_t h = (size_t)rng_mix(key) & (m->cap - 1);
    while (m->key[h] && m->key[h] != key)
        h = (h + 1) & (m->cap - 1);
    return h;
}

/* The slot of key, with room for it if it is new (m->key[slot] == 0);
 * -1 when out of memory. */
static long map_find(key_map *m, uint64_t key)
{
    if (2 * (m->len + 1) > m->cap) {
        key_map t = {NULL, NULL, m->cap ? 2 * m->cap : 1024, m->len};
        t.key = calloc(t.cap, sizeof *t.key);
        t.val = malloc(sizeof *t.val * t.cap);
        if (!t.key || !t.val) {
            free(t.key);
            free(t.val);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i]) {
                size_t h = map_slot(&t, m->key[i]);
                t.key[h] = m->key[i];
                memcpy(t.val[h], m->val[i], sizeof t.val[h]);
            }
        free(m->key);
        free(m->val);
        *m = t;
    }
    return (long)map_slot(m, key);
}

static void map_free(key_map *m)
{
    free(m->key);
    free(m->val);
}

struct coll_fluid {
    const sg_host_t *hosts;
    int n;
    key_map routes; /* src * n + dst + 1 -> (offset into links, length, index into info) */
    int *links; /* every cached route: its dense link ids, then each position's cover (cover_of) or -1 */
    struct route_info {
        double lat_s, cap_Bps; /* the route's latency, its slowest link */
    } *info;                   /* per cached route */
    size_t nroutes, routes_cap;
    size_t links_len, links_cap;
    char *rt, *ws; /* a round's arrays, kept across rounds (no allocation per round) */
    size_t rt_bytes, ws_bytes;
    key_map ids; /* link -> dense id */
    double *cap_Bps, *lat_s; /* per dense id */
    int nids, ids_cap;
    xbt_dynar_t route;
    double cross; /* SimGrid's cross-traffic: a flow's share of its reverse route (CM02: 0.05), or 0 */
};

int coll_fluid_applies(const platform *p)
{
    int per_leaf, levels, over;
    if (platform_user_xml(p))
        return 0;
    if (strcmp(platform_fabric_name(p), "single_switch") == 0)
        return 1;
    return platform_fattree_shape(p, &per_leaf, &levels, &over) && over == 1;
}

coll_fluid *coll_fluid_create(const sg_host_t *hosts, int n)
{
    coll_fluid *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->hosts = hosts;
    s->n = n;
    s->route = xbt_dynar_new(sizeof(sg_link_t), NULL);
    s->cross = sg_cfg_get_boolean("network/crosstraffic") ? CROSS_TRAFFIC : 0;
    if (!s->route) {
        free(s);
        return NULL;
    }
    return s;
}

void coll_fluid_free(coll_fluid *s)
{
    if (!s)
        return;
    map_free(&s->routes);
    free(s->links);
    free(s->info);
    free(s->rt);
    free(s->ws);
    map_free(&s->ids);
    free(s->cap_Bps);
    free(s->lat_s);
    xbt_dynar_free(&s->route);
    free(s);
}

/* The dense id of link l, assigned in order of first appearance. */
static int link_id(coll_fluid *s, sg_link_t l)
{
    long h = map_find(&s->ids, (uint64_t)(uintptr_t)l);
    if (h < 0)
        return -1;
    if (s->ids.key[h])
        return (int)s->ids.val[h][0];
    if (s->nids == s->ids_cap) {
        int cap = s->ids_cap ? 2 * s->ids_cap : 256;
        double *c = realloc(s->cap_Bps, sizeof *c * (size_t)cap);
        if (c)
            s->cap_Bps = c;
        double *t = realloc(s->lat_s, sizeof *t * (size_t)cap);
        if (t)
            s->lat_s = t;
        if (!c || !t)
            return -1;
        s->ids_cap = cap;
    }
    s->ids.key[h] = (uint64_t)(uintptr_t)l;
    s->ids.val[h][0] = (size_t)s->nids;
    s->ids.len++;
    s->cap_Bps[s->nids] = sg_link_get_bandwidth(l);
    s->lat_s[s->nids] = sg_link_get_latency(l);
    return s->nids++;
}

/* The link whose bandwidth bounds what use k of its route can put on the
 * route's position i: the slowest other link, the nearest one on a tie. */
static int cover_of(const coll_fluid *s, const int *r, size_t len, size_t i)
{
    int best = -1;
    size_t best_d = 0;
    for (size_t j = 0; j < len; j++) {
        if (j == i)
            continue;
        size_t d = j > i ? j - i : i - j;
        double c = s->cap_Bps[r[j]];
        if (best < 0 || c < s->cap_Bps[best] || (c == s->cap_Bps[best] && d < best_d)) {
            best = r[j];
            best_d = d;
        }
    }
    return best;
}

/* SimGrid's route from src to dst as dense link ids (cached): its offset into
 * s->links, its length and its index in s->info. NULL when out of memory. */
static const size_t *route_of(coll_fluid *s, int src, int dst)
{
    uint64_t key = (uint64_t)src * (uint64_t)s->n + (uint64_t)dst + 1;
    long h = map_find(&s->routes, key);
    if (h < 0)
        return NULL;
    if (s->routes.key[h])
        return s->routes.val[h];
    xbt_dynar_reset(s->route);
    sg_host_get_route(s->hosts[src], s->hosts[dst], s->route);
    size_t len = xbt_dynar_length(s->route);
    if (s->links_len + 2 * len > s->links_cap) {
        size_t cap = 2 * (s->links_len + 2 * len) + 1024;
        int *t = realloc(s->links, sizeof *t * cap);
        if (!t)
            return NULL;
        s->links = t;
        s->links_cap = cap;
    }
    if (s->nroutes == s->routes_cap) {
        struct route_info *t = realloc(s->info, sizeof *t * (2 * s->routes_cap + 1024));
        if (!t)
            return NULL;
        s->info = t;
        s->routes_cap = 2 * s->routes_cap + 1024;
    }
    int *r = s->links + s->links_len;
    for (size_t i = 0; i < len; i++) {
        int id = link_id(s, xbt_dynar_get_as(s->route, i, sg_link_t));
        if (id < 0)
            return NULL;
        r[i] = id;
    }
    double lat_s = 0, cap_Bps = INFINITY;
    for (size_t i = 0; i < len; i++) {
        r[len + i] = cover_of(s, r, len, i);
        lat_s += s->lat_s[r[i]];
        cap_Bps = fmin(cap_Bps, s->cap_Bps[r[i]]);
    }
    s->info[s->nroutes] = (struct route_info){lat_s, cap_Bps};
    s->routes.key[h] = key;
    s->routes.val[h][0] = s->links_len;
    s->routes.val[h][1] = len;
    s->routes.val[h][2] = s->nroutes++;
    s->routes.len++;
    s->links_len += 2 * len;
    return s->routes.val[h];
}

/* Links that can limit a flow and are shared: the distinct covers of their
 * uses can put more on them than their bandwidth. Links that cannot (a
 * node's port fed by its NICs, a non-blocking fabric) couple nothing. The
 * uses are bucketed by link (off: nl + 1, cov: a use's cover) so that each
 * link's distinct covers are counted with a stamp per cover (last: nl). */
static void mark_coupling(const coll_fluid *s, const size_t (*rt)[3], size_t nf, int nl, unsigned char *coupling,
                          size_t *off, int *cov, int *last, double *bound)
{
    memset(off, 0, sizeof *off * ((size_t)nl + 1));
    for (size_t k = 0; k < 2 * nf; k++)
        for (size_t i = 0; i < (k % 2 && !s->cross ? 0 : rt[k][1]); i++)
            off[s->links[rt[k][0] + i] + 1]++;
    for (int l = 0; l < nl; l++) {
        off[l + 1] += off[l];
        last[l] = -1;
        bound[l] = 0;
    }
    for (size_t k = 0; k < 2 * nf; k++)
        for (size_t i = 0; i < (k % 2 && !s->cross ? 0 : rt[k][1]); i++)
            cov[off[s->links[rt[k][0] + i]]++] = s->links[rt[k][0] + rt[k][1] + i];
    for (int l = nl; l > 0; l--) /* back to each bucket's start */
        off[l] = off[l - 1];
    off[0] = 0;
    for (int l = 0; l < nl; l++) {
        for (size_t u = off[l]; u < off[l + 1]; u++) {
            int c = cov[u];
            if (c < 0) {
                bound[l] = INFINITY;
            } else if (last[c] != l) {
                last[c] = l;
                bound[l] += s->cap_Bps[c];
            }
        }
        coupling[l] = off[l + 1] - off[l] > 1 && bound[l] > s->cap_Bps[l] * (1 + 1e-12);
    }
}

/* Union-find root with path halving. */
static size_t root_of(size_t *up, size_t k)
{
    while (up[k] != k)
        k = up[k] = up[up[k]];
    return k;
}

/* Grows a kept buffer to hold `bytes` (contents not kept); -1 when out of memory. */
static int buffer_reserve(char **buf, size_t *have, size_t bytes)
{
    if (bytes <= *have)
        return 0;
    char *t = malloc(bytes);
    if (!t)
        return -1;
    free(*buf);
    *buf = t;
    *have = bytes;
    return 0;
}

/* The next `bytes` of a workspace, 16-byte aligned; with *at NULL, only counts. */
static void *carve(char **at, size_t *used, size_t bytes)
{
    void *p = *at ? *at + *used : NULL;
    *used += (bytes + 15) & ~(size_t)15;
    return p;
}

/* Components of up to this many flows are solved with each flow starting at
 * its own time: beyond, thousands of flows chained through shared links see
 * as many events, each re-solving hundreds (4x the time of a synchronous
 * solve on ResNet-50's 16,384 ranks). */
#define STAGGER_FLOWS 256

int coll_fluid_round(coll_fluid *s, const coll_flow *flows, size_t nf, const double *reduce_bytes, double gamma,
                     int streamed, double *clock_s)
{
    int n = s->n;
    if (buffer_reserve(&s->rt, &s->rt_bytes, sizeof(size_t[3]) * (2 * nf + 1)))
        return -1;
    size_t(*rt)[3] = (size_t(*)[3])s->rt; /* per flow: route, reverse route (route_of) */
    for (size_t k = 0; k < 2 * nf; k++) {
        const size_t *r = route_of(s, k % 2 ? flows[k / 2].dst : flows[k / 2].src,
                                       k % 2 ? flows[k / 2].src : flows[k / 2].dst);
        if (!r)
            return -1;
        memcpy(rt[k], r, sizeof rt[k]);
    }
    int nl = s->nids, roles = s->cross > 0 ? 2 : 1;
    size_t nuse = 0, L = (size_t)nl + 1, F = nf + 1;
    for (size_t k = 0; k < 2 * nf; k += (size_t)(3 - roles))
        nuse += rt[k][1];
    unsigned char *coupling = NULL;
    size_t *up = NULL, *first = NULL, *order = NULL, *start = NULL;
    int *loc = NULL, *links = NULL, *use_off = NULL, *use_c = NULL;
    double *use_w = NULL, *cap = NULL, *done = NULL, *bytes = NULL, *lat = NULL, *bound = NULL, *pen = NULL,
           *ready_s = NULL;
    maxmin_work w;
    for (int pass = 0; pass < 2; pass++) { /* count, then carve */
        char *at = pass ? s->ws : NULL;
        size_t used = 0;
        coupling = carve(&at, &used, L);
        w.state = carve(&at, &used, F);
        up = carve(&at, &used, sizeof *up * F);
        first = carve(&at, &used, sizeof *first * L);
        order = carve(&at, &used, sizeof *order * F);
        start = carve(&at, &used, sizeof *start * (F + 1));
        use_c = carve(&at, &used, sizeof *use_c * (nuse + 1));
        use_w = carve(&at, &used, sizeof *use_w * (nuse + 1));
        ready_s = carve(&at, &used, sizeof *ready_s * (size_t)n);
        w.con_f = carve(&at, &used, sizeof *w.con_f * (nuse + 1));
        int **per_link[] = {&loc, &links, &w.users, &w.cons, &w.con_off, &w.con_seen},
            **per_flow[] = {&use_off, &w.pending, &w.sending, &w.unfixed, &w.fixed, &w.queue, &w.seen};
        for (size_t a = 0; a < sizeof per_link / sizeof *per_link; a++)
            *per_link[a] = carve(&at, &used, sizeof(int) * L);
        for (size_t a = 0; a < sizeof per_flow / sizeof *per_flow; a++)
            *per_flow[a] = carve(&at, &used, sizeof(int) * F);
        double **per_link_d[] = {&cap, &w.left, &w.wsum}, **per_flow_d[] = {&done, &bytes, &lat, &bound, &w.rem,
                                                                             &w.rate, &pen};
        for (size_t a = 0; a < sizeof per_link_d / sizeof *per_link_d; a++)
            *per_link_d[a] = carve(&at, &used, sizeof(double) * L);
        for (size_t a = 0; a < sizeof per_flow_d / sizeof *per_flow_d; a++)
            *per_flow_d[a] = carve(&at, &used, sizeof(double) * F);
        if (!pass && buffer_reserve(&s->ws, &s->ws_bytes, used))
            return -1;
    }
    /* first, use_c, loc and left serve as mark_coupling's buckets, covers, stamps and bounds */
    mark_coupling(s, (const size_t(*)[3])rt, nf, nl, coupling, first, use_c, loc, w.left);
    memset(start, 0, sizeof *start * (F + 1));
    /* components: flows joined by a coupling link they load */
    for (size_t k = 0; k < nf; k++)
        up[k] = k;
    for (int l = 0; l < nl; l++) {
        first[l] = SIZE_MAX;
        loc[l] = -1;
    }
    for (size_t k = 0; k < 2 * nf; k += (size_t)(3 - roles))
        for (size_t i = 0; i < rt[k][1]; i++) {
            int l = s->links[rt[k][0] + i];
            if (!coupling[l])
                continue;
            if (first[l] == SIZE_MAX)
                first[l] = k / 2;
            else
                up[root_of(up, k / 2)] = root_of(up, first[l]);
        }
    for (size_t k = 0; k < nf; k++) /* flows by component, in flow order */
        start[root_of(up, k) + 2]++;
    for (size_t k = 0; k < nf; k++)
        start[k + 2] += start[k + 1];
    for (size_t k = 0; k < nf; k++)
        order[start[root_of(up, k) + 1]++] = k;
    for (size_t r0 = 0; r0 < nf; r0++) {
        size_t a = start[r0], b = start[r0 + 1];
        if (a == b)
            continue;
        maxmin_comp c = {.nf = (int)(b - a), .flow = order + a, .use_off = use_off, .use_c = use_c, .use_w = use_w,
                  .cap = cap, .penalty = pen};
        int u = 0;
        for (int i = 0; i < c.nf; i++) {
            size_t k = c.flow[i];
            use_off[i] = u;
            bytes[i] = flows[k].bytes;
            lat[i] = s->info[rt[2 * k][2]].lat_s;
            bound[i] = s->info[rt[2 * k][2]].cap_Bps;
            if (roles > 1)
                bound[i] = fmin(bound[i], s->info[rt[2 * k + 1][2]].cap_Bps / s->cross);
            for (int role = 0; role < roles; role++)
                for (size_t j = 0; j < rt[2 * k + role][1]; j++) {
                    int l = s->links[rt[2 * k + role][0] + j];
                    double per_Bps = role ? s->cross : 1.0; /* of the flow's rate */
                    if (!coupling[l])
                        continue;
                    if (loc[l] < 0) {
                        loc[l] = c.nc;
                        links[c.nc] = l;
                        cap[c.nc++] = s->cap_Bps[l];
                    }
                    int v = use_off[i];
                    while (v < u && use_c[v] != loc[l])
                        v++;
                    if (v < u) { /* both ways on one link */
                        use_w[v] += per_Bps;
                    } else {
                        use_c[u] = loc[l];
                        use_w[u++] = per_Bps;
                    }
                }
        }
        use_off[c.nf] = u;
        /* the penalty is the route's latency; a flow starts when both its ends are ready, in a component of
         * more than STAGGER_FLOWS flows as if it overlapped all the others (its synchronous time, shifted) */
        int stagger = c.nf <= STAGGER_FLOWS;
        for (int i = 0; i < c.nf; i++) {
            const coll_flow *f = &flows[c.flow[i]];
            pen[i] = lat[i] > 0 ? lat[i] : 1;
            lat[i] += stagger ? fmax(clock_s[f->src], clock_s[f->dst]) : 0;
        }
        maxmin_solve(&c, bytes, lat, bound, done, &w);
        for (int i = 0; !stagger && i < c.nf; i++) {
            const coll_flow *f = &flows[c.flow[i]];
            done[c.flow[i]] += fmax(clock_s[f->src], clock_s[f->dst]);
        }
        for (int k = 0; k < c.nc; k++)
            loc[links[k]] = -1;
    }
    memcpy(ready_s, clock_s, sizeof *ready_s * (size_t)n);
    for (size_t k = 0; k < nf; k++) {
        clock_s[flows[k].src] = fmax(clock_s[flows[k].src], done[k]);
        clock_s[flows[k].dst] = fmax(clock_s[flows[k].dst], done[k]);
    }
    for (int r = 0; r < n; r++)
        clock_s[r] = sched_step_end_s(streamed, ready_s[r], clock_s[r], reduce_bytes[r] * gamma);
    return 0;
}
