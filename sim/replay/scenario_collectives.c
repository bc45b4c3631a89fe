/* scenario_collectives.c: a scenario's "collective" measurement and its
 * "collectives" options (scenario_load.h). */
#include "sim/replay/scenario_load.h"

#include <stdlib.h>
#include <string.h>

#include "collectives/nccl.h"
#include "sim/replay/step.h"

/* An algorithm name is checked at load, where its JSON path is known. */
static int parse_algo(const jx_obj *c, const char *key, const char *name, coll_algo *out)
{
    if (coll_algo_parse(name, out) != 0)
        return tt_error_set(c->err, TT_EINPUT, "%s: %s.%s: unknown algorithm \"%s\"; see 'ttasim collective "
                            "--help' for the names", c->file, c->path, key, name);
    return TT_OK;
}

/* collectives.inter_node and collectives.staging: hier allreduce's
 * inter-node phase and where it keeps its buffers (collectives/schedule.h).
 * Whether the platform can stage through host memory is checked at run,
 * once it is loaded. */
static int load_hier_options(const jx_obj *c, scenario *s)
{
    int inter = 0, staging = 0, rc;
    if ((rc = jx_enum(c, "inter_node", 0, coll_inter_words(), &inter)) ||
        (rc = jx_enum(c, "staging", 0, coll_staging_words(), &staging)))
        return rc;
    s->inter_algo = coll_inter_algo(inter);
    s->staging = (coll_staging)staging;
    if ((inter || staging) && s->allreduce_algo != ALGO_HIER)
        return tt_error_set(c->err, TT_EINPUT, "%s: %s.%s: \"%s\" is an option of the hier allreduce (its "
                            "inter-node phase), but %s.allreduce is \"%s\"; set it to \"hier\" or remove %s",
                            c->file, c->path, staging ? "staging" : "inter_node", staging ? "host" : "rhd", c->path,
                            coll_algo_name(s->allreduce_algo), staging ? "staging" : "inter_node");
    return TT_OK;
}

/* collectives.nccl_algo and nccl_proto: NCCL_ALGO and NCCL_PROTO in NCCL's
 * syntax; nccl_collnet: NCCL_COLLNET_ENABLE. */
static int load_nccl_options(const jx_obj *c, scenario *s)
{
    const char *words[2] = {NULL, NULL}, *keys[2] = {"nccl_algo", "nccl_proto"};
    int rc;
    if ((rc = jx_string(c, keys[0], 0, &words[0])) || (rc = jx_string(c, keys[1], 0, &words[1])) ||
        (rc = jx_bool(c, "nccl_collnet", 0, &s->nccl_collnet)))
        return rc;
    for (int k = 0; k < 2; k++) {
        const char *bad;
        int len;
        unsigned *mask = k ? &s->nccl_protos : &s->nccl_algos;
        if (words[k] && ((k ? nccl_parse_protos(words[k], mask, &bad, &len) : nccl_parse_algos(words[k], mask, &bad, &len)) ||
                         *mask == 0))
            return tt_error_set(c->err, TT_EINPUT, "%s: %s.%s: \"%s\" names %s \"%.*s\"; expected a list (NCCL's "
                                "syntax, ^ for all but) of: %s", c->file, c->path, keys[k], words[k],
                                *mask ? "an unknown" : "nothing", *mask ? len : 0, *mask ? bad : "",
                                k ? nccl_proto_words() : nccl_algo_words());
    }
    return TT_OK;
}

/* "collective": {"op", "algo", "bytes", "ranks"}: one collective timed like
 * nccl-tests instead of a training step. */
int scenario_load_collective(const jx_obj *r, scenario *s)
{
    static const char *const keys[] = {"op", "algo", "bytes", "ranks", NULL};
    jx_obj c;
    const char *op = NULL, *algo = "nccl";
    long ranks = 0;
    int rc;
    if ((rc = jx_child(r, "collective", 0, &c)) || !c.obj)
        return rc;
    if (jx_has(r, "workload"))
        return tt_error_set(r->err, TT_EINPUT, "%s: $: both \"workload\" and \"collective\": a scenario is a training "
                            "run or a collective measurement; remove one", r->file);
    if ((rc = jx_check_keys(&c, keys)) || (rc = jx_string(&c, "op", 1, &op)) ||
        (rc = jx_string(&c, "algo", 0, &algo)) || (rc = jx_bytes(&c, "bytes", 1, 1, 1e13, &s->coll_bytes)) ||
        (rc = jx_int(&c, "ranks", 0, 1, 1 << 20, &ranks)))
        return rc;
    if (coll_op_parse(op, &s->coll_op) != 0)
        return tt_error_set(c.err, TT_EINPUT, "%s: %s.op: unknown collective \"%s\"; expected allreduce, "
                            "reduce_scatter, allgather, broadcast, reduce or alltoall", c.file, c.path, op);
    if ((rc = parse_algo(&c, "algo", algo, &s->coll_algo)))
        return rc;
    s->is_collective = 1;
    s->coll_ranks = (int)ranks;
    return TT_OK;
}

/* "collectives": the algorithms, overlap and NCCL's options of the step's
 * collectives. */
int scenario_load_collectives(const jx_obj *r, scenario *s)
{
    static const char *const keys[] = {"allreduce", "alltoall", "overlap", "inter_node", "staging",
                                       "concurrent_ops", "nccl_algo", "nccl_proto", "nccl_collnet",
                                       "overlap_param_gather", "grouped", "overlap_ar_a2a", NULL};
    jx_obj c;
    const char *ar = "nccl", *a2a = "auto";
    long concurrent_ops = 1;
    int rc;
    if ((rc = jx_child(r, "collectives", 0, &c)) ||
        (c.obj && ((rc = jx_check_keys(&c, keys)) || (rc = jx_string(&c, "allreduce", 0, &ar)) ||
                   (rc = jx_string(&c, "alltoall", 0, &a2a)) || (rc = jx_bool(&c, "overlap", 0, &s->overlap)) ||
                   (rc = jx_bool(&c, "overlap_param_gather", 0, &s->overlap_param_gather)) ||
                   (rc = jx_bool(&c, "grouped", 0, &s->grouped)) ||
                   (rc = jx_bool(&c, "overlap_ar_a2a", 0, &s->overlap_ar_a2a)) ||
                   (rc = jx_int(&c, "concurrent_ops", 0, 1, STEP_MAX_CONCURRENT_OPS, &concurrent_ops)))) ||
        (rc = parse_algo(&c, "allreduce", ar, &s->allreduce_algo)) ||
        (rc = parse_algo(&c, "alltoall", a2a, &s->alltoall_algo)) ||
        (c.obj && ((rc = load_hier_options(&c, s)) || (rc = load_nccl_options(&c, s)))))
        return rc;
    if (s->grouped && s->zero)
        return tt_error_set(c.err, TT_EINPUT, "%s: %s.grouped: one allreduce of every gradient after the backward "
                            "does not combine with the distributed optimizer's reduce-scatters ($.parallel.zero); "
                            "drop one of them", c.file, c.path);
    s->concurrent_ops = (int)concurrent_ops;
    s->allreduce = strdup(ar);
    s->alltoall = strdup(a2a);
    return TT_OK;
}
