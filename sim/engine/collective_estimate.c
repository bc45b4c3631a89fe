/* collective_estimate.c: the contention-free time of a schedule on a
 * platform's paths, without SimGrid (auto's screening, a cheap fallback). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/collective_sim.h"

int coll_symmetric_crossbar(const platform *p)
{
    /* Flat platforms have no node template; a flat single switch is one
     * SimGrid cluster of private links without a backbone. */
    return !platform_user_xml(p) && strcmp(platform_fabric_name(p), "single_switch") == 0 &&
           platform_ranks_per_node(p) == 1 && platform_node_components(p, DEVICE_ACCELERATOR, NULL, NULL, 0) == 0;
}

/* A permutation or all-pairs step on a symmetric crossbar: one path stands
 * for all; *flows receives what the rounds executor simulates for it. */
static double class_step_s(const platform *p, const int *ranks, const schedule *s, step_pattern k,
                           double flow_bytes, long *flows, int *hops)
{
    double lat, bw;
    int n = s->ranks, m = n < COLL_CLASS_RANKS ? n : COLL_CLASS_RANKS;
    *hops = platform_path(p, ranks ? ranks[0] : 0, ranks ? ranks[1] : 1, &lat, &bw);
    *flows = k == STEP_PERMUTATION ? 2 : (long)m * (m - 1);
    /* all pairs: a rank's private link carries its n - 1 flows */
    double link_bytes = k == STEP_PERMUTATION ? flow_bytes : flow_bytes * (n - 1);
    return lat + (bw > 0 ? link_bytes / bw : 0);
}

/* On a symmetric crossbar every flow of a rank crosses its one private link
 * (and every flow into it the link's other direction): the step lasts at
 * least the busiest rank's bytes over that link. load_bytes: 2 ranks, zeroed
 * again here. A lower bound still, so screening by it stays exact. */
static double crossbar_step_s(const platform *p, const int *ranks, const coll_flow *fl, size_t nf, int n,
                              double *load_bytes)
{
    double lat, bw, most = 0;
    platform_path(p, ranks ? ranks[0] : 0, ranks ? ranks[1] : 1, &lat, &bw);
    for (size_t k = 0; k < nf; k++) {
        load_bytes[fl[k].src] += fl[k].bytes;
        load_bytes[n + fl[k].dst] += fl[k].bytes;
    }
    for (size_t k = 0; k < nf; k++) {
        most = fmax(most, fmax(load_bytes[fl[k].src], load_bytes[n + fl[k].dst]));
        load_bytes[fl[k].src] = load_bytes[n + fl[k].dst] = 0;
    }
    return bw > 0 ? lat + most / bw : 0;
}

/* A pipelined tree's fill or drain runs free (collective_sim.c): each rank
 * starts its next step when its own previous one ends, each flow when both
 * its ranks are ready; with contention-free flows (and on a crossbar each
 * rank's bytes through its link from its ready time) this bounds it from
 * below. clock_s: ranks, load_bytes as crossbar_step_s's or NULL; *lf adds
 * the flow hops simulated. */
static double pipeline_stage_s(const platform *p, const int *ranks, const schedule *s, int st,
                               double reduce_s_per_byte, xfer *xs, coll_flow *fl, double *clock_s,
                               double *load_bytes, long *lf)
{
    const sched_stage *stg = &s->stages[st];
    int n = s->ranks;
    double lat, bw, hi = 0, *ready_s = clock_s + n, *red_bytes = clock_s + 2 * n;
    if (load_bytes)
        platform_path(p, ranks ? ranks[0] : 0, ranks ? ranks[1] : 1, &lat, &bw);
    memset(clock_s, 0, sizeof *clock_s * (size_t)n);
    for (int t = 0; t < stg->steps; t++) {
        size_t nx = schedule_step(s, st, t, xs), nf = schedule_merge_flows(s, xs, nx, fl);
        int max_hops = 0;
        memcpy(ready_s, clock_s, sizeof *ready_s * (size_t)n);
        memset(red_bytes, 0, sizeof *red_bytes * (size_t)n);
        for (size_t k = 0; k < nx; k++)
            if (xs[k].op == XFER_REDUCE)
                red_bytes[xs[k].dst] += (double)xs[k].len * s->unit_bytes;
        for (size_t k = 0; k < nf; k++) {
            double fl_lat, fl_bw;
            int h = platform_path(p, ranks ? ranks[fl[k].src] : fl[k].src, ranks ? ranks[fl[k].dst] : fl[k].dst,
                                  &fl_lat, &fl_bw);
            double end_s = fmax(ready_s[fl[k].src], ready_s[fl[k].dst]) + fl_lat + (fl_bw > 0 ? fl[k].bytes / fl_bw : 0);
            max_hops = h > max_hops ? h : max_hops;
            clock_s[fl[k].src] = fmax(clock_s[fl[k].src], end_s);
            clock_s[fl[k].dst] = fmax(clock_s[fl[k].dst], end_s);
            if (load_bytes) {
                load_bytes[fl[k].src] += fl[k].bytes;
                load_bytes[n + fl[k].dst] += fl[k].bytes;
            }
        }
        for (size_t k = 0; load_bytes && k < nf; k++) /* each rank's link, from its own ready time */
            for (int end = 0; end < 2; end++) {
                int r = end ? fl[k].dst : fl[k].src;
                double *load = &load_bytes[end ? n + r : r];
                if (*load > 0 && bw > 0)
                    clock_s[r] = fmax(clock_s[r], ready_s[r] + lat + *load / bw);
                *load = 0;
            }
        for (int r = 0; r < n; r++)
            clock_s[r] = sched_step_end_s(stg->streamed, ready_s[r], clock_s[r], red_bytes[r] * reduce_s_per_byte);
        *lf += (long)nf * max_hops;
    }
    for (int r = 0; r < n; r++)
        hi = fmax(hi, clock_s[r]);
    return hi;
}

/* For generated steps only: an all-pairs step of 4,096 ranks would take
 * 0.7 GB. -1 when out of memory (the caller frees what was allocated). */
static int step_scratch(const schedule *s, xfer **xs, coll_flow **fl, double **clock_s)
{
    *xs = malloc(sizeof **xs * (s->max_step_xfers + 1));
    *fl = malloc(sizeof **fl * (s->max_step_xfers + 1));
    *clock_s = malloc(sizeof **clock_s * 3 * (size_t)s->ranks);
    return *xs && *fl && *clock_s ? 0 : -1;
}

double coll_estimate_s(const platform *p, const int *ranks, const schedule *s, double reduce_s_per_byte,
                       long *sim_cost)
{
    long lf = 0;
    int classes = coll_symmetric_crossbar(p) && s->ranks > 1;
    xfer *xs = NULL;
    coll_flow *fl = NULL;
    double *reduce_bytes = calloc((size_t)s->ranks + 1, sizeof *reduce_bytes), total = 0;
    double *load_bytes = classes ? calloc(2 * (size_t)s->ranks, sizeof *load_bytes) : NULL, *clock_s = NULL;
    if (!reduce_bytes || (classes && !load_bytes)) {
        total = -1;
        goto done;
    }
    for (int st = 0; st < s->nstages; st++) {
        const sched_stage *stg = &s->stages[st];
        if (stg->pipelined && !stg->identical) {
            if (!xs && step_scratch(s, &xs, &fl, &clock_s)) {
                total = -1;
                goto done;
            }
            total += pipeline_stage_s(p, ranks, s, st, reduce_s_per_byte, xs, fl, clock_s, load_bytes, &lf);
            continue;
        }
        step_pattern prev = STEP_GENERAL;
        double prev_bytes = -1;
        for (int t = 0; t < (stg->identical ? 1 : stg->steps); t++) {
            double fb = 0, fr = 0;
            step_pattern pat = classes ? schedule_step_pattern(s, st, t, &fb, &fr) : STEP_GENERAL;
            if (pat == STEP_LOCAL)
                continue;
            if (pat != STEP_GENERAL) { /* a run of equal steps is simulated once */
                long flows;
                int h;
                double step_s = class_step_s(p, ranks, s, pat, fb, &flows, &h) + fr * reduce_s_per_byte;
                total += step_s * (stg->identical ? stg->steps : 1);
                if (pat != prev || fb != prev_bytes)
                    lf += flows * h;
                prev = pat;
                prev_bytes = fb;
                continue;
            }
            if (!xs && step_scratch(s, &xs, &fl, &clock_s)) {
                total = -1;
                goto done;
            }
            size_t nx = schedule_step(s, st, t, xs), nf = schedule_merge_flows(s, xs, nx, fl);
            double comm = 0, red = 0;
            int max_hops = 0;
            for (size_t k = 0; k < nx; k++)
                if (xs[k].op == XFER_REDUCE)
                    reduce_bytes[xs[k].dst] += (double)xs[k].len * s->unit_bytes;
            for (size_t k = 0; k < nx; k++)
                if (xs[k].op == XFER_REDUCE) {
                    double r = reduce_bytes[xs[k].dst] * reduce_s_per_byte;
                    red = r > red ? r : red;
                }
            for (size_t k = 0; k < nx; k++)
                reduce_bytes[xs[k].dst] = 0;
            for (size_t k = 0; k < nf; k++) {
                double lat, bw;
                int h = platform_path(p, ranks ? ranks[fl[k].src] : fl[k].src, ranks ? ranks[fl[k].dst] : fl[k].dst, &lat, &bw);
                double c = lat + (bw > 0 ? fl[k].bytes / bw : 0);
                max_hops = h > max_hops ? h : max_hops;
                comm = c > comm ? c : comm;
            }
            if (classes)
                comm = fmax(comm, crossbar_step_s(p, ranks, fl, nf, s->ranks, load_bytes));
            total += sched_step_end_s(stg->streamed, 0, comm, red) * (stg->identical ? stg->steps : 1);
            lf += (long)nf * max_hops;
            prev = STEP_GENERAL;
        }
    }
done:
    if (sim_cost)
        *sim_cost = lf;
    free(xs);
    free(fl);
    free(reduce_bytes);
    free(load_bytes);
    free(clock_s);
    return total;
}
