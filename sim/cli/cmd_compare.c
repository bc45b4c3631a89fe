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
            "device has a purchase price, else by renting cost.\n\n"
            "  --json      print one JSON document on stdout (each scenario's run\n"
            "              document under \"scenarios\", the verdicts under \"verdicts\")\n"
            "  --csv F     write one CSV row per point of every scenario to F\n"
            "  --svg F     write one overlay plot to F (step breakdown, time to accuracy,\n"
            "              cost, MFU against the swept quantity, one series per scenario)\n"
            CLI_SET_HELP
            "              (applied to every scenario)\n"
            "  -j, --jobs N  simulate N sweep points of each scenario at a time (default:\n"
            "              the processors this process may use); same output for any N\n"
            "  --quiet     no progress on stderr\n"
            "  --help      this text\n\n"
            "At most %d scenarios. Outputs are replaced whole or not at all, and one that\n"
            "is also an input is refused.\n",
            COMPARE_MAX);
}

typedef struct compare_job {
    size_t n;
    scenario sc[COMPARE_MAX];
    run_result r[COMPARE_MAX];
    compare_run runs[COMPARE_MAX];
} compare_job;

/* Refuses outputs that name an input of any scenario (or each other). */
static int check_outputs(const compare_job *j, const char *csv, const char *svg, tt_error *err)
{
    enum { PER = SCENARIO_MAX_PHASES + 3 };
    const char *inputs[COMPARE_MAX * PER], *what[COMPARE_MAX * PER];
    size_t n = 0;
    for (size_t k = 0; k < j->n; k++)
        n += scenario_inputs(&j->sc[k], inputs + n, what + n, PER);
    const char *outs[] = {csv, svg};
    return outfile_check_distinct(outs, 2, inputs, what, n, err);
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
                                         {"quiet", no_argument, NULL, 'q'},   {NULL, 0, NULL, 0}};
    int as_json = 0, quiet = 0, jobs = parallel_jobs_default(), c;
    const char *csv = NULL, *svg = NULL;
    char *sets[CLI_MAX_SETS];
    size_t n_sets = 0;
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
        else if (c == 'S') {
            if (cli_add_set(&cmd_compare, sets, &n_sets, optarg))
                return TT_EINPUT;
        } else
            return cli_bad_option(&cmd_compare, argv, optind, optopt, opts, c == ':');
    }
    size_t n = (size_t)(argc - optind);
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
        rc = check_outputs(j, csv, svg, &err);
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
        char title[256];
        snprintf(title, sizeof title, "%zu scenarios compared: %s", n, j->r[0].model);
        svg_run sr[COMPARE_MAX];
        for (size_t k = 0; k < n; k++)
            sr[k] = (svg_run){j->sc[k].name, &j->r[k]};
        rc = svg_write_runs(svg, title, sr, n, &err);
    }
    int end = outfile_batch_end(rc == TT_OK, &err);
    rc = rc ? rc : end;
    if (rc == TT_OK) {
        if (as_json) {
            json_t *doc = compare_json(j->runs, n);
            cli_print_json(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
            json_decref(doc);
        } else {
            compare_text(stdout, j->runs, n);
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
    "compare A.json B.json ... [--json] [--csv F] [--svg F] [--set PATH=VALUE]... [-j|--jobs N] [--quiet]", compare_main,
    compare_help,
};
