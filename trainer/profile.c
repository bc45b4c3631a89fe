#include "trainer/profile.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/outfile.h"
#include "common/stats.h"
#include "trainer/model.h"

void profile_init(conv_profile *p, const char *model_name, const char *dataset, const char *optimizer,
                  const char *metric, double target)
{
    memset(p, 0, sizeof *p);
    p->version = PROFILE_VERSION;
    snprintf(p->model, sizeof p->model, "%s", model_name);
    snprintf(p->dataset, sizeof p->dataset, "%s", dataset);
    snprintf(p->recipe.optimizer, sizeof p->recipe.optimizer, "%s", optimizer);
    snprintf(p->metric, sizeof p->metric, "%s", metric);
    p->target = target;
    p->noise_scale = NAN;
    p->run_log_sd = NAN;
}

void profile_free(conv_profile *p)
{
    free(p->points);
    p->points = NULL;
    p->npoints = 0;
}

const profile_point *profile_find(const conv_profile *p, long batch)
{
    for (int i = 0; i < p->npoints; i++)
        if (p->points[i].batch == batch)
            return &p->points[i];
    return NULL;
}


/* The point from its runs: the median (an unreached run counts as slower than
 * any reached one, so an even count with one of the middle two unreached is
 * unreached) and the sd of ln(steps). */
static void summarise_runs(profile_point *pt, double dataset_examples)
{
    pt->log_sd = NAN;
    if (pt->nruns == 0)
        return;
    double s[PROFILE_MAX_RUNS];
    long budget = 0;
    int reached = 0;
    for (int i = 0; i < pt->nruns; i++) {
        const profile_run *r = &pt->runs[i];
        s[i] = r->reached ? (double)r->steps : INFINITY;
        reached += r->reached;
        if (!r->reached && r->steps > budget)
            budget = r->steps;
    }
    int n = pt->nruns;
    double med = stats_median(s, (size_t)n); /* an unreached run is +inf: sorts last */
    pt->reached = isfinite(med);
    pt->steps = pt->reached ? lround(med) : budget;
    pt->examples = (double)pt->steps * (double)pt->batch;
    if (dataset_examples > 0)
        pt->epochs = pt->examples / dataset_examples;
    if (reached == n && n >= 2) {
        double m = 0, v = 0;
        for (int i = 0; i < n; i++)
            m += log(s[i]) / n;
        for (int i = 0; i < n; i++)
            v += (log(s[i]) - m) * (log(s[i]) - m) / (n - 1);
        pt->log_sd = sqrt(v);
    }
}

int profile_put(conv_profile *p, const profile_point *pt, tt_error *err)
{
    int i = 0;
    while (i < p->npoints && p->points[i].batch < pt->batch)
        i++;
    if (i == p->npoints || p->points[i].batch != pt->batch) {
        profile_point *np = realloc(p->points, (size_t)(p->npoints + 1) * sizeof *np);
        if (!np)
            return tt_error_set(err, TT_EINTERNAL, "profile: out of memory");
        p->points = np;
        memmove(&np[i + 1], &np[i], (size_t)(p->npoints - i) * sizeof *np);
        p->npoints++;
    }
    p->points[i] = *pt;
    summarise_runs(&p->points[i], p->dataset_examples);
    return TT_OK;
}

int profile_add_run(conv_profile *p, const profile_point *pt, const profile_run *run, tt_error *err)
{
    const profile_point *old = profile_find(p, pt->batch);
    profile_point q = old ? *old : *pt;
    if (q.nruns == PROFILE_MAX_RUNS)
        return tt_error_set(err, TT_EINPUT, "profile: batch %ld already has %d runs, the most a point holds",
                            pt->batch, PROFILE_MAX_RUNS);
    q.runs[q.nruns++] = *run;
    return profile_put(p, &q, err);
}

void profile_point_range(const profile_point *pt, long *lo, long *hi)
{
    *lo = *hi = pt->steps;
    for (int k = 0; k < pt->nruns; k++) {
        *lo = k == 0 || pt->runs[k].steps < *lo ? pt->runs[k].steps : *lo;
        *hi = k == 0 || pt->runs[k].steps > *hi ? pt->runs[k].steps : *hi;
    }
}

int profile_remove(conv_profile *p, long batch)
{
    for (int i = 0; i < p->npoints; i++)
        if (p->points[i].batch == batch) {
            memmove(&p->points[i], &p->points[i + 1], (size_t)(p->npoints - i - 1) * sizeof *p->points);
            p->npoints--;
            return 1;
        }
    return 0;
}

int profile_add_source(conv_profile *p, const char *source)
{
    for (int i = 0; i < p->nsources; i++)
        if (strcmp(p->sources[i], source) == 0)
            return 0;
    if (p->nsources == PROFILE_MAX_SOURCES)
        return -1;
    snprintf(p->sources[p->nsources++], sizeof p->sources[0], "%s", source);
    return 0;
}

void profile_refit(conv_profile *p)
{
    /* normal equations of sum w (a + b x - S)^2 with x = 1/B, w = 1/S^2 */
    double sw = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
    int reached = 0; /* points have distinct batches (profile_put replaces) */
    for (int i = 0; i < p->npoints; i++) {
        const profile_point *pt = &p->points[i];
        if (!pt->reached || pt->steps <= 0)
            continue;
        reached++;
        double x = 1.0 / pt->batch, y = pt->steps, w = 1.0 / (y * y);
        sw += w, sx += w * x, sxx += w * x * x, sy += w * y, sxy += w * x * y;
    }
    memset(&p->fit, 0, sizeof p->fit);
    double det = sw * sxx - sx * sx;
    if (reached >= 2 && det > 0) {
        double a = (sxx * sy - sx * sxy) / det, b = (sw * sxy - sx * sy) / det;
        double r2 = 0;
        for (int i = 0; i < p->npoints; i++) {
            const profile_point *pt = &p->points[i];
            if (!pt->reached || pt->steps <= 0)
                continue;
            double e = (a + b / pt->batch - pt->steps) / pt->steps;
            r2 += e * e;
        }
        p->fit = (profile_fit){.ok = a > 0 && b > 0, .s_min = a, .e_min = b,
                               .b_crit = a > 0 ? b / a : NAN, .residual = sqrt(r2 / reached),
                               .inv = {sxx / det, -sx / det, sw / det},
                               .rel_var = reached > 2 ? r2 / (reached - 2) : NAN};
    }
    double ns[256], var = 0;
    int n = 0, dof = 0;
    for (int i = 0; i < p->npoints; i++) {
        const profile_point *pt = &p->points[i];
        if (isfinite(pt->noise_scale) && n < 256)
            ns[n++] = pt->noise_scale;
        if (isfinite(pt->log_sd)) { /* pooled over points: each adds nruns - 1 degrees of freedom */
            var += pt->log_sd * pt->log_sd * (pt->nruns - 1);
            dof += pt->nruns - 1;
        }
    }
    p->noise_scale = stats_median(ns, (size_t)n);
    p->run_log_sd = dof ? sqrt(var / dof) : NAN;
}

double profile_fit_steps(const profile_fit *f, long batch)
{
    return f->ok ? f->s_min * (1 + f->b_crit / batch) : NAN;
}

/* ---- writer ---- */

static void set_if_finite(json_t *o, const char *key, double x)
{
    if (isfinite(x))
        json_object_set_new(o, key, json_real(x));
}

static json_t *point_json(const profile_point *pt)
{
    json_t *o = json_pack("{s:I, s:I, s:f, s:f, s:b}", "batch", (json_int_t)pt->batch, "steps",
                          (json_int_t)pt->steps, "epochs", pt->epochs, "examples", pt->examples,
                          "reached", pt->reached);
    if (pt->lr > 0)
        json_object_set_new(o, "lr", json_real(pt->lr));
    if (pt->warmup_steps > 0)
        json_object_set_new(o, "warmup_steps", json_integer(pt->warmup_steps));
    json_object_set_new(o, "noise_scale", jx_real_or_null(pt->noise_scale));
    json_object_set_new(o, "data", json_string(pt->data));
    if (pt->source[0])
        json_object_set_new(o, "source", json_string(pt->source));
    if (pt->nruns) {
        json_t *runs = json_array();
        for (int i = 0; i < pt->nruns; i++) {
            const profile_run *r = &pt->runs[i];
            json_t *jr = json_pack("{s:I, s:b}", "steps", (json_int_t)r->steps, "reached", r->reached);
            if (r->seed)
                json_object_set_new(jr, "seed", json_integer((json_int_t)r->seed));
            set_if_finite(jr, "final_accuracy", r->final_accuracy);
            set_if_finite(jr, "train_loss", r->train_loss);
            set_if_finite(jr, "test_loss", r->test_loss);
            json_array_append_new(runs, jr);
        }
        json_object_set_new(o, "runs", runs);
        json_object_set_new(o, "log_sd", jx_real_or_null(pt->log_sd));
    }
    return o;
}

int profile_save(const conv_profile *p, const char *path, tt_error *err)
{
    json_t *pts = json_array();
    for (int i = 0; i < p->npoints; i++)
        json_array_append_new(pts, point_json(&p->points[i]));
    json_t *fit = p->fit.ok ? json_pack("{s:f, s:f, s:f, s:f}", "s_min", p->fit.s_min, "e_min",
                                        p->fit.e_min, "b_crit", p->fit.b_crit, "residual",
                                        p->fit.residual)
                            : json_null();
    json_t *src = json_array();
    for (int i = 0; i < p->nsources; i++)
        json_array_append_new(src, json_string(p->sources[i]));
    const profile_recipe *r = &p->recipe;
    json_t *recipe = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "optimizer", r->optimizer,
                               "hyperparameters", r->hyperparameters, "schedule", r->schedule,
                               "warmup", r->warmup, "regularisation", r->regularisation,
                               "precision", r->precision);
    json_t *doc = json_pack("{s:s, s:i, s:s, s:s, s:f, s:o, s:{s:s, s:f}, s:o, s:o, s:o, s:o, s:o}",
                            "format", PROFILE_FORMAT, "version", PROFILE_VERSION, "model", p->model,
                            "dataset", p->dataset, "dataset_examples", p->dataset_examples,
                            "recipe", recipe, "target", "metric", p->metric, "value", p->target,
                            "points", pts, "fit", fit, "noise_scale", jx_real_or_null(p->noise_scale),
                            "run_log_sd", jx_real_or_null(p->run_log_sd), "sources", src);
    /* written whole or not at all, so an interrupted sweep never leaves half a
     * file; it may be the profile the sweep resumed from */
    FILE *f;
    outfile *o;
    int rc = outfile_open_update(path, "the profile", &o, &f, err);
    if (rc == TT_OK) {
        json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        rc = outfile_commit(o, err);
    }
    json_decref(doc);
    return rc;
}

/* ---- reader ---- */

/* A number, or null / absent meaning "not measured" (NAN). */
static int number_or_null(const jx_obj *o, const char *key, double lo, double hi, double *out)
{
    json_t *v = json_object_get(o->obj, key);
    *out = NAN;
    if (!v || json_is_null(v))
        return TT_OK;
    return jx_number(o, key, 0, lo, hi, out);
}

static int copy_string(const jx_obj *o, const char *key, int required, char *dst, size_t n)
{
    const char *s = NULL;
    int rc = jx_string(o, key, required, &s);
    if (rc == TT_OK && s) {
        if (strlen(s) >= n)
            return tt_error_set(o->err, TT_EINPUT, "%s: %s.%s: longer than %zu characters",
                                o->file, o->path, key, n - 1);
        snprintf(dst, n, "%s", s);
    }
    return rc;
}

static int load_run(const jx_obj *pt, size_t i, profile_run *r)
{
    static const char *const keys[] = {"steps", "reached", "seed", "final_accuracy", "train_loss",
                                       "test_loss", NULL};
    jx_obj e;
    long seed = 0;
    int rc;
    if ((rc = jx_elem(pt, "runs", i, &e)) || (rc = jx_check_keys(&e, keys)) ||
        (rc = jx_int(&e, "steps", 1, 1, 1L << 50, &r->steps)) ||
        (rc = jx_bool(&e, "reached", 1, &r->reached)) ||
        (rc = jx_int(&e, "seed", 0, 0, 1L << 62, &seed)) ||
        (rc = number_or_null(&e, "final_accuracy", 0, 1e300, &r->final_accuracy)) ||
        (rc = number_or_null(&e, "train_loss", 0, 1e300, &r->train_loss)) ||
        (rc = number_or_null(&e, "test_loss", 0, 1e300, &r->test_loss)))
        return rc;
    r->seed = (uint64_t)seed;
    return TT_OK;
}

/* Reads element i into p->points[i] (unsorted; profile_load sorts once). */
static int load_point(const jx_obj *o, size_t i, conv_profile *p)
{
    static const char *const keys[] = {"batch", "steps", "epochs", "examples", "reached", "lr",
                                       "warmup_steps", "noise_scale", "data", "source", "runs",
                                       "log_sd", NULL};
    jx_obj e;
    profile_point pt;
    memset(&pt, 0, sizeof pt);
    pt.noise_scale = NAN;
    long batch = 0, steps = 0;
    size_t nruns = 0;
    double ignored;
    int rc;
    if ((rc = jx_elem(o, "points", i, &e)) || (rc = jx_check_keys(&e, keys)) ||
        (rc = jx_int(&e, "batch", 1, 1, 1L << 40, &batch)) ||
        (rc = jx_int(&e, "steps", 1, 0, 1L << 50, &steps)) ||
        (rc = jx_number(&e, "epochs", 1, 0, 1e12, &pt.epochs)) ||
        (rc = jx_number(&e, "examples", 1, 0, 1e18, &pt.examples)) ||
        (rc = jx_bool(&e, "reached", 1, &pt.reached)) ||
        (rc = jx_number(&e, "lr", 0, 0, 1e6, &pt.lr)) ||
        (rc = jx_int(&e, "warmup_steps", 0, 0, 1L << 50, &pt.warmup_steps)) ||
        (rc = number_or_null(&e, "noise_scale", 0, 1e300, &pt.noise_scale)) ||
        (rc = copy_string(&e, "data", 0, pt.data, sizeof pt.data)) ||
        (rc = copy_string(&e, "source", 0, pt.source, sizeof pt.source)) ||
        (rc = number_or_null(&e, "log_sd", 0, 1e3, &ignored)) || /* derived from runs */
        (rc = jx_array(&e, "runs", 0, &nruns)))
        return rc;
    if (nruns > PROFILE_MAX_RUNS)
        return tt_error_set(o->err, TT_EINPUT, "%s: %s.runs: %zu runs, at most %d per point; keep the first %d",
                            o->file, e.path, nruns, PROFILE_MAX_RUNS, PROFILE_MAX_RUNS);
    for (size_t k = 0; k < nruns; k++)
        if ((rc = load_run(&e, k, &pt.runs[k])))
            return rc;
    pt.nruns = (int)nruns;
    pt.batch = batch, pt.steps = steps;
    p->points[i] = pt;
    summarise_runs(&p->points[i], p->dataset_examples);
    return TT_OK;
}

/* A point and its position in the file, sorted by batch then position. */
typedef struct ranked_point {
    long batch;
    size_t at;
} ranked_point;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked_point *x = a, *y = b;
    if (x->batch != y->batch)
        return (x->batch > y->batch) - (x->batch < y->batch);
    return (x->at > y->at) - (x->at < y->at);
}

/* Sorts the n points by batch in one pass (a sorted insert per point was
 * quadratic: 13.6 s for 100 k); a repeated batch names its second entry. */
static int sort_points(conv_profile *p, size_t n, const char *path, tt_error *err)
{
    ranked_point *r = malloc((n ? n : 1) * sizeof *r);
    profile_point *sorted = malloc((n ? n : 1) * sizeof *sorted);
    int rc = TT_OK;
    if (!r || !sorted) {
        rc = tt_error_set(err, TT_EINTERNAL, "profile: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        r[i] = (ranked_point){p->points[i].batch, i};
    qsort(r, n, sizeof *r, cmp_ranked);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && r[i].batch == r[i - 1].batch) {
            rc = tt_error_set(err, TT_EINPUT, "%s: $.points[%zu]: batch %ld appears twice; keep one "
                                              "entry", path, r[i].at, r[i].batch);
            goto done;
        }
        sorted[i] = p->points[r[i].at];
    }
    free(p->points);
    p->points = sorted;
    sorted = NULL;
done:
    free(r);
    free(sorted);
    return rc;
}

/* Version 1 named a workload "DATASET-MODEL" and only the optimizer of its
 * recipe: the model is the longest zoo name it ends with. */
static void migrate_v1(conv_profile *p, const char *workload, const char *optimizer)
{
    size_t n = strlen(workload), best = 0;
    for (int i = 0; model_zoo_name(i); i++) {
        const char *name = model_zoo_name(i);
        size_t m = strlen(name);
        if (m < n && m > best && workload[n - m - 1] == '-' && strcmp(workload + n - m, name) == 0)
            best = m;
    }
    snprintf(p->model, sizeof p->model, "%s", best ? workload + n - best : "");
    snprintf(p->dataset, sizeof p->dataset, "%.*s", (int)(best ? n - best - 1 : n), workload);
    snprintf(p->recipe.optimizer, sizeof p->recipe.optimizer, "%s", optimizer);
    const char *unstated = "not stated (version 1 profile)";
    profile_recipe *r = &p->recipe;
    snprintf(r->hyperparameters, sizeof r->hyperparameters, "%s", unstated);
    snprintf(r->schedule, sizeof r->schedule, "%s", unstated);
    snprintf(r->warmup, sizeof r->warmup, "%s", unstated);
    snprintf(r->regularisation, sizeof r->regularisation, "%s", unstated);
    snprintf(r->precision, sizeof r->precision, "%s", unstated);
}

static int load_recipe(const jx_obj *o, profile_recipe *r)
{
    static const char *const keys[] = {"optimizer", "hyperparameters", "schedule", "warmup",
                                       "regularisation", "precision", NULL};
    jx_obj c;
    int rc;
    if ((rc = jx_child(o, "recipe", 1, &c)) || (rc = jx_check_keys(&c, keys)) ||
        (rc = copy_string(&c, "optimizer", 1, r->optimizer, sizeof r->optimizer)) ||
        (rc = copy_string(&c, "hyperparameters", 1, r->hyperparameters, sizeof r->hyperparameters)) ||
        (rc = copy_string(&c, "schedule", 1, r->schedule, sizeof r->schedule)) ||
        (rc = copy_string(&c, "warmup", 1, r->warmup, sizeof r->warmup)) ||
        (rc = copy_string(&c, "regularisation", 1, r->regularisation, sizeof r->regularisation)) ||
        (rc = copy_string(&c, "precision", 1, r->precision, sizeof r->precision)))
        return rc;
    return TT_OK;
}

int profile_load(const char *path, conv_profile *p, tt_error *err)
{
    static const char *const keys_v1[] = {"format", "version", "workload", "optimizer", "target",
                                          "points", "fit", "noise_scale", "sources", NULL};
    static const char *const keys_v2[] = {"format", "version", "model", "dataset", "dataset_examples",
                                          "recipe", "target", "points", "fit", "noise_scale",
                                          "run_log_sd", "sources", NULL};
    static const char *const target_keys[] = {"metric", "value", NULL};
    json_t *root = NULL;
    int rc = jx_load_file(path, &root, err);
    if (rc)
        return rc;
    profile_init(p, "", "", "", "", 0);
    jx_obj o, t;
    const char *format = NULL, *workload = NULL, *optimizer = NULL;
    long version = 0;
    size_t n = 0;
    if ((rc = jx_root(&o, path, root, err)) || (rc = jx_string(&o, "format", 1, &format)))
        goto done;
    if (strcmp(format, PROFILE_FORMAT) != 0) {
        rc = tt_error_set(err, TT_EINPUT, "%s: $.format: expected \"%s\", found \"%s\"", path,
                          PROFILE_FORMAT, format);
        goto done;
    }
    if ((rc = jx_int(&o, "version", 1, 1, PROFILE_VERSION, &version)))
        goto done;
    p->version = (int)version;
    if (version == 1) {
        if ((rc = jx_check_keys(&o, keys_v1)) || (rc = jx_string(&o, "workload", 1, &workload)) ||
            (rc = jx_string(&o, "optimizer", 1, &optimizer)))
            goto done;
        migrate_v1(p, workload, optimizer);
    } else if ((rc = jx_check_keys(&o, keys_v2)) ||
               (rc = copy_string(&o, "model", 1, p->model, sizeof p->model)) ||
               (rc = copy_string(&o, "dataset", 1, p->dataset, sizeof p->dataset)) ||
               (rc = jx_number(&o, "dataset_examples", 0, 0, 1e18, &p->dataset_examples)) ||
               (rc = load_recipe(&o, &p->recipe))) {
        goto done;
    }
    if ((rc = jx_child(&o, "target", 1, &t)) || (rc = jx_check_keys(&t, target_keys)) ||
        (rc = copy_string(&t, "metric", 1, p->metric, sizeof p->metric)) ||
        (rc = jx_number(&t, "value", 1, 0, 1e300, &p->target)) ||
        (rc = jx_array(&o, "points", 1, &n)))
        goto done;
    p->points = calloc(n ? n : 1, sizeof *p->points);
    if (!p->points) {
        rc = tt_error_set(err, TT_EINTERNAL, "profile: out of memory for %zu points", n);
        goto done;
    }
    p->npoints = (int)n;
    for (size_t i = 0; i < n && !rc; i++)
        rc = load_point(&o, i, p);
    if (rc || (rc = sort_points(p, n, path, err)))
        goto done;
    json_t *src = json_object_get(root, "sources");
    for (size_t i = 0; src && i < json_array_size(src); i++) {
        const char *s = json_string_value(json_array_get(src, i));
        if (!s || profile_add_source(p, s) != 0) {
            rc = tt_error_set(err, TT_EINPUT,
                              "%s: $.sources[%zu]: expected a string (at most %d sources)", path,
                              i, PROFILE_MAX_SOURCES);
            goto done;
        }
    }
    if (src && !json_is_array(src))
        rc = tt_error_set(err, TT_EINPUT, "%s: $.sources: expected an array of strings", path);
    else
        profile_refit(p); /* fit, noise_scale and spreads are derived: recomputed, not trusted */
done:
    json_decref(root);
    if (rc)
        profile_free(p);
    return rc;
}
