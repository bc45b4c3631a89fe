#include "sim/run.h"

#include <string.h>

#include "collectives/schedule.h"
#include "platforms/platform.h"
#include "sim/collective_sim.h"
#include "trainer/workload.h"

/* The ring advances at the pace of its slowest edge: each step, every rank
 * sends bytes/n to its successor, so the closed form takes the worst edge. */
static double ring_closed_form_on(const platform *p, int n, double bytes)
{
    double worst = 0.0;
    for (int r = 0; r < n; r++) {
        double lat, bw;
        platform_path(p, r, (r + 1) % n, &lat, &bw);
        double t = ring_allreduce_closed_form_s(n, bytes, lat, bw);
        if (t > worst)
            worst = t;
    }
    return worst;
}

int run_scenario(const scenario *sc, run_result *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    platform *p = platform_new_switched(&sc->cluster, err);
    if (!p)
        return err->code;
    workload w;
    workload_gradient_only(&w, sc->gradient_bytes);
    int n = platform_ranks(p);
    schedule s;
    int rc = ring_allreduce(n, w.gradient_bytes, &s, err);
    if (rc == TT_OK) {
        double comm_s = 0;
        rc = replay_schedule(p, sc->network, &s, &comm_s, err);
        out->ranks = n;
        out->gradient_bytes = w.gradient_bytes;
        /* No compute in this workload yet: the whole allreduce is exposed. */
        out->step.comm_s = comm_s;
        out->step.exposed_comm_s = comm_s;
        out->step.time_s = comm_s;
        out->closed_form_comm_s = ring_closed_form_on(p, n, w.gradient_bytes);
        schedule_free(&s);
    }
    platform_free(p);
    return rc;
}
