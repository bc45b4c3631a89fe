/* bench_scale.c: `ttasim bench sim --scale`: the scale issue's cases, each
 * this binary run again as a child: a 64-point sweep at -j 1 and -j 2,
 * alltoall at 1,024 and 4,096 ranks, auto at 4,096, ResNet-50 on 16,384
 * GPUs, a 65,536-GPU platform, ResNet-50 and BERT-Large on 131,072 H100
 * (issue 32). Wall time from fork to exit; peak memory is
 * the largest resident set of the child and its simulation processes. A case
 * past its stop time is killed and reported as stopped. */
#include "sim/cli/bench_scale.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/datapath.h"
#include "common/error.h"

typedef struct scale_case {
    const char *name;
    const char *args[16]; /* after "ttasim"; "@SWEEP" and "@RUN" are the scenarios written here,
                           * "@scenarios/..." a shipped one (datapath_find) */
    double goal_s, goal_bytes, stop_s;
    int vs_pick; /* goal: at most twice the wall time of the case "OP PICK 4096" of auto's pick */
} scale_case;

static const scale_case CASES[] = {
    {"sweep 64 points -j 1", {"run", "@SWEEP", "-j", "1", "--json"}, 0, 0, 1200, 0},
    {"sweep 64 points -j 2", {"run", "@SWEEP", "-j", "2", "--json"}, 0, 0, 1200, 0},
    {"alltoall direct 1024", {"collective", "--platform", "star", "--nodes", "1024", "--op", "alltoall", "--algo",
                              "direct", "--bytes", "64Mi", "--json"}, 3, 400e6, 90, 0},
    {"alltoall pairwise 1024", {"collective", "--platform", "star", "--nodes", "1024", "--op", "alltoall",
                                "--algo", "pairwise", "--bytes", "64Mi", "--json"}, 3, 400e6, 90, 0},
    {"alltoall direct 4096", {"collective", "--platform", "star", "--nodes", "4096", "--op", "alltoall", "--algo",
                              "direct", "--bytes", "64Mi", "--json"}, 30, 0, 180, 0},
    {"alltoall pairwise 4096", {"collective", "--platform", "star", "--nodes", "4096", "--op", "alltoall",
                                "--algo", "pairwise", "--bytes", "64Mi", "--json"}, 30, 0, 180, 0},
    {"alltoall bruck 4096", {"collective", "--platform", "star", "--nodes", "4096", "--op", "alltoall", "--algo",
                             "bruck", "--bytes", "64Mi", "--json"}, 30, 0, 180, 0},
    {"alltoall auto 4096", {"collective", "--platform", "star", "--nodes", "4096", "--op", "alltoall", "--algo",
                            "auto", "--bytes", "64Mi", "--json"}, 0, 300e6, 240, 1},
    /* auto's allreduce candidates include pipelined trees, slow to simulate at this size: screened out */
    {"allreduce direct 4096", {"collective", "--platform", "star", "--nodes", "4096", "--op", "allreduce", "--algo",
                               "direct", "--bytes", "100Mi", "--json"}, 0, 0, 180, 0},
    {"allreduce rhd 4096", {"collective", "--platform", "star", "--nodes", "4096", "--op", "allreduce", "--algo",
                            "rhd", "--bytes", "100Mi", "--json"}, 0, 0, 180, 0},
    {"allreduce auto 4096", {"collective", "--platform", "star", "--nodes", "4096", "--op", "allreduce", "--algo",
                             "auto", "--bytes", "100Mi", "--json"}, 0, 300e6, 240, 1},
    {"resnet50 on 16384 GPUs", {"run", "@RUN", "--json"}, 10, 1e9, 240, 0},
    {"platform of 65536 GPUs", {"platform", "check", "dgx-a100", "--nodes", "8192"}, 30, 4e9, 240, 0},
    /* issue 32's frontier: 16,384 DGX H100 nodes, rail-optimised NDR (too slow for the pins of make check) */
    {"resnet50 on 131072 H100", {"run", "@scenarios/examples/frontier-resnet50-131k-h100.json", "--json"}, 30, 4e9,
     240, 0},
    {"bert-large on 131072 H100", {"run", "@scenarios/examples/purchase-h100-rail.json", "--set", "platform.nodes=16384",
                                   "--set", "sweep={}", "--set", "workload.global_batch=131072", "--json"}, 30, 4e9,
     240, 0},
};
#define N_CASES (sizeof CASES / sizeof *CASES)

typedef struct scale_row {
    double wall_s, peak_bytes;
    int stopped, exit_code;
    int skipped; /* not selected by --only */
} scale_row;

/* Runs `ttasim ARGS...` with stdout to out_path; kills it past stop_s. */
static int run_case(char *const *argv, const char *out_path, double stop_s, scale_row *row, tt_error *err)
{
    double t0 = clock_monotonic_s();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return tt_error_set(err, TT_EINTERNAL, "fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            _exit(127);
        dup2(fd, 1);
        close(fd);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int st = 0;
    struct rusage ru = {0};
    for (;;) {
        pid_t w = wait4(pid, &st, WNOHANG, &ru);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return tt_error_set(err, TT_EINTERNAL, "wait4: %s", strerror(errno));
        if (!row->stopped && clock_monotonic_s() - t0 > stop_s) {
            kill(pid, SIGKILL); /* its simulation children die with it (PR_SET_PDEATHSIG) or finish alone */
            row->stopped = 1;
        }
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    row->wall_s = clock_monotonic_s() - t0;
    row->peak_bytes = (double)ru.ru_maxrss * 1024; /* the child's, or its largest descendant's */
    row->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return TT_OK;
}

/* The two scenarios the cases run, next to their outputs in `dir`. */
static int write_scenarios(const char *dir, tt_error *err)
{
    char trace[4096], profile[4096], path[4200];
    if (datapath_find("scenarios/traces/resnet50.json", trace, sizeof trace) ||
        datapath_find("scenarios/profiles/resnet50-imagenet-sgd.json", profile, sizeof profile))
        return tt_error_set(err, TT_EINPUT, "the ResNet-50 trace or profile is not under %s; set TTASIM_DATA_DIR",
                            datapath_root());
    static const char *const fmt =
        "{\"version\": 1, \"name\": \"%s\", \"platform\": {\"name\": \"%s\", \"nodes\": %d},\n"
        " \"workload\": {\"trace\": \"%s\", \"global_batch\": %d, \"precision\": \"fp16\"},\n"
        " \"optimizer\": \"momentum\", \"convergence\": {\"profile\": \"%s\", \"target\": {\"dataset\": "
        "\"imagenet\", \"metric\": \"top1_accuracy\", \"value\": 0.749}}%s}\n";
    const char *sweep = ",\n \"sweep\": {\"nodes\": [4, 6, 8, 12, 16, 24, 32, 48], "
                        "\"global_batch\": [768, 1536, 2304, 3072, 3840, 4608, 6144, 7680]}";
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s.json", dir, k ? "run" : "sweep");
        FILE *f = fopen(path, "w");
        if (!f)
            return tt_error_set(err, TT_EINTERNAL, "%s: %s", path, strerror(errno));
        if (k)
            fprintf(f, fmt, "resnet50-16384-gpus", "dgx-a100", 2048, trace, 65536, profile, "");
        else
            fprintf(f, fmt, "sweep-64-points", "dgx1-v100", 4, trace, 4608, profile, sweep);
        if (fclose(f) != 0)
            return tt_error_set(err, TT_EINTERNAL, "%s: %s", path, strerror(errno));
    }
    return TT_OK;
}

static int same_file(const char *a, const char *b)
{
    FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
    int same = f && g, c, d;
    while (same && ((c = getc(f)) != EOF) | ((d = getc(g)) != EOF))
        same = c == d;
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    return same;
}

/* The case of operation op ("alltoall") that ran what auto picked
 * (out_path: auto's --json output), or -1. */
static int picked_case(const char *op, const char *out_path)
{
    json_t *doc = json_load_file(out_path, 0, NULL);
    const char *algo = json_string_value(json_object_get(json_array_get(json_object_get(doc, "results"), 0), "algo"));
    char name[64];
    int k = -1;
    snprintf(name, sizeof name, "%s %s 4096", op, algo ? algo : "?");
    for (size_t i = 0; i < N_CASES && k < 0; i++)
        if (strcmp(CASES[i].name, name) == 0)
            k = (int)i;
    json_decref(doc);
    return k;
}

/* The wall-time goal of case i (0: none). */
static double goal_s(size_t i, const scale_row *rows, int pick)
{
    if (!CASES[i].vs_pick)
        return CASES[i].goal_s;
    return pick >= 0 ? 2 * rows[pick].wall_s : 0;
}

/* A case's verdict against its goals; the -j 2 sweep against the -j 1 one,
 * auto against the algorithm it picked (pick: that case, or -1). */
static const char *verdict(size_t i, const scale_row *rows, int identical, int pick)
{
    const scale_case *c = &CASES[i];
    const scale_row *r = &rows[i];
    double g = goal_s(i, rows, pick);
    if (r->skipped)
        return "skipped";
    if (r->stopped || r->exit_code != 0 || (c->vs_pick && (pick < 0 || rows[pick].skipped)))
        return "MISSED";
    if (i == 1)
        return identical && r->wall_s <= 0.6 * rows[0].wall_s ? "met" : "MISSED";
    if ((g > 0 && r->wall_s > g) || (c->goal_bytes > 0 && r->peak_bytes > c->goal_bytes))
        return "MISSED";
    return "met";
}

int bench_scale_run(int as_json, const char *only)
{
    char dir[] = "/tmp/ttasim-bench-scale-XXXXXX";
    tt_error err = {0};
    if (!mkdtemp(dir))
        return fprintf(stderr, "ttasim bench sim: mkdtemp: %s\n", strerror(errno)), TT_EINTERNAL;
    int rc = write_scenarios(dir, &err), missed = 0;
    scale_row rows[N_CASES];
    memset(rows, 0, sizeof rows);
    char out[N_CASES][4200] = {{0}};
    int pick[N_CASES];
    if (!as_json && rc == TT_OK)
        printf("# %-24s %10s %10s %10s %10s  %s\n", "case", "wall(s)", "peak(MB)", "goal(s)", "goal(MB)", "verdict");
    for (size_t i = 0; rc == TT_OK && i < N_CASES; i++) {
        char *argv[20], scen[2][4200], shipped[16][4200];
        pick[i] = -1;
        rows[i].skipped = only && !strstr(CASES[i].name, only);
        if (rows[i].skipped)
            continue;
        int n = 0;
        argv[n++] = "ttasim";
        for (int k = 0; CASES[i].args[k]; k++) {
            const char *a = CASES[i].args[k];
            int which = strcmp(a, "@SWEEP") == 0 ? 0 : strcmp(a, "@RUN") == 0 ? 1 : -1;
            if (which >= 0) {
                snprintf(scen[which], sizeof scen[which], "%s/%s.json", dir, which ? "run" : "sweep");
                a = scen[which];
            } else if (a[0] == '@') {
                if (datapath_find(a + 1, shipped[k], sizeof shipped[k])) {
                    rc = tt_error_set(&err, TT_EINPUT, "%s is not under %s; set TTASIM_DATA_DIR", a + 1,
                                      datapath_root());
                    break;
                }
                a = shipped[k];
            }
            argv[n++] = (char *)a;
        }
        argv[n] = NULL;
        if (rc)
            break;
        snprintf(out[i], sizeof out[i], "%s/out%zu", dir, i);
        rc = run_case(argv, out[i], CASES[i].stop_s, &rows[i], &err);
        if (rc)
            break;
        pick[i] = CASES[i].vs_pick ? picked_case(CASES[i].args[6], out[i]) : -1;
        const char *v = verdict(i, rows, i == 1 && same_file(out[0], out[1]), pick[i]);
        missed |= strcmp(v, "met") != 0 && strcmp(v, "skipped") != 0;
        if (!as_json) {
            printf("  %-24s %10.2f %10.1f %10.3g %10.4g  %s%s", CASES[i].name, rows[i].wall_s,
                   rows[i].peak_bytes / 1e6, goal_s(i, rows, pick[i]), CASES[i].goal_bytes / 1e6, v,
                   rows[i].stopped ? " (stopped)" : "");
            if (i == 1)
                printf(" (%.2fx of -j 1, output %s)", rows[1].wall_s / rows[0].wall_s,
                       same_file(out[0], out[1]) ? "identical" : "DIFFERS");
            if (CASES[i].vs_pick)
                printf(" (picked %s)", pick[i] >= 0 ? CASES[pick[i]].name : "an algorithm without a case");
            if (!rows[i].stopped && rows[i].exit_code)
                printf(" (exit %d)", rows[i].exit_code);
            printf("\n");
            fflush(stdout);
        }
    }
    if (rc == TT_OK && as_json) {
        json_t *list = json_array();
        for (size_t i = 0; i < N_CASES; i++)
            json_array_append_new(list, json_pack("{s:s, s:f, s:f, s:b, s:i, s:s}", "case", CASES[i].name, "wall_s",
                                                  rows[i].wall_s, "peak_rss_bytes", rows[i].peak_bytes, "stopped",
                                                  rows[i].stopped, "exit_code", rows[i].exit_code, "verdict",
                                                  verdict(i, rows, same_file(out[0], out[1]), pick[i])));
        json_t *doc = json_pack("{s:o, s:b}", "scale", list, "goals_met", !missed);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
        fputc('\n', stdout);
        json_decref(doc);
    }
    for (size_t i = 0; i < N_CASES; i++)
        if (out[i][0])
            unlink(out[i]);
    char path[4200];
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/run.json", dir);
    unlink(path);
    rmdir(dir);
    if (rc)
        fprintf(stderr, "ttasim bench sim: %s\n", err.msg);
    return rc ? rc : missed ? TT_EFAIL : TT_OK;
}
