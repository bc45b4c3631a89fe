#include <stdlib.h>

#include "collectives/schedule.h"

void schedule_free(schedule *s)
{
    free(s->step_begin);
    free(s->xfers);
    s->step_begin = NULL;
    s->xfers = NULL;
}

int ring_allreduce(int n, double bytes, schedule *out, tt_error *err)
{
    if (n < 1)
        return tt_error_set(err, TT_EINPUT, "ring allreduce needs at least one rank, got %d", n);
    out->ranks = n;
    out->steps = 2 * (n - 1);
    out->step_begin = calloc((size_t)out->steps + 1, sizeof *out->step_begin);
    out->xfers = calloc((size_t)out->steps * (size_t)n + 1, sizeof *out->xfers);
    if (!out->step_begin || !out->xfers) {
        schedule_free(out);
        return tt_error_set(err, TT_EINTERNAL, "out of memory for a %d-rank ring schedule", n);
    }
    size_t k = 0;
    for (int s = 0; s < out->steps; s++) {
        out->step_begin[s] = k;
        for (int r = 0; r < n; r++)
            out->xfers[k++] = (transfer){r, (r + 1) % n, bytes / n, s < n - 1};
    }
    out->step_begin[out->steps] = k;
    return TT_OK;
}

double ring_allreduce_closed_form_s(int n, double bytes, double alpha_s, double beta_Bps)
{
    if (n < 2)
        return 0.0;
    return 2.0 * (n - 1) * (alpha_s + bytes / ((double)n * beta_Bps));
}
