/* ttasim run SCENARIO.json [--json] [--csv F] [--svg F]: the main job. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/outfile.h"
#include "common/parallel.h"
#include "sim/cli/cli.h"
#include "sim/cli/cmd_run.h"
#include "sim/cli/progress.h"
#include "sim/cli/shard.h"
#include "sim/report/coll_report.h"
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
            "  --out-dir D write the scenario's \"outputs\" under D instead of next to\n"
            "              the scenario file\n"
            CLI_SET_HELP
            "  -j, --jobs N  simulate N sweep points at a time (default: the processors\n"
            "              this process may use); the output is the same for any N\n"
            "  --shard I/N run only sweep points i with i mod N = I (I from 0) and print\n"
            "              them as a shard document; 'ttasim merge' turns the N shards\n"
            "              into this command's reports (batch job arrays, e.g. Slurm)\n"
            "  --links N   the N busiest links of one step of the scenario's own point\n"
            "              (class, ends, bytes, busy time, utilisation over the step) and\n"
            "              the bottleneck class, in the text and as \"links\" in --json\n"
            "  --quiet     no progress on stderr (a bar on a terminal, else a line now\n"
            "              and then with the points done, elapsed and remaining)\n"
            "  --help      this text\n\n"
            "The scenario's \"outputs\" name the same files; relative ones go next to the\n"
            "scenario (or under --out-dir). Outputs are replaced whole or not at all, and\n"
            "one that is also an input of the run is refused. Exit status 1 when a bound\n"
            "in the scenario's \"expect\" is violated (each one is named on stderr).\n");
}

/* The run's output files: the command line's, else the scenario's (resolved). */
typedef struct run_outputs {
    char *json, *csv, *svg;
} run_outputs;

static char *resolve_output(const scenario *sc, const char *given, const char *out_dir, tt_error *err,
                            int *rc)
{
    if (!given || *rc)
        return NULL;
    char *p = scenario_output_path(sc, given, out_dir);
    if (!p)
        *rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
    return p;
}

/* Resolves the outputs and refuses any that would overwrite an input or another output. */
static int plan_outputs(const scenario *sc, const char *csv, const char *svg, const char *out_dir,
                        run_outputs *o, tt_error *err)
{
    int rc = TT_OK;
    o->json = resolve_output(sc, sc->out_json, out_dir, err, &rc);
    o->csv = csv ? strdup(csv) : resolve_output(sc, sc->out_csv, out_dir, err, &rc);
    o->svg = svg ? strdup(svg) : resolve_output(sc, sc->out_svg, out_dir, err, &rc);
    if (rc)
        return rc;
    const char *inputs[SCENARIO_MAX_PHASES + 3], *what[SCENARIO_MAX_PHASES + 3];
    size_t n = scenario_inputs(sc, inputs, what, sizeof inputs / sizeof *inputs);
    const char *outs[] = {o->json, o->csv, o->svg};
    return outfile_check_distinct(outs, 3, inputs, what, n, err);
}

static void free_outputs(run_outputs *o)
{
    free(o->json);
    free(o->csv);
    free(o->svg);
}

static int write_json(const char *path, json_t *doc, tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the JSON output", &o, &f, err);
    if (rc)
        return rc;
    json_dumpf(doc, f, REPORT_JSON_FLAGS);
    fputc('\n', f);
    return outfile_commit(o, err);
}

static int write_outputs(const scenario *sc, const run_result *r, json_t *doc, const run_outputs *o,
                         tt_error *err)
{
    int rc = TT_OK;
    if (o->csv)
        rc = report_csv(o->csv, sc, r, err);
    if (rc == TT_OK && o->svg)
        rc = svg_write(o->svg, sc, r, err);
    if (rc == TT_OK && o->json)
        rc = write_json(o->json, doc, err);
    return rc;
}

/* A collective measurement: one nccl-tests-like figure, its reference and
 * expectations; only the JSON output applies. */
static int run_collective(const scenario *sc, const run_outputs *outs, int as_json)
{
    tt_error err = {0};
    if (outs->csv || outs->svg) {
        tt_error_set(&err, TT_EINPUT, "%s: a collective scenario has no sweep to write as CSV or SVG; remove "
                     "--csv/--svg and outputs.csv/svg", sc->path);
        return cli_report_error(err.code, err.msg);
    }
    coll_scenario_result r;
    int failed = 0, rc = coll_scenario_run(sc, &r, &err);
    char failures[2048];
    json_t *doc = NULL;
    if (rc == TT_OK) {
        doc = coll_report_json(sc, &r);
        rc = expect_check(sc, doc, &failed, failures, sizeof failures, &err);
    }
    if (rc == TT_OK && outs->json && parallel_is_writer())
        rc = write_json(outs->json, doc, &err);
    if (rc == TT_OK) {
        if (as_json)
            cli_print_json(doc, REPORT_JSON_FLAGS);
        else
            coll_report_text(stdout, sc, &r);
        if (failed) {
            fprintf(stderr, "ttasim run: %s: %d expectation%s not met: %s\n", sc->name, failed,
                    failed > 1 ? "s" : "", failures);
            rc = TT_EFAIL;
        }
    } else {
        cli_report_error(rc, err.msg);
    }
    json_decref(doc);
    return rc;
}

/* The scenario's points: run here (all, or a shard's, printed as a shard
 * document), or taken from shard files (merge). */
static int run_points(const char *path, char *const *sets, size_t n_sets, const scenario *sc, run_options *opt,
                      char *const *shard_files, size_t n_shards, run_result *r, tt_error *err)
{
    void *records = NULL;
    int rc = TT_OK;
    if (shard_files) {
        size_t n = run_sweep_points(sc);
        records = calloc(n + 1, run_record_bytes());
        rc = records ? shard_read_all(shard_files, n_shards, path, sets, n_sets, n, records, err)
                     : tt_error_set(err, TT_EINTERNAL, "out of memory");
        opt->records = records;
    }
    if (rc == TT_OK)
        rc = run_scenario(sc, opt, r, err);
    else
        memset(r, 0, sizeof *r);
    free(records);
    return rc;
}

int run_command(const cli_command *cmd, int argc, char **argv, int merge)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'J'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"shard", required_argument, NULL, 'H'},
                                         {"csv", required_argument, NULL, 'c'},
                                         {"svg", required_argument, NULL, 's'},
                                         {"out-dir", required_argument, NULL, 'o'},
                                         {"set", required_argument, NULL, 'S'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"links", required_argument, NULL, 'L'},
                                         {NULL, 0, NULL, 0}};
    int as_json = 0, quiet = 0, c;
    run_options opt = {.jobs = parallel_jobs_default(), .progress = progress_update};
    char *sets[CLI_MAX_SETS];
    size_t n_sets = 0;
    const char *csv = NULL, *svg = NULL, *out_dir = NULL;
    tt_error err = {0};
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":j:", opts, NULL)) != -1) {
        if (c == 'J')
            as_json = 1;
        else if (c == 'j') {
            if (parallel_jobs_parse(optarg, &opt.jobs, &err))
                return cli_usage_error(cmd, "%s", err.msg);
        } else if (c == 'H' && !merge) {
            if (shard_parse(optarg, &opt.shard, &opt.shards, &err))
                return cli_usage_error(cmd, "%s", err.msg);
        } else if (c == 'c')
            csv = optarg;
        else if (c == 's')
            svg = optarg;
        else if (c == 'o')
            out_dir = optarg;
        else if (c == 'q')
            quiet = 1;
        else if (c == 'L' && !merge) {
            long v;
            if (cli_int(cmd, "--links", optarg, 1, LINK_USAGE_MAX, &v))
                return TT_EINPUT;
            opt.links = (int)v;
        }
        else if (c == 'S') {
            if (cli_add_set(cmd, sets, &n_sets, optarg))
                return TT_EINPUT;
        } else
            return cli_bad_option(cmd, argv, optind, optopt, opts, c == ':');
    }
    if (optind == argc)
        return cli_usage_error(cmd, "missing the scenario file");
    if (merge ? optind + 1 == argc : optind + 1 != argc)
        return cli_usage_error(cmd, merge ? "give the scenario file, then its shard files" : "expected one scenario file");
    if (opt.shards > 1 && (as_json || csv || svg || out_dir))
        return cli_usage_error(cmd, "--shard prints the shard's document for 'ttasim merge', which writes the "
                                    "reports: drop --json, --csv, --svg and --out-dir");
    scenario sc;
    int rc = scenario_load_set(argv[optind], sets, n_sets, &sc, &err);
    if (rc)
        return cli_report_error(rc, err.msg);
    run_outputs outs = {0};
    if (opt.shards <= 1 && (rc = plan_outputs(&sc, csv, svg, out_dir, &outs, &err))) {
        free_outputs(&outs);
        scenario_free(&sc);
        return cli_report_error(rc, err.msg);
    }
    if (sc.is_collective) {
        rc = run_collective(&sc, &outs, as_json);
        free_outputs(&outs);
        scenario_free(&sc);
        return rc;
    }
    if (sc.is_collective) {
        rc = run_collective(&sc, &outs, as_json);
        free_outputs(&outs);
        scenario_free(&sc);
        return rc;
    }
    run_result r;
    char what[200];
    snprintf(what, sizeof what, "%s %s", cmd->name, sc.name);
    progress_start(what, "points", quiet || merge);
    rc = run_points(argv[optind], sets, n_sets, &sc, &opt, merge ? argv + optind + 1 : NULL,
                    (size_t)(argc - optind - 1), &r, &err);
    json_t *doc = NULL;
    int failed = 0;
    char failures[2048];
    if (rc == TT_OK && opt.shards > 1) {
        rc = shard_write(stdout, argv[optind], sets, n_sets, &opt, &r, &err);
    } else if (rc == TT_OK) {
        doc = report_json(&sc, &r);
        rc = expect_check(&sc, doc, &failed, failures, sizeof failures, &err);
        if (rc == TT_OK && parallel_is_writer())
            rc = write_outputs(&sc, &r, doc, &outs, &err);
    }
    if (rc == TT_OK && doc) {
        if (as_json) {
            cli_print_json(doc, REPORT_JSON_FLAGS);
        } else {
            report_text(stdout, &sc, &r);
        }
        if (failed) {
            fprintf(stderr, "ttasim %s: %s: %d expectation%s not met: %s\n", cmd->name, sc.name, failed,
                    failed > 1 ? "s" : "", failures);
            rc = TT_EFAIL;
        }
    } else if (rc) {
        cli_report_error(rc, err.msg);
    }
    json_decref(doc);
    free_outputs(&outs);
    run_result_free(&r);
    scenario_free(&sc);
    return rc;
}

static int run_main(int argc, char **argv)
{
    return run_command(&cmd_run, argc, argv, 0);
}

const cli_command cmd_run = {
    "run", "per-step cost and time-to-accuracy of a scenario",
    "run SCENARIO.json [--json] [--csv F] [--svg F] [--out-dir D] [--set PATH=VALUE]... [-j N] [--shard I/N] "
    "[--quiet]", run_main, run_help,
};
