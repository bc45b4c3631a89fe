/* ttasim trace --model NAME: one real step of the trainer as a workload trace. */
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
#include "trainer/trace.h"

extern const cli_command cmd_trace;

static void trace_help(FILE *out)
{
    fprintf(out,
            "ttasim trace --model NAME [--micro-batch N] [--precision fp32|fp16|bf16]\n"
            "             [--bucket-bytes S] [--optimizer NAME] [--run-batch N] [--out F]\n\n"
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
            "  --help             this text\n\n");
    model_cli_help(out);
}

static int trace_main(int argc, char **argv)
{
    struct option opts[MODEL_CLI_COUNT + 9] = {
        {"model", required_argument, NULL, 'm'},     {"micro-batch", required_argument, NULL, 'b'},
        {"precision", required_argument, NULL, 'p'}, {"bucket-bytes", required_argument, NULL, 'k'},
        {"optimizer", required_argument, NULL, 'o'}, {"run-batch", required_argument, NULL, 'r'},
        {"out", required_argument, NULL, 'f'},       {"help", no_argument, NULL, 'h'}};
    model_cli_options(opts + 8);
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
    "           [--run-batch N] [--out F]" MODEL_CLI_USAGE,
    trace_main, trace_help,
};
