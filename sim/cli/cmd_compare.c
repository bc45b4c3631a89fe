/* ttasim compare A.json B.json ... [--json] [--csv F] [--svg F]: several
 * scenarios run and set side by side, one table and one overlay plot. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/outfile.h"
#include "common/parallel.h"
#include "sim/cli/cli.h"
#include "sim/cli/db_cli.h"
#include "sim/cli/progress.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"
#include "sim/report/compare.h"
#include "sim/report/report.h"
#include "sim/report/svg.h"

extern const cli_command cmd_compare;

#define COMPARE_MAX 16

static void compare_help(FILE *out)
{
    fprintf(out,
            "Runs every scenario given (each with its sweep) and sets them side by side:\n"
            "one table of every point, per value of the swept quantity (global batch,\n"
            "else nodes) the fastest and the cheapest, and what makes the others slower\n"
            "(the part of the step that grows most, e.g. exposed communication).\n"
            "Cheapest is by owning cost (capital over the lifetime plus energy) when every\n"
            "device has a purchase price, else by renting cost. Over every point of every\n"
            "scenario (platforms, node counts, fabrics: a purchase search), the Pareto\n"
            "front of time to accuracy against cost: the points no other is both faster\n"
            "and cheaper than.\n\n"
            "  --deadline D  also the cheapest point reaching the target within D (seconds,\n"
            "              or with a unit: 90min, 36h, 30d); exit 1 when none does\n"
            "  --budget USD  also the fastest point costing at most USD (2500000, 2.5M,\n"
            "              800k); exit 1 when none does\n"
            "  --json      print one JSON document on stdout (each scenario's run\n"
            "              document under \"scenarios\", the verdicts under \"verdicts\", the\n"
            "              front and the picks under \"purchase\")\n"
            "  --csv F     write one CSV row per point of every scenario to F\n"
            "  --svg F     write one overlay plot to F (step breakdown, time to accuracy,\n"
            "              cost, MFU against the swept quantity, one series per scenario;\n"
            "              cost against time to accuracy with the Pareto front); after\n"
            "              --set, the legend names the files and the title the changes\n"
            CLI_SET_HELP
            "              (applied to every scenario)\n"
            "  -j, --jobs N  simulate N sweep points of each scenario at a time (default:\n"
            "              the processors this process may use); same output for any N\n"
            DB_CLI_HELP
            "  --quiet     no progress on stderr\n"
            "  --help      this text\n\n"
            "At most %d scenarios. Outputs are replaced whole or not at all, and one that\n"
            "is also an input is refused.\n",
            COMPARE_MAX);
}

/* A positive number with an optional suffix of `units` (names[i] scales by
 * factors[i]; "" is 1) into *out; -1 when text is not one. */
static int parse_scaled(const char *text, const char *const *names, const double *factors, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || !(v > 0) || v > 1e30)
        return -1;
    for (size_t i = 0; names[i]; i++)
        if (!strcmp(end, names[i]))
            return *out = v * factors[i], 0;
    return -1;
}

typedef struct compare_job {
    size_t n;
    scenario sc[COMPARE_MAX];
    run_result r[COMPARE_MAX];
    compare_run runs[COMPARE_MAX];
} compare_job;

/* Refuses outputs that name an input of any scenario (or each other). */
static int check_outputs(const compare_job *j, const char *csv, const char *svg, const char *db, tt_error *err)
{
    enum { PER = SCENARIO_MAX_PHASES + 3 };
    const char *inputs[COMPARE_MAX * PER], *what[COMPARE_MAX * PER];
    size_t n = 0;
    for (size_t k = 0; k < j->n; k++)
        n += scenario_inputs(&j->sc[k], inputs + n, what + n, PER);
    const char *outs[] = {csv, svg, db};
    int rc = outfile_check_distinct(outs, 3, inputs, what, n, err);
    return rc || !db ? rc : resultsdb_check_path(db, inputs, what, n, err);
}

static int load_all(compare_job *j, char **files, char **sets, size_t n_sets, tt_error *err)
{
    int rc = TT_OK;
    size_t loaded = 0;
    while (loaded < j->n && (rc = scenario_load_set(files[loaded], sets, n_sets, &j->sc[loaded], err)) == TT_OK)
        loaded++;
    if (rc) { /* the failed one freed itself */
        for (size_t k = 0; k < loaded; k++)
            scenario_free(&j->sc[k]);
        j->n = 0;
    }
    return rc;
}

/* "4 scenarios compared: bert-large, resnet50; --set platform.nodes=128":
 * every model compared, once, and what --set changed. */
static void plot_title(const compare_job *j, char *const *sets, size_t n_sets, char *out, size_t n)
{
    size_t used = (size_t)snprintf(out, n, "%zu scenarios compared: ", j->n);
    for (size_t k = 0; k < j->n && used < n; k++) {
        size_t seen = 0;
        while (seen < k && strcmp(j->r[seen].model, j->r[k].model) != 0)
            seen++;
        if (seen == k)
            used += (size_t)snprintf(out + used, n - used, "%s%s", k ? ", " : "", j->r[k].model);
    }
    for (size_t i = 0; i < n_sets && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "; --set ", sets[i]);
}

static int run_all(compare_job *j, int jobs, int quiet, tt_error *err)
{
    int rc = TT_OK;
    for (size_t k = 0; rc == TT_OK && k < j->n; k++) {
        char what[300];
        snprintf(what, sizeof what, "compare %zu/%zu %s", k + 1, j->n, j->sc[k].name);
        progress_start(what, "points", quiet);
        run_options opt = {.jobs = jobs, .progress = progress_update};
        rc = run_scenario(&j->sc[k], &opt, &j->r[k], err);
        j->runs[k] = (compare_run){&j->sc[k], &j->r[k]};
    }
    return rc;
}

/* Every scenario's run document, as 'ttasim run --json' prints it, appended to the --db database. */
static int append_db(const db_cli *db, const compare_job *j, tt_error *err)
{
    resultsdb_report reps[COMPARE_MAX];
    for (size_t k = 0; k < j->n; k++)
        reps[k] = (resultsdb_report){j->sc[k].path, j->sc[k].name, report_json(&j->sc[k], &j->r[k]), "sweep"};
    int rc = TT_OK;
    for (size_t k = 0; k < j->n; k++)
        if (!reps[k].doc)
            rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
    if (rc == TT_OK)
        rc = db_cli_append(db, reps, j->n, err);
    for (size_t k = 0; k < j->n; k++)
        json_decref((json_t *)reps[k].doc);
    return rc;
}

static void free_job(compare_job *j, size_t loaded)
{
    for (size_t k = 0; k < loaded; k++) {
        run_result_free(&j->r[k]);
        scenario_free(&j->sc[k]);
    }
}

static int compare_main(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'J'},    {"csv", required_argument, NULL, 'c'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"svg", required_argument, NULL, 's'}, {"set", required_argument, NULL, 'S'},
                                         {"quiet", no_argument, NULL, 'q'},   {"db", required_argument, NULL, 'D'},
                                         {"deadline", required_argument, NULL, 'd'},
                                         {"budget", required_argument, NULL, 'b'},
                                         {NULL, 0, NULL, 0}};
    static const char *const durations[] = {"", "s", "min", "h", "d", NULL};
    static const double seconds[] = {1, 1, 60, 3600, 86400};
    static const char *const amounts[] = {"", "k", "M", "B", NULL};
    static const double dollars[] = {1, 1e3, 1e6, 1e9};
    pareto_limits lim = {0, 0};
    int as_json = 0, quiet = 0, jobs = parallel_jobs_default(), c;
    const char *csv = NULL, *svg = NULL;
    char *sets[CLI_MAX_SETS];
    size_t n_sets = 0;
    db_cli db = {NULL, argc, argv, sets, 0};
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":j:", opts, NULL)) != -1) {
        if (c == 'J')
            as_json = 1;
        else if (c == 'j') {
            tt_error bad = {0};
            if (parallel_jobs_parse(optarg, &jobs, &bad))
                return cli_usage_error(&cmd_compare, "%s", bad.msg);
        }
        else if (c == 'c')
            csv = optarg;
        else if (c == 's')
            svg = optarg;
        else if (c == 'q')
            quiet = 1;
        else if (c == 'D')
            db.path = optarg;
        else if (c == 'd') {
            if (parse_scaled(optarg, durations, seconds, &lim.deadline_s))
                return cli_usage_error(&cmd_compare, "--deadline %s: expected a positive duration in seconds or "
                                       "with a unit (90min, 36h, 30d)", optarg);
        } else if (c == 'b') {
            if (parse_scaled(optarg, amounts, dollars, &lim.budget_usd))
                return cli_usage_error(&cmd_compare, "--budget %s: expected a positive amount of US dollars "
                                       "(2500000, 2.5M, 800k)", optarg);
        }
        else if (c == 'S') {
            if (cli_add_set(&cmd_compare, sets, &n_sets, optarg))
                return TT_EINPUT;
        } else
            return cli_bad_option(&cmd_compare, argv, optind, optopt, opts, c == ':');
    }
    size_t n = (size_t)(argc - optind);
    db.n_sets = n_sets;
    if (n < 2)
        return cli_usage_error(&cmd_compare, "expected at least two scenario files, found %zu", n);
    if (n > COMPARE_MAX)
        return cli_usage_error(&cmd_compare, "at most %d scenarios, found %zu", COMPARE_MAX, n);
    compare_job *j = calloc(1, sizeof *j);
    if (!j)
        return cli_report_error(TT_EINTERNAL, "out of memory");
    j->n = n;
    tt_error err = {0};
    int rc = load_all(j, argv + optind, sets, n_sets, &err);
    if (rc == TT_OK) /* before hours of simulation, not after */
        rc = check_outputs(j, csv, svg, db.path, &err);
    if (rc == TT_OK)
        rc = run_all(j, jobs, quiet, &err);
    int writer = parallel_is_writer(); /* under mpirun, rank 0 alone */
    outfile_batch_begin(); /* both outputs or neither */
    if (rc == TT_OK && csv && writer) {
        const char *names[COMPARE_MAX];
        const run_result *rs[COMPARE_MAX];
        for (size_t k = 0; k < n; k++) {
            names[k] = j->sc[k].name;
            rs[k] = &j->r[k];
        }
        rc = report_csv_runs(csv, names, rs, n, &err);
    }
    if (rc == TT_OK && svg && writer) {
        char title[512], names[COMPARE_MAX][64];
        plot_title(j, sets, n_sets, title, sizeof title);
        svg_run sr[COMPARE_MAX];
        for (size_t k = 0; k < n; k++) { /* a name written for the file may no longer hold after --set */
            compare_file_name(&j->sc[k], names[k], sizeof names[k]);
            sr[k] = (svg_run){n_sets ? names[k] : j->sc[k].name, &j->r[k]};
        }
        rc = svg_write_runs(svg, title, sr, n, &lim, &err);
    }
    int end = outfile_batch_end(rc == TT_OK, &err);
    rc = rc ? rc : end;
    if (rc == TT_OK && db.path && writer)
        rc = append_db(&db, j, &err);
    if (rc == TT_OK) {
        if (as_json) {
            json_t *doc = compare_json(j->runs, n, &lim);
            cli_print_json(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
            json_decref(doc);
        } else {
            compare_text(stdout, j->runs, n, &lim);
        }
        char missed[160];
        if (compare_limits_missed(j->runs, n, &lim, missed, sizeof missed)) {
            fprintf(stderr, "ttasim compare: %s\n", missed);
            rc = TT_EFAIL;
        }
    } else {
        cli_report_error(rc, err.msg);
    }
    free_job(j, j->n);
    free(j);
    return rc;
}

const cli_command cmd_compare = {
    "compare", "several scenarios side by side: one table, one overlay plot, the fastest and cheapest",
    "compare A.json B.json ... [--json] [--csv F] [--svg F] [--deadline D] [--budget USD]\n"
    "           [--set PATH=VALUE]... [-j|--jobs N] [--db FILE] [--quiet]", compare_main,
    compare_help,
};
