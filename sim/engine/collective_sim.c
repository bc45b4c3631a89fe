/* collective_sim.c: worker actors that execute schedule steps on SimGrid. */
#include "sim/engine/collective_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include "sim/engine/engine.h"

/* One step's network flows, merged per (src, dst), indexed both ways. */
typedef struct step_round {
    size_t *send_off; /* ranks + 1: rank r sends mailbox/send_bytes[send_off[r] .. send_off[r+1]) */
    double *send_bytes;
    sg_mailbox_t *mailbox; /* per flow, in send order: looked up once per round */
    size_t *recv_off; /* ranks + 1: rank r receives recv_mailbox[recv_off[r] ..) */
    sg_mailbox_t *recv_mailbox;
    double *reduce_bytes; /* ranks: what each rank reduces after receiving */
    int busy;             /* any flow or reduction at all */
} step_round;

/* Free-running steps measured when a round's ranks do not finish together. */
#define WINDOW 8

struct coll_group {
    const platform *p;
    int n;
    double gamma; /* reduce seconds per byte */
    int *ranks; /* platform rank of each member */
    double *speed_flops;
    double *finish_s; /* each worker's last step end */
    int sync_only;    /* rounds without free-running windows (auto's screening) */
    sg_actor_t *workers;
    sg_bar_t start, end;
    int quit;
    const step_round *rounds; /* what the workers execute next */
    long nrounds;
};

static void round_free(step_round *rd)
{
    free(rd->send_off);
    free(rd->send_bytes);
    free(rd->recv_off);
    free(rd->mailbox);
    free(rd->recv_mailbox);
    free(rd->reduce_bytes);
}

static sg_mailbox_t pair_mailbox(const coll_group *g, int src, int dst)
{
    char name[64];
    snprintf(name, sizeof name, "block:%p:%d->%d", (const void *)g, src, dst);
    return sg_mailbox_by_name(name);
}

/* Merges a step's transfers into flows; local copies cost nothing here. */
static void round_build(step_round *rd, const coll_group *g, const schedule *s, const xfer *xs, size_t nx,
                        coll_flow *scratch)
{
    int n = g->n;
    memset(rd, 0, sizeof *rd);
    rd->reduce_bytes = calloc((size_t)n, sizeof *rd->reduce_bytes);
    for (size_t k = 0; k < nx; k++)
        if (xs[k].op == XFER_REDUCE) {
            rd->reduce_bytes[xs[k].dst] += (double)xs[k].len * s->unit_bytes;
            rd->busy = 1;
        }
    size_t w = schedule_merge_flows(s, xs, nx, scratch);
    rd->busy |= w > 0;
    rd->send_off = calloc((size_t)n + 1, sizeof *rd->send_off);
    rd->recv_off = calloc((size_t)n + 1, sizeof *rd->recv_off);
    rd->send_bytes = malloc(sizeof *rd->send_bytes * (w + 1));
    rd->mailbox = malloc(sizeof *rd->mailbox * (w + 1));
    rd->recv_mailbox = malloc(sizeof *rd->recv_mailbox * (w + 1));
    for (size_t k = 0; k < w; k++) {
        rd->send_off[scratch[k].src + 1]++;
        rd->recv_off[scratch[k].dst + 1]++;
        rd->send_bytes[k] = scratch[k].bytes;
        rd->mailbox[k] = pair_mailbox(g, scratch[k].src, scratch[k].dst);
    }
    for (int r = 0; r < n; r++) {
        rd->send_off[r + 1] += rd->send_off[r];
        rd->recv_off[r + 1] += rd->recv_off[r];
    }
    size_t *fill = malloc(sizeof *fill * (size_t)n);
    memcpy(fill, rd->recv_off, sizeof *fill * (size_t)n);
    for (size_t k = 0; k < w; k++) /* sorted by src, so each receiver's list is too */
        rd->recv_mailbox[fill[scratch[k].dst]++] = rd->mailbox[k];
    free(fill);
}

/* A worker's part of one step: its sends and receives at once, then its reduction. */
static void worker_step(coll_group *g, const step_round *rd, int r, sg_comm_t **comms, size_t *cap)
{
    static char token; /* put_async refuses a NULL payload */
    size_t s0 = rd->send_off[r], s1 = rd->send_off[r + 1];
    size_t q0 = rd->recv_off[r], q1 = rd->recv_off[r + 1];
    size_t nc = (s1 - s0) + (q1 - q0);
    if (nc > *cap) {
        *cap = 2 * nc;
        *comms = realloc(*comms, sizeof **comms * *cap);
    }
    void *got = NULL;
    size_t k = 0;
    for (size_t i = s0; i < s1; i++)
        (*comms)[k++] = sg_mailbox_put_async(rd->mailbox[i], &token, (long)llround(rd->send_bytes[i]));
    for (size_t i = q0; i < q1; i++)
        (*comms)[k++] = sg_mailbox_get_async(rd->recv_mailbox[i], &got);
    if (nc)
        sg_comm_wait_all(*comms, nc);
    if (rd->reduce_bytes[r] > 0 && g->gamma > 0)
        sg_actor_execute(rd->reduce_bytes[r] * g->gamma * g->speed_flops[r]);
    g->finish_s[r] = simgrid_get_clock();
}

static void worker(int argc, char **argv)
{
    (void)argc;
    coll_group *g = NULL;
    sscanf(argv[1], "%p", (void **)&g);
    int r = atoi(argv[2]);
    sg_comm_t *comms = NULL;
    size_t cap = 0;
    sg_actor_daemonize(sg_actor_self());
    for (;;) {
        sg_barrier_wait(g->start);
        if (g->quit)
            break;
        for (long k = 0; k < g->nrounds; k++)
            worker_step(g, &g->rounds[k], r, &comms, &cap);
        sg_barrier_wait(g->end);
    }
    free(comms);
}

coll_group *coll_group_create(const platform *p, const int *ranks, int n, double reduce_s_per_byte)
{
    coll_group *g = calloc(1, sizeof *g);
    g->p = p;
    g->n = n;
    g->gamma = reduce_s_per_byte;
    g->speed_flops = calloc((size_t)n, sizeof *g->speed_flops);
    g->ranks = malloc(sizeof *g->ranks * (size_t)n);
    memcpy(g->ranks, ranks, sizeof *g->ranks * (size_t)n);
    g->finish_s = calloc((size_t)n, sizeof *g->finish_s);
    g->workers = calloc((size_t)n, sizeof *g->workers);
    g->start = sg_barrier_init((unsigned)n + 1);
    g->end = sg_barrier_init((unsigned)n + 1);
    char gp[32], rs[16], host[64];
    snprintf(gp, sizeof gp, "%p", (void *)g);
    for (int i = 0; i < n; i++) {
        platform_rank_host(p, ranks[i], host, sizeof host);
        sg_host_t h = sg_host_by_name(host);
        g->speed_flops[i] = sg_host_get_speed(h);
        snprintf(rs, sizeof rs, "%d", i);
        char *argv[] = {"collective-worker", gp, rs, NULL};
        g->workers[i] = sg_actor_create(rs, h, worker, 3, argv);
        sg_actor_ref(g->workers[i]);
    }
    return g;
}

static double run_rounds(coll_group *g, const step_round *rounds, long nrounds)
{
    double t0 = simgrid_get_clock();
    g->rounds = rounds;
    g->nrounds = nrounds;
    sg_barrier_wait(g->start);
    sg_barrier_wait(g->end);
    return simgrid_get_clock() - t0;
}

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

/* An identical stage: one synchronous round; if its ranks finish at
 * different times, ranks ahead would start the next step early, so the
 * remaining steps run free (a few) or the steady-state period is measured on
 * free-running windows of WINDOW and 2 WINDOW steps and extrapolated (the
 * message-level time without simulating every step). */
static void execute_identical(coll_group *g, const sched_stage *stg, const step_round *rd)
{
    double dt = run_rounds(g, rd, 1);
    int rest = stg->steps - 1;
    if (rest < 1)
        return;
    if (g->sync_only || round_uniform(g, rd, dt)) {
        sg_actor_sleep_for(dt * rest);
        return;
    }
    int w = rest < 3 * WINDOW ? rest : 2 * WINDOW;
    step_round *win = malloc(sizeof *win * (size_t)w);
    for (int k = 0; k < w; k++)
        win[k] = *rd; /* shallow: the workers only read it */
    if (w == rest) { /* few steps: run them all free */
        run_rounds(g, win, rest);
    } else {
        double t1 = run_rounds(g, win, WINDOW), t2 = run_rounds(g, win, 2 * WINDOW);
        double est = t2 + (stg->steps - 2 * WINDOW) * (t2 - t1) / WINDOW;
        double spent = dt + t1 + t2;
        sg_actor_sleep_for(est > spent ? est - spent : 0.0);
    }
    free(win);
}

static void execute_rounds(coll_group *g, const schedule *s, xfer *xs, coll_flow *scratch)
{
    for (int st = 0; st < s->nstages; st++) {
        const sched_stage *stg = &s->stages[st];
        for (int t = 0; t < (stg->identical ? 1 : stg->steps); t++) {
            step_round rd;
            round_build(&rd, g, s, xs, schedule_step(s, st, t, xs), scratch);
            if (rd.busy && stg->identical)
                execute_identical(g, stg, &rd);
            else if (rd.busy)
                run_rounds(g, &rd, 1);
            round_free(&rd);
        }
    }
}

/* Messages: every step of every rank materialized, ranks run unsynchronized. */
static void execute_messages(coll_group *g, const schedule *s, xfer *xs, coll_flow *scratch)
{
    long total = schedule_steps(s), k = 0;
    step_round *rounds = calloc((size_t)total + 1, sizeof *rounds);
    for (int st = 0; st < s->nstages; st++)
        for (int t = 0; t < s->stages[st].steps; t++, k++)
            round_build(&rounds[k], g, s, xs, schedule_step(s, st, t, xs), scratch);
    run_rounds(g, rounds, total);
    for (k = 0; k < total; k++)
        round_free(&rounds[k]);
    free(rounds);
}

double coll_group_run(coll_group *g, const schedule *s, int messages)
{
    double t0 = simgrid_get_clock();
    if (s->ranks != g->n || s->nstages == 0)
        return 0.0;
    xfer *xs = malloc(sizeof *xs * (s->max_step_xfers + 1));
    coll_flow *scratch = malloc(sizeof *scratch * (s->max_step_xfers + 1));
    if (messages)
        execute_messages(g, s, xs, scratch);
    else
        execute_rounds(g, s, xs, scratch);
    free(xs);
    free(scratch);
    return simgrid_get_clock() - t0;
}

void coll_group_destroy(coll_group *g)
{
    g->quit = 1;
    sg_barrier_wait(g->start);
    for (int i = 0; i < g->n; i++) {
        sg_actor_join(g->workers[i], -1);
        sg_actor_unref(g->workers[i]);
    }
    sg_barrier_destroy(g->start);
    sg_barrier_destroy(g->end);
    free(g->workers);
    free(g->speed_flops);
    free(g->finish_s);
    free(g->ranks);
    free(g);
}

/* ---- Parent side: a batch of requests in one simulation ---- */

typedef struct batch {
    const platform *p;
    const coll_request *reqs;
    int nreq;
    coll_result *res;
} batch;

static batch *g_batch; /* the child's only simulation */

/* auto ranks the candidates by their contention-free estimate, then
 * simulates the AUTO_SIMULATED best whose simulation cost (coll_estimate_s)
 * is at most AUTO_SIM_COST: trees and recursive doubling over thousands of
 * ranks of a torus would take minutes. With none affordable, the cheapest. */
#define AUTO_SIMULATED 3
#define AUTO_SIM_COST 300000L

static int build_for(const coll_request *rq, coll_algo algo, schedule *s)
{
    coll_params prm = rq->params;
    tt_error err = {0}; /* schedule_build checks that algo applies */
    prm.algo = algo;
    return schedule_build(&prm, (size_t)llround(prm.bytes), 1.0, s, &err) == TT_OK ? 0 : -1;
}

/* The request's algorithm, or auto's choice: the best AUTO_SIMULATED
 * candidates by estimate are screened with synchronous rounds, then the
 * fastest runs with the requested executor. */
static coll_result run_request(coll_group *g, const coll_request *rq)
{
    coll_algo cand[16];
    double est[16];
    long cost[16];
    int nc = 1, order[16], best = -1, cheapest = -1;
    cand[0] = rq->params.algo;
    if (rq->params.algo == ALGO_AUTO)
        nc = coll_algos_for(rq->params.op, cand, 16);
    for (int c = 0; c < nc; c++) {
        schedule s;
        est[c] = INFINITY;
        cost[c] = -1;
        order[c] = c;
        if (build_for(rq, cand[c], &s) == 0) {
            est[c] = coll_estimate_s(g->p, g->ranks, &s, rq->reduce_s_per_byte, &cost[c]);
            schedule_free(&s);
        }
        if (cost[c] >= 0 && (cheapest < 0 || cost[c] < cost[cheapest]))
            cheapest = c;
    }
    for (int c = 0; nc > 1 && c < nc; c++)
        if (cost[c] > AUTO_SIM_COST && c != cheapest)
            est[c] = INFINITY;
    for (int i = 1; i < nc; i++) /* insertion sort by estimate, stable */
        for (int j = i; j > 0 && est[order[j]] < est[order[j - 1]]; j--) {
            int tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    g->gamma = rq->reduce_s_per_byte;
    if (nc == 1) {
        best = isfinite(est[0]) ? 0 : -1;
    } else {
        double best_s = INFINITY;
        g->sync_only = 1;
        for (int i = 0; i < nc && i < AUTO_SIMULATED && isfinite(est[order[i]]); i++) {
            schedule s;
            if (build_for(rq, cand[order[i]], &s))
                continue;
            double t = coll_group_run(g, &s, 0);
            schedule_free(&s);
            if (t < best_s) {
                best_s = t;
                best = order[i];
            }
        }
        g->sync_only = 0;
    }
    coll_result r = {NAN, rq->params.algo, 0};
    schedule s;
    if (best >= 0 && build_for(rq, cand[best], &s) == 0) {
        r = (coll_result){coll_group_run(g, &s, rq->messages), cand[best], 0};
        schedule_free(&s);
    }
    return r;
}

static void controller(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    batch *b = g_batch;
    coll_group *g = NULL;
    for (int i = 0; i < b->nreq; i++) {
        int n = b->reqs[i].params.ranks;
        if (!g || g->n != n) {
            if (g)
                coll_group_destroy(g);
            int *ranks = malloc(sizeof *ranks * (size_t)n);
            for (int r = 0; r < n; r++)
                ranks[r] = r;
            g = coll_group_create(b->p, ranks, n, b->reqs[i].reduce_s_per_byte);
            free(ranks);
        }
        b->res[i] = run_request(g, &b->reqs[i]);
    }
    if (g)
        coll_group_destroy(g);
}

static void batch_setup(void *arg)
{
    g_batch = arg;
    char host[64];
    platform_rank_host(g_batch->p, 0, host, sizeof host);
    sg_actor_create("collective-controller", sg_host_by_name(host), controller, 0, NULL);
}

static void batch_collect(void *arg, void *result)
{
    batch *b = arg;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    for (int i = 0; i < b->nreq; i++)
        b->res[i].peak_rss_bytes = (double)ru.ru_maxrss * 1024.0;
    memcpy(result, b->res, sizeof *b->res * (size_t)b->nreq);
}

int coll_simulate(const platform *p, network_model net, const coll_request *reqs, int nreq,
                  coll_result *out, tt_error *err)
{
    for (int i = 0; i < nreq; i++) {
        const coll_params *prm = &reqs[i].params;
        const char *why;
        if (prm->ranks > platform_ranks(p) || prm->ranks < 1)
            return tt_error_set(err, TT_EINPUT, "%s on %d ranks: the platform has %d accelerators",
                                coll_op_name(prm->op), prm->ranks, platform_ranks(p));
        if (prm->algo != ALGO_AUTO && !coll_algo_applies(prm, &why))
            return tt_error_set(err, TT_EINPUT, "%s with %s on %d ranks: %s", coll_op_name(prm->op),
                                coll_algo_name(prm->algo), prm->ranks, why);
    }
    coll_result *res = calloc((size_t)nreq + 1, sizeof *res);
    if (!res)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    batch b = {p, reqs, nreq, res};
    sim_job job = {p, net, batch_setup, batch_collect, &b, out, sizeof *out * (size_t)nreq};
    int rc = sim_run(&job, err);
    free(res);
    for (int i = 0; rc == TT_OK && i < nreq; i++)
        if (isnan(out[i].time_s))
            rc = tt_error_set(err, TT_EINTERNAL, "request %d (%s) could not be simulated", i,
                              coll_op_name(reqs[i].params.op));
    return rc;
}

/* ---- One point-to-point message ---- */

typedef struct p2p {
    const platform *p;
    int a, b;
    double bytes, time_s;
} p2p;

static p2p *g_p2p;

static void p2p_sender(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    static char token;
    sg_mailbox_put(sg_mailbox_by_name("p2p"), &token, (long)llround(g_p2p->bytes));
}

static void p2p_receiver(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sg_mailbox_get(sg_mailbox_by_name("p2p"));
    g_p2p->time_s = simgrid_get_clock();
}

static void p2p_setup(void *arg)
{
    g_p2p = arg;
    char host[64];
    platform_rank_host(g_p2p->p, g_p2p->a, host, sizeof host);
    sg_actor_create("p2p-sender", sg_host_by_name(host), p2p_sender, 0, NULL);
    platform_rank_host(g_p2p->p, g_p2p->b, host, sizeof host);
    sg_actor_create("p2p-receiver", sg_host_by_name(host), p2p_receiver, 0, NULL);
}

static void p2p_collect(void *arg, void *result)
{
    *(double *)result = ((p2p *)arg)->time_s;
}

int sim_point_to_point(const platform *p, network_model net, int a, int b, double bytes,
                       double *time_s, tt_error *err)
{
    int n = platform_ranks(p);
    if (a < 0 || b < 0 || a >= n || b >= n || a == b)
        return tt_error_set(err, TT_EINPUT, "a message needs two distinct ranks in 0..%d, got %d and %d", n - 1, a, b);
    p2p st = {p, a, b, bytes, 0.0};
    sim_job job = {p, net, p2p_setup, p2p_collect, &st, time_s, sizeof *time_s};
    return sim_run(&job, err);
}
