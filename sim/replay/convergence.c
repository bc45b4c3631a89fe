#include "sim/replay/convergence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* z of the 90th percentile of a normal: the band is exp(-/+ z sd) around the median */
#define Z90 1.2815515655446004

struct convergence {
    char source[600];
    char target[256];
    char model[64], dataset[64], metric[32];
    double target_value;
    int has_profile;
    profile_recipe recipe;
    size_t n; /* reached points, by increasing batch */
    double *batch, *steps;
    int has_fit;
    double s_min, e_min, residual;
    double inv[3], rel_var;
    double run_sd;
    int run_sd_assumed;
    double interp_sd; /* RMS log error of each interior point interpolated from its neighbours */
    double failed_batch; /* the smallest unreached batch above every reached one (0: none) */
    int has_law;
    scaling_law_point law;
    double tokens_per_sample; /* the law's batches are in tokens */
};

static convergence *alloc_conv(size_t n)
{
    convergence *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->batch = calloc(n ? n : 1, sizeof *c->batch);
    c->steps = calloc(n ? n : 1, sizeof *c->steps);
    c->run_sd = CONVERGENCE_DEFAULT_RUN_SD;
    c->run_sd_assumed = 1;
    if (!c->batch || !c->steps) {
        free(c->batch);
        free(c->steps);
        free(c);
        return NULL;
    }
    return c;
}

convergence *convergence_mccandlish(double s_min, double noise_scale)
{
    convergence *c = alloc_conv(0);
    if (!c)
        return NULL;
    c->has_fit = 1;
    c->s_min = s_min;
    c->e_min = s_min * noise_scale;
    snprintf(c->source, sizeof c->source, "McCandlish model, S_min %.6g, noise scale %.6g", s_min, noise_scale);
    snprintf(c->target, sizeof c->target, "the target S_min was measured for");
    return c;
}

convergence *convergence_scaling_law(const scaling_law_point *law, double tokens_per_sample, double target_loss)
{
    convergence *c = alloc_conv(0);
    if (!c)
        return NULL;
    c->has_law = c->has_fit = 1;
    c->law = *law;
    c->tokens_per_sample = tokens_per_sample;
    c->s_min = law->s_min;
    c->e_min = law->e_min_tokens / tokens_per_sample;
    int chin = law->kind == SCALING_CHINCHILLA;
    snprintf(c->source, sizeof c->source,
             "scaling law %s (%s; N %.4g %s), critical batch of Kaplan et al. 2020: E_min %.4g tokens, B_crit %.4g "
             "tokens, S_min %.6g steps", SCALING_LAW_NAMES[law->kind],
             chin ? "Hoffmann et al. 2022, approach 3" : "Kaplan et al. 2020, L(N, D)", law->params,
             chin ? "parameters" : "non-embedding parameters", law->e_min_tokens, law->b_crit_tokens, law->s_min);
    snprintf(c->target, sizeof c->target, "loss %g nats/token (on the fit's data: %s)", target_loss,
             chin ? "MassiveText" : "WebText2");
    return c;
}

void convergence_free(convergence *c)
{
    if (!c)
        return;
    free(c->batch);
    free(c->steps);
    free(c);
}

/* log-log interpolation between points i and i+1 */
static double interpolate(double b0, double s0, double b1, double s1, double batch)
{
    double u = log(batch / b0) / log(b1 / b0);
    return exp(log(s0) + u * log(s1 / s0));
}

int convergence_from_profile(const conv_profile *p, const char *label, convergence **out, tt_error *err)
{
    *out = NULL;
    convergence *c = alloc_conv((size_t)p->npoints);
    if (!c)
        return tt_error_set(err, TT_EINTERNAL, "convergence: out of memory");
    for (int i = 0; i < p->npoints; i++) /* profiles keep points sorted by batch */
        if (p->points[i].reached && p->points[i].steps > 0) {
            c->batch[c->n] = (double)p->points[i].batch;
            c->steps[c->n++] = (double)p->points[i].steps;
        }
    for (int i = 0; c->n && i < p->npoints; i++)
        if (!p->points[i].reached && p->points[i].batch > c->batch[c->n - 1] &&
            (c->failed_batch == 0 || p->points[i].batch < c->failed_batch))
            c->failed_batch = (double)p->points[i].batch;
    if (c->n == 0) {
        convergence_free(c);
        return tt_error_set(err, TT_EINPUT, "%s: $.points: no point reached the target; "
                            "steps to the target cannot be estimated from this profile", label);
    }
    c->has_profile = 1;
    c->has_fit = p->fit.ok;
    c->s_min = p->fit.s_min;
    c->e_min = p->fit.e_min;
    c->residual = p->fit.residual;
    memcpy(c->inv, p->fit.inv, sizeof c->inv);
    c->rel_var = p->fit.rel_var;
    if (isfinite(p->run_log_sd)) {
        c->run_sd = p->run_log_sd;
        c->run_sd_assumed = 0;
    }
    double e2 = 0;
    for (size_t i = 1; i + 1 < c->n; i++) {
        double e = log(interpolate(c->batch[i - 1], c->steps[i - 1], c->batch[i + 1], c->steps[i + 1],
                                   c->batch[i]) / c->steps[i]);
        e2 += e * e;
    }
    c->interp_sd = c->n > 2 ? sqrt(e2 / (double)(c->n - 2)) : c->residual;
    c->recipe = p->recipe;
    snprintf(c->model, sizeof c->model, "%s", p->model);
    snprintf(c->dataset, sizeof c->dataset, "%s", p->dataset);
    snprintf(c->metric, sizeof c->metric, "%s", p->metric);
    c->target_value = p->target;
    snprintf(c->source, sizeof c->source, "profile %s (%s, %s)", label, p->model[0] ? p->model : "model not stated",
             p->recipe.optimizer);
    snprintf(c->target, sizeof c->target, "%s %g on %s", p->metric, p->target, p->dataset);
    *out = c;
    return TT_OK;
}

int convergence_load(const char *path, convergence **out, tt_error *err)
{
    *out = NULL;
    conv_profile p;
    int rc = profile_load(path, &p, err);
    if (rc)
        return rc;
    rc = convergence_from_profile(&p, path, out, err);
    profile_free(&p);
    return rc;
}

int convergence_match(const convergence *c, const convergence_request *want, const char *where,
                      char notes[CONVERGENCE_MAX_NOTES][512], int *nnotes, tt_error *err)
{
    *nnotes = 0;
    if (!c->has_profile)
        return TT_OK;
    if (!c->model[0]) {
        snprintf(notes[(*nnotes)++], 512,
                 "convergence.model = %s (the profile, an old format, names no model; its points are taken as "
                 "this model's)", want->model);
    } else if (strcmp(c->model, want->model) != 0) {
        if (!want->accept_model)
            return tt_error_set(err, TT_EINPUT,
                                "%s: $.convergence.profile: the profile is for model %s, the scenario's workload is "
                                "%s; use a profile of %s, or add \"model\" to $.convergence.accept to use it as a "
                                "named assumption",
                                where, c->model, want->model, want->model);
        snprintf(notes[(*nnotes)++], 512,
                 "convergence.model = %s's steps used for %s (accepted in the scenario: the models differ)", c->model,
                 want->model);
    }
    if (want->dataset && strcmp(c->dataset, want->dataset) != 0) {
        if (!want->accept_dataset)
            return tt_error_set(err, TT_EINPUT,
                                "%s: $.convergence.target.dataset: the scenario trains on %s, the profile on %s; use "
                                "a profile of %s, or add \"dataset\" to $.convergence.accept",
                                where, want->dataset, c->dataset, want->dataset);
        snprintf(notes[(*nnotes)++], 512, "convergence.dataset = steps measured on %s used for %s (accepted)",
                 c->dataset, want->dataset);
    }
    if (want->metric &&
        (strcmp(c->metric, want->metric) != 0 || fabs(c->target_value - want->target) > 1e-9 * fabs(want->target))) {
        if (!want->accept_target)
            return tt_error_set(err, TT_EINPUT,
                                "%s: $.convergence.target: the scenario asks for %s %g, the profile reaches %s %g; "
                                "use a profile for that target, or add \"target\" to $.convergence.accept to carry "
                                "the profile's steps as a named assumption",
                                where, want->metric, want->target, c->metric, c->target_value);
        snprintf(notes[(*nnotes)++], 512,
                 "convergence.target = %s %g asked, the profile's steps are to %s %g (accepted in the scenario: "
                 "the steps to the asked target may differ)",
                 want->metric, want->target, c->metric, c->target_value);
    }
    return TT_OK;
}

/* sd of ln(steps) of the fit at a batch: var(a + b x) = s^2 (1, x) inv (1, x)', where a
 * point's relative variance s^2 is the fit's own when it has spare points and exceeds
 * the run spread, else the run spread; plus the fit's RMS residual (the form's error). */
static double fit_sd(const convergence *c, double batch, double median)
{
    double x = 1 / batch, r2 = c->run_sd * c->run_sd;
    double s2 = isfinite(c->rel_var) && c->rel_var > r2 ? c->rel_var : r2;
    double v = s2 * (c->inv[0] + 2 * x * c->inv[1] + x * x * c->inv[2]);
    double rel = v > 0 ? sqrt(v) / median : 0;
    return sqrt(rel * rel + c->residual * c->residual);
}

/* sd of ln(steps) of the model at a batch, without the run spread */
static double model_sd(const convergence *c, double batch, double median, int extrapolated, size_t i)
{
    if (c->has_law)
        return scaling_law_ln_sd(&c->law, batch * c->tokens_per_sample);
    int fit = c->has_fit && c->has_profile;
    if (!extrapolated) {
        if (c->n < 2 || batch == c->batch[i] || (i + 1 < c->n && batch == c->batch[i + 1]))
            return 0;
        /* 0 at the points, full midway; interp_sd is measured over twice the gap, so
         * the fit's error bounds it where the fit is tighter */
        double u = log(batch / c->batch[i]) / log(c->batch[i + 1] / c->batch[i]);
        double sd = c->interp_sd * 2 * sqrt(u * (1 - u));
        return fit ? fmin(sd, fit_sd(c, batch, median)) : sd;
    }
    if (fit)
        return fit_sd(c, batch, median);
    double edge = batch < c->batch[0] ? c->batch[0] : c->batch[c->n - 1];
    return c->has_profile ? CONVERGENCE_SD_PER_EFOLD * fabs(log(batch / edge)) : 0;
}

convergence_estimate convergence_at(const convergence *c, double batch)
{
    convergence_estimate e = {0};
    size_t i = 0;
    if (c->n >= 1 && batch >= c->batch[0] && batch <= c->batch[c->n - 1]) {
        while (i + 1 < c->n && c->batch[i + 1] < batch)
            i++;
        if (c->batch[i] == batch || i + 1 == c->n)
            e.steps = c->steps[i];
        else if (c->batch[i + 1] == batch)
            e.steps = c->steps[i + 1];
        else
            e.steps = interpolate(c->batch[i], c->steps[i], c->batch[i + 1], c->steps[i + 1], batch);
    } else {
        e.extrapolated = c->n > 0;
        size_t end = c->n && batch < c->batch[0] ? 0 : c->n - 1;
        if (c->has_fit && c->n) /* the fit's shape from the nearest point: continuous there, whatever the residual */
            e.steps = c->steps[end] * (c->s_min + c->e_min / batch) / (c->s_min + c->e_min / c->batch[end]);
        else if (c->has_fit)
            e.steps = c->s_min + c->e_min / batch;
        else /* no critical batch in the points: the nearest point's examples (perfect scaling) */
            e.steps = c->steps[end] * c->batch[end] / batch;
    }
    if (c->failed_batch > 0 && batch >= c->failed_batch)
        e.failed_batch = c->failed_batch;
    double m = model_sd(c, batch, e.steps, e.extrapolated, i);
    e.log_sd = sqrt(c->run_sd * c->run_sd + m * m);
    e.p10 = e.steps * exp(-Z90 * e.log_sd);
    e.p90 = e.steps * exp(Z90 * e.log_sd);
    return e;
}

double convergence_run_sd(const convergence *c, int *assumed)
{
    *assumed = c->run_sd_assumed;
    return c->run_sd;
}

const char *convergence_source(const convergence *c)
{
    return c->source;
}

double convergence_tokens_per_sample(const convergence *c)
{
    return c->has_law ? c->tokens_per_sample : 0;
}

const char *convergence_target(const convergence *c)
{
    return c->target;
}

const profile_recipe *convergence_recipe(const convergence *c)
{
    return c->has_profile ? &c->recipe : NULL;
}

void convergence_fit_params(const convergence *c, double *s_min, double *e_min, double *b_crit,
                            double *residual)
{
    *s_min = c->has_fit ? c->s_min : 0;
    *e_min = c->has_fit ? c->e_min : 0;
    *b_crit = c->has_fit && c->s_min > 0 ? c->e_min / c->s_min : 0;
    *residual = c->has_fit ? c->residual : 0;
}
