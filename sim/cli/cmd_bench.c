/* ttasim bench trainer|sim [--json]: measured speed of the trainer and of the
 * collective executor on this machine (targets in BENCH_TARGETS). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "sim/cli/bench_sim.h"
#include "sim/cli/bench_trainer.h"
#include "sim/cli/cli.h"

extern const cli_command cmd_bench;

/* PyTorch 1.13 (Debian python3-torch, same OpenBLAS, 2 threads): one SGD step
 * of the same MLP at batch 4096, median of runs on an AMD EPYC (Zen 5) under
 * KVM at about 3.7 GHz with AVX-512 and FMA; on other CPUs time the PyTorch
 * step on the same machine. */
#define PYTORCH_MLP_STEP_S 0.117

static void bench_help(FILE *out)
{
    fprintf(out,
            "ttasim bench trainer [--json] [--repeat N] [--resnet-batch N] [--coretype LIST]\n\n"
            "Measures, in one run: sgemm_gflops (OpenBLAS SGEMM, 4096 x 4096 x 4096),\n"
            "step_gflops (forward + backward + SGD update of the MLP 784-1024-1024-10 at\n"
            "batch 4096, FLOPs as executed) and their ratio (goal >= 0.75), and ResNet-50\n"
            "forward + backward images/s and GFLOP/s at a small batch. Each figure is the\n"
            "best of N interleaved repetitions (other processes share the cores).\n\n"
            "  --repeat N         repetitions (5)\n"
            "  --resnet-batch N   ResNet-50 batch (4; 0 skips it)\n"
            "  --coretype LIST    re-run under each OPENBLAS_CORETYPE in the comma list\n"
            "                     (e.g. Haswell,SkylakeX; OpenBLAS reads it when it loads)\n"
            "  --json             print one JSON document on stdout\n"
            "  --help             this text\n\n");
    bench_sim_help(out);
}

static json_t *result_json(const bench_trainer_result *r)
{
    json_t *o = json_pack("{s:s, s:i, s:i, s:f, s:i, s:f, s:f, s:f, s:i, s:f, s:f}", "corename",
                          r->corename, "threads", r->threads, "repeats", r->repeats,
                          "sgemm_gflops", r->sgemm_gflops, "sgemm_n", r->sgemm_n, "step_gflops",
                          r->step_gflops, "step_ratio", r->step_gflops / r->sgemm_gflops,
                          "step_s", r->step_s, "step_batch", r->step_batch, "step_flops",
                          r->step_flops, "pytorch_reference_step_s", PYTORCH_MLP_STEP_S);
    json_object_set_new(o, "step_model", json_string("mlp 784-1024-1024-10"));
    if (r->resnet50_batch) {
        json_object_set_new(o, "resnet50_batch", json_integer(r->resnet50_batch));
        json_object_set_new(o, "resnet50_images_per_s", json_real(r->resnet50_images_per_s));
        json_object_set_new(o, "resnet50_gflops", json_real(r->resnet50_gflops));
        json_object_set_new(o, "resnet50_step_s", json_real(r->resnet50_step_s));
    }
    return o;
}

static void print_text(json_t *run)
{
    double sg = json_real_value(json_object_get(run, "sgemm_gflops"));
    double st = json_real_value(json_object_get(run, "step_gflops"));
    double ss = json_real_value(json_object_get(run, "step_s"));
    printf("OpenBLAS %s, %d threads, best of %d\n",
           json_string_value(json_object_get(run, "corename")),
           (int)json_integer_value(json_object_get(run, "threads")),
           (int)json_integer_value(json_object_get(run, "repeats")));
    printf("  sgemm_gflops     %8.1f  (4096^3)\n", sg);
    printf("  step_gflops      %8.1f  (mlp 784-1024-1024-10, batch 4096: %.1f ms per step; "
           "PyTorch 1.13 took %.0f ms on the reference machine)\n", st, 1e3 * ss, 1e3 * PYTORCH_MLP_STEP_S);
    printf("  step / sgemm     %8.3f  (goal >= 0.75)\n", st / sg);
    json_t *b = json_object_get(run, "resnet50_batch");
    if (b)
        printf("  resnet50         %8.1f images/s, %.1f GFLOP/s (forward + backward, batch %d)\n",
               json_real_value(json_object_get(run, "resnet50_images_per_s")),
               json_real_value(json_object_get(run, "resnet50_gflops")),
               (int)json_integer_value(b));
}

/* Runs this binary again with OPENBLAS_CORETYPE=core and returns its JSON. */
static json_t *run_child(const char *core, int repeat, int rbatch, tt_error *err)
{
    int fd[2];
    if (pipe(fd))
        return tt_error_set(err, TT_EINTERNAL, "pipe: %s", strerror(errno)), NULL;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return tt_error_set(err, TT_EINTERNAL, "fork: %s", strerror(errno)), NULL;
    }
    if (pid == 0) {
        char rep[16], rb[16];
        snprintf(rep, sizeof rep, "%d", repeat);
        snprintf(rb, sizeof rb, "%d", rbatch);
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        setenv("OPENBLAS_CORETYPE", core, 1);
        execl("/proc/self/exe", "ttasim", "bench", "trainer", "--json", "--repeat", rep,
              "--resnet-batch", rb, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    json_error_t je;
    json_t *doc = f ? json_loadf(f, 0, &je) : NULL;
    if (f)
        fclose(f);
    int st = 0;
    waitpid(pid, &st, 0);
    if (!doc || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        json_decref(doc);
        tt_error_set(err, TT_EINTERNAL, "the benchmark under OPENBLAS_CORETYPE=%s failed", core);
        return NULL;
    }
    json_object_set_new(doc, "openblas_coretype", json_string(core));
    return doc;
}

/* Targets with their own option parsing: argv[0] is the target's name. */
static const struct bench_target {
    const char *name;
    int (*run)(int argc, char **argv);
} BENCH_TARGETS[] = {
    {"sim", bench_sim_main},
    {NULL, NULL},
};

static int bench_main(int argc, char **argv)
{
    for (int i = 0; argc > 1 && BENCH_TARGETS[i].name; i++)
        if (strcmp(argv[1], BENCH_TARGETS[i].name) == 0)
            return BENCH_TARGETS[i].run(argc - 1, argv + 1);
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"repeat", required_argument, NULL, 'r'},
                                         {"resnet-batch", required_argument, NULL, 'b'},
                                         {"coretype", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int as_json = 0, repeat = 5, rbatch = 4, c;
    const char *cores = NULL;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = 1; break;
        case 'h': bench_help(stdout); return TT_OK;
        case 'c': cores = optarg; break;
        case 'r':
        case 'b': {
            long v;
            int rc = cli_int(&cmd_bench, c == 'r' ? "--repeat" : "--resnet-batch", optarg, c == 'r' ? 1 : 0, 1000, &v);
            if (rc)
                return rc;
            *(c == 'r' ? &repeat : &rbatch) = (int)v;
            break;
        }
        default: return cli_bad_option(&cmd_bench, argv, optind, optopt, opts, c == ':');
        }
    }
    if (optind != argc - 1 || strcmp(argv[optind], "trainer") != 0)
        return cli_usage_error(&cmd_bench, "expected 'trainer' or 'sim'");
    tt_error err = {0};
    json_t *runs = json_array();
    if (cores) {
        char list[256];
        snprintf(list, sizeof list, "%s", cores);
        for (char *save, *core = strtok_r(list, ",", &save); core;
             core = strtok_r(NULL, ",", &save)) {
            json_t *run = run_child(core, repeat, rbatch, &err);
            if (!run) {
                json_decref(runs);
                return cli_report_error(err.code, err.msg);
            }
            json_array_append_new(runs, run);
        }
    } else {
        bench_trainer_result r;
        int rc = bench_trainer_run(repeat, rbatch, &r, &err);
        if (rc) {
            json_decref(runs);
            return cli_report_error(rc, err.msg);
        }
        json_t *run = result_json(&r);
        const char *env = getenv("OPENBLAS_CORETYPE");
        json_object_set_new(run, "openblas_coretype", json_string(env ? env : ""));
        json_array_append_new(runs, run);
    }
    if (as_json) {
        /* the first run's figures at the top, every run under "runs" */
        json_t *doc = json_deep_copy(json_array_get(runs, 0));
        if (json_array_size(runs) > 1)
            json_object_set(doc, "runs", runs);
        cli_print_json(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        json_decref(doc);
    } else {
        for (size_t i = 0; i < json_array_size(runs); i++) {
            json_t *run = json_array_get(runs, i);
            const char *ct = json_string_value(json_object_get(run, "openblas_coretype"));
            printf("%sOPENBLAS_CORETYPE=%s\n", i ? "\n" : "", ct && *ct ? ct : "(unset)");
            print_text(run);
        }
    }
    json_decref(runs);
    return TT_OK;
}

const cli_command cmd_bench = {
    "bench", "measured speed of the trainer and the collective executor on this machine",
    "bench trainer [--json] [--repeat N] [--resnet-batch N] [--coretype LIST]\n"
    "           | bench sim [--json] [--bytes S] [--network ideal|calibrated] [--no-messages]\n"
    "           | bench sim --scale [--only WORD] [--json]", bench_main,
    bench_help,
};
