/* collective_sim.c: a batch of collective requests in one simulation, one
 * group of workers per communicator, auto's candidates screened. */
#include "sim/engine/collective_sim.h"
#include "sim/engine/collective_group.h"
#include "sim/engine/nccl_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <simgrid/actor.h>
#include <simgrid/host.h>

#include "sim/engine/engine.h"

/* ---- Parent side: a batch of requests in one simulation ---- */

typedef struct batch {
    const platform *p;
    const coll_request *reqs;
    int nreq;
    coll_result *res;
    int oom;        /* a request ran out of memory in the simulation */
    int fold_ranks; /* the ranks of a folded platform loaded (request_survey), 0: all */
} batch;

/* auto ranks the candidates by their estimate, a lower bound on their
 * simulated time, and simulates them in that order until the next bound
 * exceeds the best simulated time: no later candidate can win, so it picks
 * what simulating all would. Those whose simulation cost (coll_estimate_s)
 * exceeds AUTO_SIM_COST are left out (trees and recursive doubling over
 * thousands of ranks of a torus would take minutes); with none affordable,
 * the cheapest. */
#define AUTO_SIM_COST 300000L

/* Whether auto leaves `direct` out unbuilt: its one step is all n(n - 1)
 * pairs of each copy, distinct flows, so past AUTO_SIM_COST it cannot be
 * simulated (a ring, n flows a step, is always cheaper), and building that
 * step to estimate it took O(n^2) time and memory: 16,384 ranks of DGX
 * H100, 268M transfers, more than 12 GB. A symmetric crossbar's classes
 * need no such step. */
static int direct_unaffordable(const coll_group *g, const coll_request *rq, int nc, coll_algo algo)
{
    double k = rq->params.ranks, copies = rq->replicas > 1 ? rq->replicas : 1;
    return nc > 1 && algo == ALGO_DIRECT && !g->classes && k * (k - 1) * copies > AUTO_SIM_COST;
}

/* 0 built, 1 the algorithm does not apply, -1 out of memory. */
static int build_for(const coll_request *rq, coll_algo algo, schedule *s)
{
    coll_params prm = rq->params;
    tt_error err = {0}; /* schedule_build checks that algo applies */
    prm.algo = algo;
    if (schedule_build(&prm, (size_t)llround(prm.bytes), 1.0, s, &err) == TT_OK) {
        schedule_replicate(s, rq->replicas);
        return 0;
    }
    return err.code == TT_EINTERNAL ? -1 : 1;
}


/* The timed run of schedule s (algorithm algo) with the requested executor,
 * the links counted when asked; frees s. */
static coll_result run_timed(coll_group *g, const coll_request *rq, coll_algo algo, schedule *s, int *oom)
{
    coll_result r = {.time_s = NAN, .algo = rq->params.algo};
    g->tally = rq->links ? link_tally_create() : NULL;
    double t = rq->links && !g->tally ? -1 : coll_group_run(g, s, rq->messages);
    schedule_free(s);
    if (t >= 0)
        r = (coll_result){.time_s = t, .algo = algo};
    if (g->tally && g->fluid && coll_fluid_tally_flush(g->fluid, g->tally))
        t = -1;
    if (g->tally && link_tally_finish(g->tally, g->p, &r.links))
        t = -1;
    g->tally = NULL;
    *oom |= t < 0;
    return r;
}

/* The request's algorithm, or auto's choice: candidates whose bound can
 * still win are screened with synchronous rounds, then the fastest runs
 * with the requested executor (one candidate is built once and run, no
 * bound needed). time_s is NaN when no candidate could be simulated; *oom
 * is set when memory ran out. */
static coll_result run_request(coll_group *g, const coll_request *rq, int *oom)
{
    coll_algo cand[16];
    double est[16];
    long cost[16];
    int nc = 1, order[16], best = -1, cheapest = -1, built = 0;
    schedule s;
    g->staged = rq->params.staging == STAGING_HOST;
    if (g->staged && coll_group_stage_setup(g)) {
        *oom = 1;
        return (coll_result){.time_s = NAN, .algo = rq->params.algo};
    }
    g->gamma = rq->reduce_s_per_byte;
    g->fluid_flows = rq->fluid_flows ? rq->fluid_flows : COLL_FLUID_FLOWS;
    if (rq->params.algo != ALGO_AUTO) {
        if ((built = build_for(rq, rq->params.algo, &s)) == 0)
            return run_timed(g, rq, rq->params.algo, &s, oom);
        *oom |= built < 0;
        return (coll_result){.time_s = NAN, .algo = rq->params.algo};
    }
    nc = coll_algos_for(rq->params.op, cand, 16);
    for (int c = 0; c < nc; c++) {
        est[c] = INFINITY;
        cost[c] = -1;
        order[c] = c;
        if (direct_unaffordable(g, rq, nc, cand[c]))
            continue;
        if ((built = build_for(rq, cand[c], &s)) == 0) {
            est[c] = coll_estimate_s(g->p, g->ranks, &s, rq->reduce_s_per_byte, &cost[c]);
            schedule_free(&s);
        }
        if (built < 0 || est[c] < 0) {
            *oom = 1;
            return (coll_result){.time_s = NAN, .algo = rq->params.algo};
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
    if (nc == 1) {
        best = isfinite(est[0]) ? 0 : -1;
    } else {
        double best_s = INFINITY;
        g->sync_only = 1;
        for (int i = 0; i < nc && isfinite(est[order[i]]); i++) {
            /* The estimate bounds a synchronous simulation from below: past the
             * best simulated time no later candidate can win. */
            if (est[order[i]] > best_s * (1 + 1e-9))
                break;
            if ((built = build_for(rq, cand[order[i]], &s)) != 0) {
                *oom |= built < 0;
                continue;
            }
            double t = coll_group_run(g, &s, 0);
            schedule_free(&s);
            *oom |= t < 0;
            if (t >= 0 && t < best_s) {
                best_s = t;
                best = order[i];
            }
        }
        g->sync_only = 0;
    }
    if (!*oom && best >= 0 && (built = build_for(rq, cand[best], &s)) == 0)
        return run_timed(g, rq, cand[best], &s, oom);
    *oom |= built < 0;
    return (coll_result){.time_s = NAN, .algo = rq->params.algo};
}

/* The largest platform rank of a request's communicator, plus one. */
static int ranks_used(const coll_request *rq)
{
    int n = rq->params.ranks * (rq->replicas > 1 ? rq->replicas : 1), hi = n;
    for (int r = 0; rq->members && r < n; r++)
        hi = rq->members[r] + 1 > hi ? rq->members[r] + 1 : hi;
    return rq->members ? hi : n;
}

/* CPU seconds to time one transfer a schedule generates
 * (schedule_work_xfers), generated and solved by components, or in a
 * SimGrid round of worker actors; an identical stage solved by components
 * counts its synchronous round and free-running windows of 8 and 16 steps
 * (collective_exec.c). From NCCL's trees (ResNet-50, BERT-Large: 4,096 and
 * 16,384 DGX H100 nodes, 0.7-1.1x the CPU measured) and rings (Llama 3.1
 * 405B at 2,048 nodes, the load beside). An estimate: what --max-time checks. */
#define FLUID_XFER_S 6e-8
#define ROUND_XFER_S 4e-6
#define IDENTICAL_ROUNDS 25

/* Whether the request may run on the folded platform (platform_fold_nodes,
 * its first fold_ranks ranks; 0: none): as it is when its ranks are all
 * there (the first nodes' routes are the whole platform's); else only where
 * every round is solved by components (collective_fluid.c), which take
 * routes and nothing else from SimGrid: a group of more ranks than
 * fluid_flows, no stage of identical steps outside a pipeline unless
 * `identical` (else those run as SimGrid rounds), no message executor or
 * host staging (a link count adds the solver's routes); auto only with `identical`, its candidates'
 * rings then screened by components too. The answer is the same as on the
 * whole platform (tests/test_collectives.c, fold_matches_full,
 * fold_auto_matches_full). *cpu_s receives what timing it will cost, from the
 * schedule it runs (auto's: the ring's, the cheapest it screens). */
static int request_survey(const platform *p, const coll_request *rq, int fold_ranks, int identical, double *cpu_s)
{
    long n = (long)rq->params.ranks * (rq->replicas > 1 ? rq->replicas : 1);
    long flows = rq->fluid_flows ? rq->fluid_flows : COLL_FLUID_FLOWS;
    int fluid = coll_fluid_applies(p) && flows >= 0 && n > flows && !rq->messages &&
                rq->params.staging == STAGING_DEVICE;
    schedule s;
    *cpu_s = 0;
    if (build_for(rq, rq->params.algo == ALGO_AUTO ? ALGO_RING : rq->params.algo, &s) != 0)
        return !rq->full_platform && fold_ranks > 0 && ranks_used(rq) <= fold_ranks;
    int ok = fluid && (rq->params.algo != ALGO_AUTO || identical || rq->fold_identical);
    for (int i = 0; i < s.nstages; i++) {
        int sg = s.stages[i].identical && !s.stages[i].pipelined && !identical && !rq->fold_identical;
        ok &= !sg; /* SimGrid's rounds */
        *cpu_s += schedule_work_xfers(&s, i) * (fluid && !sg ? FLUID_XFER_S : ROUND_XFER_S) *
                  (fluid && !sg && s.stages[i].identical && !s.stages[i].pipelined ? IDENTICAL_ROUNDS : 1);
    }
    schedule_free(&s);
    return !rq->full_platform && fold_ranks > 0 && (ranks_used(rq) <= fold_ranks || ok);
}

/* Runs the batch's requests in order, one group of workers per rank count. */
static void controller(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    batch *b = sg_actor_self_get_data();
    coll_group *g = NULL;
    long groups = 0;
    for (int i = 0; i < b->nreq && !b->oom; i++) {
        const coll_request *rq = &b->reqs[i];
        int n = rq->params.ranks * (rq->replicas > 1 ? rq->replicas : 1);
        int *ranks = malloc(sizeof *ranks * (size_t)n);
        if (!ranks) {
            b->oom = 1;
            break;
        }
        for (int r = 0; r < n; r++)
            ranks[r] = rq->members ? rq->members[r] : r;
        if (!g || g->n != n || memcmp(g->ranks, ranks, sizeof *ranks * (size_t)n)) { /* another communicator */
            if (g)
                coll_group_destroy(g);
            if (!(g = coll_group_create(b->p, ranks, n, groups++, b->fold_ranks && ranks_used(rq) > b->fold_ranks)))
                b->oom = 1;
        }
        free(ranks);
        if (g)
            b->res[i] = run_request(g, rq, &b->oom);
    }
    if (g)
        coll_group_destroy(g);
}

static int batch_setup(void *arg, tt_error *err)
{
    batch *b = arg;
    char host[64];
    platform_rank_host(b->p, 0, host, sizeof host);
    sg_actor_t a = sg_actor_init("collective-controller", sg_host_by_name(host));
    sg_actor_set_data(a, b);
    sg_actor_start(a, controller, 0, NULL);
    return TT_OK;
}

static int batch_collect(void *arg, void *result, tt_error *err)
{
    batch *b = arg;
    if (b->oom)
        return tt_error_set(err, TT_EINTERNAL, "out of memory while simulating %d collective(s) on platform %s",
                            b->nreq, platform_name(b->p));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    for (int i = 0; i < b->nreq; i++)
        b->res[i].peak_rss_bytes = (double)ru.ru_maxrss * 1024.0;
    memcpy(result, b->res, sizeof *b->res * (size_t)b->nreq);
    return TT_OK;
}

/* A request's members: each a rank of the platform, none twice. */
static int members_check(const platform *p, const coll_request *rq, tt_error *err)
{
    int n = rq->params.ranks * (rq->replicas > 1 ? rq->replicas : 1), total = platform_ranks(p);
    if (!rq->members)
        return TT_OK;
    unsigned char *seen = calloc((size_t)total, 1);
    if (!seen)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    int rc = TT_OK;
    for (int r = 0; r < n && rc == TT_OK; r++) {
        int m = rq->members[r];
        if (m < 0 || m >= total || seen[m])
            rc = tt_error_set(err, TT_EINPUT, "%s: member %d of the communicator is rank %d: %s", coll_op_name(rq->params.op),
                              r, m, m < 0 || m >= total ? "not a rank of the platform" : "already a member");
        else
            seen[m] = 1;
    }
    free(seen);
    return rc;
}

int coll_simulate(const platform *p, network_model net, const coll_request *reqs, int nreq,
                  coll_result *out, tt_error *err)
{
    for (int i = 0; i < nreq; i++) {
        const coll_params *prm = &reqs[i].params;
        const char *why;
        int copies = reqs[i].replicas > 1 ? reqs[i].replicas : 1;
        if (prm->ranks > platform_ranks(p) || prm->ranks < 1 || (long)prm->ranks * copies > platform_ranks(p))
            return tt_error_set(err, TT_EINPUT, "%s on %d ranks%s: the platform has %d accelerators",
                                coll_op_name(prm->op), prm->ranks, copies > 1 ? " per copy" : "", platform_ranks(p));
        int rc = members_check(p, &reqs[i], err);
        if (rc)
            return rc;
        if (prm->algo != ALGO_AUTO && prm->algo != ALGO_NCCL && !coll_algo_applies(prm, &why))
            return tt_error_set(err, TT_EINPUT, "%s with %s on %d ranks: %s", coll_op_name(prm->op),
                                coll_algo_name(prm->algo), prm->ranks, why);
        if ((rc = coll_staging_check(p, prm, err)))
            return rc;
    }
    coll_result *res = calloc((size_t)nreq + 1, sizeof *res);
    coll_request *run = malloc(sizeof *run * ((size_t)nreq + 1));
    nccl_timing *timing = calloc((size_t)nreq + 1, sizeof *timing);
    char (*names)[24] = calloc((size_t)nreq + 1, sizeof *names);
    if (!res || !run || !timing || !names) {
        free(res);
        free(run);
        free(timing);
        free(names);
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    }
    int rc = TT_OK;
    for (int i = 0; i < nreq && rc == TT_OK; i++) { /* nccl: what NCCL runs, or the fabric's native schedule */
        run[i] = reqs[i];
        rc = nccl_resolve(p, run[i].members, &run[i].params, &run[i].reduce_s_per_byte, &timing[i], names[i],
                          sizeof names[i], err);
        res[i].time_s = NAN;
    }
    batch b = {p, run, nreq, res, 0, platform_fold_nodes(p) * platform_ranks_per_node(p)};
    platform_load_cost whole;
    platform_estimate(p, platform_nodes(p), 1, &whole);
    double cpu_s = 0, one_s;
    for (int i = 0; rc == TT_OK && i < nreq; i++) {
        b.fold_ranks = request_survey(p, &run[i], b.fold_ranks, whole.cpu_s >= COLL_FOLD_IDENTICAL_LOAD_S, &one_s)
                           ? b.fold_ranks
                           : 0;
        cpu_s += one_s;
    }
    sim_job job = {p, net, batch_setup, batch_collect, &b, out, sizeof *out * (size_t)nreq,
                   b.fold_ranks / platform_ranks_per_node(p), cpu_s};
    if (rc == TT_OK)
        rc = sim_run(&job, err);
    for (int i = 0; rc == TT_OK && i < nreq; i++) {
        out[i].time_s = nccl_timing_total_s(&timing[i], out[i].time_s);
        memcpy(out[i].nccl, names[i], sizeof out[i].nccl);
    }
    free(res);
    free(run);
    free(timing);
    free(names);
    for (int i = 0; rc == TT_OK && i < nreq; i++)
        if (isnan(out[i].time_s))
            rc = tt_error_set(err, TT_EINTERNAL, "request %d (%s) could not be simulated", i,
                              coll_op_name(reqs[i].params.op));
    return rc;
}
