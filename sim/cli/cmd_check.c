/* ttasim check PATH... [--junit F] [--json]: runs scenarios (files, or every
 * scenario under a directory) with their expectations; a pass/fail table. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/error.h"
#include "common/outfile.h"
#include "common/stats.h"
#include "common/parallel.h"
#include "sim/cli/cli.h"
#include "sim/cli/db_cli.h"
#include "sim/cli/progress.h"
#include "sim/report/coll_report.h"
#include "sim/report/expect.h"
#include "sim/report/junit.h"
#include "sim/report/report.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"

extern const cli_command cmd_check;

static void check_help(FILE *out)
{
    fprintf(out,
            "Runs every scenario given, or found under a directory, checks the bounds in\n"
            "each scenario's \"expect\" (their paths before any simulation), and prints a\n"
            "pass/fail table. Under a directory, the JSON files that are not scenarios are\n"
            "skipped with a note on stderr: those with a \"format\" key (traces, profiles,\n"
            "shards) and ttasim's reports (run, check and compare --json, which name their\n"
            "\"scenario\" or \"scenarios\").\n\n"
            "  --junit F   also write JUnit XML to F: a testcase per scenario with its wall\n"
            "              seconds (time, the only part that varies between runs) and, per\n"
            "              bound, the value measured and its bounds (properties METRIC,\n"
            "              METRIC.min, METRIC.max, and the same as lines of system-out)\n"
            "  --json      print one JSON document on stdout\n"
            "  --markdown  print the validation table instead: predicted against published\n"
            "              step and total times, median and worst deviation per model,\n"
            "              validation rows apart from calibration rows (reference.calibrated)\n"
            CLI_SET_HELP
            "              (applied to every scenario)\n"
            "  -j, --jobs N  run N scenarios at a time (default: the processors this\n"
            "              process may use); the output is the same for any N\n"
            DB_CLI_HELP
            "              (with --db, one scenario at a time, -j sharing its sweep)\n"
            "  --quiet     no progress on stderr\n"
            "  --help      this text\n\n"
            "Exit status: 0 every scenario passed, 1 a scenario's run missed a bound of\n"
            "its \"expect\", 2 an input error (a file that does not parse, an unknown key,\n"
            "an expect path the run does not write, a missing file): what 'ttasim run'\n"
            "exits for the same file. With both, 2.\n");
}

typedef struct file_list {
    char **v;
    size_t n, cap;
} file_list;

static void add_file(file_list *l, const char *path)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = strdup(path);
}

static void file_list_free(file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The scenarios under path (a file named is taken as one); the other JSON
 * files of a directory (traces, profiles, run reports) go to skipped, each
 * as its path and what it is. */
static int collect(const char *path, file_list *l, file_list *skipped, tt_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return tt_error_set(err, TT_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        add_file(l, path);
        return TT_OK;
    }
    DIR *d = opendir(path);
    if (!d)
        return tt_error_set(err, TT_EINPUT, "%s: cannot read the directory", path);
    file_list here = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            add_file(&here, e->d_name);
    closedir(d);
    qsort(here.v, here.n, sizeof *here.v, cmp_str); /* deterministic order */
    int rc = TT_OK;
    for (size_t i = 0; i < here.n; i++) {
        char full[4096];
        size_t plen = strlen(path);
        while (plen > 1 && path[plen - 1] == '/') /* "scenarios/" names files as "scenarios/x.json" */
            plen--;
        snprintf(full, sizeof full, "%.*s/%s", (int)plen, path, here.v[i]);
        size_t len = strlen(full);
        if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (rc == TT_OK)
                rc = collect(full, l, skipped, err);
        } else if (len > 5 && strcmp(full + len - 5, ".json") == 0) {
            char why[300];
            if (scenario_file_is_scenario(full, why, sizeof why)) {
                add_file(l, full);
            } else {
                add_file(skipped, full);
                add_file(skipped, why);
            }
        }
        free(here.v[i]);
    }
    free(here.v);
    return rc;
}

/* One scenario's verdict, flat: it comes back from a worker process whole. */
typedef struct outcome {
    char name[256];
    char model[64], accelerator[64];
    int finished, passed;
    int error; /* the error code that stopped it (TT_EINPUT...), 0 if it ran */
    char message[2048];
    double step_time_s, ref_step_time_s, tta_s, ref_time_s;
    /* collective scenarios: the figure compared (busbw, else time) */
    const char *coll_metric; /* NULL: a training scenario; a literal, so valid in the parent of a worker */
    double coll_value, coll_ref;
    char coll_source[400];
    int calibration; /* the row fed a device's calibration (reference.calibrated) */
    double wall_s;   /* for JUnit's time attribute only: nothing else may vary between runs */
    size_t n_bounds;
    struct {
        char metric[256];
        double value, min, max;
        int passed;
    } bounds[SCENARIO_MAX_EXPECT]; /* what each expect bound measured (JUnit) */
} outcome;

/* The bounds expect_check put in doc's "expect", kept for JUnit. */
static void keep_bounds(outcome *o, json_t *doc)
{
    json_t *list = json_object_get(doc, "expect"), *e;
    size_t i;
    json_array_foreach(list, i, e) {
        if (o->n_bounds == SCENARIO_MAX_EXPECT)
            break;
        json_t *min = json_object_get(e, "min"), *max = json_object_get(e, "max");
        snprintf(o->bounds[o->n_bounds].metric, sizeof o->bounds[0].metric, "%s",
                 json_string_value(json_object_get(e, "metric")));
        o->bounds[o->n_bounds].value = json_number_value(json_object_get(e, "value"));
        o->bounds[o->n_bounds].min = min ? json_number_value(min) : -INFINITY;
        o->bounds[o->n_bounds].max = max ? json_number_value(max) : INFINITY;
        o->bounds[o->n_bounds].passed = json_is_true(json_object_get(e, "passed"));
        o->n_bounds++;
    }
}

/* A collective measurement: busbw against a published busbw, else time. */
static int check_collective(const scenario *sc, outcome *o, int *failed, json_t **keep, tt_error *err)
{
    coll_scenario_result r;
    int rc = coll_scenario_run(sc, &r, err);
    if (rc)
        return rc;
    json_t *doc = coll_report_json(sc, &r);
    rc = expect_check(sc, doc, failed, o->message, sizeof o->message, err);
    keep_bounds(o, doc);
    if (keep)
        *keep = json_incref(doc);
    json_decref(doc);
    int by_time = sc->ref_busbw_Bps <= 0 && sc->ref_op_time_s > 0;
    o->coll_metric = by_time ? "time_s" : "busbw_Bps";
    o->coll_value = by_time ? r.time_s : r.busbw_Bps;
    o->coll_ref = by_time ? sc->ref_op_time_s : sc->ref_busbw_Bps;
    snprintf(o->coll_source, sizeof o->coll_source, "%s", sc->ref_source ? sc->ref_source : "");
    snprintf(o->model, sizeof o->model, "%s %s (%s)", r.op, r.nccl[0] ? r.nccl : r.algo, r.platform);
    return TT_OK;
}

/* keep: where the scenario's --json document goes for --db (NULL: dropped). */
static void check_scenario(const char *path, char *const *sets, size_t n_sets, int jobs, outcome *o, json_t **keep)
{
    scenario sc;
    tt_error err = {0};
    int rc = scenario_load_set(path, (char **)sets, n_sets, &sc, &err);
    if (rc == TT_OK && (rc = expect_validate(&sc, &err))) /* a typo costs no simulation */
        scenario_free(&sc);
    if (rc) {
        snprintf(o->name, sizeof o->name, "%s", path);
        o->error = rc;
        snprintf(o->message, sizeof o->message, "%s", err.msg);
        return;
    }
    snprintf(o->name, sizeof o->name, "%s", sc.name);
    int failed = 0;
    if (sc.is_collective) {
        rc = check_collective(&sc, o, &failed, keep, &err);
        if (rc) {
            o->error = rc;
            snprintf(o->message, sizeof o->message, "%s", err.msg);
        }
        o->passed = rc == TT_OK && failed == 0;
        scenario_free(&sc);
        return;
    }
    run_result r;
    run_options opt = {.jobs = jobs};
    rc = run_scenario(&sc, &opt, &r, &err);
    if (rc == TT_OK) {
        json_t *doc = report_json(&sc, &r);
        rc = expect_check(&sc, doc, &failed, o->message, sizeof o->message, &err);
        keep_bounds(o, doc);
        if (keep)
            *keep = json_incref(doc);
        json_decref(doc);
        o->step_time_s = r.base.step.time_s;
        o->ref_step_time_s = sc.ref_step_time_s;
        o->tta_s = r.base.time_to_accuracy_s;
        o->ref_time_s = sc.ref_time_s;
        o->calibration = sc.ref_calibrated != NULL;
        snprintf(o->model, sizeof o->model, "%s", r.model);
        snprintf(o->accelerator, sizeof o->accelerator, "%s", r.accelerator);
    }
    if (rc) {
        o->error = rc;
        snprintf(o->message, sizeof o->message, "%s", err.msg);
    }
    o->passed = rc == TT_OK && failed == 0;
    run_result_free(&r);
    scenario_free(&sc);
}

/* The scenarios of one check: run `jobs` at a time, their table rows printed
 * in file order as soon as every earlier one is in. */
typedef struct check_run {
    char **files;
    char *const *sets;
    size_t n_sets;
    outcome *out;
    json_t **docs; /* --db: each scenario's document, NULL where it did not run */
    size_t printed;
    int table, sweep_jobs;
} check_run;

static void check_task(void *arg, size_t i, void *result)
{
    const check_run *c = arg;
    outcome *o = result;
    struct timespec t0, t1;
    memset(o, 0, sizeof *o);
    o->finished = 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    check_scenario(c->files[i], c->sets, c->n_sets, c->sweep_jobs, o, c->docs ? &c->docs[i] : NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    o->wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

static void print_rows(check_run *c, size_t total)
{
    for (; c->printed < total && c->out[c->printed].finished; c->printed++) {
        const outcome *o = &c->out[c->printed];
        if (!c->table)
            continue;
        char ref[32] = "-", val[32];
        snprintf(val, sizeof val, "%.4g", o->coll_metric ? o->coll_value : o->step_time_s);
        if (o->coll_metric && o->coll_ref > 0)
            snprintf(ref, sizeof ref, "%.4g", o->coll_ref);
        else if (o->ref_step_time_s > 0)
            snprintf(ref, sizeof ref, "%.4g", o->ref_step_time_s);
        printf("%-6s %-40s %12s %12s  %s%s%s%s\n", o->passed ? "PASS" : o->error ? "ERROR" : "FAIL", o->name, val,
               ref, c->files[c->printed], o->coll_metric ? "  (" : "", o->coll_metric ? o->coll_metric : "",
               o->coll_metric ? ")" : "");
        if (!o->passed)
            printf("       %s\n", o->message);
        fflush(stdout);
    }
}

static void scenario_done(void *arg, size_t done, size_t total)
{
    progress_update(done, total);
    print_rows(arg, total);
}

/* The collective rows: predicted against published bandwidth or time, with
 * their sources. */
static void print_collectives_markdown(const outcome *o, char **files, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= o[i].coll_metric != NULL;
    if (!any)
        return;
    printf("\n| collective scenario | what ran | predicted | published | ratio | source |\n|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        if (!o[i].coll_metric)
            continue;
        const char *base = strrchr(files[i], '/');
        int t = o[i].coll_metric[0] == 't';
        double scale = t ? 1e6 : 1e-9;
        printf("| %s | %s | %.4g %s | %.4g %s | %.3f | %s |\n", base ? base + 1 : files[i], o[i].model,
               o[i].coll_value * scale, t ? "us" : "GB/s", o[i].coll_ref * scale, t ? "us" : "GB/s",
               o[i].coll_ref > 0 ? o[i].coll_value / o[i].coll_ref : 0, o[i].coll_source);
    }
}

/* median and worst |predicted / published - 1| of the step over the rows
 * of a model ("" = every model) in one role; 0 rows prints nothing. */
static void print_summary_row(const outcome *o, size_t n, const char *name, int calibration, int total, double *dev)
{
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
        double ref = total ? o[j].ref_time_s : o[j].ref_step_time_s;
        if (!o[j].error && (!*name || strcmp(o[j].model, name) == 0) && ref > 0 && o[j].calibration == calibration)
            dev[k++] = fabs((total ? o[j].tta_s : o[j].step_time_s) / ref - 1);
    }
    if (k == 0)
        return;
    double med = stats_median(dev, k);
    printf("| %s | %s | %zu | %.1f %% | %.1f %% |\n", *name ? name : "all of the above",
           calibration ? "calibration" : "validation", k, 100 * med, 100 * dev[k - 1]);
}

/* The median and worst per model and role, then over all the models, of the
 * step ratios (total 0) or the total-time ratios (total 1, when any). */
static void print_summary(const outcome *o, size_t n, int total)
{
    size_t rows = 0;
    for (size_t i = 0; total && i < n; i++)
        rows += !o[i].error && o[i].ref_time_s > 0;
    if (total && !rows)
        return;
    printf("\n| model | role | rows with a published %s | median abs(ratio - 1) | worst abs(ratio - 1) |\n"
           "|---|---|---|---|---|\n", total ? "total time" : "step time");
    double *dev = calloc(n + 1, sizeof *dev);
    /* per model, then all of them together (model "" = every one); validation rows first */
    for (size_t i = 0; dev && i <= n; i++) {
        const char *name = i < n ? o[i].model : "";
        int first = 1;
        for (size_t j = 0; i < n && j < i; j++)
            first &= strcmp(o[j].model, name) != 0;
        if (!first || (i < n && o[i].error))
            continue;
        print_summary_row(o, n, name, 0, total, dev);
        print_summary_row(o, n, name, 1, total, dev);
    }
    free(dev);
}

/* The validation table: predicted against published per-step time, each row
 * marked as validation or calibration (a device was fitted to it), with the
 * median and worst |predicted / published - 1| per model and role. */
static void print_markdown(const outcome *o, char **files, size_t n)
{
    print_collectives_markdown(o, files, n);
    size_t training = 0;
    for (size_t i = 0; i < n; i++)
        training += !o[i].coll_metric;
    if (!training)
        return;
    printf("| scenario | model | accelerator | role | predicted step (s) | published step (s) | ratio | predicted total "
           "| published total | ratio |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const char *base = strrchr(files[i], '/');
        base = base ? base + 1 : files[i];
        if (o[i].coll_metric)
            continue;
        if (o[i].error) {
            printf("| %s | | | | error: %s | | | | | |\n", base, o[i].message);
            continue;
        }
        printf("| %s | %s | %s | %s | %.4g |", base, o[i].model, o[i].accelerator,
               o[i].calibration ? "calibration" : "validation", o[i].step_time_s);
        if (o[i].ref_step_time_s > 0)
            printf(" %.4g | %.3f |", o[i].ref_step_time_s, o[i].step_time_s / o[i].ref_step_time_s);
        else
            printf(" - | - |");
        printf(" %.4g s |", o[i].tta_s);
        if (o[i].ref_time_s > 0)
            printf(" %.4g s | %.3f |\n", o[i].ref_time_s, o[i].tta_s / o[i].ref_time_s);
        else
            printf(" - | - |\n");
    }
    print_summary(o, n, 0);
    print_summary(o, n, 1);
}

/* The JSON, Markdown or text summary and the JUnit file; TT_EINPUT when a
 * scenario could not run (an input error: CI must tell it from a moved
 * prediction), else TT_EFAIL when one did not pass. */
static int report_outcomes(const outcome *out, char **files, size_t n, const file_list *skipped, int as_json,
                           int markdown, const char *junit)
{
    size_t passed = 0, errors = 0;
    for (size_t i = 0; i < n; i++) {
        passed += out[i].passed;
        errors += out[i].error != 0;
    }
    if (as_json) {
        json_t *list = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_pack("{s:s, s:s, s:b, s:f}", "name", out[i].name, "file", files[i], "passed",
                                  out[i].passed, "step_time_s", out[i].step_time_s);
            if (!out[i].passed)
                json_object_set_new(e, "message", json_string(out[i].message));
            json_array_append_new(list, e);
        }
        json_t *skip = json_array();
        for (size_t i = 0; i + 1 < skipped->n; i += 2)
            json_array_append_new(skip, json_pack("{s:s, s:s}", "file", skipped->v[i], "why", skipped->v[i + 1]));
        json_t *doc = json_pack("{s:o, s:i, s:i, s:o}", "scenarios", list, "passed", (int)passed, "failed",
                                (int)(n - passed), "skipped", skip);
        cli_print_json(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
        json_decref(doc);
    } else if (markdown) {
        print_markdown(out, files, n);
    } else {
        printf("\n%zu of %zu scenarios passed", passed, n);
        if (skipped->n)
            printf("; %zu other JSON file%s skipped, not scenarios", skipped->n / 2, skipped->n == 2 ? "" : "s");
        printf("\n");
    }
    if (junit && parallel_is_writer()) {
        tt_error err = {0};
        junit_case *cases = calloc(n, sizeof *cases);
        junit_bound *bounds = calloc(n * SCENARIO_MAX_EXPECT + 1, sizeof *bounds);
        for (size_t i = 0; cases && bounds && i < n; i++) {
            junit_bound *b = bounds + i * SCENARIO_MAX_EXPECT;
            for (size_t k = 0; k < out[i].n_bounds; k++)
                b[k] = (junit_bound){out[i].bounds[k].metric, out[i].bounds[k].value, out[i].bounds[k].min,
                                     out[i].bounds[k].max, out[i].bounds[k].passed};
            cases[i] = (junit_case){out[i].name, files[i], out[i].passed, out[i].error != 0, out[i].message,
                                    out[i].wall_s, b, out[i].n_bounds};
        }
        int rc = cases && bounds ? junit_write(junit, "ttasim check", cases, n, &err)
                                 : tt_error_set(&err, TT_EINTERNAL, "out of memory");
        free(bounds);
        free(cases);
        if (rc)
            return cli_report_error(rc, err.msg);
    }
    if (errors)
        fprintf(stderr, "ttasim check: %zu of %zu scenarios could not run (input errors above)\n", errors, n);
    return errors ? TT_EINPUT : passed == n ? TT_OK : TT_EFAIL;
}

/* The scenarios that ran, in file order, appended to the --db database. */
static int append_db(const db_cli *db, char **files, const outcome *out, json_t **docs, size_t n, tt_error *err)
{
    resultsdb_report *reps = calloc(n + 1, sizeof *reps);
    size_t k = 0;
    if (!reps)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (docs[i])
            reps[k++] = (resultsdb_report){files[i], out[i].name, docs[i], out[i].coll_metric ? NULL : "sweep"};
    int rc = db_cli_append(db, reps, k, err);
    free(reps);
    return rc;
}

static int check_main(int argc, char **argv)
{
    static const struct option opts[] = {{"junit", required_argument, NULL, 'u'},
                                         {"json", no_argument, NULL, 'J'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"markdown", no_argument, NULL, 'm'},
                                         {"set", required_argument, NULL, 'S'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"db", required_argument, NULL, 'D'},
                                         {NULL, 0, NULL, 0}};
    const char *junit = NULL;
    int as_json = 0, markdown = 0, quiet = 0, jobs = parallel_jobs_default(), c;
    char *sets[CLI_MAX_SETS];
    size_t n_sets = 0;
    db_cli db = {NULL, argc, argv, sets, 0};
    tt_error err = {0};
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":j:", opts, NULL)) != -1) {
        if (c == 'u')
            junit = optarg;
        else if (c == 'D')
            db.path = optarg;
        else if (c == 'J')
            as_json = 1;
        else if (c == 'j') {
            if (parallel_jobs_parse(optarg, &jobs, &err))
                return cli_usage_error(&cmd_check, "%s", err.msg);
        } else if (c == 'm')
            markdown = 1;
        else if (c == 'q')
            quiet = 1;
        else if (c == 'S') {
            if (cli_add_set(&cmd_check, sets, &n_sets, optarg))
                return TT_EINPUT;
        } else
            return cli_bad_option(&cmd_check, argv, optind, optopt, opts, c == ':');
    }
    if (optind == argc)
        return cli_usage_error(&cmd_check, "give at least one scenario file or directory");
    db.n_sets = n_sets;
    file_list files = {0}, skipped = {0};
    int rc = TT_OK;
    for (int i = optind; rc == TT_OK && i < argc; i++)
        rc = collect(argv[i], &files, &skipped, &err);
    for (size_t i = 0; rc == TT_OK && i + 1 < skipped.n && parallel_is_writer(); i += 2)
        fprintf(stderr, "ttasim check: skipped %s: %s\n", skipped.v[i], skipped.v[i + 1]);
    if (rc == TT_OK && files.n == 0)
        rc = tt_error_set(&err, TT_EINPUT, "no scenario files found under the paths given");
    if (rc == TT_OK && (junit || db.path)) { /* the JUnit file and the database must not replace a scenario */
        const char **what = malloc(files.n * sizeof *what), *outs[] = {junit, db.path};
        for (size_t i = 0; what && i < files.n; i++)
            what[i] = "a scenario";
        rc = what ? outfile_check_distinct(outs, 2, (const char *const *)files.v, what, files.n, &err)
                  : tt_error_set(&err, TT_EINTERNAL, "out of memory");
        if (rc == TT_OK && db.path)
            rc = resultsdb_check_path(db.path, (const char *const *)files.v, what, files.n, &err);
        free(what);
    }
    if (rc) {
        file_list_free(&files);
        file_list_free(&skipped);
        return cli_report_error(rc, err.msg);
    }
    outcome *out = calloc(files.n, sizeof *out);
    json_t **docs = db.path ? calloc(files.n, sizeof *docs) : NULL;
    int table = !as_json && !markdown;
    /* several scenarios share the workers, a single one its sweep points; with
     * --db every scenario's document must reach this process: one at a time */
    check_run run = {files.v, sets, n_sets, out, docs, 0, table, files.n > 1 && !docs ? 1 : jobs};
    rc = out && (docs || !db.path) ? TT_OK : tt_error_set(&err, TT_EINTERNAL, "out of memory");
    if (rc == TT_OK && table)
        printf("%-6s %-40s %12s %12s  %s\n", "result", "scenario", "step_time_s", "published", "file / reason");
    progress_start("check", "scenarios", quiet);
    progress_update(0, files.n);
    if (rc == TT_OK && docs)
        for (size_t i = 0; i < files.n; i++) {
            check_task(&run, i, &out[i]);
            scenario_done(&run, i + 1, files.n);
        }
    else if (rc == TT_OK)
        rc = parallel_run(files.n, jobs, sizeof *out, check_task, scenario_done, &run, out, &err);
    if (rc == TT_OK) /* under MPI the other ranks' rows arrive all at once, at the end */
        print_rows(&run, files.n);
    if (rc == TT_OK) {
        rc = report_outcomes(out, files.v, files.n, &skipped, as_json, markdown, junit);
        int db_rc = docs ? append_db(&db, files.v, out, docs, files.n, &err) : TT_OK;
        if (db_rc) /* an input error beats a missed bound */
            rc = cli_report_error(db_rc, err.msg);
    } else {
        cli_report_error(rc, err.msg);
    }
    for (size_t i = 0; docs && i < files.n; i++)
        json_decref(docs[i]);
    free(docs);
    file_list_free(&files);
    file_list_free(&skipped);
    free(out);
    return rc;
}

const cli_command cmd_check = {
    "check", "run scenarios and their expectations; pass/fail table, JUnit XML",
    "check PATH... [--junit F] [--json | --markdown] [--set PATH=VALUE]... [-j|--jobs N]\n"
    "           [--db FILE] [--quiet]", check_main, check_help,
};
