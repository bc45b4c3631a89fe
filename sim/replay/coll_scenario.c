/* A collective measurement scenario (coll_scenario.h). */
#include "sim/replay/coll_scenario.h"

#include <stdio.h>
#include <string.h>

#include "sim/engine/collective_sim.h"

int coll_scenario_run(const scenario *sc, coll_scenario_result *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    platform_options opt = scenario_platform_options(sc, 0);
    platform *p = platform_load(sc->platform, &opt, err);
    if (!p)
        return tt_error_prefix(err, "%s: $.platform: ", sc->path);
    int n = sc->coll_ranks ? sc->coll_ranks : platform_ranks(p);
    if (n < 2 || n > platform_ranks(p)) {
        int have = platform_ranks(p);
        platform_free(p);
        return tt_error_set(err, TT_EINPUT, "%s: $.collective.ranks: %d ranks asked, the platform has %d; a "
                            "collective needs 2 to %d", sc->path, n, have, have);
    }
    coll_params asked = {.op = sc->coll_op, .algo = sc->coll_algo, .ranks = n, .bytes = sc->coll_bytes,
                         .nccl_algos = sc->nccl_algos, .nccl_protos = sc->nccl_protos, .nccl_collnet = sc->nccl_collnet};
    coll_request rq = coll_request_build(p, &asked);
    coll_result res;
    int rc = coll_simulate(p, sc->network, &rq, 1, &res, err);
    if (rc == TT_OK) {
        snprintf(out->platform, sizeof out->platform, "%s", platform_name(p));
        snprintf(out->op, sizeof out->op, "%s", coll_op_name(sc->coll_op));
        snprintf(out->requested, sizeof out->requested, "%s", coll_algo_name(sc->coll_algo));
        snprintf(out->algo, sizeof out->algo, "%s", coll_algo_name(res.algo));
        snprintf(out->nccl, sizeof out->nccl, "%s", res.nccl);
        out->ranks = n;
        out->bytes = sc->coll_bytes;
        out->time_s = res.time_s;
        out->algbw_Bps = res.time_s > 0 ? sc->coll_bytes / res.time_s : 0;
        out->busbw_Bps = out->algbw_Bps * coll_busbw_factor(sc->coll_op, n);
    }
    platform_free(p);
    return rc;
}
