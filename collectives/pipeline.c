/* pipeline.c: NCCL's pipelined kernels as schedules (ALGO_PIPELINE).
 *
 * NCCL cuts each channel's share of the vector into chunks that stream
 * through every hop at once: while chunk x is reduced up a tree, chunk x - 1
 * is already on its way back down (src/device/all_reduce.h, runTreeSplit;
 * the CollNet and NVLS kernels likewise). A P_PIPE part is the list of a
 * lane's edges, each with the step at which chunk 0 crosses it; chunk x
 * crosses at that step + x. So the schedule fills, runs a steady state in
 * which every edge carries a chunk in the same step (identical steps), and
 * drains; its time is the pipeline's depth in steps plus one step per chunk.
 *
 * Shapes (coll_params.pipe_intra x pipe_inter), one lane per NCCL channel
 * and tree (chains) or per head GPU and tree (direct, switch):
 * - chain x dtree: NCCL's tree. Each node's GPUs form a chain in the
 *   channel's order whose head talks to the other nodes over its NIC
 *   (NCCL_TOPO_PATTERN_TREE); the heads form NCCL's double binary tree over
 *   the nodes, the even lanes on the first tree, the odd on the second.
 * - chain x sharp: CollNet chain. The chain reduces onto the head, the head
 *   sends its sum up into the switches and receives the total.
 * - direct x sharp: CollNet direct. Every GPU sends head j its piece j, the
 *   head reduces, exchanges with the switches, and sends the total back.
 * - switch x none / dtree / sharp: NVLS on one node, NVLS tree, NVLS with
 *   SHARP. The NVSwitch reduces (multimem loads) and multicasts (stores), so
 *   the GPUs copy and each GPU's port carries its vector about once each way:
 *   (g+1)/g of it against the 2(g-1)/g of a direct exchange's both halves,
 *   which the edges carry by the factor (g+1)/(2(g-1)), over the switch's
 *   efficiency (coll_params.switch_efficiency).
 * The network hop of SHARP is a transfer from each head to the next node's
 * head on the same rail: every NIC sends its share once and receives it once,
 * as the switch tree's leaves do; the reduction itself is the switch's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/schedule_impl.h"

/* NCCL's binary tree over n nodes (trees.cc, ncclGetBtree): node 0 is the
 * root with a single child; any other node's parent clears its lowest set
 * bit and sets the next one up, or only clears it when that is out of range. */
static int btree_parent(int n, int r)
{
    if (r == 0)
        return -1;
    int bit = 1;
    while (!(r & bit))
        bit <<= 1;
    int up = (r ^ bit) | (bit << 1);
    return up >= n ? r ^ bit : up;
}

/* The double binary tree's second tree mirrors the first (n even) or shifts
 * it by one node (n odd), so a node inner in one is a leaf in the other. */
static int dtree_parent(int n, int r, int tree)
{
    if (tree == 0)
        return btree_parent(n, r);
    if (n % 2) {
        int u = btree_parent(n, (r - 1 + n) % n);
        return u < 0 ? -1 : (u + 1) % n;
    }
    int u = btree_parent(n, n - 1 - r);
    return u < 0 ? -1 : n - 1 - u;
}

/* Each node's depth in tree `tree` (the root 0); returns the deepest. */
static int dtree_depths(int n, int tree, int *depth)
{
    int most = 0;
    for (int r = 0; r < n; r++) {
        int d = 0;
        for (int u = dtree_parent(n, r, tree); u >= 0; u = dtree_parent(n, u, tree))
            d++;
        depth[r] = d;
        most = d > most ? d : most;
    }
    return most;
}

typedef struct edge_list {
    pipe_edge *e;
    int n, cap, max_delay;
} edge_list;

static int add_edge(edge_list *l, int src, int dst, int delay, xfer_op op, float wire)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        pipe_edge *grown = realloc(l->e, sizeof *grown * (size_t)cap);
        if (!grown)
            return -1;
        l->e = grown;
        l->cap = cap;
    }
    l->e[l->n++] = (pipe_edge){src, dst, delay, op, wire};
    if (delay > l->max_delay)
        l->max_delay = delay;
    return 0;
}

/* Orders a lane's edges by delay, stable, and indexes them (*off: max_delay
 * + 2 offsets): a step generates the edges whose delay puts a chunk on
 * them, not every edge of the lane (fill and drain steps have few), and a
 * rank's reductions of one chunk keep their order. -1 when out of memory. */
static int by_delay(edge_list *l, int **off)
{
    int nd = l->max_delay + 1;
    int *o = calloc((size_t)nd + 1, sizeof *o);
    pipe_edge *e = malloc(sizeof *e * ((size_t)l->n + 1));
    if (!o || !e) {
        free(o);
        free(e);
        return -1;
    }
    for (int k = 0; k < l->n; k++)
        o[l->e[k].delay + 1]++;
    for (int d = 0; d < nd; d++)
        o[d + 1] += o[d];
    for (int k = 0; k < l->n; k++) /* o[d] runs to the end of delay d's edges */
        e[o[l->e[k].delay]++] = l->e[k];
    for (int d = nd; d > 0; d--) /* back to each delay's start */
        o[d] = o[d - 1];
    o[0] = 0;
    free(l->e);
    l->e = e;
    *off = o;
    return 0;
}

/* A chain lane: node u's k-th GPU in the lane's order is rank u g + order[k]. */
static int chain_lane(edge_list *l, const coll_params *pp, const int *order, const int *dn, int dmax, int tree)
{
    int g = pp->ranks_per_node, nodes = pp->ranks / g, rc = 0;
    if (pp->pipe_inter == PIPE_SHARP) {
        /* up the chain to the head, into the switches and back, down the chain */
        for (int u = 0; u < nodes && rc == 0; u++) {
            int b = u * g;
            for (int k = 1; k < g && rc == 0; k++)
                rc = add_edge(l, b + order[k], b + order[k - 1], g - 1 - k, XFER_REDUCE, 1) ||
                     add_edge(l, b + order[k - 1], b + order[k], g + k - 1, XFER_COPY, 1);
            if (rc == 0 && nodes > 1)
                rc = add_edge(l, b + order[0], (u + 1) % nodes * g + order[0], g - 1, XFER_COPY, 1);
        }
        return rc;
    }
    int D = dmax + g - 1; /* the deepest GPU: the deepest node's chain tail */
    for (int u = 0; u < nodes && rc == 0; u++) {
        int b = u * g, depth = dn[u];
        int up = dtree_parent(nodes, u, tree);
        if (up >= 0) /* the head to its parent node's head, over the network */
            rc = add_edge(l, b + order[0], up * g + order[0], D - depth, XFER_REDUCE, 1) ||
                 add_edge(l, up * g + order[0], b + order[0], D + depth - 1, XFER_COPY, 1);
        for (int k = 1; k < g && rc == 0; k++)
            rc = add_edge(l, b + order[k], b + order[k - 1], D - (depth + k), XFER_REDUCE, 1) ||
                 add_edge(l, b + order[k - 1], b + order[k], D + depth + k - 1, XFER_COPY, 1);
    }
    return rc;
}

/* A head lane (direct, switch): head j of every node owns this lane's data. */
static int head_lane(edge_list *l, const coll_params *pp, int j, const int *dn, int dmax, int tree)
{
    int g = pp->ranks_per_node, nodes = pp->ranks / g, rc = 0, sw = pp->pipe_intra == PIPE_SWITCH;
    double eff = pp->switch_efficiency > 0 ? pp->switch_efficiency : 1.0;
    float wire = sw && g > 1 ? (float)((g + 1.0) / (2.0 * (g - 1)) / eff) : 1.0f;
    for (int u = 0; u < nodes && rc == 0; u++) {
        int b = u * g, head = b + j, gather = 1;
        if (pp->pipe_inter == PIPE_SHARP && nodes > 1) {
            rc = add_edge(l, head, (u + 1) % nodes * g + j, 1, XFER_COPY, 1);
            gather = 2;
        } else if (pp->pipe_inter == PIPE_DTREE) {
            int up = dtree_parent(nodes, u, tree);
            if (up >= 0)
                rc = add_edge(l, head, up * g + j, 1 + dmax - dn[u], XFER_REDUCE, 1) ||
                     add_edge(l, up * g + j, head, dmax + dn[u], XFER_COPY, 1);
            gather = 1 + dmax + dn[u];
        }
        for (int i = 0; i < g && rc == 0; i++)
            if (i != j)
                rc = add_edge(l, b + i, head, 0, sw ? XFER_COPY : XFER_REDUCE, wire) ||
                     add_edge(l, head, b + i, gather, XFER_COPY, wire);
    }
    return rc;
}

/* Lane h's chain order: the channel's node order if given (platform_ring_orders,
 * its first rank by the channel's NIC), else rank order from h g / c on. */
static void lane_order(const coll_params *pp, int h, int c, int *order)
{
    int g = pp->ranks_per_node;
    const int *o = pp->node_order[h % 8];
    int given = o[0] || o[1];
    for (int k = 0; k < g; k++)
        order[k] = given ? o[k] : (k + h * g / c) % g;
}

int coll_pipeline_lanes(const coll_params *pp)
{
    int g = pp->ranks_per_node > 0 ? pp->ranks_per_node : 1, nodes = pp->ranks / g;
    int trees = pp->pipe_inter == PIPE_DTREE && nodes > 1 ? 2 : 1;
    return (pp->pipe_intra == PIPE_CHAIN ? (pp->channels > 0 ? pp->channels : 1) : g) * trees;
}

int coll_pipeline_chunks(const coll_params *pp, size_t count)
{
    int lanes = coll_pipeline_lanes(pp);
    size_t most = count / (size_t)lanes + (count % (size_t)lanes != 0);
    double lane_bytes = pp->bytes / lanes;
    if (pp->chunk_bytes <= 0 || most < 1)
        return 1;
    return (int)fmin(fmin(fmax(1, ceil(lane_bytes / pp->chunk_bytes)), (double)most), 1e6);
}

int build_pipeline(schedule *s, const coll_params *pp, size_t count)
{
    int g = pp->ranks_per_node, nodes = pp->ranks / g, chain = pp->pipe_intra == PIPE_CHAIN;
    int trees = pp->pipe_inter == PIPE_DTREE && nodes > 1 ? 2 : 1;
    int c = chain ? (pp->channels > 0 ? pp->channels : 1) : g;
    int lanes = coll_pipeline_lanes(pp), order[16];
    int *dn = calloc((size_t)nodes * 2, sizeof *dn);
    if (!dn)
        return -1;
    int dmax[2] = {0, 0};
    for (int t = 0; t < trees && pp->pipe_inter == PIPE_DTREE; t++)
        dmax[t] = dtree_depths(nodes, t, dn + t * nodes);
    int chunks = coll_pipeline_chunks(pp, count); /* every lane as many: the stages' steps are shared */
    int first = -1, max_delay = 0, rc = 0;
    for (int l = 0; l < lanes && rc == 0; l++) {
        int h = l / trees, t = l % trees;
        edge_list el = {0};
        if (chain) {
            lane_order(pp, h, c, order);
            rc = chain_lane(&el, pp, order, dn + t * nodes, dmax[t], t);
        } else {
            rc = head_lane(&el, pp, h, dn + t * nodes, dmax[t], t);
        }
        sched_part p;
        memset(&p, 0, sizeof p);
        if (rc == 0)
            rc = by_delay(&el, &p.delay_off);
        p.kind = P_PIPE;
        p.groups = 1;
        p.gsize = pp->ranks;
        block_of(0, count, lanes, l, &p.off, &p.len);
        p.chunks = chunks;
        p.edges = el.e;
        p.nedges = el.n;
        p.max_delay = el.max_delay;
        p.ndelays = el.max_delay + 1;
        int k = rc ? -1 : sched_add_part(s, &p);
        if (k < 0) {
            free(el.e);
            free(p.delay_off);
            rc = -1;
        }
        if (l == 0)
            first = k;
        max_delay = el.max_delay > max_delay ? el.max_delay : max_delay;
    }
    free(dn);
    if (rc)
        return -1;
    for (int l = 0; l < lanes; l++) /* one fill, steady state and drain for all lanes */
        s->parts[first + l].max_delay = max_delay;
    int before = s->nstages, D = max_delay;
    rc = chunks > D ? sched_add_stage(s, first, lanes, 0, D, 0) || sched_add_stage(s, first, lanes, D, chunks - D, 1) ||
                          sched_add_stage(s, first, lanes, chunks, D, 0)
                    : sched_add_stage(s, first, lanes, 0, chunks + D, 0);
    for (int k = before; k < s->nstages; k++)
        s->stages[k].pipelined = 1;
    s->switched = pp->pipe_intra == PIPE_SWITCH || pp->pipe_inter == PIPE_SHARP;
    return rc;
}

size_t gen_pipe(const sched_part *p, int t, xfer *out, size_t n)
{
    /* chunk x = t - delay crosses at step t: delays from t - chunks + 1 to t */
    int lo = t - p->chunks + 1 > 0 ? t - p->chunks + 1 : 0, hi = t < p->ndelays - 1 ? t : p->ndelays - 1;
    for (int d = lo; d <= hi; d++) {
        size_t bo, bl;
        block_of(p->off, p->len, p->chunks, t - d, &bo, &bl);
        for (int k = p->delay_off[d]; k < p->delay_off[d + 1]; k++) {
            const pipe_edge *e = &p->edges[k];
            size_t len = e->wire != 1.0f ? (size_t)llround((double)bl * e->wire) : bl;
            if (len)
                out[n++] = (xfer){e->src, e->dst, bo, bo, len, e->op};
        }
    }
    return n;
}
