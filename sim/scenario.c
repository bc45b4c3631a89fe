#include "sim/scenario.h"

#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"

const char *const SCENARIO_ALLREDUCE_ALGOS[] = {"ring", NULL};
static const char *const NETWORKS[] = {"ideal", "calibrated", NULL};

static int load_link(const jx_obj *parent, const char *key, double *bw_Bps, double *latency_s)
{
    static const char *const keys[] = {"bandwidth_Bps", "latency_s", NULL};
    jx_obj l;
    int rc;
    if ((rc = jx_child(parent, key, 1, &l)) || (rc = jx_check_keys(&l, keys)) ||
        (rc = jx_rate(&l, "bandwidth_Bps", 1, 1e3, 1e15, bw_Bps)) ||
        (rc = jx_seconds(&l, "latency_s", 1, 0, 10, latency_s)))
        return rc;
    return TT_OK;
}

static int load_cluster(const jx_obj *root, switched_spec *c)
{
    static const char *const keys[] = {"nodes", "accelerators_per_node", "accelerator_flops",
                                       "intra_link", "inter_link", NULL};
    jx_obj p;
    long nodes = 0, per = 0;
    int rc;
    c->accelerator_flops = 1e12;
    if ((rc = jx_child(root, "platform", 1, &p)) || (rc = jx_check_keys(&p, keys)) ||
        (rc = jx_int(&p, "nodes", 1, 1, 4096, &nodes)) ||
        (rc = jx_int(&p, "accelerators_per_node", 1, 1, 64, &per)) ||
        (rc = jx_number(&p, "accelerator_flops", 0, 1e6, 1e18, &c->accelerator_flops)) ||
        (rc = load_link(&p, "intra_link", &c->intra_bw_Bps, &c->intra_latency_s)) ||
        (rc = load_link(&p, "inter_link", &c->inter_bw_Bps, &c->inter_latency_s)))
        return rc;
    c->nodes = (int)nodes;
    c->accelerators_per_node = (int)per;
    return TT_OK;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

int scenario_load(const char *path, scenario *out, tt_error *err)
{
    static const char *const keys[] = {"version", "name", "description", "platform",
                                       "network", "workload", "collectives", NULL};
    static const char *const wkeys[] = {"gradient_bytes", NULL};
    static const char *const ckeys[] = {"allreduce", NULL};
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = jx_load_file(path, &root, err);
    if (rc)
        return rc;
    jx_obj r, w, c;
    long version = 0;
    const char *name = NULL, *desc = NULL;
    int net = NETWORK_CALIBRATED;
    out->allreduce_algo = 0;
    if ((rc = jx_root(&r, path, root, err)) || (rc = jx_check_keys(&r, keys)) ||
        (rc = jx_int(&r, "version", 1, SCENARIO_VERSION, SCENARIO_VERSION, &version)) ||
        (rc = jx_string(&r, "name", 1, &name)) ||
        (rc = jx_string(&r, "description", 0, &desc)) ||
        (rc = load_cluster(&r, &out->cluster)) ||
        (rc = jx_enum(&r, "network", 0, NETWORKS, &net)) ||
        (rc = jx_child(&r, "workload", 1, &w)) || (rc = jx_check_keys(&w, wkeys)) ||
        (rc = jx_bytes(&w, "gradient_bytes", 1, 1, 1e13, &out->gradient_bytes)) ||
        (rc = jx_child(&r, "collectives", 0, &c)) ||
        (c.obj && ((rc = jx_check_keys(&c, ckeys)) ||
                   (rc = jx_enum(&c, "allreduce", 0, SCENARIO_ALLREDUCE_ALGOS, &out->allreduce_algo))))) {
        json_decref(root);
        return rc;
    }
    out->network = (network_model)net;
    out->path = strdup(path);
    out->name = strdup(name);
    out->description = dup_or_null(desc);
    json_decref(root);
    return TT_OK;
}

void scenario_free(scenario *s)
{
    free(s->path);
    free(s->name);
    free(s->description);
    memset(s, 0, sizeof *s);
}
