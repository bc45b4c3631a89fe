#include "sim/convergence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"

struct convergence {
    char source[512];
    char target[256];
    size_t n; /* reached points, by increasing batch */
    double *batch, *steps;
    double s_min, e_min, residual;
};

void convergence_fit(const double *batch, const double *steps, size_t n, double *s_min,
                     double *e_min, double *residual)
{
    /* Minimise sum ((a + c x - S) / S)^2 with x = 1/B: normal equations in (a, c). */
    double saa = 0, sac = 0, scc = 0, sa = 0, sc = 0;
    for (size_t i = 0; i < n; i++) {
        double w = 1 / (steps[i] * steps[i]), x = 1 / batch[i];
        saa += w;
        sac += w * x;
        scc += w * x * x;
        sa += w * steps[i];
        sc += w * x * steps[i];
    }
    double det = saa * scc - sac * sac;
    double a = 0, c = sc / scc;
    if (n > 1 && fabs(det) > 1e-12 * saa * scc) {
        a = (sa * scc - sac * sc) / det;
        c = (saa * sc - sac * sa) / det;
    }
    if (a < 0) { /* perfect scaling over the range: no S_min visible */
        a = 0;
        c = sc / scc;
    }
    double r2 = 0;
    for (size_t i = 0; i < n; i++) {
        double rel = (a + c / batch[i]) / steps[i] - 1;
        r2 += rel * rel;
    }
    *s_min = a;
    *e_min = c;
    *residual = sqrt(r2 / (double)n);
}

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
    c->s_min = s_min;
    c->e_min = s_min * noise_scale;
    snprintf(c->source, sizeof c->source, "McCandlish model, S_min %.6g, noise scale %.6g", s_min, noise_scale);
    snprintf(c->target, sizeof c->target, "(as S_min was measured)");
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

static int load_points(const jx_obj *r, convergence *c, tt_error *err)
{
    size_t n;
    int rc = jx_array(r, "points", 1, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        jx_obj p;
        double b = 0, s = 0, x;
        int reached = 1;
        if ((rc = jx_elem(r, "points", i, &p)) || (rc = jx_number(&p, "batch", 1, 1, 1e9, &b)) ||
            (rc = jx_number(&p, "steps", 1, 0, 1e12, &s)) || (rc = jx_bool(&p, "reached", 1, &reached)) ||
            (rc = jx_number(&p, "epochs", 1, 0, 1e12, &x)) || (rc = jx_number(&p, "examples", 1, 0, 1e18, &x)))
            return rc;
        if (!reached)
            continue; /* a run that missed the target bounds nothing from above */
        if (s < 1)
            return tt_error_set(err, TT_EINPUT, "%s: %s.steps: a reached point needs at least 1 step, found %g",
                                r->file, p.path, s);
        size_t k = c->n++;
        while (k > 0 && c->batch[k - 1] > b) { /* insertion by batch */
            c->batch[k] = c->batch[k - 1];
            c->steps[k] = c->steps[k - 1];
            k--;
        }
        if (k > 0 && c->batch[k - 1] == b)
            return tt_error_set(err, TT_EINPUT, "%s: %s.batch: two reached points at batch %g; keep one",
                                r->file, p.path, b);
        c->batch[k] = b;
        c->steps[k] = s;
    }
    if (c->n == 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.points: no point reached the target; "
                            "steps to target cannot be estimated", r->file);
    return TT_OK;
}

static int load_profile(const jx_obj *r, convergence *c, tt_error *err)
{
    static const char *const keys[] = {"format", "version", "workload", "optimizer", "target", "points",
                                       "fit", "noise_scale", "sources", "description", "assumptions", NULL};
    static const char *const tkeys[] = {"metric", "value", NULL};
    static const char *const fkeys[] = {"s_min", "e_min", "b_crit", "residual", NULL};
    const char *format, *workload, *optimizer, *metric;
    long version;
    double value, x;
    jx_obj t, f;
    int rc;
    if ((rc = jx_check_keys(r, keys)) || (rc = jx_string(r, "format", 1, &format)))
        return rc;
    if (strcmp(format, "ttasim-convergence-profile") != 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.format: expected \"ttasim-convergence-profile\", found \"%s\"",
                            r->file, format);
    if ((rc = jx_int(r, "version", 1, CONVERGENCE_VERSION, CONVERGENCE_VERSION, &version)) ||
        (rc = jx_string(r, "workload", 1, &workload)) || (rc = jx_string(r, "optimizer", 1, &optimizer)) ||
        (rc = jx_child(r, "target", 1, &t)) || (rc = jx_check_keys(&t, tkeys)) ||
        (rc = jx_string(&t, "metric", 1, &metric)) || (rc = jx_number(&t, "value", 1, -1e300, 1e300, &value)) ||
        (rc = load_points(r, c, err)))
        return rc;
    f.obj = NULL; /* "fit": null when the sweep had fewer than two reached batches */
    if (!json_is_null(json_object_get(r->obj, "fit")) && (rc = jx_child(r, "fit", 0, &f)))
        return rc;
    snprintf(c->source, sizeof c->source, "profile %s (%s, %s)", r->file, workload, optimizer);
    snprintf(c->target, sizeof c->target, "%s %g", metric, value);
    if (!f.obj) {
        convergence_fit(c->batch, c->steps, c->n, &c->s_min, &c->e_min, &c->residual);
        return TT_OK;
    }
    if ((rc = jx_check_keys(&f, fkeys)) || (rc = jx_number(&f, "s_min", 1, 0, 1e12, &c->s_min)) ||
        (rc = jx_number(&f, "e_min", 1, 0, 1e18, &c->e_min)) ||
        (rc = jx_number(&f, "b_crit", 0, 0, 1e18, &x)) ||
        (rc = jx_number(&f, "residual", 0, 0, 1e9, &c->residual)))
        return rc;
    if (c->s_min <= 0 && c->e_min <= 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.fit: s_min and e_min are both 0; give a fit or remove it",
                            r->file);
    return TT_OK;
}

int convergence_load(const char *path, convergence **out, tt_error *err)
{
    *out = NULL;
    json_t *root = NULL;
    int rc = jx_load_file(path, &root, err);
    if (rc)
        return rc;
    convergence *c = alloc_conv(json_array_size(json_object_get(root, "points")));
    jx_obj r;
    if ((rc = jx_root(&r, path, root, err)) == TT_OK)
        rc = load_profile(&r, c, err);
    json_decref(root);
    if (rc) {
        convergence_free(c);
        return rc;
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
    return c->s_min + c->e_min / batch;
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
    *s_min = c->s_min;
    *e_min = c->e_min;
    *b_crit = c->s_min > 0 ? c->e_min / c->s_min : 0;
    *residual = c->residual;
}
