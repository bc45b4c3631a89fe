#include "trainer/profile.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"

void profile_init(conv_profile *p, const char *workload, const char *optimizer,
                  const char *metric, double target)
{
    memset(p, 0, sizeof *p);
    snprintf(p->workload, sizeof p->workload, "%s", workload);
    snprintf(p->optimizer, sizeof p->optimizer, "%s", optimizer);
    snprintf(p->metric, sizeof p->metric, "%s", metric);
    p->target = target;
    p->noise_scale = NAN;
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

int profile_put(conv_profile *p, const profile_point *pt, tt_error *err)
{
    int i = 0;
    while (i < p->npoints && p->points[i].batch < pt->batch)
        i++;
    if (i < p->npoints && p->points[i].batch == pt->batch) {
        p->points[i] = *pt;
        return TT_OK;
    }
    profile_point *np = realloc(p->points, (size_t)(p->npoints + 1) * sizeof *np);
    if (!np)
        return tt_error_set(err, TT_EINTERNAL, "profile: out of memory");
    p->points = np;
    memmove(&np[i + 1], &np[i], (size_t)(p->npoints - i) * sizeof *np);
    np[i] = *pt;
    p->npoints++;
    return TT_OK;
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
        int n = 0;
        for (int i = 0; i < p->npoints; i++) {
            const profile_point *pt = &p->points[i];
            if (!pt->reached || pt->steps <= 0)
                continue;
            double e = (a + b / pt->batch - pt->steps) / pt->steps;
            r2 += e * e, n++;
        }
        p->fit = (profile_fit){.ok = a > 0 && b > 0, .s_min = a, .e_min = b,
                               .b_crit = a > 0 ? b / a : NAN, .residual = sqrt(r2 / n)};
    }
    double ns[256];
    int n = 0;
    for (int i = 0; i < p->npoints && n < 256; i++)
        if (isfinite(p->points[i].noise_scale))
            ns[n++] = p->points[i].noise_scale;
    qsort(ns, (size_t)n, sizeof ns[0], cmp_double);
    p->noise_scale = n == 0 ? NAN : n % 2 ? ns[n / 2] : 0.5 * (ns[n / 2 - 1] + ns[n / 2]);
}

double profile_fit_steps(const profile_fit *f, long batch)
{
    return f->ok ? f->s_min * (1 + f->b_crit / batch) : NAN;
}

int profile_save(const conv_profile *p, const char *path, tt_error *err)
{
    json_t *pts = json_array();
    for (int i = 0; i < p->npoints; i++) {
        const profile_point *pt = &p->points[i];
        json_array_append_new(
            pts, json_pack("{s:I, s:I, s:f, s:f, s:b, s:f, s:I, s:o, s:s}", "batch",
                           (json_int_t)pt->batch, "steps", (json_int_t)pt->steps, "epochs",
                           pt->epochs, "examples", pt->examples, "reached", pt->reached, "lr",
                           pt->lr, "warmup_steps", (json_int_t)pt->warmup_steps, "noise_scale",
                           jx_real_or_null(pt->noise_scale), "data", pt->data));
    }
    json_t *fit = p->fit.ok ? json_pack("{s:f, s:f, s:f, s:f}", "s_min", p->fit.s_min, "e_min",
                                        p->fit.e_min, "b_crit", p->fit.b_crit, "residual",
                                        p->fit.residual)
                            : json_null();
    json_t *src = json_array();
    for (int i = 0; i < p->nsources; i++)
        json_array_append_new(src, json_string(p->sources[i]));
    json_t *doc = json_pack("{s:s, s:i, s:s, s:s, s:{s:s, s:f}, s:o, s:o, s:o, s:o}", "format",
                            PROFILE_FORMAT, "version", PROFILE_VERSION, "workload", p->workload,
                            "optimizer", p->optimizer, "target", "metric", p->metric, "value",
                            p->target, "points", pts, "fit", fit, "noise_scale",
                            jx_real_or_null(p->noise_scale), "sources", src);
    /* write to a temporary name and rename, so an interrupted sweep never leaves half a file */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int rc = json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(doc);
    if (rc != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return tt_error_set(err, TT_EINPUT, "%s: cannot write the profile; check the directory exists and is writable",
                            path);
    }
    return TT_OK;
}

/* A number, or null meaning "not measured" (NAN). */
static int number_or_null(const jx_obj *o, const char *key, double *out)
{
    json_t *v = json_object_get(o->obj, key);
    *out = NAN;
    if (!v || json_is_null(v))
        return TT_OK;
    return jx_number(o, key, 0, 0, 1e300, out);
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

/* Reads element i into p->points[i] (unsorted; profile_load sorts once). */
static int load_point(const jx_obj *o, const char *key, size_t i, conv_profile *p)
{
    static const char *const keys[] = {"batch", "steps", "epochs", "examples", "reached", "lr",
                                       "warmup_steps", "noise_scale", "data", NULL};
    jx_obj e;
    profile_point pt = {.noise_scale = NAN};
    long batch = 0, steps = 0;
    int rc;
    if ((rc = jx_elem(o, key, i, &e)) || (rc = jx_check_keys(&e, keys)) ||
        (rc = jx_int(&e, "batch", 1, 1, 1L << 40, &batch)) ||
        (rc = jx_int(&e, "steps", 1, 0, 1L << 50, &steps)) ||
        (rc = jx_number(&e, "epochs", 1, 0, 1e12, &pt.epochs)) ||
        (rc = jx_number(&e, "examples", 1, 0, 1e18, &pt.examples)) ||
        (rc = jx_bool(&e, "reached", 1, &pt.reached)) ||
        (rc = jx_number(&e, "lr", 0, 0, 1e6, &pt.lr)) ||
        (rc = jx_int(&e, "warmup_steps", 0, 0, 1L << 50, &pt.warmup_steps)) ||
        (rc = number_or_null(&e, "noise_scale", &pt.noise_scale)) ||
        (rc = copy_string(&e, "data", 0, pt.data, sizeof pt.data)))
        return rc;
    pt.batch = batch, pt.steps = steps;
    p->points[i] = pt;
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

int profile_load(const char *path, conv_profile *p, tt_error *err)
{
    static const char *const keys[] = {"format", "version", "workload", "optimizer", "target",
                                       "points", "fit", "noise_scale", "sources", NULL};
    static const char *const target_keys[] = {"metric", "value", NULL};
    json_t *root = NULL;
    int rc = jx_load_file(path, &root, err);
    if (rc)
        return rc;
    profile_init(p, "", "", "", 0);
    jx_obj o, t;
    const char *format = NULL;
    long version = 0;
    size_t n = 0;
    if ((rc = jx_root(&o, path, root, err)) || (rc = jx_check_keys(&o, keys)) ||
        (rc = jx_string(&o, "format", 1, &format)))
        goto done;
    if (strcmp(format, PROFILE_FORMAT) != 0) {
        rc = tt_error_set(err, TT_EINPUT, "%s: $.format: expected \"%s\", found \"%s\"", path,
                          PROFILE_FORMAT, format);
        goto done;
    }
    if ((rc = jx_int(&o, "version", 1, PROFILE_VERSION, PROFILE_VERSION, &version)) ||
        (rc = copy_string(&o, "workload", 1, p->workload, sizeof p->workload)) ||
        (rc = copy_string(&o, "optimizer", 1, p->optimizer, sizeof p->optimizer)) ||
        (rc = jx_child(&o, "target", 1, &t)) || (rc = jx_check_keys(&t, target_keys)) ||
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
        rc = load_point(&o, "points", i, p);
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
        profile_refit(p); /* fit and noise_scale are derived: recomputed, not trusted */
done:
    json_decref(root);
    if (rc)
        profile_free(p);
    return rc;
}
