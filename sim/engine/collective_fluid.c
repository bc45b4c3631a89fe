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

#include "sim/engine/engine.h"
#include "trainer/rng.h"

/* CM02's acknowledgements: each flow also loads the links of its reverse
 * route with this fraction of its rate (SimGrid's network_cm02.cpp). */
#define CROSS_TRAFFIC 0.05

/* Distinct covers kept per link; a link with more may couple (a switch's
 * port fed by its 8 NICs has 8). */
#define LINK_COVERS 8

/* An open-addressing map from nonzero 64-bit keys to three words each (linear
 * probing, at most half full, a key and its words in one slot): links to
 * dense ids, folded links to their owners, rank pairs to their routes,
 * components to their solutions. */
typedef struct map_slot_t {
    uint64_t key; /* 0: empty */
    size_t val[3];
} map_slot_t;

typedef struct key_map {
    map_slot_t *slot;
    size_t cap, len;
} key_map;

static size_t map_slot(const key_map *m, uint64_t key)
{
    size_t h = (size_t)rng_mix(key) & (m->cap - 1);
    while (m->slot[h].key && m->slot[h].key != key)
        h = (h + 1) & (m->cap - 1);
    return h;
}

/* The slot of key, with room for it if it is new (m->slot[slot].key == 0);
 * -1 when out of memory. */
static long map_find(key_map *m, uint64_t key)
{
    if (2 * (m->len + 1) > m->cap) {
        key_map t = {NULL, m->cap ? 2 * m->cap : 1024, m->len};
        if (!(t.slot = calloc(t.cap, sizeof *t.slot)))
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slot[i].key)
                t.slot[map_slot(&t, m->slot[i].key)] = m->slot[i];
        free(m->slot);
        *m = t;
    }
    return (long)map_slot(m, key);
}

static void map_free(key_map *m)
{
    free(m->slot);
}

/* A flow's route one way as a round uses it: its links in coll_fluid.links,
 * the positions of those that may couple (may_len of them, after the links'
 * covers), its latency and slowest link (copied from route_info: a round
 * reads them flow by flow, in component order), its index in info. */
typedef struct route_use {
    size_t off;
    unsigned len, may_len, info;
    double lat_s, cap_Bps;
} route_use;

struct coll_fluid {
    const sg_host_t *hosts;
    int n;
    const platform *fold; /* a folded platform's (platform_fold_nodes), or NULL */
    const int *ranks;     /* with fold: each rank's rank of the whole platform */
    key_map owners;       /* with fold: a folded link -> its platform_owner + 1 */
    /* Each rank's routes to the ranks it has sent to, both ways, found by scanning its row: a round
     * looks up two routes a flow, hundreds of thousands at frontier scale, in src order, and a rank of a
     * tree or ring sends to a dozen ranks; a rank past ROW_SCAN of them goes on in the map `pairs` */
    struct route_row {
        int n, cap;
        struct route_pair {
            int dst;
            unsigned fwd, rev; /* indices into info */
        } *e;
    } *rows;
    key_map pairs; /* src * n + dst + 1 -> fwd, rev */
    /* every cached route: its dense link ids, then each position's cover (cover_of) or -1, then the
     * positions whose link may couple (may_couple, as of may_epoch: a round's coupling loops visit those) */
    int *links;
    struct route_info {
        double lat_s, cap_Bps; /* the route's latency, its slowest link */
        size_t off, len;       /* its links in `links` */
        unsigned may_len, may_epoch;
    } *info; /* per cached route */
    size_t nroutes, routes_cap;
    size_t links_len, links_cap;
    char *rt, *ws; /* a round's arrays, kept across rounds (no allocation per round) */
    size_t rt_bytes, ws_bytes;
    /* A round's components solved so far, by content hash: identical nodes and leaves make
     * thousands of components of a handful of shapes, each solved once (memo_solve) */
    key_map memo;
    double *memo_buf;
    size_t memo_len, memo_cap;
    key_map ids; /* link -> dense id */
    double *cap_Bps, *lat_s; /* per dense id */
    /* Per dense id, the distinct covers of its uses on every cached route: a link whose covers together
     * cannot overfill it never couples, in any round (note_cover), and mark_coupling skips its uses */
    struct link_covers {
        int id[LINK_COVERS], n;
        double sum_Bps;
    } *covers;
    unsigned char *may_couple;
    unsigned may_epoch; /* bumped whenever a link turns may_couple: routes' positions to refresh */
    int nids, ids_cap;
    xbt_dynar_t route;
    double cross; /* SimGrid's cross-traffic: a flow's share of its reverse route (CM02: 0.05), or 0 */
    double *tally_bytes; /* --links: bytes per dense id (coll_fluid_tally), tally_len of them; NULL until asked */
    int tally_len;
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

coll_fluid *coll_fluid_create(const sg_host_t *hosts, int n, const platform *fold, const int *ranks)
{
    coll_fluid *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->hosts = hosts;
    s->n = n;
    s->fold = fold;
    s->ranks = ranks;
    s->route = xbt_dynar_new(sizeof(sg_link_t), NULL);
    s->rows = calloc((size_t)n, sizeof *s->rows);
    s->cross = sg_cfg_get_boolean("network/crosstraffic") ? CROSS_TRAFFIC : 0;
    if (!s->route || !s->rows) {
        if (s->route)
            xbt_dynar_free(&s->route);
        free(s->rows);
        free(s);
        return NULL;
    }
    return s;
}

void coll_fluid_free(coll_fluid *s)
{
    if (!s)
        return;
    for (int r = 0; r < s->n; r++)
        free(s->rows[r].e);
    free(s->rows);
    map_free(&s->pairs);
    free(s->links);
    free(s->info);
    free(s->rt);
    free(s->ws);
    map_free(&s->ids);
    map_free(&s->owners);
    map_free(&s->memo);
    free(s->memo_buf);
    free(s->cap_Bps);
    free(s->lat_s);
    free(s->covers);
    free(s->may_couple);
    free(s->tally_bytes);
    xbt_dynar_free(&s->route);
    free(s);
}

/* The key of link l standing for the link numbered `owner` (platform_owner_index; -1:
 * l itself): l's address (8-byte aligned, below 2^47) above 18 bits of owner + 1 (below
 * 2^17 nodes plus their leaves). */
static uint64_t link_key(sg_link_t l, long owner)
{
    return ((uint64_t)(uintptr_t)l >> 3 << 18) | (uint64_t)(owner + 1);
}

/* link_key's link and owner back. */
static sg_link_t key_link(uint64_t key)
{
    return (sg_link_t)(uintptr_t)(key >> 18 << 3);
}

static long key_owner(uint64_t key)
{
    return (long)(key & ((1u << 18) - 1)) - 1;
}

/* On a folded platform, the link of the whole platform that folded link l
 * stands for on the route between ranks src and dst: *l becomes the same
 * link of node or leaf 0, and the owner's number is returned (-2 when out
 * of memory). */
static long link_owner(coll_fluid *s, sg_link_t *l, int src, int dst)
{
    long h = map_find(&s->owners, (uint64_t)(uintptr_t)*l);
    if (h < 0)
        return -2;
    if (!s->owners.slot[h].key) {
        char first[96];
        platform_owner o = platform_link_owner(s->fold, sg_link_get_name(*l), first, sizeof first);
        sg_link_t f = sg_link_by_name(first);
        s->owners.slot[h].key = (uint64_t)(uintptr_t)*l;
        s->owners.slot[h].val[0] = (size_t)o;
        s->owners.slot[h].val[1] = (size_t)(uintptr_t)(f ? f : *l);
        s->owners.len++;
    }
    *l = (sg_link_t)(uintptr_t)s->owners.slot[h].val[1];
    return platform_owner_index(s->fold, (platform_owner)s->owners.slot[h].val[0], s->ranks[src], s->ranks[dst]);
}

/* The dense id of link l (standing for the link numbered owner, link_key),
 * assigned in order of first appearance. */
static int link_id(coll_fluid *s, sg_link_t l, long owner)
{
    long h = map_find(&s->ids, link_key(l, owner));
    if (h < 0)
        return -1;
    if (s->ids.slot[h].key)
        return (int)s->ids.slot[h].val[0];
    if (s->nids == s->ids_cap) {
        int cap = s->ids_cap ? 2 * s->ids_cap : 256;
        double *c = realloc(s->cap_Bps, sizeof *c * (size_t)cap);
        if (c)
            s->cap_Bps = c;
        double *t = realloc(s->lat_s, sizeof *t * (size_t)cap);
        if (t)
            s->lat_s = t;
        struct link_covers *v = realloc(s->covers, sizeof *v * (size_t)cap);
        if (v)
            s->covers = v;
        unsigned char *m = realloc(s->may_couple, (size_t)cap);
        if (m)
            s->may_couple = m;
        if (!c || !t || !v || !m)
            return -1;
        s->ids_cap = cap;
    }
    s->covers[s->nids].n = 0;
    s->covers[s->nids].sum_Bps = 0;
    s->may_couple[s->nids] = 0;
    s->ids.slot[h].key = link_key(l, owner);
    s->ids.slot[h].val[0] = (size_t)s->nids;
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

/* Link l is used on a route whose cover (cover_of) is c: l may couple once
 * its distinct covers can put more than its bandwidth on it (a margin below
 * mark_coupling's test, so that its rounding never couples a link not
 * marked), or one is missing, or it has more than LINK_COVERS. */
static void note_cover(coll_fluid *s, int l, int c)
{
    struct link_covers *k = &s->covers[l];
    if (s->may_couple[l])
        return;
    for (int j = 0; c >= 0 && j < k->n; j++)
        if (k->id[j] == c)
            return;
    int more = c >= 0 && k->n == LINK_COVERS; /* a cover past those kept: not counted, so assume it may */
    if (c >= 0 && !more) {
        k->id[k->n++] = c;
        k->sum_Bps += s->cap_Bps[c];
    }
    if (c < 0 || more || k->sum_Bps > s->cap_Bps[l] * (1 + 1e-13)) {
        s->may_couple[l] = 1;
        s->may_epoch++;
    }
}

/* Route f's positions whose link may couple, brought up to date. */
static void route_refresh(coll_fluid *s, struct route_info *f)
{
    if (f->may_epoch == s->may_epoch)
        return;
    const int *r = s->links + f->off;
    int *m = s->links + f->off + 2 * f->len;
    unsigned k = 0;
    for (size_t i = 0; i < f->len; i++)
        if (s->may_couple[r[i]])
            m[k++] = (int)i;
    f->may_len = k;
    f->may_epoch = s->may_epoch;
}

/* SimGrid's route from src to dst as dense link ids, appended to s->links
 * and s->info: its index in s->info, -1 when out of memory. */
static long route_new(coll_fluid *s, int src, int dst)
{
    xbt_dynar_reset(s->route);
    if (s->fold) /* the folded platform's route between the ranks standing for them */
        sg_host_get_route(sim_rank_host(platform_fold_rank(s->fold, s->ranks[src], s->ranks[src])),
                          sim_rank_host(platform_fold_rank(s->fold, s->ranks[src], s->ranks[dst])), s->route);
    else
        sg_host_get_route(s->hosts[src], s->hosts[dst], s->route);
    size_t len = xbt_dynar_length(s->route);
    if (s->links_len + 3 * len > s->links_cap) {
        size_t cap = 2 * (s->links_len + 3 * len) + 1024;
        int *t = realloc(s->links, sizeof *t * cap);
        if (!t)
            return -1;
        s->links = t;
        s->links_cap = cap;
    }
    if (s->nroutes == s->routes_cap) {
        struct route_info *t = realloc(s->info, sizeof *t * (2 * s->routes_cap + 1024));
        if (!t)
            return -1;
        s->info = t;
        s->routes_cap = 2 * s->routes_cap + 1024;
    }
    int *r = s->links + s->links_len;
    for (size_t i = 0; i < len; i++) {
        sg_link_t l = xbt_dynar_get_as(s->route, i, sg_link_t);
        long owner = s->fold ? link_owner(s, &l, src, dst) : -1;
        int id = owner < -1 ? -1 : link_id(s, l, owner);
        if (id < 0)
            return -1;
        r[i] = id;
    }
    double lat_s = 0, cap_Bps = INFINITY;
    for (size_t i = 0; i < len; i++) {
        r[len + i] = cover_of(s, r, len, i);
        note_cover(s, r[i], r[len + i]);
        lat_s += s->lat_s[r[i]];
        cap_Bps = fmin(cap_Bps, s->cap_Bps[r[i]]);
    }
    s->info[s->nroutes] = (struct route_info){lat_s, cap_Bps, s->links_len, len, 0, s->may_epoch - 1};
    s->links_len += 3 * len;
    return (long)s->nroutes++;
}

/* Rows scanned for a rank's destinations before the map (all pairs: thousands). */
#define ROW_SCAN 32

/* The routes between src and dst both ways (cached) as rt wants them: each
 * its offset into s->links, its length and its index in s->info. -1 when
 * out of memory. */
static int route_pair(coll_fluid *s, int src, int dst, route_use *out)
{
    struct route_row *w = &s->rows[src];
    struct route_pair *e = NULL;
    for (int i = 0; i < w->n && !e; i++)
        e = w->e[i].dst == dst ? &w->e[i] : NULL;
    struct route_pair found;
    long h = -1;
    if (!e && w->n == ROW_SCAN) {
        if ((h = map_find(&s->pairs, (uint64_t)src * (uint64_t)s->n + (uint64_t)dst + 1)) < 0)
            return -1;
        found = (struct route_pair){dst, (unsigned)s->pairs.slot[h].val[0], (unsigned)s->pairs.slot[h].val[1]};
        e = s->pairs.slot[h].key ? &found : NULL;
    }
    if (!e) { /* new: the reverse pair's routes if known, else SimGrid's */
        const struct route_row *v = &s->rows[dst];
        long fwd = -1, rev = -1;
        for (int i = 0; i < v->n && fwd < 0; i++)
            if (v->e[i].dst == src)
                fwd = v->e[i].rev, rev = v->e[i].fwd;
        if (fwd < 0 && ((fwd = route_new(s, src, dst)) < 0 || (rev = route_new(s, dst, src)) < 0))
            return -1;
        found = (struct route_pair){dst, (unsigned)fwd, (unsigned)rev};
        e = &found;
        if (h >= 0) {
            s->pairs.slot[h].key = (uint64_t)src * (uint64_t)s->n + (uint64_t)dst + 1;
            s->pairs.slot[h].val[0] = (size_t)fwd;
            s->pairs.slot[h].val[1] = (size_t)rev;
            s->pairs.len++;
        } else {
            if (w->n == w->cap) {
                int cap = w->cap ? 2 * w->cap : 4;
                struct route_pair *t = realloc(w->e, sizeof *t * (size_t)(cap < ROW_SCAN ? cap : ROW_SCAN));
                if (!t)
                    return -1;
                w->e = t;
                w->cap = cap < ROW_SCAN ? cap : ROW_SCAN;
            }
            w->e[w->n++] = found;
        }
    }
    struct route_info *f = &s->info[e->fwd], *r = &s->info[e->rev];
    route_refresh(s, f);
    route_refresh(s, r);
    out[0] = (route_use){f->off, (unsigned)f->len, f->may_len, e->fwd, f->lat_s, f->cap_Bps};
    out[1] = (route_use){r->off, (unsigned)r->len, r->may_len, e->rev, r->lat_s, r->cap_Bps};
    return 0;
}

/* Links that can limit a flow and are shared: the distinct covers of their
 * uses can put more on them than their bandwidth. Links that cannot (a
 * node's port fed by its NICs, a non-blocking fabric) couple nothing. The
 * uses are bucketed by link (off: nl + 1, cov: a use's cover) so that each
 * link's distinct covers are counted with a stamp per cover (last: nl);
 * those of links that never couple (may_couple) are left out: two thirds
 * of a frontier round's uses. */
static void mark_coupling(const coll_fluid *s, const size_t *cl_off, const int *cl_link, const int *cl_cov, size_t nf,
                          int nl, unsigned char *coupling, size_t *off, int *cov, int *last, double *bound)
{
    memset(off, 0, sizeof *off * ((size_t)nl + 1));
    for (size_t k = 0; k < 2 * nf; k++)
        for (size_t u = cl_off[k]; u < (k % 2 && !s->cross ? cl_off[k] : cl_off[k + 1]); u++)
            off[cl_link[u] + 1]++;
    for (int l = 0; l < nl; l++) {
        off[l + 1] += off[l];
        last[l] = -1;
        bound[l] = 0;
    }
    for (size_t k = 0; k < 2 * nf; k++)
        for (size_t u = cl_off[k]; u < (k % 2 && !s->cross ? cl_off[k] : cl_off[k + 1]); u++)
            cov[off[cl_link[u]]++] = cl_cov[u];
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

/* Grows a kept buffer to hold `bytes` (contents not kept), by half again as
 * much: a pipeline's fill grows its rounds step by step, and each fresh
 * buffer of megabytes is paid again in page faults. -1 when out of memory. */
static int buffer_reserve(char **buf, size_t *have, size_t bytes)
{
    if (bytes <= *have)
        return 0;
    size_t want = bytes + bytes / 2;
    char *t = malloc(want);
    if (!t)
        return -1;
    free(*buf);
    *buf = t;
    *have = want;
    return 0;
}

/* The next `bytes` of a workspace, 16-byte aligned; with *at NULL, only counts. */
static void *carve(char **at, size_t *used, size_t bytes)
{
    void *p = *at ? *at + *used : NULL;
    *used += (bytes + 15) & ~(size_t)15;
    return p;
}

/* A component as memo_solve keeps it, in doubles (integers below 2^53 are
 * exact): nf, nc, then use_off, use_c, use_w, cap, penalty, bytes, start_s,
 * bound_Bps, and last each flow's end. Returns the doubles it takes before
 * the ends; with out NULL, only counts. */
static size_t memo_pack(const maxmin_comp *c, const double *bytes, const double *start_s, const double *bound_Bps,
                        double *out)
{
    size_t k = 0, nu = (size_t)c->use_off[c->nf];
#define PUT(x) (out ? (void)(out[k] = (double)(x)) : (void)0, k++)
    PUT(c->nf);
    PUT(c->nc);
    for (int i = 0; i <= c->nf; i++)
        PUT(c->use_off[i]);
    for (size_t u = 0; u < nu; u++)
        PUT(c->use_c[u]);
    for (size_t u = 0; u < nu; u++)
        PUT(c->use_w[u]);
    for (int j = 0; j < c->nc; j++)
        PUT(c->cap[j]);
    for (int i = 0; i < c->nf; i++) {
        PUT(c->penalty[i]);
        PUT(bytes[i]);
        PUT(start_s[i]);
        PUT(bound_Bps[i]);
    }
#undef PUT
    return k;
}

/* maxmin_solve, once per distinct component of the round: a component equal
 * in every input to one solved before (same flows' bytes, start times,
 * bounds and penalties on the same pattern of links and capacities) takes
 * its ends. Exact: the solve is a function of exactly these. -1 when out of
 * memory. */
static int memo_solve(coll_fluid *s, const maxmin_comp *c, const double *bytes, const double *start_s,
                      const double *bound_Bps, double *done_s, maxmin_work *w)
{
    size_t k = memo_pack(c, bytes, start_s, bound_Bps, NULL), need = s->memo_len + k + (size_t)c->nf;
    if (need > s->memo_cap) {
        size_t cap = 2 * need + 4096;
        double *t = realloc(s->memo_buf, sizeof *t * cap);
        if (!t)
            return -1;
        s->memo_buf = t;
        s->memo_cap = cap;
    }
    double *e = s->memo_buf + s->memo_len;
    memo_pack(c, bytes, start_s, bound_Bps, e);
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < k; i++) { /* FNV-1a over the words, mixed once: a collision only costs a solve */
        uint64_t bits;
        memcpy(&bits, &e[i], sizeof bits);
        h = (h ^ bits) * 0x100000001b3u;
    }
    h = rng_mix(h) | 1; /* 0 marks an empty slot */
    long slot = map_find(&s->memo, h);
    if (slot < 0)
        return -1;
    if (s->memo.slot[slot].key) {
        const double *old = s->memo_buf + s->memo.slot[slot].val[0];
        if (s->memo.slot[slot].val[1] == k && memcmp(old, e, sizeof *e * k) == 0) {
            for (int i = 0; i < c->nf; i++)
                done_s[c->flow[i]] = old[k + (size_t)i];
            return 0;
        }
        maxmin_solve(c, bytes, start_s, bound_Bps, done_s, w); /* another with the same hash: unkept */
        return 0;
    }
    maxmin_solve(c, bytes, start_s, bound_Bps, done_s, w);
    for (int i = 0; i < c->nf; i++)
        e[k + (size_t)i] = done_s[c->flow[i]];
    s->memo.slot[slot].key = h;
    s->memo.slot[slot].val[0] = s->memo_len;
    s->memo.slot[slot].val[1] = k;
    s->memo.len++;
    s->memo_len = need;
    return 0;
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
    if (buffer_reserve(&s->rt, &s->rt_bytes, sizeof(route_use) * (2 * nf + 1)))
        return -1;
    if (s->memo.len) { /* each round's components afresh: memory stays a round's */
        memset(s->memo.slot, 0, sizeof *s->memo.slot * s->memo.cap);
        s->memo.len = 0;
    }
    s->memo_len = 0;
    route_use *rt = (route_use *)s->rt; /* per flow: route, reverse route (route_pair) */
    unsigned epoch = s->may_epoch;
    for (size_t k = 0; k < nf; k++)
        if (route_pair(s, flows[k].src, flows[k].dst, rt + 2 * k))
            return -1;
    for (size_t k = 0; epoch != s->may_epoch && k < 2 * nf; k++) { /* links turned may_couple since */
        route_refresh(s, &s->info[rt[k].info]);
        rt[k].may_len = s->info[rt[k].info].may_len;
    }
    int nl = s->nids, roles = s->cross > 0 ? 2 : 1;
    size_t nuse = 0, ncl = 0, L = (size_t)nl + 1, F = nf + 1;
    for (size_t k = 0; k < 2 * nf; k++) {
        ncl += rt[k].may_len;
        nuse += k % 2 && roles == 1 ? 0 : rt[k].may_len;
    }
    unsigned char *coupling = NULL;
    size_t *up = NULL, *first = NULL, *order = NULL, *start = NULL, *cl_off = NULL;
    int *loc = NULL, *links = NULL, *use_off = NULL, *use_c = NULL, *cl_link = NULL, *cl_cov = NULL;
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
        cl_off = carve(&at, &used, sizeof *cl_off * (2 * nf + 1));
        cl_link = carve(&at, &used, sizeof *cl_link * (ncl + 1));
        cl_cov = carve(&at, &used, sizeof *cl_cov * (ncl + 1));
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
    /* each use's links that may couple and their covers, gathered once in flow order: the loops below
     * read them three times, and the cached routes lie scattered in memory */
    for (size_t k = 0, u = 0; k < 2 * nf; k++) {
        const int *r = s->links + rt[k].off, *m = r + 2 * rt[k].len;
        cl_off[k] = u;
        for (unsigned i = 0; i < rt[k].may_len; i++, u++) {
            cl_link[u] = r[m[i]];
            cl_cov[u] = r[rt[k].len + (unsigned)m[i]];
        }
        cl_off[k + 1] = u;
    }
    /* first, use_c, loc and left serve as mark_coupling's buckets, covers, stamps and bounds */
    mark_coupling(s, cl_off, cl_link, cl_cov, nf, nl, coupling, first, use_c, loc, w.left);
    memset(start, 0, sizeof *start * (F + 1));
    /* components: flows joined by a coupling link they load */
    for (size_t k = 0; k < nf; k++)
        up[k] = k;
    for (int l = 0; l < nl; l++) {
        first[l] = SIZE_MAX;
        loc[l] = -1;
    }
    for (size_t k = 0; k < 2 * nf; k += (size_t)(3 - roles))
        for (size_t u = cl_off[k]; u < cl_off[k + 1]; u++) {
            int l = cl_link[u];
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
            lat[i] = rt[2 * k].lat_s;
            bound[i] = rt[2 * k].cap_Bps;
            if (roles > 1)
                bound[i] = fmin(bound[i], rt[2 * k + 1].cap_Bps / s->cross);
            for (int role = 0; role < roles; role++)
                for (size_t j = cl_off[2 * k + role]; j < cl_off[2 * k + role + 1]; j++) {
                    int l = cl_link[j];
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
        if (memo_solve(s, &c, bytes, lat, bound, done, &w))
            return -1;
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

int coll_fluid_tally(coll_fluid *s, const coll_flow *flows, size_t nf, double times)
{
    route_use rt[2];
    for (size_t k = 0; k < nf; k++) {
        if (flows[k].bytes <= 0)
            continue;
        if (route_pair(s, flows[k].src, flows[k].dst, rt))
            return -1;
        if (s->nids > s->tally_len) { /* routes met since hold new ids */
            double *t = realloc(s->tally_bytes, sizeof *t * (size_t)s->ids_cap);
            if (!t)
                return -1;
            memset(t + s->tally_len, 0, sizeof *t * (size_t)(s->ids_cap - s->tally_len));
            s->tally_bytes = t;
            s->tally_len = s->ids_cap;
        }
        for (size_t i = 0; i < rt[0].len; i++)
            s->tally_bytes[s->links[rt[0].off + i]] += flows[k].bytes * times;
    }
    return 0;
}

int coll_fluid_tally_flush(coll_fluid *s, link_tally *t)
{
    uint64_t *key_of = malloc(sizeof *key_of * ((size_t)s->nids + 1));
    if (!key_of)
        return -1;
    for (size_t i = 0; i < s->ids.cap; i++)
        if (s->ids.slot[i].key)
            key_of[s->ids.slot[i].val[0]] = s->ids.slot[i].key;
    int rc = 0;
    for (int id = 0; rc == 0 && id < s->tally_len && id < s->nids; id++) { /* in order of first use */
        if (s->tally_bytes[id] > 0)
            rc = link_tally_add_link(t, key_link(key_of[id]), key_owner(key_of[id]), s->tally_bytes[id]);
        s->tally_bytes[id] = 0;
    }
    free(key_of);
    return rc;
}
