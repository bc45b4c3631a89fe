#include "sim/report/scaling.h"

static int runs(const run_point *p)
{
    return !p->error[0] && p->time_to_accuracy_s > 0 && p->samples_to_target > 0;
}

size_t scaling_rows(const run_result *r, scaling_row *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        const run_point *p = &r->points[i];
        if (p->label[0])
            return 0;
        if (!runs(p))
            continue;
        size_t k = 0;
        while (k < n && out[k].best->nodes != p->nodes)
            k++;
        if (k == n) {
            if (n == cap)
                return 0;
            size_t at = 0; /* kept in increasing node count */
            while (at < n && out[at].best->nodes < p->nodes)
                at++;
            for (size_t j = n++; j > at; j--)
                out[j] = out[j - 1];
            out[at] = (scaling_row){.best = p};
        } else if (p->time_to_accuracy_s < out[k].best->time_to_accuracy_s) {
            out[k].best = p;
        }
    }
    for (size_t k = 1; k < n; k++) {
        const run_point *a = out[k - 1].best, *b = out[k].best;
        scaling_row *s = &out[k];
        s->speedup = a->time_to_accuracy_s / b->time_to_accuracy_s;
        s->efficiency = s->speedup / ((double)b->ranks / a->ranks);
        s->tokens_ratio = b->samples_to_target / a->samples_to_target;
        s->rank_time_ratio = (b->step.time_s * b->ranks / b->global_batch) /
                             (a->step.time_s * a->ranks / a->global_batch);
    }
    return n >= 2 ? n : 0;
}

const char *scaling_limit(const scaling_row *row)
{
    if (row->tokens_ratio < 1.05 && row->rank_time_ratio < 1.05)
        return "-";
    return row->tokens_ratio >= row->rank_time_ratio ? "data efficiency" : "per-sample time";
}
