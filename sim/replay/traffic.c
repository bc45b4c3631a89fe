#include "sim/replay/traffic.h"

#include <stdlib.h>

int traffic_class_bytes(const platform *p, const coll_params *params, const char *cls, double *bytes, tt_error *err)
{
    *bytes = 0;
    schedule s;
    int rc = schedule_build(params, (size_t)params->bytes, 1, &s, err); /* timing: one element per byte */
    if (rc)
        return rc;
    xfer *xs = calloc(s.max_step_xfers + 1, sizeof *xs);
    coll_flow *flows = calloc(s.max_step_xfers + 1, sizeof *flows);
    if (!xs || !flows)
        rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
    for (int st = 0; rc == TT_OK && st < s.nstages; st++) {
        /* an identical stage moves the same bytes between the same ranks every step */
        int steps = s.stages[st].identical ? 1 : s.stages[st].steps;
        double repeat = s.stages[st].identical ? s.stages[st].steps : 1;
        for (int k = 0; k < steps; k++) {
            size_t nf = schedule_merge_flows(&s, xs, schedule_step(&s, st, k, xs), flows);
            for (size_t f = 0; f < nf; f++)
                *bytes += repeat * flows[f].bytes * platform_path_class_links(p, flows[f].src, flows[f].dst, cls);
        }
    }
    free(xs);
    free(flows);
    schedule_free(&s);
    return rc;
}
