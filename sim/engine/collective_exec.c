/* collective_exec.c: how a schedule's stages run on a group: synchronous
 * rounds, identical stages extrapolated, classes by representatives, rounds
 * solved by components, free-running steps. */
#include "sim/engine/collective_group.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>

/* Free-running steps measured when a round's ranks do not finish together. */
#define WINDOW 8

/* Whether every busy rank of the last round finished together: then no rank
 * can run ahead and identical rounds take exactly the same time. */
static int round_uniform(const coll_group *g, const step_round *rd, double dt)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < g->n; r++)
        if (rd->send_off[r + 1] > rd->send_off[r] || rd->recv_off[r + 1] > rd->recv_off[r] ||
            rd->reduce_bytes[r] > 0) {
            lo = fmin(lo, g->finish_s[r]);
            hi = fmax(hi, g->finish_s[r]);
        }
    return hi - lo <= 1e-9 * dt;
}

static int cmp_link(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const sg_link_t *)a, y = (uintptr_t)*(const sg_link_t *)b;
    return x < y ? -1 : x > y;
}

/* Whether no link carries two of the round's flows (each flow's reverse
 * route counted too: SimGrid's acknowledgement cross-traffic) and every busy
 * rank reduces alike (to 1e-4 of the round's dt, which bounds the error:
 * blocks differ by an element). Then a flow takes its synchronous time whenever it starts, the
 * slowest flow's two ends alternate at the round's pace, and no rank can run
 * ahead: free-running steps take the synchronous round's time (a flat ring
 * on a torus, whose row-crossing flows take two hops). */
static int round_solo(const coll_group *g, const step_round *rd, double dt)
{
    size_t nf = rd->flows ? rd->send_off[g->n] : 0, n = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; nf && r < g->n; r++)
        if (rd->send_off[r + 1] > rd->send_off[r] || rd->recv_off[r + 1] > rd->recv_off[r] ||
            rd->reduce_bytes[r] > 0) {
            lo = fmin(lo, rd->reduce_bytes[r] * g->gamma);
            hi = fmax(hi, rd->reduce_bytes[r] * g->gamma);
        }
    if (hi - lo > 1e-4 * dt)
        return 0;
    xbt_dynar_t route = nf ? xbt_dynar_new(sizeof(sg_link_t), NULL) : NULL;
    sg_link_t *all = NULL;
    size_t cap = 0;
    int ok = route != NULL;
    for (size_t k = 0; ok && k < 2 * nf; k++) {
        const coll_flow *f = &rd->flows[k / 2];
        xbt_dynar_reset(route);
        sg_host_get_route(g->hosts[k % 2 ? f->dst : f->src], g->hosts[k % 2 ? f->src : f->dst], route);
        size_t len = xbt_dynar_length(route);
        if (n + len > cap) {
            cap = 2 * (n + len);
            sg_link_t *grown = realloc(all, sizeof *all * cap);
            ok = grown != NULL;
            all = grown ? grown : all;
        }
        for (size_t i = 0; ok && i < len; i++)
            all[n++] = xbt_dynar_get_as(route, i, sg_link_t);
    }
    if (ok)
        qsort(all, n, sizeof *all, cmp_link);
    for (size_t i = 1; ok && i < n; i++)
        ok = all[i] != all[i - 1];
    free(all);
    if (route)
        xbt_dynar_free(&route);
    return ok;
}

/* An identical stage: one synchronous round; if its ranks finish at
 * different times, ranks ahead would start the next step early, so the
 * remaining steps run free (a few) or the steady-state period is measured on
 * free-running windows of WINDOW and 2 WINDOW steps and extrapolated (the
 * message-level time without simulating every step). */
static void execute_identical(coll_group *g, const sched_stage *stg, const step_round *rd)
{
    double dt = coll_group_run_rounds(g, rd, 1, 0);
    int rest = stg->steps - 1;
    if (rest < 1)
        return;
    if (g->sync_only || round_uniform(g, rd, dt) || round_solo(g, rd, dt)) {
        sg_actor_sleep_for(dt * rest);
        return;
    }
    if (rest < 3 * WINDOW) { /* few steps: run them all free */
        coll_group_run_rounds(g, rd, rest, 0);
    } else {
        double t1 = coll_group_run_rounds(g, rd, WINDOW, 0), t2 = coll_group_run_rounds(g, rd, 2 * WINDOW, 0);
        double est = t2 + (stg->steps - 2 * WINDOW) * (t2 - t1) / WINDOW;
        double spent = dt + t1 + t2;
        sg_actor_sleep_for(est > spent ? est - spent : 0.0);
    }
}

/* Counts a round's nf flows (scratch, as coll_round_flows left it) on their
 * links, times over: on the routes the solver by components caches where
 * there is one (a SimGrid route lookup per flow made --links 2.8x slower). */
static int tally_round(coll_group *g, const coll_flow *scratch, size_t nf, double times)
{
    if (g->tally && g->fluid)
        return coll_fluid_tally(g->fluid, scratch, nf, times);
    for (size_t k = 0; g->tally && k < nf; k++)
        if (link_tally_add(g->tally, g->hosts[scratch[k].src], g->hosts[scratch[k].dst], scratch[k].bytes, times))
            return -1;
    return 0;
}

/* On a symmetric crossbar (coll_symmetric_crossbar), a permutation or
 * all-pairs step by representatives of its one class of flows: a permutation
 * as two ranks swapping (any permutation puts one flow and one flow's
 * cross-traffic on every link, as a swap does), all pairs among the first
 * COLL_CLASS_RANKS ranks, each flow carrying what n - 1 flows carry per link.
 * A run of equal steps is one identical stage. Returns the steps from t it
 * accounted for (0: step t is not such a step), -1 when out of memory. */
static int execute_classes(coll_group *g, const schedule *s, int st, int t, xfer *xs, coll_flow *scratch)
{
    const sched_stage *stg = &s->stages[st];
    double fb = 0, red = 0, next = 0, next_red = 0;
    step_pattern k = schedule_step_pattern(s, st, t, &fb, &red);
    if (k == STEP_GENERAL)
        return 0;
    int run = stg->identical ? stg->steps - t : 1;
    while (!stg->identical && t + run < stg->steps &&
           schedule_step_pattern(s, st, t + run, &next, &next_red) == k && next == fb && next_red == red)
        run++;
    if (k == STEP_LOCAL)
        return run;
    /* representatives time the steps; a link count takes every flow of each, as it is */
    for (int u = t; g->tally && u < (stg->identical ? t + 1 : t + run); u++) {
        size_t nx = schedule_step(s, st, u, xs), nf = schedule_merge_flows(s, xs, nx, scratch);
        if (tally_round(g, scratch, nf, stg->identical ? run : 1))
            return -1;
    }
    int n = g->n, m = k == STEP_PERMUTATION ? 2 : n < COLL_CLASS_RANKS ? n : COLL_CLASS_RANKS;
    if (!g->reps && !(g->reps = coll_group_create(g->p, g->ranks, n < COLL_CLASS_RANKS ? n : COLL_CLASS_RANKS,
                                                  -1 - g->serial, 0)))
        return -1;
    coll_group *h = g->reps;
    h->gamma = g->gamma;
    h->sync_only = g->sync_only;
    size_t w = (size_t)m * (size_t)(m - 1), f = 0;
    coll_flow *fl = malloc(sizeof *fl * w);
    step_round rd = {.reduce_bytes = calloc((size_t)h->n, sizeof *rd.reduce_bytes)};
    if (!fl || !rd.reduce_bytes) {
        free(fl);
        free(rd.reduce_bytes);
        return -1;
    }
    for (int i = 0; i < m; i++) { /* sorted by src, as coll_round_index wants */
        rd.reduce_bytes[i] = red; /* every rank reduces alike: the representatives stand for all */
        rd.busy |= red > 0;
        for (int j = 0; j < m; j++)
            if (j != i)
                fl[f++] = (coll_flow){i, j, k == STEP_PERMUTATION ? fb : fb * (n - 1) / (m - 1)};
    }
    int rc = coll_round_index(&rd, h, fl, w);
    free(fl);
    if (rc)
        return -1;
    sched_stage same = {.steps = run, .identical = 1};
    execute_identical(h, &same, &rd);
    coll_round_free(&rd);
    return run;
}

/* Whether a round of w flows is solved by components (collective_fluid.h)
 * while the workers sleep: more than g->fluid_flows flows, or a group of
 * more ranks than that (waking every worker for a few flows costs more than
 * their solve). A link count adds up the round's flows whichever solves it. */
static int round_fluid(const coll_group *g, long w)
{
    return g->fluid && !g->staged && g->fluid_flows >= 0 &&
           (w > g->fluid_flows || g->n > g->fluid_flows);
}

/* The largest of n clocks. */
static double clocks_max(const double *clock_s, int n)
{
    double hi = 0;
    for (int r = 0; r < n; r++)
        hi = fmax(hi, clock_s[r]);
    return hi;
}

/* Sleeps until the last rank's clock, `times` over, and frees the clocks. */
static void sleep_past_clocks(const coll_group *g, double *clock_s, int times)
{
    double hi = clocks_max(clock_s, g->n);
    free(clock_s);
    sg_actor_sleep_for(hi * times);
}

/* A synchronous round solved by components, `steps` times over (a pipelined
 * tree's steady state). Returns -1 when out of memory. */
static int execute_fluid(coll_group *g, const step_round *rd, const coll_flow *flows, size_t nf, int steps)
{
    double *clock_s = calloc((size_t)g->n, sizeof *clock_s);
    if (!clock_s || coll_fluid_round(g->fluid, flows, nf, rd->reduce_bytes, g->gamma, rd->streamed, clock_s)) {
        free(clock_s);
        return -1;
    }
    sleep_past_clocks(g, clock_s, steps);
    return 0;
}

/* An identical stage of a group beyond the folded platform's nodes, as
 * execute_identical runs it, every round solved by components: one
 * synchronous round; when its busy ranks finish apart, the steps run free
 * (each rank's clock carried from round to round, each flow starting when
 * both its ranks are ready, as a pipeline's fill runs), a few in all or
 * windows of WINDOW and 2 WINDOW steps extrapolated. Returns -1 when out of
 * memory. */
static int execute_identical_fluid(coll_group *g, const sched_stage *stg, const step_round *rd,
                                   const coll_flow *flows, size_t nf)
{
    int n = g->n, rest = stg->steps - 1;
    double *clock_s = calloc((size_t)n, sizeof *clock_s), lo = INFINITY, hi = -INFINITY;
    unsigned char *busy = calloc((size_t)n, 1);
    int rc = clock_s && busy ? coll_fluid_round(g->fluid, flows, nf, rd->reduce_bytes, g->gamma, rd->streamed,
                                                clock_s)
                             : -1;
    for (size_t k = 0; rc == 0 && k < nf; k++)
        busy[flows[k].src] = busy[flows[k].dst] = 1;
    for (int r = 0; rc == 0 && r < n; r++)
        if (busy[r] || rd->reduce_bytes[r] > 0) {
            lo = fmin(lo, clock_s[r]);
            hi = fmax(hi, clock_s[r]);
        }
    free(busy);
    double dt = rc == 0 ? clocks_max(clock_s, n) : 0, t[2] = {0, 0}, total_s = dt * stg->steps;
    int free_run = rc == 0 && rest >= 1 && !g->sync_only && hi - lo > 1e-9 * dt;
    int windows = rest < 3 * WINDOW ? 1 : 2, steps[2] = {rest < 3 * WINDOW ? rest : WINDOW, 2 * WINDOW};
    for (int w = 0; free_run && rc == 0 && w < windows; w++) {
        memset(clock_s, 0, sizeof *clock_s * (size_t)n);
        for (int k = 0; rc == 0 && k < steps[w]; k++)
            rc = coll_fluid_round(g->fluid, flows, nf, rd->reduce_bytes, g->gamma, rd->streamed, clock_s);
        t[w] = clocks_max(clock_s, n);
    }
    if (free_run && windows == 1)
        total_s = dt + t[0];
    else if (free_run) /* as execute_identical: the windows' time, or the steady period's estimate past it */
        total_s = fmax(dt + t[0] + t[1], t[1] + (stg->steps - 2 * WINDOW) * (t[1] - t[0]) / WINDOW);
    free(clock_s);
    if (rc == 0)
        sg_actor_sleep_for(total_s);
    return rc;
}

/* Stages [first, last) with every step of every rank materialized and the
 * ranks unsynchronized: each starts its next step when its own transfers and
 * reduction end. */
static int execute_free(coll_group *g, const schedule *s, int first, int last, xfer *xs, coll_flow *scratch)
{
    long total = 0, k = 0, built = 0;
    for (int st = first; st < last; st++)
        total += s->stages[st].steps;
    step_round *rounds = calloc((size_t)total + 1, sizeof *rounds);
    int rc = rounds ? 0 : -1;
    for (int st = first; rc == 0 && st < last; st++)
        for (int t = 0; rc == 0 && t < s->stages[st].steps; t++, k++)
            if ((rc = coll_round_build(&rounds[k], g, s, &s->stages[st], xs, schedule_step(s, st, t, xs), scratch)) ==
                0) {
                built++;
                rc = tally_round(g, scratch, rounds[k].send_off[g->n], 1);
                coll_group_follow_staging(g, &rounds[k]);
            }
    if (rc == 0)
        coll_group_run_rounds(g, rounds, total, 1);
    for (k = 0; k < built; k++)
        coll_round_free(&rounds[k]);
    free(rounds);
    return rc;
}

/* A pipelined tree's fill or drain as the pipeline runs it: a rank starts its
 * next step when its own previous one ends, so the time follows the slowest
 * path through the tree, not the slowest edge of every depth (a depth mixes
 * NVLink and network edges). Solved by components with per-rank clocks when
 * any round would be (the flows of one step share links while they overlap),
 * else free-running in SimGrid. Returns -1 when out of memory. */
static int execute_pipeline(coll_group *g, const schedule *s, int st, xfer *xs, coll_flow *scratch)
{
    const sched_stage *stg = &s->stages[st];
    if (!round_fluid(g, (long)s->max_step_xfers))
        return execute_free(g, s, st, st + 1, xs, scratch);
    double *clock_s = calloc((size_t)g->n, sizeof *clock_s);
    int rc = clock_s ? 0 : -1;
    for (int t = 0; rc == 0 && t < stg->steps; t++) {
        step_round rd;
        long w = coll_round_flows(&rd, g, s, stg, xs, schedule_step(s, st, t, xs), scratch);
        rc = w < 0 || tally_round(g, scratch, (size_t)w, 1)
                 ? -1
                 : coll_fluid_round(g->fluid, scratch, (size_t)w, rd.reduce_bytes, g->gamma, stg->streamed, clock_s);
        coll_round_free(&rd);
    }
    if (rc)
        free(clock_s);
    else
        sleep_past_clocks(g, clock_s, 1);
    return rc;
}

static int execute_rounds(coll_group *g, const schedule *s, xfer *xs, coll_flow *scratch)
{
    for (int st = 0; st < s->nstages; st++) {
        const sched_stage *stg = &s->stages[st];
        if (stg->pipelined && !stg->identical) {
            if (execute_pipeline(g, s, st, xs, scratch))
                return -1;
            continue;
        }
        for (int t = 0; t < (stg->identical ? 1 : stg->steps); t++) {
            int done = g->classes && !g->staged ? execute_classes(g, s, st, t, xs, scratch) : 0;
            if (done < 0)
                return -1;
            if (done > 0) {
                t += done - 1;
                continue;
            }
            step_round rd;
            long w = coll_round_flows(&rd, g, s, stg, xs, schedule_step(s, st, t, xs), scratch);
            if (w < 0 || tally_round(g, scratch, (size_t)w, stg->identical ? stg->steps : 1)) {
                coll_round_free(&rd);
                return -1;
            }
            /* A pipelined tree's steady state too, as synchronous rounds: against SimGrid's free-running
             * windows that moved NCCL's tree on 256 to 1,024 DGX A100 ranks by under 0.03 %. Other identical
             * stages keep execute_identical: a ring on a fat tree of KNL nodes runs 1.8 % (64 ranks) to 6 %
             * (256) slower free-running than in lockstep. */
            if (rd.busy && (!stg->identical || stg->pipelined || g->fold) && round_fluid(g, w)) {
                int rc = stg->identical && !stg->pipelined
                             ? execute_identical_fluid(g, stg, &rd, scratch, (size_t)w)
                             : execute_fluid(g, &rd, scratch, (size_t)w, stg->identical ? stg->steps : 1);
                coll_round_free(&rd);
                if (rc)
                    return -1;
                continue;
            }
            if (coll_round_index(&rd, g, scratch, (size_t)w))
                return -1;
            rd.flows = scratch;
            if (rd.busy && stg->identical)
                execute_identical(g, stg, &rd);
            else if (rd.busy)
                coll_group_run_rounds(g, &rd, 1, 1);
            coll_group_follow_staging(g, &rd);
            coll_round_free(&rd);
        }
    }
    return 0;
}

/* Messages: every step of every rank materialized, ranks run unsynchronized. */
static int execute_messages(coll_group *g, const schedule *s, xfer *xs, coll_flow *scratch)
{
    return execute_free(g, s, 0, s->nstages, xs, scratch);
}

/* From an actor: runs the schedule on the group (its ranks must equal the
 * group size): the simulated seconds it took, or -1 when out of memory. */
double coll_group_run(coll_group *g, const schedule *s, int messages)
{
    double t0 = simgrid_get_clock();
    if (s->ranks != g->n || s->nstages == 0)
        return 0.0;
    xfer *xs = malloc(sizeof *xs * 2 * (s->max_step_xfers + 1)); /* twice: relay_cross_rail */
    coll_flow *scratch = malloc(sizeof *scratch * 2 * (s->max_step_xfers + 1));
    int rc = -1;
    if (xs && scratch)
        rc = messages ? execute_messages(g, s, xs, scratch) : execute_rounds(g, s, xs, scratch);
    free(xs);
    free(scratch);
    return rc == 0 ? simgrid_get_clock() - t0 : -1.0;
}
