#include "sim/replay/cluster.h"

#include <string.h>

int cluster_open(const scenario *sc, int nodes, cluster *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    out->nodes = nodes;
    platform_options opt = scenario_platform_options(sc, nodes);
    if (!(out->p = platform_load(sc->platform, &opt, err)))
        return tt_error_prefix(err, "%s: $.platform%s: ", sc->path,
                               sc->fabric || sc->devices ? " (with its overrides)" : "");
    platform_summarize(out->p, &out->sum);
    cost_bill_of(out->p, &out->sum, &out->bill);
    long cores = 0;
    for (int i = 0; i < out->sum.n_devices; i++)
        if (out->sum.devices[i].dev->kind == DEVICE_CPU)
            cores += out->sum.devices[i].count * out->sum.devices[i].dev->cores;
    out->host_cores = out->sum.nodes > 0 ? (int)(cores / out->sum.nodes) : 0;
    return TT_OK;
}

void cluster_close(cluster *c)
{
    platform_free(c->p);
    memset(c, 0, sizeof *c);
}
