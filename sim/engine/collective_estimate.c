/* collective_estimate.c: the contention-free time of a schedule on a
 * platform's paths, without SimGrid (auto's screening, a cheap fallback). */
#include <stdlib.h>

#include "sim/engine/collective_sim.h"

double coll_estimate_s(const platform *p, const int *ranks, const schedule *s, double reduce_s_per_byte,
                       long *sim_cost)
{
    long lf = 0;
    xfer *xs = malloc(sizeof *xs * (s->max_step_xfers + 1));
    coll_flow *fl = malloc(sizeof *fl * (s->max_step_xfers + 1));
    double *reduce_bytes = calloc((size_t)s->ranks + 1, sizeof *reduce_bytes), total = 0;
    if (!xs || !fl || !reduce_bytes) {
        total = -1;
        goto done;
    }
    for (int st = 0; st < s->nstages; st++) {
        const sched_stage *stg = &s->stages[st];
        for (int t = 0; t < (stg->identical ? 1 : stg->steps); t++) {
            size_t nx = schedule_step(s, st, t, xs), nf = schedule_merge_flows(s, xs, nx, fl);
            double comm = 0, red = 0;
            int max_hops = 0;
            for (size_t k = 0; k < nx; k++)
                if (xs[k].op == XFER_REDUCE)
                    reduce_bytes[xs[k].dst] += (double)xs[k].len * s->unit_bytes;
            for (size_t k = 0; k < nx; k++)
                if (xs[k].op == XFER_REDUCE) {
                    double r = reduce_bytes[xs[k].dst] * reduce_s_per_byte;
                    red = r > red ? r : red;
                }
            for (size_t k = 0; k < nx; k++)
                reduce_bytes[xs[k].dst] = 0;
            for (size_t k = 0; k < nf; k++) {
                double lat, bw;
                int h = platform_path(p, ranks ? ranks[fl[k].src] : fl[k].src, ranks ? ranks[fl[k].dst] : fl[k].dst, &lat, &bw);
                double c = lat + (bw > 0 ? fl[k].bytes / bw : 0);
                max_hops = h > max_hops ? h : max_hops;
                comm = c > comm ? c : comm;
            }
            total += (comm + red) * (stg->identical ? stg->steps : 1);
            lf += (long)nf * max_hops;
        }
    }
done:
    if (sim_cost)
        *sim_cost = lf;
    free(xs);
    free(fl);
    free(reduce_bytes);
    return total;
}
