#include "sim/replay/batch_schedule.h"

#include <stdio.h>
#include <string.h>

#include "sim/replay/plan_search.h"
#include "sim/replay/point.h"
#include "sim/replay/run_ctx.h"

int batch_schedule_load(const jx_obj *conv, batch_schedule *out)
{
    static const char *const keys[] = {"global_batch", "tokens", "samples", NULL};
    memset(out, 0, sizeof *out);
    size_t n;
    int rc = jx_array(conv, "batch_schedule", 0, &n);
    if (rc)
        return rc;
    if (n > BATCH_SCHEDULE_MAX)
        return tt_error_set(conv->err, TT_EINPUT, "%s: %s.batch_schedule: at most %d phases before the run's own "
                            "batch, found %zu; merge phases", conv->file, conv->path, BATCH_SCHEDULE_MAX, n);
    for (size_t i = 0; i < n; i++) {
        jx_obj p;
        long gb = 0;
        if ((rc = jx_elem(conv, "batch_schedule", i, &p)) || (rc = jx_check_keys(&p, keys)) ||
            (rc = jx_int(&p, "global_batch", 1, 1, 1L << 40, &gb)))
            return rc;
        int tokens = jx_has(&p, "tokens");
        if (tokens == jx_has(&p, "samples"))
            return tt_error_set(conv->err, TT_EINPUT, "%s: %s: give one of \"tokens\" and \"samples\", what the "
                                "phase trains on at its batch", p.file, p.path);
        if ((rc = jx_bytes(&p, tokens ? "tokens" : "samples", 1, 1, 1e18, &out->amount[i])))
            return rc;
        out->global_batch[i] = gb;
        out->in_tokens[i] = tokens;
    }
    out->n = (int)n;
    return TT_OK;
}

void batch_schedule_describe(const batch_schedule *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < s->n && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%sglobal batch %ld for %.4g %s", k ? ", then " : "",
                                 s->global_batch[k], s->amount[k], s->in_tokens[k] ? "tokens" : "samples");
    if (s->n && used < len)
        snprintf(buf + used, len - used, ", then the point's own global batch to the target (each phase's step "
                 "simulated at its batch)");
}

/* Steps to the target at a batch: the median, 10th and 90th percentiles. */
static void steps_at(const run_ctx *x, double batch, double s[3])
{
    convergence_estimate e = convergence_at(x->conv, batch);
    s[0] = e.steps;
    s[1] = e.p10;
    s[2] = e.p90;
}

static void cost_add(cost *sum, const cost *c, double times)
{
    sum->usd += times * c->usd;
    sum->energy_j += times * c->energy_j;
    sum->capex_usd += times * c->capex_usd;
    sum->energy_usd += times * c->energy_usd;
    sum->owned_usd += times * c->owned_usd;
}

/* One quantile of the scheduled run: the phases' steps until the progress
 * reaches 1, the rest at the point's batch; evaluation as the point had it. */
static void schedule_sum(const batch_schedule *sch, const run_point *ph, const double (*phase_s)[3], int q,
                         double tokens_per_sample, run_point *pt, double final_s, double *steps, double *samples,
                         double *time_s, cost *total)
{
    double progress = 0, n = 0;
    double eval_s = (q == 0 ? pt->time_to_accuracy_s : q == 1 ? pt->time_to_accuracy_p10_s
                                                              : pt->time_to_accuracy_p90_s) - final_s * pt->step.time_s;
    cost eval = q == 0 ? pt->total : q == 1 ? pt->total_p10 : pt->total_p90;
    cost_add(&eval, &pt->per_step, -final_s);
    *steps = *samples = *time_s = 0;
    memset(total, 0, sizeof *total);
    for (int k = 0; k < sch->n && progress < 1; k++) {
        double b = (double)sch->global_batch[k];
        n = sch->amount[k] / (sch->in_tokens[k] ? b * tokens_per_sample : b);
        if (progress + n / phase_s[k][q] >= 1)
            n = (1 - progress) * phase_s[k][q];
        progress += n / phase_s[k][q];
        *steps += n;
        *samples += n * b;
        *time_s += n * ph[k].step.time_s;
        cost_add(total, &ph[k].per_step, n);
    }
    n = progress < 1 ? (1 - progress) * final_s : 0;
    *steps += n;
    *samples += n * (double)pt->global_batch;
    *time_s += n * pt->step.time_s + eval_s;
    cost_add(total, &pt->per_step, n);
    cost_add(total, &eval, 1);
}

static int schedule_apply(const run_ctx *x, const cluster *c, double tokens_per_sample, run_point *pt,
                          tt_error *err)
{
    const batch_schedule *sch = &x->sc->schedule;
    run_point ph[BATCH_SCHEDULE_MAX];
    double phase_s[BATCH_SCHEDULE_MAX][3];
    for (int k = 0; k < sch->n; k++) {
        if (sch->in_tokens[k] && tokens_per_sample <= 0)
            return tt_error_set(err, TT_EINPUT, "%s: $.convergence.batch_schedule[%d].tokens: the workload has no "
                                "sequence length; give \"samples\"", x->sc->path, k);
        int rc = plan_search_point(x, c, sch->global_batch[k], NULL, &ph[k], err);
        if (rc)
            return tt_error_prefix(err, "$.convergence.batch_schedule[%d] (global batch %ld): ", k,
                                   sch->global_batch[k]);
        steps_at(x, (double)sch->global_batch[k], phase_s[k]);
    }
    /* each quantile's sum reads the point's own figures of that quantile, then replaces them */
    double final_s[3] = {pt->steps_to_target, pt->steps_p10, pt->steps_p90};
    double *steps[3] = {&pt->steps_to_target, &pt->steps_p10, &pt->steps_p90};
    double *samples[3] = {&pt->samples_to_target, &pt->samples_p10, &pt->samples_p90};
    double *time_s[3] = {&pt->time_to_accuracy_s, &pt->time_to_accuracy_p10_s, &pt->time_to_accuracy_p90_s};
    cost *total[3] = {&pt->total, &pt->total_p10, &pt->total_p90};
    for (int q = 0; q < 3; q++) {
        double n, b, t;
        cost sum;
        schedule_sum(sch, ph, (const double(*)[3])phase_s, q, tokens_per_sample, pt, final_s[q], &n, &b, &t, &sum);
        *steps[q] = n;
        *samples[q] = b;
        *time_s[q] = t;
        *total[q] = sum;
    }
    if (x->sc->dataset_examples > 0)
        pt->epochs = pt->samples_to_target / x->sc->dataset_examples;
    return TT_OK;
}

int batch_schedule_point(const run_ctx *x, const cluster *c, long global_batch, link_usage *links, run_point *pt,
                         tt_error *err)
{
    int rc = plan_search_point(x, c, global_batch, links, pt, err);
    if (rc == TT_OK && !x->conv) /* a fixed number of steps: no samples to the target counted */
        point_failures(x, c, pt);
    if (rc || !x->conv)
        return rc;
    double b = (double)pt->global_batch;
    pt->samples_to_target = pt->steps_to_target * b;
    pt->samples_p10 = pt->steps_p10 * b;
    pt->samples_p90 = pt->steps_p90 * b;
    double tps = pt->tokens_per_sample > 0 ? pt->tokens_per_sample : convergence_tokens_per_sample(x->conv);
    pt->tokens_per_sample = tps;
    if (x->sc->schedule.n)
        rc = schedule_apply(x, c, tps, pt, err);
    if (rc == TT_OK)
        point_failures(x, c, pt);
    return rc;
}
