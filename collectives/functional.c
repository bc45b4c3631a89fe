/* functional.c: runs a schedule on small real buffers and checks the result
 * (element-wise sums, copies, or the alltoall permutation). */
#include "collectives/functional.h"
#include "collectives/schedule_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct integers, so sums are exact in doubles and any misplaced block shows. */
static double input_value(int rank, size_t e)
{
    return (double)((rank + 1) * 1000003L + (long)(e % 100000) * 17 + 1);
}

static const double UNSET = -1.0; /* never an input value nor a sum of them */

/* Ranks of one copy of a replicated schedule: each copy's rank i holds the
 * inputs and expects the results of rank i of one copy alone. */
static int copy_ranks(const schedule *s)
{
    return s->ranks / (s->replicas > 1 ? s->replicas : 1);
}

static void fill_inputs(const schedule *s, double *buf)
{
    int n = copy_ranks(s);
    size_t B = s->buf_elems, b = s->count / (size_t)n;
    for (int rr = 0; rr < s->ranks; rr++) {
        int r = rr % n;
        double *x = buf + (size_t)rr * B;
        for (size_t e = 0; e < B; e++)
            x[e] = UNSET;
        for (size_t e = 0; e < s->count; e++) {
            size_t lo, len;
            switch (s->params.op) {
            case OP_ALLGATHER:
                block_of(0, s->count, n, r, &lo, &len);
                if (e >= lo && e < lo + len)
                    x[e] = input_value(r, e);
                break;
            case OP_BROADCAST:
                if (r == 0)
                    x[e] = input_value(0, e);
                break;
            case OP_ALLTOALL:
                if (e < b * (size_t)n)
                    x[e] = input_value(r, e);
                break;
            default:
                x[e] = input_value(r, e);
            }
        }
    }
}

static double sum_over_ranks(int n, size_t e)
{
    double t = 0;
    for (int r = 0; r < n; r++)
        t += input_value(r, e);
    return t;
}

/* The expected value of element e at rank r, or UNSET when r's element is
 * not part of the result (no expectation). Returns 0 for "not checked". */
static int expected(const schedule *s, int r, size_t e, double *want)
{
    int n = copy_ranks(s);
    r %= n;
    size_t lo, len, b = s->count / (size_t)n, nb = b * (size_t)n;
    switch (s->params.op) {
    case OP_ALLREDUCE:
        if (e >= s->count)
            return 0;
        *want = sum_over_ranks(n, e);
        return 1;
    case OP_REDUCE_SCATTER:
        block_of(0, s->count, n, r, &lo, &len);
        if (e < lo || e >= lo + len)
            return 0;
        *want = sum_over_ranks(n, e);
        return 1;
    case OP_REDUCE:
        if (r != 0 || e >= s->count)
            return 0;
        *want = sum_over_ranks(n, e);
        return 1;
    case OP_ALLGATHER:
        if (e >= s->count)
            return 0;
        for (int o = 0; o < n; o++) {
            block_of(0, s->count, n, o, &lo, &len);
            if (e >= lo && e < lo + len)
                *want = input_value(o, e);
        }
        return 1;
    case OP_BROADCAST:
        if (e >= s->count)
            return 0;
        *want = input_value(0, e);
        return 1;
    default: /* alltoall: receive block i at rank r is block r of rank i */
        if (e < nb || e >= 2 * nb)
            return 0;
        *want = input_value((int)((e - nb) / b), (size_t)r * b + (e - nb) % b);
        return 1;
    }
}

static int apply_step(const schedule *s, const xfer *xs, size_t nx, double *buf, double *snap,
                      char *why, size_t why_bytes)
{
    size_t B = s->buf_elems;
    memcpy(snap, buf, sizeof *buf * B * (size_t)s->ranks);
    for (size_t k = 0; k < nx; k++) {
        const xfer *x = &xs[k];
        if (x->src < 0 || x->src >= s->ranks || x->dst < 0 || x->dst >= s->ranks ||
            x->src_off + x->len > B || x->dst_off + x->len > B) {
            snprintf(why, why_bytes, "transfer %d->%d [%zu+%zu -> %zu] is outside the %d ranks x %zu elements",
                     x->src, x->dst, x->src_off, x->len, x->dst_off, s->ranks, B);
            return -1;
        }
        const double *from = snap + (size_t)x->src * B + x->src_off;
        double *to = buf + (size_t)x->dst * B + x->dst_off;
        for (size_t i = 0; i < x->len; i++) {
            if (from[i] == UNSET) {
                snprintf(why, why_bytes, "rank %d sends element %zu to rank %d before it holds data",
                         x->src, x->src_off + i, x->dst);
                return -1;
            }
            to[i] = x->op == XFER_REDUCE ? to[i] + from[i] : from[i];
        }
    }
    return 0;
}

/* A stage marked identical must move the same bytes (within block rounding)
 * between the same pairs at every step: the fast executor relies on it. */
static int check_identical(const schedule *s, int parts, const coll_flow *a, size_t na, const coll_flow *b,
                           size_t nb)
{
    size_t i = 0, j = 0;
    /* a pair of at most 2 elements may come and go with empty blocks, per
     * part whose flows merge on that pair (parallel channel rings) */
    double tol = 2.5 * s->unit_bytes * parts;
    while (i < na || j < nb) {
        int c = i == na ? 1
                : j == nb ? -1
                : a[i].src != b[j].src ? (a[i].src < b[j].src ? -1 : 1)
                : a[i].dst != b[j].dst ? (a[i].dst < b[j].dst ? -1 : 1)
                                       : 0;
        double d = c < 0 ? a[i].bytes : c > 0 ? b[j].bytes : a[i].bytes - b[j].bytes;
        if (fabs(d) > tol)
            return -1;
        i += c <= 0;
        j += c >= 0;
    }
    return 0;
}

int schedule_verify(const schedule *s, char *why, size_t why_bytes)
{
    size_t total = s->buf_elems * (size_t)s->ranks, mx = s->max_step_xfers + 1;
    double *buf = malloc(sizeof *buf * total), *snap = malloc(sizeof *snap * total);
    xfer *xs = malloc(sizeof *xs * mx);
    coll_flow *first = malloc(sizeof *first * mx), *cur = malloc(sizeof *cur * mx);
    int rc = -1;
    if (!buf || !snap || !xs || !first || !cur) {
        snprintf(why, why_bytes, "out of memory");
        goto done;
    }
    fill_inputs(s, buf);
    for (int st = 0; st < s->nstages; st++) {
        size_t nfirst = 0;
        for (int t = 0; t < s->stages[st].steps; t++) {
            size_t nx = schedule_step(s, st, t, xs);
            /* switches reduce in NVLS and SHARP: their transfers are timing's, not data's */
            if (!s->switched && apply_step(s, xs, nx, buf, snap, why, why_bytes))
                goto done;
            if (!s->stages[st].identical)
                continue;
            if (t == 0)
                nfirst = schedule_merge_flows(s, xs, nx, first);
            else if (check_identical(s, s->stages[st].parts, first, nfirst, cur,
                                     schedule_merge_flows(s, xs, nx, cur))) {
                snprintf(why, why_bytes, "stage %d is marked identical but step %d moves other bytes than step 0", st, t);
                goto done;
            }
        }
    }
    for (int r = 0; r < s->ranks && !s->switched; r++)
        for (size_t e = 0; e < s->buf_elems; e++) {
            double want = 0, got = buf[(size_t)r * s->buf_elems + e];
            if (expected(s, r, e, &want) && got != want) {
                snprintf(why, why_bytes, "rank %d element %zu: %.17g, expected %.17g", r, e, got, want);
                goto done;
            }
        }
    rc = 0;
done:
    free(buf);
    free(snap);
    free(xs);
    free(first);
    free(cur);
    return rc;
}
