/* ttasim trace --model NAME: one real step of the trainer as a workload trace;
 * ttasim trace --chakra DIR SCENARIO: a scenario's step as Chakra execution traces. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/outfile.h"
#include "common/units.h"
#include "sim/cli/cli.h"
#include "sim/cli/model_cli.h"
#include "sim/replay/chakra.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"
#include "trainer/trace.h"

extern const cli_command cmd_trace;

static void trace_help(FILE *out)
{
    fprintf(out,
            "ttasim trace --model NAME [--micro-batch N] [--precision fp32|fp16|bf16]\n"
            "             [--bucket-bytes S] [--optimizer NAME] [--run-batch N] [--out F]\n"
            "ttasim trace --chakra DIR [--set PATH=VALUE]... SCENARIO\n\n"
            "Runs one forward + backward step of the model on synthetic input and writes\n"
            "the workload trace (HACKING.md): per-layer FLOPs and bytes from the executed\n"
            "shapes, gradients in backward order, DDP gradient buckets, and the alltoalls\n"
            "of model-parallel embeddings (DLRM). Deterministic for the same options.\n\n"
            "  --model NAME       a model of 'ttasim model list'\n"
            "  --micro-batch N    samples per rank (32)\n"
            "  --precision P      fp32 (default), fp16 or bf16: bytes per element\n"
            "  --bucket-bytes S   gradient bucket cap (25Mi, as PyTorch DDP; first bucket 1Mi)\n"
            "  --optimizer NAME   sgd (default), momentum, nesterov, adamw, lars or lamb: the\n"
            "                     update's cost\n"
            "  --run-batch N      micro-batch to execute (default: what fits in 2 GB of\n"
            "                     activations; counts scale linearly to --micro-batch)\n"
            "  --out F            write to F instead of stdout\n"
            "  --chakra DIR       instead: the step of SCENARIO's own point (its first phase) as\n"
            "                     MLCommons Chakra execution traces, DIR/ttasim.K.et per distinct\n"
            "                     rank and DIR/rank_map.json; a scenario's $.workload.chakra\n"
            "                     replays them (scenarios/README.md)\n"
            "  --set PATH=VALUE   with --chakra: override a scenario value (as 'ttasim run')\n"
            "  --help             this text\n\n");
    model_cli_help(out);
}

/* The scenario's step graph kept as a trace (the last one handed: the point as run). */
typedef struct chakra_sink {
    chakra_trace *t;
} chakra_sink;

static int chakra_take(void *ctx, const taskgraph *g, const step_coll *c, size_t n, const layout *l, int ranks,
                       tt_error *err)
{
    chakra_sink *s = ctx;
    int *file_of_rank = malloc(sizeof *file_of_rank * (size_t)(ranks > 0 ? ranks : 1)), coord[LAYOUT_DIMS];
    if (!file_of_rank)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    for (int r = 0; r < ranks; r++) {
        if (l)
            layout_coords(l, r, coord);
        file_of_rank[r] = l && tg_ranks(g) > 1 ? coord[LAYOUT_PIPELINE] : 0;
    }
    chakra_free(s->t);
    s->t = NULL;
    int rc = chakra_from_graph(g, c, n, ranks, file_of_rank, &s->t, err);
    free(file_of_rank);
    return rc;
}

static int chakra_main(const char *dir, const char *path, char *const *sets, size_t n_sets)
{
    scenario sc;
    tt_error err = {0};
    int rc = scenario_load_set(path, sets, n_sets, &sc, &err);
    if (rc) {
        scenario_free(&sc);
        return cli_report_error(rc, err.msg);
    }
    chakra_sink s = {0};
    step_sink sink = {chakra_take, &s};
    run_options opt = {.jobs = 1, .sink = &sink};
    run_result r;
    memset(&r, 0, sizeof r);
    rc = run_scenario(&sc, &opt, &r, &err); /* the sink takes the scenario's own point only */
    if (rc == TT_OK && !s.t)
        rc = tt_error_set(&err, TT_EINPUT, "%s: its step is not a task graph (a collective scenario); nothing to "
                          "export", path);
    if (rc == TT_OK)
        rc = chakra_write(s.t, dir, &err);
    chakra_free(s.t);
    run_result_free(&r);
    scenario_free(&sc);
    return rc ? cli_report_error(rc, err.msg) : TT_OK;
}

static int trace_main(int argc, char **argv)
{
    struct option opts[MODEL_CLI_COUNT + 11] = {
        {"model", required_argument, NULL, 'm'},     {"micro-batch", required_argument, NULL, 'b'},
        {"precision", required_argument, NULL, 'p'}, {"bucket-bytes", required_argument, NULL, 'k'},
        {"optimizer", required_argument, NULL, 'o'}, {"run-batch", required_argument, NULL, 'r'},
        {"out", required_argument, NULL, 'f'},       {"help", no_argument, NULL, 'h'},
        {"chakra", required_argument, NULL, 'c'},    {"set", required_argument, NULL, 's'}};
    model_cli_options(opts + 10);
    char *sets[SCENARIO_MAX_SETS];
    size_t n_sets = 0;
    const char *chakra = NULL;
    trace_opts to;
    trace_opts_default(&to);
    model_opts mo;
    model_opts_default(&mo);
    const char *name = NULL, *out_path = NULL, *why;
    int c, rc;
    tt_error err = {0};
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'm': name = optarg; break;
        case 'p': to.precision = optarg; break;
        case 'o': {
            int k;
            if ((rc = cli_choice(&cmd_trace, "--optimizer", optarg, OPTIM_NAMES, &k)))
                return rc;
            to.optimizer = optim_find(OPTIM_NAMES[k]);
            break;
        }
        case 'f': out_path = optarg; break;
        case 'c': chakra = optarg; break;
        case 's':
            if (n_sets == SCENARIO_MAX_SETS)
                return cli_usage_error(&cmd_trace, "at most %d --set options", SCENARIO_MAX_SETS);
            sets[n_sets++] = optarg;
            break;
        case 'h': trace_help(stdout); return TT_OK;
        case 'b':
        case 'r': {
            long v;
            if ((rc = cli_int(&cmd_trace, c == 'b' ? "--micro-batch" : "--run-batch", optarg, 1, 1000000, &v)))
                return rc;
            *(c == 'b' ? &to.micro_batch : &to.run_batch) = (int)v;
            break;
        }
        case 'k':
            if (units_parse_bytes(optarg, &to.bucket_bytes, &why) || to.bucket_bytes < 1)
                return cli_usage_error(&cmd_trace, "--bucket-bytes '%s': %s", optarg,
                                       to.bucket_bytes < 1 ? "must be positive" : why);
            break;
        default:
            if (c >= MODEL_CLI_BASE) {
                if (model_cli_apply(c, optarg, &mo, &err))
                    return cli_usage_error(&cmd_trace, "%s", err.msg);
                break;
            }
            return cli_bad_option(&cmd_trace, argv, optind, optopt, opts, c == ':');
        }
    }
    if (chakra) {
        if (name || optind != argc - 1)
            return cli_usage_error(&cmd_trace, "--chakra DIR takes one SCENARIO and no --model");
        return chakra_main(chakra, argv[optind], sets, n_sets);
    }
    if (n_sets)
        return cli_usage_error(&cmd_trace, "--set goes with --chakra DIR SCENARIO");
    if (!name)
        return cli_usage_error(&cmd_trace, "missing --model NAME ('ttasim model list')");
    if (optind != argc)
        return cli_usage_error(&cmd_trace, "unexpected argument '%s'", argv[optind]);
    /* open the output first: a bad path should not cost a training step */
    FILE *f = stdout;
    outfile *of = NULL;
    if (out_path && (rc = outfile_open(out_path, "the trace", &of, &f, &err)))
        return cli_report_error(rc, err.msg);
    json_t *doc;
    rc = trace_build(name, &mo, &to, &doc, &err);
    if (rc) {
        outfile_discard(of);
        return cli_report_error(rc, err.msg);
    }
    int bad = json_dumpf(doc, f, JSON_INDENT(1) | JSON_REAL_PRECISION(15)) != 0;
    bad |= fputc('\n', f) == EOF;
    json_decref(doc);
    if (of)
        rc = outfile_commit(of, &err);
    else if (bad || fflush(stdout) != 0)
        rc = tt_error_set(&err, TT_EINPUT, "stdout: writing the trace failed: %s", strerror(errno));
    return rc ? cli_report_error(rc, err.msg) : TT_OK;
}

const cli_command cmd_trace = {
    "trace", "one real step of the trainer recorded as a workload trace",
    "trace --model NAME [--micro-batch N] [--precision P] [--bucket-bytes S] [--optimizer NAME]\n"
    "           [--run-batch N] [--out F]" MODEL_CLI_USAGE "\n"
    "     | --chakra DIR [--set PATH=VALUE]... SCENARIO",
    trace_main, trace_help,
};
