#include "sim/replay/coll_timing.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collectives/schedule.h"
#include "sim/engine/collective_sim.h"
#include "sim/replay/traffic.h"

/* Intel's socket-to-socket links in platform files ("class": "upi"). */
#define UPI_CLASS "upi"

/* Collective i's bytes over UPI, from the schedule of the algorithm that ran
 * at the upper request's parameters. */
static int upi_traffic(const platform *p, const step_coll *c, size_t n, const coll_request *req,
                       const int *req_hi, const coll_result *out, double *upi_bytes, tt_error *err)
{
    int rc = TT_OK;
    for (size_t i = 0; rc == TT_OK && i < n; i++) {
        upi_bytes[i] = 0;
        if (c[i].bytes <= 0)
            continue;
        coll_params cp = req[req_hi[c[i].op]].params;
        cp.algo = out[req_hi[c[i].op]].algo;
        cp.bytes = c[i].bytes;
        rc = traffic_class_bytes(p, &cp, UPI_CLASS, &upi_bytes[i], err);
    }
    return rc;
}

/* An operation's algorithm as the report names it: hier's options and the
 * contexts in flight after it. */
static void name_algorithm(const scenario *sc, const coll_params *asked, const coll_result *o, char *dst)
{
    char how[64] = "";
    if (asked->inter == ALGO_RHD)
        snprintf(how, sizeof how, "rhd");
    if (asked->staging == STAGING_HOST)
        snprintf(how + strlen(how), sizeof how - strlen(how), "%shost-staged", how[0] ? ", " : "");
    if (sc->concurrent_ops > 1)
        snprintf(how + strlen(how), sizeof how - strlen(how), "%s%d at once", how[0] ? ", " : "",
                 sc->concurrent_ops);
    /* NCCL's pick by its name ("nccl tree/Simple"), ttasim's own schedules by theirs */
    snprintf(dst, COLL_TIMING_NAME_BYTES, "%s%s%s%s%s", o->nccl[0] ? "nccl " : "", o->nccl[0] ? o->nccl : coll_algo_name(o->algo),
             how[0] ? " (" : "", how, how[0] ? ")" : "");
}

/* The slope's part of a time is what its bytes hold the links (wire_s, for
 * concurrent collectives); with one size there is no split: all of it. */
int coll_timing_run(const scenario *sc, const platform *p, const step_coll *c, size_t n, const double *per_step,
                    coll_times *t, link_usage *links, tt_error *err)
{
    int ranks = platform_ranks(p);
    static const coll_op OPS[STEP_OPS] = {OP_ALLREDUCE, OP_ALLTOALL, OP_REDUCE_SCATTER, OP_ALLGATHER};
    /* NCCL runs reduce-scatter and all-gather too where it runs the allreduce */
    coll_algo rs_ag = sc->allreduce_algo == ALGO_NCCL ? ALGO_NCCL : ALGO_AUTO;
    coll_algo algo[STEP_OPS] = {sc->allreduce_algo, sc->alltoall_algo, rs_ag, rs_ag};
    snprintf(t->allreduce, sizeof t->allreduce, "none");
    snprintf(t->alltoall, sizeof t->alltoall, "none");
    for (size_t i = 0; i < n; i++) {
        t->coll_s[i] = t->wire_s[i] = 0;
        if (t->upi_bytes)
            t->upi_bytes[i] = 0;
    }
    if (ranks == 1) {
        snprintf(t->allreduce, sizeof t->allreduce, "none (1 rank)");
        return TT_OK;
    }
    double lo[STEP_OPS] = {0}, hi[STEP_OPS] = {0};
    for (size_t i = 0; i < n; i++) {
        int op = c[i].op;
        if (c[i].bytes <= 0) /* nothing to move (a plan without this collective) */
            continue;
        lo[op] = lo[op] == 0 || c[i].bytes < lo[op] ? c[i].bytes : lo[op];
        hi[op] = c[i].bytes > hi[op] ? c[i].bytes : hi[op];
    }
    coll_request req[2 * STEP_OPS];
    int nreq = 0, req_lo[STEP_OPS] = {-1, -1, -1, -1}, req_hi[STEP_OPS] = {-1, -1, -1, -1};
    for (int op = 0; op < STEP_OPS; op++) {
        if (hi[op] <= 0)
            continue;
        for (int end = 0; end < 2; end++) {
            if (end == 1 && hi[op] == lo[op]) {
                req_hi[op] = req_lo[op];
                continue;
            }
            coll_params asked = {.op = OPS[op], .algo = algo[op], .bytes = end ? hi[op] : lo[op],
                                 .nccl_algos = sc->nccl_algos, .nccl_protos = sc->nccl_protos,
                                 .nccl_collnet = sc->nccl_collnet};
            if (OPS[op] == OP_ALLREDUCE) { /* hier's inter-node phase (scenario's collectives.inter_node, staging) */
                asked.inter = sc->inter_algo;
                asked.staging = sc->staging;
            }
            req[nreq] = coll_request_build(p, &asked);
            req[nreq].links = links && end == (hi[op] > lo[op]);
            *(end ? &req_hi[op] : &req_lo[op]) = nreq++;
        }
    }
    coll_result out[2 * STEP_OPS];
    int rc = req_hi[STEP_ALLREDUCE] >= 0 ? coll_staging_check(p, &req[req_hi[STEP_ALLREDUCE]].params, err) : TT_OK;
    if (rc)
        return tt_error_prefix(err, "%s: $.collectives.staging: ", sc->path);
    rc = nreq > 0 ? coll_simulate(p, sc->network, req, nreq, out, err) : TT_OK;
    for (size_t i = 0; rc == TT_OK && i < n; i++) {
        int op = c[i].op;
        if (c[i].bytes <= 0)
            continue;
        double t_lo = out[req_lo[op]].time_s, t_hi = out[req_hi[op]].time_s;
        double u = hi[op] > lo[op] ? (c[i].bytes - lo[op]) / (hi[op] - lo[op]) : 0;
        t->coll_s[i] = t_lo + u * (t_hi - t_lo);
        t->wire_s[i] = hi[op] > lo[op]
                           ? fmax(0.0, fmin(t->coll_s[i], c[i].bytes * (t_hi - t_lo) / (hi[op] - lo[op])))
                           : t->coll_s[i];
        if (links)
            link_usage_add(links, &out[req_hi[op]].links, per_step[i] * c[i].bytes / hi[op]);
    }
    if (rc == TT_OK && t->upi_bytes)
        rc = upi_traffic(p, c, n, req, req_hi, out, t->upi_bytes, err);
    /* the gradients' collective: the allreduce, or the distributed optimizer's reduce-scatter */
    int grads = sc->zero && req_hi[STEP_REDUCE_SCATTER] >= 0 ? STEP_REDUCE_SCATTER : STEP_ALLREDUCE;
    if (rc == TT_OK && req_hi[grads] >= 0)
        name_algorithm(sc, &req[req_hi[grads]].params, &out[req_hi[grads]], t->allreduce);
    if (rc == TT_OK && req_hi[STEP_ALLTOALL] >= 0)
        name_algorithm(sc, &req[req_hi[STEP_ALLTOALL]].params, &out[req_hi[STEP_ALLTOALL]], t->alltoall);
    return rc;
}
