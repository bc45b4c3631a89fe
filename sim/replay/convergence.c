#include "sim/replay/convergence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/profile.h"

struct convergence {
    char source[600];
    char target[256];
    size_t n; /* reached points, by increasing batch */
    double *batch, *steps;
    int has_fit;
    double s_min, e_min, residual;
};

static convergence *alloc_conv(size_t n)
{
    convergence *c = calloc(1, sizeof *c);
    c->batch = calloc(n ? n : 1, sizeof *c->batch);
    c->steps = calloc(n ? n : 1, sizeof *c->steps);
    return c;
}

convergence *convergence_mccandlish(double s_min, double noise_scale)
{
    convergence *c = alloc_conv(0);
    c->has_fit = 1;
    c->s_min = s_min;
    c->e_min = s_min * noise_scale;
    snprintf(c->source, sizeof c->source, "McCandlish model, S_min %.6g, noise scale %.6g", s_min, noise_scale);
    snprintf(c->target, sizeof c->target, "the target S_min was measured for");
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

int convergence_load(const char *path, convergence **out, tt_error *err)
{
    *out = NULL;
    conv_profile p;
    int rc = profile_load(path, &p, err);
    if (rc)
        return rc;
    convergence *c = alloc_conv((size_t)p.npoints);
    for (int i = 0; i < p.npoints; i++) /* the reader keeps points sorted by batch */
        if (p.points[i].reached && p.points[i].steps > 0) {
            c->batch[c->n] = (double)p.points[i].batch;
            c->steps[c->n++] = (double)p.points[i].steps;
        }
    c->has_fit = p.fit.ok;
    c->s_min = p.fit.s_min;
    c->e_min = p.fit.e_min;
    c->residual = p.fit.residual;
    snprintf(c->source, sizeof c->source, "profile %s (%s, %s)", path, p.workload, p.optimizer);
    snprintf(c->target, sizeof c->target, "%s %g", p.metric, p.target);
    profile_free(&p);
    if (c->n == 0) {
        convergence_free(c);
        return tt_error_set(err, TT_EINPUT, "%s: $.points: no point reached the target; "
                            "steps to the target cannot be estimated from this profile", path);
    }
    *out = c;
    return TT_OK;
}

double convergence_steps(const convergence *c, double batch, int *extrapolated)
{
    *extrapolated = 0;
    if (c->n >= 1 && batch >= c->batch[0] && batch <= c->batch[c->n - 1]) {
        size_t i = 0;
        while (i + 1 < c->n && c->batch[i + 1] < batch)
            i++;
        if (c->batch[i] == batch || i + 1 == c->n)
            return c->steps[i];
        if (c->batch[i + 1] == batch)
            return c->steps[i + 1];
        double u = log(batch / c->batch[i]) / log(c->batch[i + 1] / c->batch[i]);
        return exp(log(c->steps[i]) + u * log(c->steps[i + 1] / c->steps[i]));
    }
    *extrapolated = c->n > 0;
    if (c->has_fit)
        return c->s_min + c->e_min / batch;
    size_t end = batch < c->batch[0] ? 0 : c->n - 1;
    return c->steps[end] * c->batch[end] / batch;
}

const char *convergence_source(const convergence *c)
{
    return c->source;
}

const char *convergence_target(const convergence *c)
{
    return c->target;
}

void convergence_fit_params(const convergence *c, double *s_min, double *e_min, double *b_crit,
                            double *residual)
{
    *s_min = c->has_fit ? c->s_min : 0;
    *e_min = c->has_fit ? c->e_min : 0;
    *b_crit = c->has_fit && c->s_min > 0 ? c->e_min / c->s_min : 0;
    *residual = c->has_fit ? c->residual : 0;
}
