/* schedule.c: the primitives (parts) every algorithm is built from, and the
 * step generator. Algorithms themselves are assembled in algorithms.c. */
#include "collectives/schedule_impl.h"

#include <stdlib.h>
#include <string.h>

static const char *const OP_NAMES[OP_COUNT] = {
    "allreduce", "reduce_scatter", "allgather", "broadcast", "reduce", "alltoall",
};
static const char *const ALGO_NAMES[ALGO_COUNT] = {
    "auto", "ring", "rhd", "rd", "binomial", "tree", "dbtree", "torus2d", "torus", "hier",
    "direct", "pairwise", "bruck", "nccl", "pipeline",
};

static const char *const STAGING_NAMES[STAGING_COUNT + 1] = {"device", "host", NULL};
static const char *const INTER_NAMES[] = {"ring", "rhd", NULL}; /* hier's inter-node phases, as ALGO_NAMES */

const char *coll_staging_name(coll_staging staging)
{
    return staging >= 0 && staging < STAGING_COUNT ? STAGING_NAMES[staging] : "?";
}

const char *const *coll_staging_words(void)
{
    return STAGING_NAMES;
}

const char *const *coll_inter_words(void)
{
    return INTER_NAMES;
}

coll_algo coll_inter_algo(int word)
{
    return word == 1 ? ALGO_RHD : ALGO_RING;
}

const char *coll_op_name(coll_op op)
{
    return op >= 0 && op < OP_COUNT ? OP_NAMES[op] : "?";
}

const char *coll_algo_name(coll_algo a)
{
    return a >= 0 && a < ALGO_COUNT ? ALGO_NAMES[a] : "?";
}

int coll_op_parse(const char *word, coll_op *out)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(word, OP_NAMES[i]) == 0) {
            *out = (coll_op)i;
            return 0;
        }
    return -1;
}

int coll_algo_parse(const char *word, coll_algo *out)
{
    for (int i = 0; i <= ALGO_NCCL; i++) /* ALGO_PIPELINE is NCCL's, built by its plan */
        if (strcmp(word, ALGO_NAMES[i]) == 0) {
            *out = (coll_algo)i;
            return 0;
        }
    return -1;
}

double coll_busbw_factor(coll_op op, int n)
{
    switch (op) {
    case OP_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case OP_REDUCE_SCATTER:
    case OP_ALLGATHER:
    case OP_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

int ilog2_floor(int n)
{
    int l = 0;
    while ((2 << l) <= n)
        l++;
    return l;
}

int ilog2_ceil(int n)
{
    int l = 0;
    while ((1 << l) < n)
        l++;
    return l;
}

/* Block j of k over [off, off+len): sizes differ by at most one element. */
void block_of(size_t off, size_t len, int k, int j, size_t *b_off, size_t *b_len)
{
    size_t lo = len * (size_t)j / (size_t)k, hi = len * (size_t)(j + 1) / (size_t)k;
    *b_off = off + lo;
    *b_len = hi - lo;
}

/* Depth of heap position p in a tree of the given arity. */
static int heap_depth(int p, int arity)
{
    int d = 0;
    while (p > 0) {
        p = (p - 1) / arity;
        d++;
    }
    return d;
}

int part_tree_depth(const sched_part *p)
{
    return heap_depth(p->gsize - 1, p->arity);
}

int part_steps(const sched_part *p)
{
    int k = p->gsize;
    switch (p->kind) {
    case P_RING_RS:
    case P_RING_AG:
        return k - 1;
    case P_RH_RS:
    case P_RD_AG:
    case P_RD_AR:
        return ilog2_floor(k);
    case P_FOLD_IN:
    case P_FOLD_OUT:
    case P_STAGE:
    case P_DIRECT_RS:
    case P_DIRECT_AG:
    case P_A2A_DIRECT:
        return 1;
    case P_BIN_REDUCE:
    case P_BIN_BCAST:
    case P_BIN_SCATTER:
    case P_BIN_GATHER:
        return ilog2_ceil(k);
    case P_TREE_REDUCE:
    case P_TREE_BCAST:
        return part_tree_depth(p) + p->chunks - 1;
    case P_A2A_PAIRWISE:
        return k - 1;
    case P_A2A_BRUCK:
        return ilog2_ceil(k) + 2;
    case P_A2A_HIER:
        return 2;
    case P_PIPE:
        return p->chunks + p->max_delay;
    }
    return 0;
}

size_t part_max_xfers(const sched_part *p)
{
    size_t k = (size_t)p->gsize, g = (size_t)p->groups;
    switch (p->kind) {
    case P_DIRECT_RS:
    case P_DIRECT_AG:
        return g * k * k;
    case P_A2A_DIRECT:
    case P_A2A_BRUCK:
    case P_A2A_HIER:
        return k * k;
    case P_A2A_PAIRWISE:
        return 2 * k;
    case P_PIPE:
        return (size_t)p->nedges;
    default:
        return g * k * (size_t)(p->arity > 1 ? p->arity : 1);
    }
}

/* The rank at coordinate i along a torus part's dimension in its group g
 * (g counts the other dimensions, fastest first); coord receives all three. */
static int torus_point(const sched_part *p, int g, int i, int *coord, int want)
{
    int c[4] = {0, 0, 0, 0}, rank = 0, stride = 1;
    for (int d = 0; d < p->tnd; d++) {
        if (d == p->tdim)
            c[d] = i;
        else {
            c[d] = g % p->tdims[d];
            g /= p->tdims[d];
        }
        rank += c[d] * stride;
        stride *= p->tdims[d];
    }
    if (want)
        memcpy(coord, c, sizeof c);
    return rank;
}

/* Rank of in-group index i of group g. With fold, the index counts the
 * survivors of the non-power-of-two fold: the first `fold` pairs keep their
 * even member. */
static int member(const sched_part *p, int g, int i)
{
    if (p->fold)
        i = i < p->fold ? 2 * i : i + p->fold;
    if (p->tnd)
        return torus_point(p, g, i, NULL, 0);
    if (p->node_size) /* a channel ring: node by node, each node's ranks in ring order from rot */
        return i / p->node_size * p->node_size + p->order[(i % p->node_size + p->rot) % p->node_size];
    return g * p->gstride + i * p->istride;
}

static void group_range(const sched_part *p, int g, size_t *off, size_t *len)
{
    if (p->tnd) {
        int coord[4];
        torus_point(p, g, 0, coord, 1);
        *off = p->off;
        *len = p->len;
        for (int e = 0; e < p->tnest; e++)
            block_of(*off, *len, p->tdims[p->torder[e]], coord[p->torder[e]], off, len);
    } else if (p->split)
        block_of(p->off, p->len, p->groups, g, off, len);
    else {
        *off = p->off;
        *len = p->len;
    }
}

static size_t emit(xfer *out, size_t n, int src, int dst, size_t src_off, size_t dst_off, size_t len,
                   xfer_op op)
{
    if (len == 0)
        return n;
    out[n] = (xfer){src, dst, src_off, dst_off, len, op};
    return n + 1;
}

static int mod(int a, int k)
{
    return ((a % k) + k) % k;
}

/* Blocks [lo, hi) of k over [off, off+len), as one contiguous range. */
static void blocks_range(size_t off, size_t len, int k, int lo, int hi, size_t *r_off, size_t *r_len)
{
    size_t a, al, b, bl;
    block_of(off, len, k, lo, &a, &al);
    block_of(off, len, k, hi - 1, &b, &bl);
    *r_off = a;
    *r_len = b + bl - a;
}

static size_t gen_group(const sched_part *p, int g, int t, xfer *out, size_t n)
{
    int k = p->gsize;
    size_t off, len, bo, bl;
    group_range(p, g, &off, &len);
    switch (p->kind) {
    case P_RING_RS:
    case P_RING_AG:
        /* RS: member i sends block i - d(t+1) to i + d, who ends owning block i.
         * AG: member i starts owning block i and forwards block i - d t. */
        for (int i = 0; i < k; i++) {
            int blk = p->kind == P_RING_RS ? mod(i - p->dir * (t + 1), k) : mod(i - p->dir * t, k);
            if (p->node_size) /* a channel ring: a rank ends owning its own block, wherever it sits */
                blk = member(p, g, blk);
            block_of(off, len, k, blk, &bo, &bl);
            if (p->subs > 1) /* a channel's piece of every block */
                block_of(bo, bl, p->subs, p->sub, &bo, &bl);
            n = emit(out, n, member(p, g, i), member(p, g, mod(i + p->dir, k)), bo, bo, bl,
                     p->kind == P_RING_RS ? XFER_REDUCE : XFER_COPY);
        }
        break;
    case P_RH_RS: {
        /* Halving: at step t the partner differs in bit L-1-t; each keeps the
         * half of its window that its own bit selects, so member i ends with block i. */
        int L = ilog2_floor(k), mask = k >> (t + 1);
        for (int i = 0; i < k; i++) {
            int lo = (i >> (L - t)) << (L - t), half = (k >> t) / 2;
            int send_lo = (i & mask) ? lo : lo + half;
            blocks_range(off, len, k, send_lo, send_lo + half, &bo, &bl);
            n = emit(out, n, member(p, g, i), member(p, g, i ^ mask), bo, bo, bl, XFER_REDUCE);
        }
        break;
    }
    case P_RD_AG: {
        int w = 1 << t;
        for (int i = 0; i < k; i++) {
            int lo = i & ~(w - 1);
            blocks_range(off, len, k, lo, lo + w, &bo, &bl);
            n = emit(out, n, member(p, g, i), member(p, g, i ^ w), bo, bo, bl, XFER_COPY);
        }
        break;
    }
    case P_RD_AR:
        for (int i = 0; i < k; i++)
            n = emit(out, n, member(p, g, i), member(p, g, i ^ (1 << t)), off, off, len, XFER_REDUCE);
        break;
    case P_FOLD_IN:
    case P_FOLD_OUT:
        for (int i = 0; i < 2 * p->fold_pairs; i += 2) {
            int a = member(p, g, i), b = member(p, g, i + 1);
            n = p->kind == P_FOLD_IN ? emit(out, n, b, a, off, off, len, XFER_REDUCE)
                                     : emit(out, n, a, b, off, off, len, XFER_COPY);
        }
        break;
    case P_BIN_REDUCE:
    case P_BIN_GATHER: {
        int w = 1 << t;
        for (int i = w; i < k; i += 2 * w) {
            if (p->kind == P_BIN_REDUCE) {
                n = emit(out, n, member(p, g, i), member(p, g, i - w), off, off, len, XFER_REDUCE);
            } else {
                blocks_range(off, len, k, i, i + w < k ? i + w : k, &bo, &bl);
                n = emit(out, n, member(p, g, i), member(p, g, i - w), bo, bo, bl, XFER_COPY);
            }
        }
        break;
    }
    case P_BIN_BCAST:
    case P_BIN_SCATTER: {
        int w = 1 << (ilog2_ceil(k) - 1 - t);
        for (int i = 0; i + w < k; i += 2 * w) {
            if (p->kind == P_BIN_BCAST) {
                n = emit(out, n, member(p, g, i), member(p, g, i + w), off, off, len, XFER_COPY);
            } else {
                int hi = i + 2 * w < k ? i + 2 * w : k;
                blocks_range(off, len, k, i + w, hi, &bo, &bl);
                n = emit(out, n, member(p, g, i), member(p, g, i + w), bo, bo, bl, XFER_COPY);
            }
        }
        break;
    }
    case P_TREE_REDUCE:
    case P_TREE_BCAST: {
        /* Pipelined heap tree: chunk x crosses the edges of depth d at step
         * x + D - d going up (reduce), x + d going down (broadcast). */
        int D = part_tree_depth(p);
        for (int pos = 1; pos < k; pos++) {
            int d = heap_depth(pos, p->arity);
            int x = p->kind == P_TREE_REDUCE ? t - (D - d) : t - (d - 1);
            if (x < 0 || x >= p->chunks)
                continue;
            int parent = (pos - 1) / p->arity;
            int a = member(p, g, p->mirror ? k - 1 - pos : pos);
            int b = member(p, g, p->mirror ? k - 1 - parent : parent);
            block_of(off, len, p->chunks, x, &bo, &bl);
            n = p->kind == P_TREE_REDUCE ? emit(out, n, a, b, bo, bo, bl, XFER_REDUCE)
                                         : emit(out, n, b, a, bo, bo, bl, XFER_COPY);
        }
        break;
    }
    case P_DIRECT_RS:
    case P_DIRECT_AG:
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) {
                if (i == j)
                    continue;
                block_of(off, len, k, p->kind == P_DIRECT_RS ? j : i, &bo, &bl);
                n = emit(out, n, member(p, g, i), member(p, g, j), bo, bo, bl,
                         p->kind == P_DIRECT_RS ? XFER_REDUCE : XFER_COPY);
            }
        break;
    case P_STAGE:
        for (int i = 0; i < k; i++)
            n = emit(out, n, member(p, g, i), member(p, g, i), off, off, len, XFER_COPY);
        break;
    case P_A2A_PAIRWISE:
    case P_A2A_DIRECT:
    case P_A2A_BRUCK:
    case P_A2A_HIER:
        return gen_alltoall(p, t, out, n);
    case P_PIPE:
        return gen_pipe(p, t, out, n);
    }
    return n;
}

size_t part_gen(const sched_part *p, int t, xfer *out, size_t n)
{
    for (int g = 0; g < p->groups; g++)
        n = gen_group(p, g, t, out, n);
    return n;
}

size_t schedule_step(const schedule *s, int stage, int step, xfer *out)
{
    const sched_stage *st = &s->stages[stage];
    size_t n = 0;
    for (int i = 0; i < st->parts; i++)
        n = part_gen(&s->parts[st->first_part + i], st->first_step + step, out, n);
    int k = s->replicas > 1 ? s->replicas : 1, base = s->ranks / k;
    for (int j = 1; j < k; j++) /* the other copies: the same transfers j blocks of ranks on */
        for (size_t x = 0; x < n; x++) {
            out[j * n + x] = out[x];
            out[j * n + x].src += j * base;
            out[j * n + x].dst += j * base;
        }
    return n * (size_t)k;
}

void schedule_replicate(schedule *s, int k)
{
    if (k <= 1)
        return;
    s->replicas = k;
    s->ranks *= k;
    s->max_step_xfers *= (size_t)k;
}

double schedule_work_xfers(const schedule *s, int stage)
{
    const sched_stage *st = &s->stages[stage];
    double most = 0;
    for (int j = 0; j < st->parts; j++)
        most += (double)part_max_xfers(&s->parts[st->first_part + j]);
    return most * (st->identical ? 1 : st->steps) * (s->replicas > 1 ? s->replicas : 1);
}

long schedule_steps(const schedule *s)
{
    long n = 0;
    for (int i = 0; i < s->nstages; i++)
        n += s->stages[i].steps;
    return n;
}

static int flow_cmp(const void *a, const void *b)
{
    const coll_flow *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Sorts the step's transfers into out by src (counting, stable: a rank sends
 * few flows, and 262,144 flows a round went a third of a frontier run to
 * qsort), then each rank's by dst (insertion, stable); qsort when the
 * counts cannot be allocated. Returns how many. */
static size_t sort_flows(const schedule *s, const xfer *xs, size_t nx, coll_flow *out)
{
    size_t m = 0, *at = calloc((size_t)s->ranks + 1, sizeof *at);
    if (!at) {
        for (size_t k = 0; k < nx; k++)
            if (xs[k].src != xs[k].dst)
                out[m++] = (coll_flow){xs[k].src, xs[k].dst, (double)xs[k].len * s->unit_bytes};
        qsort(out, m, sizeof *out, flow_cmp);
        return m;
    }
    for (size_t k = 0; k < nx; k++)
        if (xs[k].src != xs[k].dst)
            at[xs[k].src + 1]++, m++;
    for (int r = 0; r < s->ranks; r++)
        at[r + 1] += at[r];
    for (size_t k = 0; k < nx; k++)
        if (xs[k].src != xs[k].dst)
            out[at[xs[k].src]++] = (coll_flow){xs[k].src, xs[k].dst, (double)xs[k].len * s->unit_bytes};
    for (int r = 0; r < s->ranks; r++) { /* at[r]: the end of rank r's flows */
        size_t first = r ? at[r - 1] : 0;
        if (at[r] - first > 16) /* all pairs: thousands a rank */
            qsort(out + first, at[r] - first, sizeof *out, flow_cmp);
        else
            for (size_t k = first + 1; k < at[r]; k++)
                for (size_t j = k; j > first && flow_cmp(&out[j - 1], &out[j]) > 0; j--) {
                    coll_flow t = out[j];
                    out[j] = out[j - 1];
                    out[j - 1] = t;
                }
    }
    free(at);
    return m;
}

size_t schedule_merge_flows(const schedule *s, const xfer *xs, size_t nx, coll_flow *out)
{
    size_t m = sort_flows(s, xs, nx, out), w = 0;
    for (size_t k = 0; k < m; k++) {
        if (w && out[w - 1].src == out[k].src && out[w - 1].dst == out[k].dst)
            out[w - 1].bytes += out[k].bytes;
        else
            out[w++] = out[k];
    }
    return w;
}

void schedule_free(schedule *s)
{
    for (int i = 0; i < s->nparts; i++)
        free(s->parts[i].edges), free(s->parts[i].delay_off);
    free(s->stages);
    free(s->parts);
    s->stages = NULL;
    s->parts = NULL;
    s->nstages = s->nparts = 0;
}

int sched_add_part(schedule *s, const sched_part *p)
{
    sched_part *np = realloc(s->parts, sizeof *np * (size_t)(s->nparts + 1));
    if (!np)
        return -1;
    s->parts = np;
    s->parts[s->nparts] = *p;
    return s->nparts++;
}

int sched_add_stage(schedule *s, int first_part, int parts, int first_step, int steps, int identical)
{
    if (steps <= 0)
        return 0;
    sched_stage *ns = realloc(s->stages, sizeof *ns * (size_t)(s->nstages + 1));
    if (!ns)
        return -1;
    s->stages = ns;
    s->stages[s->nstages++] = (sched_stage){.first_part = first_part, .parts = parts, .first_step = first_step,
                                                 .steps = steps, .identical = identical};
    size_t mx = 0;
    for (int i = 0; i < parts; i++)
        mx += part_max_xfers(&s->parts[first_part + i]);
    if (mx > s->max_step_xfers)
        s->max_step_xfers = mx;
    return 0;
}

void sched_mark_host(schedule *s, int first)
{
    for (int i = first; i < s->nstages; i++)
        s->stages[i].on_host = 1;
}
