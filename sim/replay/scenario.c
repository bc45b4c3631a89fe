/* scenario.c: a scenario file read and checked into a scenario (scenario.h);
 * the workload and collectives sections in their own files. */
#include "sim/replay/scenario.h"
#include "sim/replay/scenario_load.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/datapath.h"
#include "common/jsonx.h"
#include "sim/replay/cost.h"
#include "sim/replay/override.h"
#include "sim/replay/scaling_law.h"

static const char *const NETWORKS[] = {"ideal", "calibrated", NULL};
static const char *const RANK_KINDS[] = {"accelerators", "cpu", NULL};

char *scenario_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

int scenario_resolve_path(const jx_obj *o, const char *key, const char *rel, char **out)
{
    char buf[4096];
    if (!rel[0]) /* "" would name the scenario's folder */
        return tt_error_set(o->err, TT_EINPUT, "%s: %s.%s: an empty path; give a file", o->file, o->path, key);
    if (rel[0] == '/') {
        snprintf(buf, sizeof buf, "%s", rel);
    } else {
        char *copy = strdup(o->file);
        snprintf(buf, sizeof buf, "%s/%s", dirname(copy), rel);
        free(copy);
        if (access(buf, R_OK) != 0) {
            char rel2[4096];
            snprintf(rel2, sizeof rel2, "scenarios/%s", rel);
            if (datapath_find(rel2, buf, sizeof buf) != 0)
                snprintf(buf, sizeof buf, "%s", rel);
        }
    }
    if (access(buf, R_OK) != 0)
        return tt_error_set(o->err, TT_EINPUT, "%s: %s.%s: cannot read \"%s\" (looked next to %s "
                            "and in %s/scenarios); give an existing file", o->file, o->path, key, rel,
                            o->file, datapath_root());
    *out = strdup(buf);
    return TT_OK;
}

static int load_strings(const jx_obj *o, const char *key, char ***out)
{
    size_t n;
    int rc = jx_array(o, key, 0, &n);
    if (rc)
        return rc;
    *out = calloc(n + 1, sizeof **out);
    json_t *a = json_object_get(o->obj, key);
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_string(v))
            return tt_error_set(o->err, TT_EINPUT, "%s: %s.%s[%zu]: expected a string", o->file, o->path, key, i);
        (*out)[i] = strdup(json_string_value(v));
    }
    return TT_OK;
}

static int load_platform(const jx_obj *r, scenario *s)
{
    static const char *const keys[] = {"name", "nodes", "link_bw_Bps", "link_latency_s", "accelerator",
                                       "mesh", "shape", "fabric", "components", "ranks", NULL};
    jx_obj p;
    const char *name = NULL, *acc = NULL, *mesh = NULL;
    long nodes = 0;
    int rc;
    if ((rc = jx_child(r, "platform", 1, &p)) || (rc = jx_check_keys(&p, keys)) ||
        (rc = jx_string(&p, "name", 1, &name)) || (rc = jx_int(&p, "nodes", 0, 1, PLATFORM_MAX_NODES, &nodes)) ||
        (rc = jx_rate(&p, "link_bw_Bps", 0, 1e3, 1e15, &s->link_bw_Bps)) ||
        (rc = jx_seconds(&p, "link_latency_s", 0, 0, 10, &s->link_latency_s)) ||
        (rc = jx_string(&p, "accelerator", 0, &acc)) || (rc = jx_string(&p, "mesh", 0, &mesh)) ||
        (rc = jx_enum(&p, "ranks", 0, RANK_KINDS, &s->cpu_ranks)))
        return rc;
    size_t nshape = 0;
    if ((rc = jx_array(&p, "shape", 0, &nshape)))
        return rc;
    if (nshape > 3)
        return tt_error_set(p.err, TT_EINPUT, "%s: %s.shape: expected 1 to 3 sizes (a torus grid, fastest-varying "
                            "first), found %zu", p.file, p.path, nshape);
    for (size_t d = 0; d < nshape; d++) {
        double x;
        if ((rc = jx_elem_bytes(&p, "shape", d, 1, 4096, &x)))
            return rc;
        s->shape[d] = (int)x;
    }
    s->fabric = json_object_get(p.obj, "fabric");
    if (s->fabric && !json_is_object(s->fabric))
        return tt_error_set(p.err, TT_EINPUT, "%s: %s.fabric: expected an object of fabric fields merged over the "
                            "platform's (e.g. {\"oversubscription\": 2}, platforms/README.md)", p.file, p.path);
    s->components = json_object_get(p.obj, "components");
    if (s->components && !json_is_object(s->components))
        return tt_error_set(p.err, TT_EINPUT, "%s: %s.components: expected an object of node component groups and "
                            "their counts (e.g. {\"gpu\": 64}, platforms/README.md)", p.file, p.path);
    s->platform = strdup(name);
    s->nodes = (int)nodes;
    s->accelerator = scenario_dup(acc);
    s->mesh = scenario_dup(mesh);
    return TT_OK;
}

/* The target a scenario names and the mismatches with its profile it accepts. */
static int load_target(const jx_obj *c, scenario *s)
{
    static const char *const tkeys[] = {"dataset", "metric", "value", NULL};
    static const char *const accept_names[] = {"model", "dataset", "target", NULL};
    jx_obj t;
    const char *dataset = NULL, *metric = NULL;
    size_t n = 0;
    int rc;
    if ((rc = jx_child(c, "target", s->conv == CONV_PROFILE, &t)))
        return rc;
    if (t.obj && ((rc = jx_check_keys(&t, tkeys)) || (rc = jx_string(&t, "dataset", 1, &dataset)) ||
                  (rc = jx_string(&t, "metric", 1, &metric)) ||
                  (rc = jx_number(&t, "value", 1, 0, 1e300, &s->target_value))))
        return rc;
    s->target_dataset = dataset ? strdup(dataset) : NULL;
    s->target_metric = metric ? strdup(metric) : NULL;
    if ((rc = jx_array(c, "accept", 0, &n)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        const char *name = json_string_value(json_array_get(json_object_get(c->obj, "accept"), i));
        int k = -1;
        for (int j = 0; name && accept_names[j]; j++)
            if (strcmp(name, accept_names[j]) == 0)
                k = j;
        if (k < 0)
            return tt_error_set(c->err, TT_EINPUT, "%s: %s.accept[%zu]: expected \"model\", \"dataset\" or "
                                "\"target\" (a mismatch with the profile to carry as a named assumption)",
                                c->file, c->path, i);
        s->accept_mismatch |= 1 << k;
    }
    return TT_OK;
}

static int load_convergence(const jx_obj *r, scenario *s)
{
    static const char *const keys[] = {"profile", "mccandlish", "steps", "scaling_law", "target_loss", "target",
                                       "accept", "batch_schedule", NULL};
    static const char *const mkeys[] = {"s_min", "noise_scale", NULL};
    jx_obj c, m;
    const char *profile = NULL;
    int rc;
    if ((rc = jx_child(r, "convergence", 0, &c)) || !c.obj)
        return rc;
    if ((rc = jx_check_keys(&c, keys)) || (rc = batch_schedule_load(&c, &s->schedule)))
        return rc;
    int given = jx_has(&c, "profile") + jx_has(&c, "mccandlish") + jx_has(&c, "steps") + jx_has(&c, "scaling_law");
    if (given != 1)
        return tt_error_set(c.err, TT_EINPUT, "%s: %s: give exactly one of \"profile\", \"mccandlish\", "
                            "\"steps\" and \"scaling_law\"", c.file, c.path);
    s->scaling_law = -1;
    if ((rc = jx_string(&c, "profile", 0, &profile)) || (rc = jx_child(&c, "mccandlish", 0, &m)) ||
        (rc = jx_number(&c, "steps", 0, 1, 1e12, &s->fixed_steps)) ||
        (rc = jx_enum(&c, "scaling_law", 0, SCALING_LAW_NAMES, &s->scaling_law)))
        return rc;
    if (s->scaling_law >= 0) { /* a language model's loss: the target is target_loss, not a profile's metric */
        s->conv = CONV_SCALING_LAW;
        if (jx_has(&c, "target") || jx_has(&c, "accept"))
            return tt_error_set(c.err, TT_EINPUT, "%s: %s: a scaling law's target is \"target_loss\" (nats per "
                                "token); remove \"target\" and \"accept\"", c.file, c.path);
        return jx_number(&c, "target_loss", 1, 1e-3, 100, &s->target_loss);
    }
    if (jx_has(&c, "target_loss"))
        return tt_error_set(c.err, TT_EINPUT, "%s: %s.target_loss: only a \"scaling_law\" takes a target loss; "
                            "a profile names its target in \"target\"", c.file, c.path);
    if (profile) {
        s->conv = CONV_PROFILE;
        if ((rc = scenario_resolve_path(&c, "profile", profile, &s->profile_path)))
            return rc;
    } else if (m.obj) {
        s->conv = CONV_MCCANDLISH;
        if ((rc = jx_check_keys(&m, mkeys)) || (rc = jx_number(&m, "s_min", 1, 1, 1e12, &s->s_min)) ||
            (rc = jx_number(&m, "noise_scale", 1, 1e-3, 1e12, &s->noise_scale)))
            return rc;
    } else {
        s->conv = CONV_STEPS;
        if (s->schedule.n)
            return tt_error_set(c.err, TT_EINPUT, "%s: %s.batch_schedule: a fixed number of steps does not depend "
                                "on the batch; give a profile or a scaling law with a schedule", c.file, c.path);
    }
    return load_target(&c, s);
}

/* Element i of a sweep list: a whole count (a string such as "64K" too). */
static int sweep_value(const jx_obj *w, const char *key, size_t i, double hi, double *v)
{
    int rc = jx_elem_bytes(w, key, i, 1, hi, v);
    if (rc == TT_OK && *v != floor(*v))
        return tt_error_set(w->err, TT_EINPUT, "%s: %s.%s[%zu]: expected a whole number, found %g", w->file,
                            w->path, key, i, *v);
    return rc;
}

/* A sweep over a path: every value must make a valid scenario, checked now
 * so a typo fails before any point runs. */
static int load_sweep_path(const jx_obj *w, scenario *s, const char *key)
{
    json_t *vals = json_object_get(w->obj, key);
    if (!json_is_array(vals) || json_array_size(vals) == 0 || json_array_size(vals) > SCENARIO_MAX_SWEEP)
        return tt_error_set(w->err, TT_EINPUT, "%s: %s.%s: expected a list of 1 to %d values for the scenario path "
                            "\"%s\"", w->file, w->path, key, SCENARIO_MAX_SWEEP, key);
    if (s->n_sweep_paths == SCENARIO_MAX_SWEEP_PATHS)
        return tt_error_set(w->err, TT_EINPUT, "%s: %s: at most %d swept paths besides global_batch and nodes",
                            w->file, w->path, SCENARIO_MAX_SWEEP_PATHS);
    for (size_t i = 0; i < json_array_size(vals); i++) {
        scenario pt;
        json_t *v = json_array_get(vals, i);
        int rc = scenario_at(s, &key, &v, 1, &pt, w->err);
        if (rc)
            return tt_error_prefix(w->err, "%s.%s[%zu]: ", w->path, key, i);
        scenario_free(&pt);
    }
    s->sweep_path[s->n_sweep_paths] = key;
    s->sweep_values[s->n_sweep_paths++] = vals;
    return TT_OK;
}

static int load_sweep(const jx_obj *r, scenario *s)
{
    jx_obj w;
    int rc;
    if ((rc = jx_child(r, "sweep", 0, &w)) || !w.obj)
        return rc;
    if ((rc = jx_array(&w, "global_batch", 0, &s->n_sweep_batch)) ||
        (rc = jx_array(&w, "nodes", 0, &s->n_sweep_nodes)))
        return rc;
    if (s->n_sweep_batch > SCENARIO_MAX_SWEEP || s->n_sweep_nodes > SCENARIO_MAX_SWEEP)
        return tt_error_set(w.err, TT_EINPUT, "%s: %s: at most %d values per list", w.file, w.path,
                            SCENARIO_MAX_SWEEP);
    for (size_t i = 0; i < s->n_sweep_batch; i++) {
        double v;
        if ((rc = sweep_value(&w, "global_batch", i, 4294967296.0, &v)))
            return rc;
        s->sweep_batch[i] = (long)v;
    }
    for (size_t i = 0; i < s->n_sweep_nodes; i++) {
        double v;
        if ((rc = sweep_value(&w, "nodes", i, PLATFORM_MAX_NODES, &v)))
            return rc;
        s->sweep_nodes[i] = (int)v;
    }
    const char *key;
    json_t *v;
    double points = (double)(s->n_sweep_batch ? s->n_sweep_batch : 1) * (double)(s->n_sweep_nodes ? s->n_sweep_nodes : 1);
    json_object_foreach(w.obj, key, v)
        points *= json_is_array(v) && json_array_size(v) && strcmp(key, "global_batch") && strcmp(key, "nodes")
                      ? (double)json_array_size(v) : 1;
    if (points > SCENARIO_MAX_POINTS) /* before any is checked: each costs a parse, later a simulation or more */
        return tt_error_set(w.err, TT_EINPUT, "%s: %s: %.0f points (the product of the lists' lengths), more than "
                            "the %d one run takes (each at least one simulation); sweep fewer values, or split the "
                            "sweep over several scenarios", w.file, w.path, points, SCENARIO_MAX_POINTS);
    json_object_foreach(w.obj, key, v)
        if (strcmp(key, "global_batch") != 0 && strcmp(key, "nodes") != 0 && (rc = load_sweep_path(&w, s, key)))
            return rc;
    return TT_OK;
}

static int load_expect(const jx_obj *r, scenario *s)
{
    static const char *const keys[] = {"min", "max", NULL};
    jx_obj e;
    int rc;
    if ((rc = jx_child(r, "expect", 0, &e)) || !e.obj)
        return rc;
    const char *metric;
    json_t *v;
    json_object_foreach(e.obj, metric, v) {
        if (s->n_expect == SCENARIO_MAX_EXPECT)
            return tt_error_set(e.err, TT_EINPUT, "%s: $.expect: at most %d bounds", e.file, SCENARIO_MAX_EXPECT);
        jx_obj b;
        if ((rc = jx_child(&e, metric, 1, &b)) || (rc = jx_check_keys(&b, keys)))
            return rc;
        scenario_expect *x = &s->expect[s->n_expect];
        x->min = -INFINITY;
        x->max = INFINITY;
        if ((rc = jx_number(&b, "min", 0, -1e300, 1e300, &x->min)) ||
            (rc = jx_number(&b, "max", 0, -1e300, 1e300, &x->max)))
            return rc;
        if (!jx_has(&b, "min") && !jx_has(&b, "max"))
            return tt_error_set(e.err, TT_EINPUT, "%s: %s: give \"min\", \"max\" or both", e.file, b.path);
        x->metric = strdup(metric);
        s->n_expect++;
    }
    return TT_OK;
}

/* Evaluation is either typed in (every_steps, time_s) or from the workload:
 * every_epochs and examples become forward-only passes (point.c). */
static int load_evaluation(const jx_obj *e, scenario *s)
{
    int typed = jx_has(e, "every_steps") || jx_has(e, "time_s");
    int modelled = jx_has(e, "every_epochs") || jx_has(e, "every_examples") || jx_has(e, "examples");
    if (typed == modelled)
        return tt_error_set(e->err, TT_EINPUT, "%s: %s: expected either \"every_epochs\" or \"every_examples\", "
                            "and \"examples\" (forward passes timed by the model), or \"every_steps\" and "
                            "\"time_s\" (a measured evaluation time), not %s", e->file, e->path,
                            typed ? "both" : "neither");
    int rc;
    if (typed) {
        if ((rc = jx_number(e, "every_steps", 1, 1, 1e12, &s->eval_every_steps)) ||
            (rc = jx_seconds(e, "time_s", 1, 0, 1e9, &s->eval_time_s)))
            return rc;
        return TT_OK;
    }
    if (jx_has(e, "every_epochs") == jx_has(e, "every_examples"))
        return tt_error_set(e->err, TT_EINPUT, "%s: %s: expected one of \"every_epochs\" (evaluation after so "
                            "many passes over the dataset) and \"every_examples\" (after so many training "
                            "examples, as MLPerf's language models count them), not %s", e->file, e->path,
                            jx_has(e, "every_epochs") ? "both" : "neither");
    if ((rc = jx_number(e, "every_epochs", 0, 1e-3, 1e6, &s->eval_every_epochs)) ||
        (rc = jx_number(e, "every_examples", 0, 1, 1e15, &s->eval_every_examples)) ||
        (rc = jx_number(e, "examples", 1, 1, 1e12, &s->eval_examples)))
        return rc;
    if (s->eval_every_epochs > 0 && s->dataset_examples <= 0)
        return tt_error_set(e->err, TT_EINPUT, "%s: %s.every_epochs: an epoch needs the dataset size; give "
                            "$.workload.dataset_examples", e->file, e->path);
    return TT_OK;
}

static int load_cost(const jx_obj *r, scenario *s)
{
    static const char *const keys[] = {"lifetime_years", "pue", "usd_per_kwh", NULL};
    jx_obj c;
    int rc;
    s->lifetime_years = COST_LIFETIME_YEARS;
    s->pue = COST_PUE;
    s->usd_per_kwh = COST_USD_PER_KWH;
    if ((rc = jx_child(r, "cost", 0, &c)) || !c.obj)
        return rc;
    if ((rc = jx_check_keys(&c, keys)) || (rc = jx_number(&c, "lifetime_years", 0, 0.1, 50, &s->lifetime_years)) ||
        (rc = jx_number(&c, "pue", 0, 1, 5, &s->pue)) || (rc = jx_number(&c, "usd_per_kwh", 0, 0, 10, &s->usd_per_kwh)))
        return rc;
    return TT_OK;
}

static int load_rest(const jx_obj *r, scenario *s)
{
    static const char *const ekeys[] = {"every_steps", "time_s", "every_epochs", "every_examples", "examples", NULL};
    static const char *const okeys[] = {"json", "csv", "svg", "html", NULL};
    static const char *const rkeys[] = {"step_time_s", "time_s", "steps", "busbw_Bps", "op_time_s", "source",
                                        "calibrated", "interruptions_per_day", NULL};
    jx_obj e, o, f;
    const char *js = NULL, *csv = NULL, *svg = NULL, *html = NULL, *src = NULL, *cal = NULL;
    int rc, opt = -1;
    if ((rc = jx_enum(r, "optimizer", 0, OPTIM_NAMES, &opt)) || (rc = scenario_load_collectives(r, s)) ||
        (rc = load_convergence(r, s)) || (rc = jx_child(r, "evaluation", 0, &e)) ||
        (e.obj && ((rc = jx_check_keys(&e, ekeys)) || (rc = load_evaluation(&e, s)))) ||
        (rc = load_sweep(r, s)) || (rc = jx_child(r, "outputs", 0, &o)) ||
        (o.obj && ((rc = jx_check_keys(&o, okeys)) || (rc = jx_string(&o, "json", 0, &js)) ||
                   (rc = jx_string(&o, "csv", 0, &csv)) || (rc = jx_string(&o, "svg", 0, &svg)) ||
                   (rc = jx_string(&o, "html", 0, &html)))) ||
        (rc = jx_child(r, "reference", 0, &f)) ||
        (f.obj && ((rc = jx_check_keys(&f, rkeys)) ||
                   (rc = jx_seconds(&f, "step_time_s", 0, 1e-9, 1e9, &s->ref_step_time_s)) ||
                   (rc = jx_seconds(&f, "time_s", 0, 1e-9, 1e12, &s->ref_time_s)) ||
                   (rc = jx_number(&f, "steps", 0, 1, 1e12, &s->ref_steps)) ||
                   (rc = jx_rate(&f, "busbw_Bps", 0, 1, 1e15, &s->ref_busbw_Bps)) ||
                   (rc = jx_seconds(&f, "op_time_s", 0, 1e-9, 1e6, &s->ref_op_time_s)) ||
                   (rc = jx_number(&f, "interruptions_per_day", 0, 1e-9, 1e9, &s->ref_interruptions_per_day)) ||
                   (rc = jx_string(&f, "source", 0, &src)) || (rc = jx_string(&f, "calibrated", 0, &cal)))) ||
        (rc = load_expect(r, s)) || (rc = load_cost(r, s)))
        return rc;
    s->optimizer = opt >= 0 ? optim_find(OPTIM_NAMES[opt]) : NULL;
    s->out_json = scenario_dup(js);
    s->out_csv = scenario_dup(csv);
    s->out_svg = scenario_dup(svg);
    s->out_html = scenario_dup(html);
    s->ref_source = scenario_dup(src);
    s->ref_calibrated = scenario_dup(cal);
    return TT_OK;
}

/* Validates a document (owned by out from here on) as the scenario at path. */
static int scenario_parse(const char *path, json_t *root, scenario *out, tt_error *err)
{
    static const char *const keys[] = {"version", "name", "description", "assumptions", "platform",
                                       "network", "workload", "collective", "optimizer", "collectives",
                                       "convergence", "evaluation", "sweep", "outputs", "reference", "expect",
                                       "devices", "cost", "parallel", "resilience", NULL};
    out->overlap = 1;
    out->fusion = -1;
    out->hybrid = HYBRID_PARAMS_DEFAULT;
    out->doc = root;
    out->path = strdup(path);
    jx_obj r;
    long version = 0;
    const char *name = NULL, *desc = NULL;
    int network = NETWORK_CALIBRATED, rc;
    if ((rc = jx_root(&r, path, root, err)) || (rc = jx_check_keys(&r, keys)) ||
        (rc = jx_int(&r, "version", 1, SCENARIO_VERSION, SCENARIO_VERSION, &version)) ||
        (rc = jx_string(&r, "name", 1, &name)) || (rc = jx_string(&r, "description", 0, &desc)) ||
        (rc = load_strings(&r, "assumptions", &out->assumptions)) || (rc = load_platform(&r, out)) ||
        (rc = jx_enum(&r, "network", 0, NETWORKS, &network)) || (rc = scenario_load_collective(&r, out)) ||
        (rc = scenario_load_workload(&r, out)) || (rc = scenario_load_parallel(&r, out)) ||
        (rc = load_rest(&r, out)) || (rc = scenario_load_resilience(&r, out))) {
        scenario_free(out);
        return rc;
    }
    out->network = (network_model)network;
    out->devices = json_object_get(root, "devices");
    if (out->devices && !json_is_object(out->devices)) {
        scenario_free(out);
        return tt_error_set(err, TT_EINPUT, "%s: $.devices: expected an object of device definitions by name "
                            "(a partial one is merged over the built-in device of that name)", path);
    }
    out->name = strdup(name);
    out->description = scenario_dup(desc);
    return TT_OK;
}

int scenario_load_set(const char *path, char *const *sets, size_t n_sets, scenario *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    if (n_sets > SCENARIO_MAX_SETS)
        return tt_error_set(err, TT_EINPUT, "at most %d --set options", SCENARIO_MAX_SETS);
    json_t *root = NULL;
    int rc = jx_load_file(path, &root, err);
    for (size_t i = 0; rc == TT_OK && i < n_sets; i++) {
        char *key = NULL, what[512];
        json_t *v = NULL;
        snprintf(what, sizeof what, "--set %s", sets[i]);
        rc = override_parse(sets[i], &key, &v, err);
        if (rc == TT_OK && !json_is_object(root))
            rc = tt_error_set(err, TT_EINPUT, "%s: $: expected a JSON object at the top level", path);
        if (rc == TT_OK)
            rc = override_set(root, key, v, what, err);
        free(key);
        json_decref(v);
    }
    if (rc) {
        json_decref(root);
        return rc;
    }
    if ((rc = scenario_parse(path, root, out, err)))
        return n_sets ? tt_error_prefix(err, "(with the --set options) ") : rc;
    out->n_sets = n_sets;
    for (size_t i = 0; i < n_sets; i++)
        out->sets[i] = strdup(sets[i]);
    return TT_OK;
}

int scenario_load(const char *path, scenario *out, tt_error *err)
{
    return scenario_load_set(path, NULL, 0, out, err);
}

int scenario_at(const scenario *base, const char *const *paths, json_t *const *values, size_t n,
                scenario *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *doc = json_deep_copy(base->doc);
    if (!doc)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    /* the point keeps its global batch and node lists (they run inside it),
     * none of the swept paths (those not yet checked would be checked again
     * for each value: values^paths parses) */
    json_t *sweep = json_object_get(doc, "sweep");
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(sweep, tmp, key, v)
        if (strcmp(key, "global_batch") != 0 && strcmp(key, "nodes") != 0)
            json_object_del(sweep, key);
    int rc = TT_OK;
    for (size_t i = 0; rc == TT_OK && i < n; i++) {
        char what[256];
        snprintf(what, sizeof what, "%s: $.sweep.%s", base->path, paths[i]);
        rc = override_set(doc, paths[i], values[i], what, err);
    }
    if (rc) {
        json_decref(doc);
        return rc;
    }
    if ((rc = scenario_parse(base->path, doc, out, err)))
        return rc;
    out->n_sets = base->n_sets;
    for (size_t i = 0; i < base->n_sets; i++)
        out->sets[i] = strdup(base->sets[i]);
    return TT_OK;
}

platform_options scenario_platform_options(const scenario *s, int nodes)
{
    platform_options o = {.nodes = nodes ? nodes : s->nodes, .link_bw_Bps = s->link_bw_Bps,
                          .link_latency_s = s->link_latency_s, .accelerator = s->accelerator, .mesh = s->mesh,
                          .fabric = s->fabric, .components = s->components, .devices = s->devices,
                          .overlay_file = s->path,
                          .rank_kind = s->cpu_ranks ? DEVICE_CPU : DEVICE_ACCELERATOR};
    memcpy(o.shape, s->shape, sizeof o.shape);
    return o;
}

int scenario_file_is_scenario(const char *path, char *why, size_t why_bytes)
{
    tt_error ignored = {0};
    json_t *root = NULL;
    jx_load_file(path, &root, &ignored); /* a FIFO or a device is not opened */
    const char *format = json_string_value(json_object_get(root, "format"));
    int report = json_object_get(root, "scenario") || json_object_get(root, "scenarios");
    int is = !json_object_get(root, "format") && !report;
    if (!is && why && json_object_get(root, "format"))
        snprintf(why, why_bytes, "a \"format\": \"%s\" document (a trace, a profile, a shard), not a scenario",
                 format ? format : "?");
    else if (!is && why)
        snprintf(why, why_bytes, "a report of ttasim's (it names its \"%s\", as 'run --json', 'check --json' "
                 "and 'compare --json' do), not a scenario", json_object_get(root, "scenario") ? "scenario" : "scenarios");
    json_decref(root);
    return is;
}

void scenario_free(scenario *s)
{
    for (size_t i = 0; i < SCENARIO_MAX_PHASES; i++) {
        free(s->phases[i].trace_path);
        free(s->phases[i].model);
    }
    char **strs[] = {&s->path, &s->name, &s->description, &s->platform, &s->accelerator, &s->mesh,
                     &s->precision, &s->gradient_precision, &s->allreduce,
                     &s->alltoall, &s->profile_path, &s->out_json, &s->out_csv, &s->out_svg, &s->out_html,
                     &s->ref_source, &s->ref_calibrated, &s->target_dataset, &s->target_metric,
                     &s->table_precision, &s->layout_order};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        free(*strs[i]);
    for (size_t i = 0; s->assumptions && s->assumptions[i]; i++)
        free(s->assumptions[i]);
    free(s->assumptions);
    free(s->chakra_path);
    for (size_t i = 0; i < s->n_expect; i++)
        free(s->expect[i].metric);
    for (size_t i = 0; i < s->n_sets; i++)
        free(s->sets[i]);
    json_decref(s->doc);
    memset(s, 0, sizeof *s);
}

char *scenario_output_path(const scenario *s, const char *given, const char *out_dir)
{
    if (given[0] == '/')
        return strdup(given);
    char *copy = out_dir ? NULL : strdup(s->path);
    const char *dir = out_dir ? out_dir : copy ? dirname(copy) : NULL;
    char *out = NULL;
    if (dir && asprintf(&out, "%s/%s", dir, given) < 0)
        out = NULL;
    free(copy);
    return out;
}

static void add_input(const char *path, const char *what, const char **paths, const char **whats, size_t max,
                      size_t *n)
{
    if (path && *n < max && access(path, F_OK) == 0) {
        paths[*n] = path;
        whats[(*n)++] = what;
    }
}

size_t scenario_inputs(const scenario *s, const char **paths, const char **what, size_t max)
{
    size_t n = 0;
    add_input(s->path, "the scenario", paths, what, max, &n);
    for (size_t i = 0; i < s->n_phases; i++)
        add_input(s->phases[i].trace_path, "a workload trace", paths, what, max, &n);
    add_input(s->profile_path, "the convergence profile", paths, what, max, &n);
    add_input(s->platform, "the platform file", paths, what, max, &n);
    return n;
}
