/* ttasim run SCENARIO.json [--json] [--csv F] [--svg F]: the main job. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "sim/cli/cli.h"
#include "sim/report/expect.h"
#include "sim/report/report.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"
#include "sim/report/svg.h"

extern const cli_command cmd_run;

/* The report on stdout and in the scenario's "outputs.json" file alike. */
#define REPORT_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(12))

static void run_help(FILE *out)
{
    fprintf(out,
            "Replays one training step of the scenario's workload trace on its platform\n"
            "(collectives simulated with SimGrid), then prints the per-step cost and the\n"
            "steps, time, money and energy to reach the target accuracy, for the\n"
            "scenario and every point of its sweep. Schema: scenarios/README.md.\n\n"
            "  --json      print one JSON document on stdout\n"
            "  --csv F     write one CSV row per point to F\n"
            "  --svg F     write plots to F (step-time breakdown, time to accuracy and\n"
            "              cost against batch or nodes, scaling efficiency)\n"
            "  --help      this text\n\n"
            "The scenario's \"outputs\" name the same files. Exit status 1 when a bound in\n"
            "the scenario's \"expect\" is violated (each one is named on stderr).\n");
}

static void progress(size_t done, size_t total)
{
    if (!isatty(STDERR_FILENO))
        return;
    fprintf(stderr, "\rsweep: %zu/%zu points%s", done, total, done == total ? "\n" : "");
    fflush(stderr);
}

static int write_outputs(const scenario *sc, const run_result *r, json_t *doc, const char *csv,
                         const char *svg, tt_error *err)
{
    int rc = TT_OK;
    const char *c = csv ? csv : sc->out_csv, *s = svg ? svg : sc->out_svg;
    if (c)
        rc = report_csv(c, sc, r, err);
    if (rc == TT_OK && s)
        rc = svg_write(s, sc, r, err);
    if (rc == TT_OK && sc->out_json && json_dump_file(doc, sc->out_json, REPORT_JSON_FLAGS))
        rc = tt_error_set(err, TT_EINPUT, "%s: cannot write the JSON output", sc->out_json);
    return rc;
}

static int run_main(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"csv", required_argument, NULL, 'c'},
                                         {"svg", required_argument, NULL, 's'},
                                         {NULL, 0, NULL, 0}};
    int as_json = 0, c;
    const char *csv = NULL, *svg = NULL;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c == 'j')
            as_json = 1;
        else if (c == 'c')
            csv = optarg;
        else if (c == 's')
            svg = optarg;
        else
            return cli_bad_option(&cmd_run, argv, optind, optopt, opts, c == ':');
    }
    if (optind != argc - 1)
        return cli_usage_error(&cmd_run, optind == argc ? "missing the scenario file"
                                                        : "expected one scenario file");
    tt_error err = {0};
    scenario sc;
    int rc = scenario_load(argv[optind], &sc, &err);
    if (rc)
        return cli_report_error(rc, err.msg);
    run_result r;
    rc = run_scenario(&sc, &r, progress, &err);
    json_t *doc = NULL;
    int failed = 0;
    char failures[2048];
    if (rc == TT_OK) {
        doc = report_json(&sc, &r);
        rc = expect_check(&sc, doc, &failed, failures, sizeof failures, &err);
    }
    if (rc == TT_OK)
        rc = write_outputs(&sc, &r, doc, csv, svg, &err);
    if (rc == TT_OK) {
        if (as_json) {
            cli_print_json(doc, REPORT_JSON_FLAGS);
        } else {
            report_text(stdout, &sc, &r);
        }
        if (failed) {
            fprintf(stderr, "ttasim run: %s: %d expectation%s not met: %s\n", sc.name, failed,
                    failed > 1 ? "s" : "", failures);
            rc = TT_EFAIL;
        }
    } else {
        cli_report_error(rc, err.msg);
    }
    json_decref(doc);
    run_result_free(&r);
    scenario_free(&sc);
    return rc;
}

const cli_command cmd_run = {
    "run", "per-step cost and time-to-accuracy of a scenario",
    "run SCENARIO.json [--json] [--csv F] [--svg F]", run_main, run_help,
};
