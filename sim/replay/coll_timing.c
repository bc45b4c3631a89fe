#include "sim/replay/coll_timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/schedule.h"
#include "sim/engine/collective_sim.h"
#include "sim/replay/traffic.h"

/* Intel's socket-to-socket links in platform files ("class": "upi"). */
#define UPI_CLASS "upi"

/* A class of the step's collectives: one operation on the communicators of
 * one set of layout dimensions, timed at its smallest and largest size. */
typedef struct coll_class {
    step_coll_op op;
    unsigned dims;
    double lo, hi;      /* bytes */
    int req_lo, req_hi; /* its requests */
    int *members;       /* every communicator of dims, one after the other */
} coll_class;

/* Collective i's bytes over UPI, from the schedule of the algorithm that ran
 * at its class's upper request's parameters. */
static int upi_traffic(const platform *p, const step_coll *c, size_t n, const int *cls, const coll_class *k,
                       const coll_request *req, const coll_result *out, double *upi_bytes, tt_error *err)
{
    int rc = TT_OK;
    for (size_t i = 0; rc == TT_OK && i < n; i++) {
        upi_bytes[i] = 0;
        if (c[i].bytes <= 0)
            continue;
        coll_params cp = req[k[cls[i]].req_hi].params;
        cp.algo = out[k[cls[i]].req_hi].algo;
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

#define MAX_CLASSES (STEP_OPS * 4)

/* The class of c (a new one if none): -1 when there is no room. */
static int class_of(coll_class *k, int *nk, const step_coll *c)
{
    for (int j = 0; j < *nk; j++)
        if (k[j].op == c->op && k[j].dims == c->dims)
            return j;
    if (*nk == MAX_CLASSES)
        return -1;
    k[*nk] = (coll_class){.op = c->op, .dims = c->dims, .req_lo = -1, .req_hi = -1};
    return (*nk)++;
}

/* The communicators of dims that run beside the first at once: it and
 * every one with a member on a node of its own (they share its node's
 * links and NICs), their members one group after the other into members.
 * Groups on other nodes meet it only in the fabric, which is not
 * simulated for them: thousands of copies would not fit in one
 * simulation. Returns how many, or -1 when out of memory. */
static int sibling_groups(const layout *l, unsigned dims, int ranks_per_node, int *members)
{
    int size = layout_group_size(l, dims), groups = layout_groups(l, dims), n = 1;
    int nodes = (l->ranks + ranks_per_node - 1) / ranks_per_node;
    unsigned char *mine = calloc((size_t)nodes, 1);
    if (!mine)
        return -1;
    layout_group(l, dims, 0, members);
    for (int r = 0; r < size; r++)
        mine[members[r] / ranks_per_node] = 1;
    for (int g = 1; g < groups; g++) {
        int *m = members + (size_t)n * size, near = 0;
        layout_group(l, dims, g, m);
        for (int r = 0; r < size && !near; r++)
            near = mine[m[r] / ranks_per_node];
        n += near;
    }
    free(mine);
    return n;
}

/* The slope's part of a time is what its bytes hold the links (wire_s, for
 * concurrent collectives); with one size there is no split: all of it. */
int coll_timing_run(const scenario *sc, const layout *l, const platform *p, const step_coll *c, size_t n,
                    const double *per_step, coll_times *t, link_usage *links, tt_error *err)
{
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
    if (l->ranks == 1) {
        snprintf(t->allreduce, sizeof t->allreduce, "none (1 rank)");
        return TT_OK;
    }
    coll_class k[MAX_CLASSES];
    int nk = 0, *cls = malloc(sizeof *cls * (n + 1));
    if (!cls)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    int rc = TT_OK;
    for (size_t m = 0; rc == TT_OK && m < STEP_OPS * n; m++) { /* classes by operation, then first use */
        size_t i = m % n;
        if (c[i].op != (step_coll_op)(m / n) || c[i].bytes <= 0) /* 0: nothing to move (a plan without it) */
            continue;
        if ((cls[i] = class_of(k, &nk, &c[i])) < 0) {
            rc = tt_error_set(err, TT_EINTERNAL, "more than %d kinds of collective in a step", MAX_CLASSES);
            break;
        }
        coll_class *q = &k[cls[i]];
        q->lo = q->lo == 0 || c[i].bytes < q->lo ? c[i].bytes : q->lo;
        q->hi = c[i].bytes > q->hi ? c[i].bytes : q->hi;
    }
    coll_request req[2 * MAX_CLASSES];
    int nreq = 0;
    for (int j = 0; rc == TT_OK && j < nk; j++) {
        coll_class *q = &k[j];
        int size = layout_group_size(l, q->dims), groups = layout_groups(l, q->dims);
        if (!(q->members = malloc(sizeof *q->members * (size_t)l->ranks))) {
            rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
            break;
        }
        if ((groups = sibling_groups(l, q->dims, platform_ranks_per_node(p), q->members)) < 0) {
            rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
            break;
        }
        for (int end = 0; end < 2; end++) {
            if (end == 1 && q->hi == q->lo) {
                q->req_hi = q->req_lo;
                continue;
            }
            coll_params asked = {.op = OPS[q->op], .algo = algo[q->op], .bytes = end ? q->hi : q->lo, .ranks = size,
                                 .nccl_algos = sc->nccl_algos, .nccl_protos = sc->nccl_protos,
                                 .nccl_collnet = sc->nccl_collnet};
            if (q->op == STEP_ALLREDUCE) { /* hier's inter-node phase (scenario's collectives.inter_node, staging) */
                asked.inter = sc->inter_algo;
                asked.staging = sc->staging;
            }
            req[nreq] = coll_request_on(p, &asked, q->members, groups);
            req[nreq].links = links && end == (q->hi > q->lo);
            *(end ? &q->req_hi : &q->req_lo) = nreq++;
        }
    }
    coll_result out[2 * MAX_CLASSES];
    /* what the report names: the gradients' collective (ZeRO's reduce-scatter or the allreduce), the alltoall */
    int rs = -1, ar = -1, a2a = -1;
    for (int j = nk - 1; j >= 0; j--) { /* each operation's first class */
        if (k[j].op == STEP_REDUCE_SCATTER)
            rs = j;
        else if (k[j].op == STEP_ALLREDUCE)
            ar = j;
        else if (k[j].op == STEP_ALLTOALL)
            a2a = j;
    }
    int grads = sc->zero && rs >= 0 ? rs : ar;
    for (int j = 0; rc == TT_OK && j < nk; j++)
        if (k[j].op == STEP_ALLREDUCE && (rc = coll_staging_check(p, &req[k[j].req_hi].params, err)))
            rc = tt_error_prefix(err, "%s: $.collectives.staging: ", sc->path);
    if (rc == TT_OK && nreq > 0)
        rc = coll_simulate(p, sc->network, req, nreq, out, err);
    for (size_t i = 0; rc == TT_OK && i < n; i++) {
        if (c[i].bytes <= 0)
            continue;
        const coll_class *q = &k[cls[i]];
        double t_lo = out[q->req_lo].time_s, t_hi = out[q->req_hi].time_s;
        double u = q->hi > q->lo ? (c[i].bytes - q->lo) / (q->hi - q->lo) : 0;
        t->coll_s[i] = t_lo + u * (t_hi - t_lo);
        t->wire_s[i] = q->hi > q->lo ? fmax(0.0, fmin(t->coll_s[i], c[i].bytes * (t_hi - t_lo) / (q->hi - q->lo)))
                                     : t->coll_s[i];
        if (links)
            link_usage_add(links, &out[q->req_hi].links, per_step[i] * c[i].bytes / q->hi);
    }
    if (rc == TT_OK && t->upi_bytes)
        rc = upi_traffic(p, c, n, cls, k, req, out, t->upi_bytes, err);
    if (rc == TT_OK && grads >= 0)
        name_algorithm(sc, &req[k[grads].req_hi].params, &out[k[grads].req_hi], t->allreduce);
    if (rc == TT_OK && a2a >= 0)
        name_algorithm(sc, &req[k[a2a].req_hi].params, &out[k[a2a].req_hi], t->alltoall);
    for (int j = 0; j < nk; j++)
        free(k[j].members);
    free(cls);
    return rc;
}
