#include "sim/report/expect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "sim/report/coll_report.h"
#include "sim/report/report.h"

/* A blank point with every block report_json writes only sometimes turned on
 * (model, context and expert parallelism, a host input pipeline, host embeddings, CPU ranks, model-
 * parallel tables in the most groups, a scaling efficiency). The step is 1 s:
 * the writer divides by it. */
static void blank_point(run_point *p)
{
    p->step.time_s = 1;
    p->step.input_s = 1;
    p->parallel[LAYOUT_DATA] = 1;
    p->parallel[LAYOUT_CONTEXT] = 2;
    p->parallel[LAYOUT_EXPERT] = 2;
    p->host.forward_s = 1;
    p->cpu_ranks = 1;
    p->n_tables = 1;
    p->mix.n_groups = SHARD_MAX_GROUPS;
    for (int g = 0; g < SHARD_MAX_GROUPS; g++)
        p->mix.max_rows[g] = 1;
    p->scaling_efficiency = 1;
    p->samples_to_target = p->tokens_per_sample = 1; /* a language model's tokens to the target */
    p->nodes = p->ranks = 1;
    p->global_batch = 1;
    p->time_to_accuracy_s = 1;
}

json_t *expect_outputs(const scenario *sc)
{
    if (sc->is_collective) {
        coll_scenario_result c;
        memset(&c, 0, sizeof c);
        return coll_report_json(sc, &c);
    }
    run_result *r = calloc(1, sizeof *r);
    run_point *pt = calloc(2, sizeof *pt);
    json_t *doc = NULL;
    if (r && pt) {
        blank_point(&r->base);
        blank_point(&pt[0]);
        blank_point(&pt[1]);
        pt[1].nodes = pt[1].ranks = 2; /* a second size: the scaling table's rows (scaling.h) */
        /* failures and stragglers as the scenario asks */
        r->base.res.on = pt[0].res.on = pt[1].res.on = sc->resilience.failures;
        r->base.res.straggler_s = pt[0].res.straggler_s = pt[1].res.straggler_s = sc->resilience.straggler_cv;
        r->has_recipe = 1;
        r->links_shown = LINK_USAGE_MAX; /* --links N at its most */
        r->links.n = LINK_USAGE_MAX;
        r->links.n_classes = LINK_CLASSES_MAX;
        size_t n = run_sweep_points(sc);
        r->n_points = n == 0 ? 0 : sc->n_sweep_nodes > 1 && sc->n_sweep_paths == 0 ? 2 : 1;
        r->points = pt;
        doc = report_json(sc, r);
        /* the sweep's points all have one point's keys: the first stands for every one */
        json_t *sweep = json_object_get(doc, "sweep");
        for (size_t i = r->n_points; sweep && i < n; i++)
            json_array_append(sweep, json_array_get(sweep, 0));
        json_t *scaling = json_object_get(doc, "scaling"); /* a row per node count, the second for the rest */
        for (size_t i = 2; scaling && i < sc->n_sweep_nodes; i++)
            json_array_append(scaling, json_array_get(scaling, 1));
    }
    free(pt);
    free(r);
    return doc;
}

/* The number paths under v (arrays by their first element, "[0]"), each
 * null made 0 so that report_lookup finds it. */
static void number_paths(json_t *v, const char *prefix, char ***paths, size_t *n, size_t *cap)
{
    char path[256];
    if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", key);
            if (json_is_null(child)) /* a key's new value keeps the iteration's place */
                json_object_iter_set_new(v, json_object_key_to_iter(key), child = json_real(0));
            number_paths(child, path, paths, n, cap);
        }
        return;
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (json_is_null(json_array_get(v, i)))
                json_array_set_new(v, i, json_real(0));
        if (json_array_size(v) > 0) {
            snprintf(path, sizeof path, "%s[0]", prefix);
            number_paths(json_array_get(v, 0), path, paths, n, cap);
        }
        return;
    }
    if (!json_is_number(v))
        return;
    if (*n + 1 >= *cap) {
        *cap = *cap ? 2 * *cap : 256;
        *paths = realloc(*paths, *cap * sizeof **paths);
    }
    (*paths)[(*n)++] = strdup(prefix);
    (*paths)[*n] = NULL;
}

/* path with every array index made [0], the indexes kept in order. */
static size_t first_indexes(const char *path, char *out, size_t out_bytes, long *idx, size_t max_idx)
{
    size_t k = 0, o = 0;
    for (const char *p = path; *p && o + 4 < out_bytes; p++) {
        char *end;
        long i;
        if (*p == '[' && (i = strtol(p + 1, &end, 10), end > p + 1 && *end == ']')) {
            if (k < max_idx)
                idx[k] = i;
            k++;
            o += (size_t)snprintf(out + o, out_bytes - o, "[0]");
            p = end;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return k;
}

/* near with its [0]s replaced by the indexes the user wrote, in order. */
static void with_indexes(const char *near, const long *idx, size_t k, char *out, size_t out_bytes)
{
    size_t j = 0, o = 0;
    for (const char *p = near; *p && o + 24 < out_bytes; p++) {
        if (strncmp(p, "[0]", 3) == 0 && j < k) {
            o += (size_t)snprintf(out + o, out_bytes - o, "[%ld]", idx[j++]);
            p += 2;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}

static int unknown_path(const scenario *sc, json_t *doc, const char *metric, const char *const *paths,
                        size_t n_sweep, tt_error *err)
{
    char first[256], hint[320] = "";
    long idx[8];
    size_t k = first_indexes(metric, first, sizeof first, idx, 8);
    int in_list = 0;
    for (size_t i = 0; paths[i]; i++)
        in_list |= strcmp(paths[i], first) == 0;
    if (in_list && strncmp(metric, "sweep[", 6) == 0) /* a known number, at a point the sweep does not have */
        snprintf(hint, sizeof hint, "; the sweep has %zu point%s, sweep[0] to sweep[%zu]", n_sweep,
                 n_sweep == 1 ? "" : "s", n_sweep - 1);
    else if (in_list)
        snprintf(hint, sizeof hint, "; the index is past the most entries that list can have");
    const char *near = in_list ? NULL : jx_closest(first, paths);
    if (near) {
        char guess[256];
        double v;
        with_indexes(near, idx, k < 8 ? k : 8, guess, sizeof guess);
        snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", report_lookup(doc, guess, &v) ? guess : near);
    }
    return tt_error_set(err, TT_EINPUT, "%s: $.expect[\"%s\"]: not a number that 'ttasim run --json' writes for "
                        "this scenario%s; name a number of that document by its dotted path, such as "
                        "\"step.time_s\" or \"%s\"", sc->path, metric, hint,
                        sc->is_collective ? "collective.busbw_Bps" : n_sweep ? "sweep[0].cost_usd" : "cost_usd");
}

int expect_validate(const scenario *sc, tt_error *err)
{
    if (sc->n_expect == 0)
        return TT_OK;
    json_t *doc = expect_outputs(sc);
    if (!doc)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    char **paths = NULL;
    size_t n = 0, cap = 0;
    number_paths(doc, "", &paths, &n, &cap);
    int rc = TT_OK;
    for (size_t i = 0; rc == TT_OK && i < sc->n_expect; i++) {
        double v;
        if (!report_lookup(doc, sc->expect[i].metric, &v))
            rc = paths ? unknown_path(sc, doc, sc->expect[i].metric, (const char *const *)paths,
                                      sc->is_collective ? 0 : run_sweep_points(sc), err)
                       : tt_error_set(err, TT_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    json_decref(doc);
    return rc;
}

int expect_check(const scenario *sc, json_t *doc, int *failed, char *failures, size_t failures_bytes,
                 tt_error *err)
{
    *failed = 0;
    failures[0] = '\0';
    json_t *list = json_array();
    for (size_t i = 0; i < sc->n_expect; i++) {
        const scenario_expect *x = &sc->expect[i];
        double v;
        if (!report_lookup(doc, x->metric, &v)) {
            json_decref(list);
            return tt_error_set(err, TT_EINPUT, "%s: $.expect[\"%s\"]: this run wrote no number there (a "
                                "block of 'ttasim run --json' that only some runs write, such as \"parallel\" "
                                "or \"embedding\", or a point that did not run); bound a number this run "
                                "writes", sc->path, x->metric);
        }
        int ok = v >= x->min && v <= x->max;
        json_t *e = json_pack("{s:s, s:f, s:b}", "metric", x->metric, "value", v, "passed", ok);
        if (isfinite(x->min))
            json_object_set_new(e, "min", json_real(x->min));
        if (isfinite(x->max))
            json_object_set_new(e, "max", json_real(x->max));
        json_array_append_new(list, e);
        if (!ok) {
            size_t used = strlen(failures);
            snprintf(failures + used, failures_bytes - used, "%s%s = %.6g %s %.6g", *failed ? "; " : "",
                     x->metric, v, v < x->min ? "< min" : "> max", v < x->min ? x->min : x->max);
            (*failed)++;
        }
    }
    json_object_set_new(doc, "expect", list);
    return TT_OK;
}
