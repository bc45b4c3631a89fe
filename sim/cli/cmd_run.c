/* ttasim run SCENARIO.json [--json] [--csv F] [--svg F] [--html F]: the main job. */
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
#include "sim/cli/db_cli.h"
#include "sim/cli/progress.h"
#include "sim/cli/shard.h"
#include "sim/engine/engine.h"
#include "sim/report/coll_report.h"
#include "sim/report/expect.h"
#include "sim/report/html.h"
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
            "  --html F    write one self-contained HTML page to F: the tables (per step,\n"
            "              to target, cost and energy, owning, resilience, the sweep), the\n"
            "              plots inline, the assumptions folded, and the validation status\n"
            "              of the model and accelerator (scenarios/published-validation.json);\n"
            "              each value names its --json key\n"
            "  --out-dir D write the scenario's \"outputs\" under D instead of next to\n"
            "              the scenario file\n"
            CLI_SET_HELP
            "  -j, --jobs N  simulate N sweep points at a time (default: the processors\n"
            "              this process may use); the output is the same for any N\n"
            "  --shard I/N run only sweep points i with i mod N = I (I from 0) and print\n"
            "              them as a shard document; 'ttasim merge' turns the N shards\n"
            "              into this command's reports (batch job arrays, e.g. Slurm)\n"
            DB_CLI_HELP
            "  --links N   the N busiest links of one step of the scenario's own point\n"
            "              (class, ends, bytes, busy time, utilisation over the step) and\n"
            "              the bottleneck class, in the text and as \"links\" in --json\n"
            "  --assumptions  list every assumption behind the numbers in the text report\n"
            "              (by default counted on one line; --json always lists them)\n"
            "  --quiet     no progress on stderr (a bar on a terminal, else a line now\n"
            "              and then with the points done, elapsed and remaining)\n"
            "  --help      this text\n\n"
            "The scenario's \"outputs\" name the same files; relative ones go next to the\n"
            "scenario (or under --out-dir). A run's outputs are replaced together, whole,\n"
            "or not at all; a FIFO or a device (/dev/stdout) is written in place; an\n"
            "output onto a file the run reads is refused. Exit status 1 when a bound in\n"
            "the scenario's \"expect\" is violated (each one is named on stderr).\n");
}

/* The run's output files: the command line's, else the scenario's (resolved). */
typedef struct run_outputs {
    char *json, *csv, *svg, *html;
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

/* Resolves the outputs and refuses any that would overwrite an input (the
 * scenario's files, a merge's shards) or another output; files the run
 * reads later are refused when the outputs are written (outfile.h). */
static int plan_outputs(const scenario *sc, const char *csv, const char *svg, const char *html, const char *db,
                        const char *out_dir, char *const *shards, size_t n_shards, run_outputs *o, tt_error *err)
{
    int rc = TT_OK;
    o->json = resolve_output(sc, sc->out_json, out_dir, err, &rc);
    o->csv = csv ? strdup(csv) : resolve_output(sc, sc->out_csv, out_dir, err, &rc);
    o->svg = svg ? strdup(svg) : resolve_output(sc, sc->out_svg, out_dir, err, &rc);
    o->html = html ? strdup(html) : resolve_output(sc, sc->out_html, out_dir, err, &rc);
    if (rc)
        return rc;
    const char *outs[] = {o->json, o->csv, o->svg, o->html, db};
    return shard_check_outputs(sc, shards, n_shards, outs, 5, db, err);
}

static void free_outputs(run_outputs *o)
{
    free(o->json);
    free(o->csv);
    free(o->svg);
    free(o->html);
}

static int write_json(const char *path, json_t *doc, tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the JSON output", &o, &f, err);
    if (rc)
        return rc;
    json_dumpf(doc, f, REPORT_JSON_FLAGS); /* a write error stays on the stream: commit reports it */
    fputc('\n', f);
    return outfile_commit(o, err);
}

/* All of a run's outputs or none: a failure leaves each as it was. */
static int write_outputs(const scenario *sc, const run_result *r, json_t *doc, const run_outputs *o,
                         tt_error *err)
{
    int rc = TT_OK;
    outfile_batch_begin();
    if (o->csv)
        rc = report_csv(o->csv, sc, r, err);
    if (rc == TT_OK && o->svg)
        rc = svg_write(o->svg, sc, r, err);
    if (rc == TT_OK && o->html)
        rc = html_write(o->html, sc, r, doc, err);
    if (rc == TT_OK && o->json)
        rc = write_json(o->json, doc, err);
    int end = outfile_batch_end(rc == TT_OK, err);
    return rc ? rc : end;
}

/* Every message of a run names its scenario file. */
static int run_error(const scenario *sc, int rc, tt_error *err)
{
    if (!strstr(err->msg, sc->path))
        tt_error_prefix(err, "%s: ", sc->path);
    return cli_report_error(rc, err->msg);
}

/* A collective measurement: one nccl-tests-like figure, its reference and
 * expectations; only the JSON output applies. */
static int run_collective(const scenario *sc, const run_outputs *outs, const db_cli *db, int as_json)
{
    tt_error err = {0};
    if (outs->csv || outs->svg || outs->html) {
        tt_error_set(&err, TT_EINPUT, "%s: a collective scenario has no sweep to write as CSV, SVG or HTML; remove "
                     "--csv/--svg/--html and outputs.csv/svg/html", sc->path);
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
    if (rc == TT_OK)
        rc = db_cli_append(db, &(resultsdb_report){sc->path, sc->name, doc, NULL}, 1, &err);
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
        run_error(sc, rc, &err);
    }
    json_decref(doc);
    return rc;
}

/* Each point of a sweep loads its platform at least once: a sweep whose
 * loads alone pass --max-time is refused before any runs, with the
 * estimate (the scenario's platform at each point's node count). */
static int check_sweep_time(const scenario *sc, const run_options *opt, tt_error *err)
{
    size_t n = run_sweep_points(sc), nb = sc->n_sweep_batch ? sc->n_sweep_batch : 1;
    size_t grid = nb * (sc->n_sweep_nodes ? sc->n_sweep_nodes : 1), points = 0;
    double cpu_s[SCENARIO_MAX_SWEEP + 1] = {0}, total = 0; /* per node count (last: the scenario's own) */
    int shards = opt->shards > 1 ? opt->shards : 1;
    if (n == 0) /* the scenario's own load: its simulation refuses it */
        return TT_OK;
    for (size_t i = 0; i <= n; i++) {
        size_t k = i < n && sc->n_sweep_nodes ? (i % grid) / nb : SCENARIO_MAX_SWEEP;
        if (i < n && (int)(i % (size_t)shards) != opt->shard)
            continue;
        if (cpu_s[k] == 0) {
            platform_options po = scenario_platform_options(sc, k < SCENARIO_MAX_SWEEP ? sc->sweep_nodes[k] : 0);
            tt_error ignored = {0}; /* a platform that does not load is the run's error, named there */
            platform *p = platform_load(sc->platform, &po, &ignored);
            platform_load_cost c = {0};
            if (p)
                platform_estimate(p, platform_nodes(p), 1, &c);
            platform_free(p);
            cpu_s[k] = c.cpu_s > 0 ? c.cpu_s : 1e-300;
        }
        total += cpu_s[k];
        points += i < n;
    }
    if (total <= sim_max_load_time())
        return TT_OK;
    return tt_error_set(err, TT_EINPUT, "%s: $.sweep: its %zu points%s would take at least %.3g CPU seconds to load "
                        "their platforms (one load each), more than --max-time %g; sweep fewer points, run them as "
                        "shards (--shard I/N), or set --max-time SECONDS", sc->path, points,
                        shards > 1 ? " in this shard" : "", total, sim_max_load_time());
}

/* The scenario's points: run here (all, or a shard's, printed as a shard
 * document), or taken from shard files (merge). */
static int run_points(const shard_origin *origin, const scenario *sc, run_options *opt, char *const *shard_files,
                      size_t n_shards, run_result *r, tt_error *err)
{
    void *records = NULL;
    shard_set *shards = NULL;
    int rc = TT_OK;
    if (shard_files) {
        size_t n = run_sweep_points(sc);
        records = calloc(n + 1, run_record_bytes());
        rc = records ? shard_set_read(shard_files, n_shards, origin, n, records, &shards, err)
                     : tt_error_set(err, TT_EINPUT, "%s: out of memory for %zu points; free some memory", sc->path, n);
        opt->records = records;
    }
    if (rc == TT_OK)
        rc = run_scenario(sc, opt, r, err);
    else
        memset(r, 0, sizeof *r);
    if (rc == TT_OK && shards) /* the shards ran on the files this merge read */
        rc = shard_set_check_inputs(shards, err);
    shard_set_free(shards);
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
                                         {"html", required_argument, NULL, 'T'},
                                         {"out-dir", required_argument, NULL, 'o'},
                                         {"set", required_argument, NULL, 'S'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"assumptions", no_argument, NULL, 'A'},
                                         {"links", required_argument, NULL, 'L'},
                                         {"db", required_argument, NULL, 'D'},
                                         {NULL, 0, NULL, 0}};
    int as_json = 0, quiet = 0, all_assumptions = 0, c;
    run_options opt = {.jobs = parallel_jobs_default(), .progress = progress_update};
    char *sets[CLI_MAX_SETS];
    size_t n_sets = 0;
    const char *csv = NULL, *svg = NULL, *html = NULL, *out_dir = NULL;
    db_cli db = {NULL, argc, argv, sets, 0};
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
        else if (c == 'T')
            html = optarg;
        else if (c == 'o')
            out_dir = optarg;
        else if (c == 'D')
            db.path = optarg;
        else if (c == 'q')
            quiet = 1;
        else if (c == 'A')
            all_assumptions = 1;
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
    if (opt.shards > 0 && (as_json || csv || svg || html || out_dir || db.path))
        return cli_usage_error(cmd, "--shard prints the shard's document for 'ttasim merge', which writes the "
                                    "reports: drop --json, --csv, --svg, --html, --out-dir and --db");
    db.n_sets = n_sets;
    scenario sc;
    int rc = scenario_load_set(argv[optind], sets, n_sets, &sc, &err);
    if (rc == TT_OK && (rc = expect_validate(&sc, &err))) /* a typo costs no simulation */
        scenario_free(&sc);
    if (rc)
        return cli_report_error(rc, err.msg);
    run_outputs outs = {0};
    if (opt.shards == 0 && (rc = plan_outputs(&sc, csv, svg, html, db.path, out_dir, merge ? argv + optind + 1 : NULL,
                                              merge ? (size_t)(argc - optind - 1) : 0, &outs, &err))) {
        free_outputs(&outs);
        scenario_free(&sc);
        return cli_report_error(rc, err.msg);
    }
    if (sc.is_collective) {
        rc = run_collective(&sc, &outs, &db, as_json);
        free_outputs(&outs);
        scenario_free(&sc);
        return rc;
    }
    run_result r;
    char what[200];
    snprintf(what, sizeof what, "%s %s", cmd->name, sc.name);
    progress_start(what, "points", quiet || merge);
    rc = merge ? TT_OK : check_sweep_time(&sc, &opt, &err);
    shard_origin origin = {"run", "", argv[optind], sets, n_sets};
    if (rc == TT_OK)
        rc = run_points(&origin, &sc, &opt, merge ? argv + optind + 1 : NULL, (size_t)(argc - optind - 1), &r, &err);
    else
        memset(&r, 0, sizeof r);
    json_t *doc = NULL;
    int failed = 0;
    char failures[2048];
    if (rc == TT_OK && opt.shards > 0) {
        rc = shard_write(stdout, &origin, opt.shard, opt.shards, r.records, r.n_records, &err);
    } else if (rc == TT_OK) {
        doc = report_json(&sc, &r);
        rc = expect_check(&sc, doc, &failed, failures, sizeof failures, &err);
        if (rc == TT_OK && parallel_is_writer())
            rc = write_outputs(&sc, &r, doc, &outs, &err);
        if (rc == TT_OK)
            rc = db_cli_append(&db, &(resultsdb_report){sc.path, sc.name, doc, "sweep"}, 1, &err);
    }
    if (rc == TT_OK && doc) {
        if (as_json) {
            cli_print_json(doc, REPORT_JSON_FLAGS);
        } else {
            report_text(stdout, &sc, &r, all_assumptions);
        }
        if (failed) {
            fprintf(stderr, "ttasim %s: %s: %d expectation%s not met: %s\n", cmd->name, sc.name, failed,
                    failed > 1 ? "s" : "", failures);
            rc = TT_EFAIL;
        }
    } else if (rc) {
        run_error(&sc, rc, &err);
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
    "run SCENARIO.json [--json] [--csv F] [--svg F] [--html F] [--out-dir D] [--set PATH=VALUE]... [-j|--jobs N]\n"
    "           [--shard I/N] [--links N] [--db FILE] [--assumptions] [--quiet]", run_main, run_help,
};
