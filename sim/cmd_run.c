/* ttasim run SCENARIO.json [--json]: the main job. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "common/error.h"
#include "common/units.h"
#include "sim/cli.h"
#include "sim/run.h"
#include "sim/scenario.h"

extern const cli_command cmd_run;

static void run_help(FILE *out)
{
    fprintf(out,
            "Simulates one training step of the scenario on its platform and prints the\n"
            "per-step cost.\n\n"
            "  --json      print one JSON document on stdout\n"
            "  --help      this text\n");
}

static json_t *result_json(const scenario *sc, const run_result *r)
{
    json_t *step = json_pack("{s:f, s:f, s:f, s:f, s:f}", "time_s", r->step.time_s,
                             "compute_s", r->step.compute_s, "comm_s", r->step.comm_s,
                             "exposed_comm_s", r->step.exposed_comm_s,
                             "optimizer_s", r->step.optimizer_s);
    return json_pack("{s:s, s:s, s:i, s:s, s:f, s:o, s:{s:f}}", "scenario", sc->name,
                     "scenario_file", sc->path, "ranks", r->ranks, "network",
                     sc->network == NETWORK_IDEAL ? "ideal" : "calibrated", "gradient_bytes",
                     r->gradient_bytes, "step", step, "closed_form", "comm_s",
                     r->closed_form_comm_s);
}

static void print_text(const scenario *sc, const run_result *r)
{
    char b[32];
    printf("scenario        %s (%s)\n", sc->name, sc->path);
    printf("platform        %d nodes x %d accelerators = %d ranks, network %s\n",
           sc->cluster.nodes, sc->cluster.accelerators_per_node, r->ranks,
           sc->network == NETWORK_IDEAL ? "ideal" : "calibrated");
    printf("workload        ring allreduce of %s bytes per step\n",
           units_format_bytes(r->gradient_bytes, b, sizeof b));
    printf("\n%-22s %14s\n", "per step", "seconds");
    printf("%-22s %14.6f\n", "step.time_s", r->step.time_s);
    printf("%-22s %14.6f\n", "step.compute_s", r->step.compute_s);
    printf("%-22s %14.6f\n", "step.comm_s", r->step.comm_s);
    printf("%-22s %14.6f\n", "step.exposed_comm_s", r->step.exposed_comm_s);
    printf("%-22s %14.6f\n", "step.optimizer_s", r->step.optimizer_s);
    double rel = r->closed_form_comm_s > 0 ? r->step.comm_s / r->closed_form_comm_s - 1 : 0;
    printf("\nalpha-beta closed form of the allreduce: %.6f s (simulated %+.3f %%)\n",
           r->closed_form_comm_s, 100 * rel);
}

static int run_main(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
    int as_json = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c == 'j')
            as_json = 1;
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
    rc = run_scenario(&sc, &r, &err);
    if (rc) {
        scenario_free(&sc);
        return cli_report_error(rc, err.msg);
    }
    if (as_json) {
        json_t *doc = result_json(&sc, &r);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        print_text(&sc, &r);
    }
    scenario_free(&sc);
    return TT_OK;
}

const cli_command cmd_run = {
    "run", "per-step cost and time-to-accuracy of a scenario",
    "run SCENARIO.json [--json]", run_main, run_help,
};
