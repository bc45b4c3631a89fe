/* Foundation: units, the strict scenario loader, the CLI contract, and the
 * simulated ring allreduce against its alpha-beta-gamma closed form. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectives/closed_form.h"
#include "collectives/schedule.h"
#include "common/parallel.h"
#include "common/stats.h"
#include "common/units.h"
#include "common/vocab.h"
#include "sim/engine/collective_sim.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"
#include "tests/testutil.h"

static const char *VALID =
    "{\n"
    "  \"version\": 1,\n"
    "  \"name\": \"t\",\n"
    "  \"platform\": {\"name\": \"star\", \"nodes\": 8,\n"
    "    \"link_bw_Bps\": \"100G\", \"link_latency_s\": \"1us\"},\n"
    "  \"network\": \"ideal\",\n"
    "  \"workload\": {\"trace\": \"" TTASIM_SRCDIR "/tests/data/tiny-trace.json\", \"global_batch\": 64},\n"
    "  \"collectives\": {\"allreduce\": \"ring\"},\n"
    "  \"convergence\": {\"steps\": 1000}\n"
    "}\n";

/* Loads text, expecting failure; returns the message. */
static void load_bad(const char *text, char *msg, size_t n)
{
    char path[64];
    tu_write_temp(text, path, sizeof path);
    scenario sc;
    tt_error err = {0};
    int rc = scenario_load(path, &sc, &err);
    unlink(path);
    ck_assert_int_eq(rc, TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, path)); /* names the file */
    snprintf(msg, n, "%s", err.msg);
}

/* VALID with one substring replaced. */
static char *variant(const char *from, const char *to)
{
    static char buf[2048];
    const char *at = strstr(VALID, from);
    ck_assert_ptr_nonnull(at);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - VALID), VALID, to, at + strlen(from));
    return buf;
}

START_TEST(units_sizes)
{
    double x;
    const char *why;
    ck_assert_int_eq(units_parse_bytes("100M", &x, &why), 0);
    ck_assert_double_eq(x, 100e6);
    ck_assert_int_eq(units_parse_bytes("64Ki", &x, &why), 0);
    ck_assert_double_eq(x, 65536);
    ck_assert_int_eq(units_parse_bytes("1.5GiB", &x, &why), 0);
    ck_assert_double_eq(x, 1.5 * 1073741824.0);
    ck_assert_int_eq(units_parse_bytes("7", &x, &why), 0);
    ck_assert_double_eq(x, 7);
    ck_assert_int_eq(units_parse_bytes("12X", &x, &why), -1);
    ck_assert_int_eq(units_parse_bytes("-1K", &x, &why), -1);
    ck_assert_int_eq(units_parse_seconds("5us", &x, &why), 0);
    ck_assert_double_eq_tol(x, 5e-6, 1e-18);
    ck_assert_int_eq(units_parse_seconds("2ms", &x, &why), 0);
    ck_assert_double_eq_tol(x, 2e-3, 1e-15);
}
END_TEST

/* Whole numbers: the one parser of integer options (-j, --links, --nodes,
 * model options...) and of integer lists (--widths, torus shapes). */
START_TEST(units_whole_numbers)
{
    long x = 0, v[3];
    tt_error err = {0};
    ck_assert_int_eq(units_parse_int("-j", "12", 1, 64, &x, &err), TT_OK);
    ck_assert_int_eq(x, 12);
    ck_assert_int_eq(units_parse_int("-j", "64", 1, 64, &x, &err), TT_OK);
    static const char *const bad[] = {"0", "65", "", "1.5", "12x", "two", "99999999999999999999", NULL};
    for (int i = 0; bad[i]; i++) {
        ck_assert_int_eq(units_parse_int("-j", bad[i], 1, 64, &x, &err), TT_EINPUT);
        ck_assert_int_eq(x, 64); /* untouched */
    }
    ck_assert_str_eq(err.msg, "-j: expected a whole number from 1 to 64, got '99999999999999999999'");
    ck_assert_int_eq(units_parse_int_list("16x32", "x", 1, 4096, v, 3), 2);
    ck_assert(v[0] == 16 && v[1] == 32);
    ck_assert_int_eq(units_parse_int_list("1-2,3", "-,", 1, 9, v, 3), 3);
    ck_assert(v[0] == 1 && v[1] == 2 && v[2] == 3);
    ck_assert_int_eq(units_parse_int_list("", ",", 1, 9, v, 3), 0);
    static const char *const bad_lists[] = {"1,2,3,4", "1,", ",1", "1,,2", "1;2", "0,1", "1,10", NULL};
    for (int i = 0; bad_lists[i]; i++)
        ck_assert_msg(units_parse_int_list(bad_lists[i], ",", 1, 9, v, 3) == -1, "%s", bad_lists[i]);
}
END_TEST

/* The median the profiles, their leave-one-out and check's summary share. */
START_TEST(stats_median_sorts)
{
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, unreached[] = {INFINITY, 5, INFINITY};
    ck_assert(stats_median(odd, 3) == 2);
    ck_assert(odd[0] == 1 && odd[2] == 3); /* sorted in place */
    ck_assert(stats_median(even, 4) == 2.5);
    ck_assert(isinf(stats_median(unreached, 3)));
    ck_assert(isnan(stats_median(odd, 0)));
}
END_TEST

/* Every name parses back to its enum, sizes are the formats' element sizes,
 * and an unknown word is an input error that lists the choices. */
START_TEST(vocab_names_and_sizes)
{
    tt_error err = {0};
    op_class c = OPCLASS_COUNT;
    for (int i = 0; i < OPCLASS_COUNT; i++) {
        ck_assert_int_eq(opclass_parse(opclass_name((op_class)i), &c, &err), TT_OK);
        ck_assert_int_eq(c, i);
    }
    ck_assert_str_eq(opclass_name(OPCLASS_CONV), "conv");
    ck_assert_str_eq(opclass_name(OPCLASS_LOSS), "loss");
    ck_assert_ptr_null(OPCLASS_NAMES[OPCLASS_COUNT]);
    ck_assert_int_eq(opclass_parse("matmul", &c, &err), TT_EINPUT);
    ck_assert_str_eq(err.msg, "expected conv, gemm, attention, norm, elementwise, pool, embedding or loss, "
                              "found \"matmul\"");
    tt_dtype t = DTYPE_COUNT;
    ck_assert_int_eq(dtype_parse("bf16", &t, &err), TT_OK);
    ck_assert_int_eq(t, DTYPE_BF16);
    ck_assert_str_eq(dtype_name(DTYPE_FP16), "fp16");
    ck_assert_int_eq(dtype_bytes(DTYPE_FP32), 4);
    ck_assert_int_eq(dtype_bytes(DTYPE_FP16), 2);
    ck_assert_int_eq(dtype_bytes(DTYPE_BF16), 2);
    ck_assert_int_eq(dtype_parse("fp8", &t, &err), TT_OK);
    ck_assert_int_eq(dtype_bytes(t), 2); /* stored in bf16 (Transformer Engine) */
    ck_assert_ptr_null(DTYPE_NAMES[DTYPE_COUNT]);
    ck_assert_int_eq(dtype_parse("int8", &t, &err), TT_EINPUT);
    ck_assert_str_eq(err.msg, "expected fp32, fp16, bf16 or fp8, found \"int8\"");
}
END_TEST

START_TEST(loader_valid)
{
    char path[64];
    tu_write_temp(VALID, path, sizeof path);
    scenario sc;
    tt_error err = {0};
    ck_assert_int_eq(scenario_load(path, &sc, &err), TT_OK);
    unlink(path);
    ck_assert_str_eq(sc.platform, "star");
    ck_assert_int_eq(sc.nodes, 8);
    ck_assert_double_eq(sc.link_bw_Bps, 100e9);
    ck_assert_double_eq_tol(sc.link_latency_s, 1e-6, 1e-18);
    ck_assert_int_eq(sc.global_batch, 64);
    ck_assert_int_eq((int)sc.n_phases, 1);
    ck_assert_ptr_nonnull(strstr(sc.phases[0].trace_path, "tests/data/tiny-trace.json"));
    ck_assert_str_eq(sc.allreduce, "ring");
    ck_assert_int_eq(sc.conv, CONV_STEPS);
    ck_assert_double_eq(sc.fixed_steps, 1000);
    ck_assert_int_eq(sc.network, NETWORK_IDEAL);
    scenario_free(&sc);
}
END_TEST

START_TEST(loader_syntax_error_line_column)
{
    char msg[TT_ERROR_MSG_BYTES];
    /* A missing comma after the name: line 3. */
    load_bad(variant("\"name\": \"t\",", "\"name\": \"t\""), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, ":4:"));
    ck_assert_ptr_nonnull(strstr(msg, "invalid JSON"));
}
END_TEST

START_TEST(loader_unknown_key_suggests)
{
    char msg[TT_ERROR_MSG_BYTES];
    load_bad(variant("\"nodes\"", "\"node\""), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.platform"));
    ck_assert_ptr_nonnull(strstr(msg, "unknown key \"node\""));
    ck_assert_ptr_nonnull(strstr(msg, "did you mean \"nodes\""));
}
END_TEST

START_TEST(loader_wrong_type)
{
    char msg[TT_ERROR_MSG_BYTES];
    load_bad(variant("\"nodes\": 8", "\"nodes\": \"two\""), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.platform.nodes"));
    ck_assert_ptr_nonnull(strstr(msg, "expected an integer"));
    ck_assert_ptr_nonnull(strstr(msg, "\"two\""));
}
END_TEST

START_TEST(loader_out_of_range)
{
    char msg[TT_ERROR_MSG_BYTES];
    load_bad(variant("\"nodes\": 8", "\"nodes\": 0"), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.platform.nodes"));
    ck_assert_ptr_nonnull(strstr(msg, "[1, 65536]"));
    ck_assert_ptr_nonnull(strstr(msg, "found 0"));
}
END_TEST

START_TEST(loader_bad_size_suffix)
{
    char msg[TT_ERROR_MSG_BYTES];
    load_bad(variant("\"100G\"", "\"100Q\""), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.platform.link_bw_Bps"));
    ck_assert_ptr_nonnull(strstr(msg, "suffix"));
}
END_TEST

START_TEST(loader_missing_and_version)
{
    char msg[TT_ERROR_MSG_BYTES];
    load_bad(variant("\"version\": 1,", ""), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "missing required key \"version\""));
    load_bad(variant("\"version\": 1", "\"version\": 9"), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.version"));
    load_bad(variant("\"ideal\"", "\"idael\""), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "did you mean \"ideal\""));
    /* an unknown collective algorithm is caught at load, with its JSON path */
    load_bad(variant("\"ring\"", "\"rign\""), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.collectives.allreduce: unknown algorithm \"rign\""));
    /* a fractional sweep value is refused, not truncated */
    load_bad(variant("\"network\"", "\"sweep\": {\"nodes\": [2, 2.5]}, \"network\""), msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.sweep.nodes[1]: expected a whole number, found 2.5"));
}
END_TEST

START_TEST(cli_exit_codes)
{
    char out[8192], path[64], args[256];
    ck_assert_int_eq(tu_run_ttasim("--help", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "run"));
    ck_assert_int_eq(tu_run_ttasim("--version", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "ttasim "));
    ck_assert_int_eq(tu_run_ttasim("run --help", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: ttasim run"));
    ck_assert_int_eq(tu_run_ttasim("frobnicate", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "unknown command"));
    ck_assert_int_eq(tu_run_ttasim("rn x.json", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "did you mean 'run'"));
    ck_assert_int_eq(tu_run_ttasim("run --jsn x.json", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--json"));
    ck_assert_int_eq(tu_run_ttasim("run", out, sizeof out), 2);
    ck_assert_int_eq(tu_run_ttasim("run /nonexistent/s.json", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "/nonexistent/s.json"));
    tu_write_temp("{\"version\": 1,,}", path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, ":1:"));
    unlink(path);
}
END_TEST

/* The whole pipeline on the star of 8 (ideal network, ring): the step's
 * communication is the two buckets' ring allreduces, each exactly its
 * alpha-beta-gamma closed form. */
START_TEST(cli_run_json)
{
    char out[16384], path[64], args[256];
    tu_write_temp(VALID, path, sizeof path);
    snprintf(args, sizeof args, "run --json %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    unlink(path);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "%s", out);
    json_t *step = json_object_get(doc, "step");
    double t = json_real_value(json_object_get(step, "time_s"));
    double comm = json_real_value(json_object_get(step, "comm_s"));
    tt_error err = {0};
    platform_options opt = {.nodes = 8, .link_bw_Bps = 100e9, .link_latency_s = 1e-6};
    platform *p = platform_load("star", &opt, &err);
    ck_assert_ptr_nonnull(p);
    double alpha, beta;
    platform_path(p, 0, 1, &alpha, &beta);
    const device_info *dev = platform_device(p, 0);
    double gamma = 3.0 / (dev->mem_Bps * dev->mem_efficiency);
    coll_params a = {.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 8, .bytes = 4e7};
    double cf = coll_closed_form_s(&a, alpha, beta, gamma);
    a.bytes = 1e7;
    cf += coll_closed_form_s(&a, alpha, beta, gamma);
    ck_assert_msg(fabs(comm / cf - 1) < 1e-3, "simulated %.9g s, closed form %.9g s", comm, cf);
    ck_assert(t > comm);
    ck_assert_double_eq(json_number_value(json_object_get(doc, "steps_to_target")), 1000);
    ck_assert_double_eq_tol(json_number_value(json_object_get(doc, "time_to_accuracy_s")), 1000 * t, 1e-9 * t);
    platform_free(p);
    json_decref(doc);
}
END_TEST

/* The simulated ring allreduce, as every command requests it, equals its
 * closed form 2(n-1)(alpha + M/(n beta)) + (n-1) gamma M/n within 0.1 % (CM02,
 * no cross-traffic): on a star (uniform edges) and on a fat tree of two leaves,
 * whose two leaf-to-leaf edges set every step (the slowest edge). */
static const double SIZES[] = {1e3, 1e6, 100e6};
static const char *const FABRICS[] = {"star", "fattree"};
static const int RANKS[] = {8, 32}; /* the generic fat tree has 16 per leaf */

START_TEST(ring_closed_form)
{
    double bytes = SIZES[_i % 3];
    platform_options opt = {.nodes = RANKS[_i / 3], .link_bw_Bps = 12.5e9, .link_latency_s = 1e-6};
    tt_error err = {0};
    platform *p = platform_load(FABRICS[_i / 3], &opt, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    int n = platform_ranks(p);
    double alpha = 0, beta = INFINITY;
    for (int r = 0; r < n; r++) {
        double lat_s, bw_Bps;
        platform_path(p, r, (r + 1) % n, &lat_s, &bw_Bps);
        alpha = fmax(alpha, lat_s);
        beta = fmin(beta, bw_Bps);
    }
    coll_params asked = {.op = OP_ALLREDUCE, .algo = ALGO_RING, .bytes = bytes};
    coll_request rq = coll_request_build(p, &asked);
    coll_result res;
    ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, &rq, 1, &res, &err) == TT_OK, "%s", err.msg);
    double cf = coll_closed_form_s(&rq.params, alpha, beta, rq.reduce_s_per_byte);
    ck_assert_msg(fabs(res.time_s / cf - 1) < 1e-3, "%s n=%d bytes=%g: simulated %.9g s, closed form %.9g s",
                  FABRICS[_i / 3], n, bytes, res.time_s, cf);
    platform_free(p);
}
END_TEST

/* A task whose result depends on its index and on which process ran it. */
static void square_task(void *ctx, size_t i, void *result)
{
    long *r = result;
    if (ctx && i == *(const size_t *)ctx)
        abort(); /* a worker dying mid-task */
    r[0] = (long)(i * i);
    r[1] = (long)getpid();
}

static void count_done(void *ctx, size_t done, size_t total)
{
    (void)ctx;
    ck_assert_uint_le(done, total);
}

START_TEST(parallel_results_in_task_order)
{
    enum { N = 23 };
    long r[N][2];
    tt_error err = {0};
    for (int jobs = 1; jobs <= 4; jobs++) {
        memset(r, 0xff, sizeof r);
        ck_assert_int_eq(parallel_run(N, jobs, sizeof r[0], square_task, count_done, NULL, r, &err), TT_OK);
        int other_process = 0;
        for (long i = 0; i < N; i++) {
            ck_assert_int_eq(r[i][0], i * i);
            other_process |= r[i][1] != (long)getpid();
        }
        ck_assert_int_eq(other_process, jobs > 1); /* -j 1 stays in this process, more fork */
    }
}
END_TEST

START_TEST(parallel_worker_death_names_task)
{
    long r[9][2];
    size_t crash = 6;
    tt_error err = {0};
    ck_assert_int_eq(parallel_run(9, 3, sizeof r[0], square_task, NULL, &crash, r, &err), TT_EINTERNAL);
    ck_assert_msg(strstr(err.msg, "died running task 6 (signal 6)"), "%s", err.msg);
    int jobs = 0;
    ck_assert_int_eq(parallel_jobs_parse("12", &jobs, &err), TT_OK);
    ck_assert_int_eq(jobs, 12);
    ck_assert_int_eq(parallel_jobs_parse("1x", &jobs, &err), TT_EINPUT);
    ck_assert_int_eq(parallel_jobs_parse("0", &jobs, &err), TT_EINPUT);
    ck_assert_int_ge(parallel_jobs_default(), 1);
}
END_TEST

/* F17 (round 3): --max-memory held per simulation, so -j 2 used twice it.
 * The run's simulations share one budget: two of 60 in a budget of 100 run
 * one after the other, two of 40 at once; the load time adds up too. */
static void holding_task(void *ctx, size_t i, void *result)
{
    (void)i;
    double *t = result, bytes = *(const double *)ctx;
    struct timespec a, b;
    parallel_memory_hold(bytes);
    clock_gettime(CLOCK_MONOTONIC, &a);
    usleep(300000);
    clock_gettime(CLOCK_MONOTONIC, &b);
    parallel_memory_release(bytes);
    t[0] = a.tv_sec + a.tv_nsec * 1e-9;
    t[1] = b.tv_sec + b.tv_nsec * 1e-9;
}

START_TEST(parallel_budgets_are_the_runs)
{
    tt_error err = {0};
    ck_assert_double_eq(parallel_memory_budget(100), 100);
    ck_assert_double_eq(parallel_memory_budget(1e12), 100); /* the first limit holds for the run */
    double t[2][2], bytes = 60;
    ck_assert_int_eq(parallel_run(2, 2, sizeof t[0], holding_task, NULL, &bytes, t, &err), TT_OK);
    ck_assert_msg(t[0][1] <= t[1][0] || t[1][1] <= t[0][0], "60 + 60 of 100 held at once: [%f, %f] [%f, %f]",
                  t[0][0], t[0][1], t[1][0], t[1][1]);
    bytes = 40;
    ck_assert_int_eq(parallel_run(2, 2, sizeof t[0], holding_task, NULL, &bytes, t, &err), TT_OK);
    ck_assert_msg(t[0][0] < t[1][1] && t[1][0] < t[0][1], "40 + 40 of 100 not held at once: [%f, %f] [%f, %f]",
                  t[0][0], t[0][1], t[1][0], t[1][1]);
    double so_far = -1;
    ck_assert_int_eq(parallel_time_charge(100, 300, &so_far), 0);
    ck_assert_int_eq(parallel_time_charge(250, 300, &so_far), -1);
    ck_assert_double_eq(so_far, 100);
    ck_assert_int_eq(parallel_time_charge(200, 300, &so_far), 0);
}
END_TEST

/* F15: after kill -9 of mpirun its ranks computed on for 1-5 s. A process
 * tied to its parent dies with it: a launcher killed, its child is gone
 * within a second (this test adopts the orphan to see it go). */
START_TEST(parallel_dies_with_parent)
{
    ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int pfd[2], tfd[2]; /* the rank's pid from the launcher; "tied" from the rank */
    ck_assert_int_eq(pipe(pfd), 0);
    ck_assert_int_eq(pipe(tfd), 0);
    pid_t launcher = fork();
    if (launcher == 0) {
        pid_t me = getpid(), rank = fork();
        if (rank == 0) {
            parallel_die_with(me);
            ck_assert_int_eq(write(tfd[1], "r", 1), 1);
            pause();
            _exit(0);
        }
        ck_assert_int_eq(write(pfd[1], &rank, sizeof rank), (ssize_t)sizeof rank);
        pause();
        _exit(0);
    }
    pid_t rank;
    char tied;
    ck_assert_int_eq(read(pfd[0], &rank, sizeof rank), (ssize_t)sizeof rank);
    ck_assert_int_eq(read(tfd[0], &tied, 1), 1);
    kill(launcher, SIGKILL);
    ck_assert_int_eq(waitpid(launcher, NULL, 0), launcher);
    int st = 0, i = 0;
    pid_t got = 0;
    while ((got = waitpid(rank, &st, WNOHANG)) == 0 && i++ < 100)
        usleep(10000);
    if (got == 0)
        kill(rank, SIGKILL);
    ck_assert_msg(got == rank && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the child outlived its killed parent");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("foundation");
    TCase *t = tcase_create("loader");
    tcase_add_test(t, units_sizes);
    tcase_add_test(t, units_whole_numbers);
    tcase_add_test(t, stats_median_sorts);
    tcase_add_test(t, vocab_names_and_sizes);
    tcase_add_test(t, loader_valid);
    tcase_add_test(t, loader_syntax_error_line_column);
    tcase_add_test(t, loader_unknown_key_suggests);
    tcase_add_test(t, loader_wrong_type);
    tcase_add_test(t, loader_out_of_range);
    tcase_add_test(t, loader_bad_size_suffix);
    tcase_add_test(t, loader_missing_and_version);
    suite_add_tcase(s, t);
    t = tcase_create("cli");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, cli_exit_codes);
    tcase_add_test(t, cli_run_json);
    suite_add_tcase(s, t);
    t = tcase_create("parallel");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, parallel_results_in_task_order);
    tcase_add_test(t, parallel_worker_death_names_task);
    tcase_add_test(t, parallel_budgets_are_the_runs);
    tcase_add_test(t, parallel_dies_with_parent);
    suite_add_tcase(s, t);
    t = tcase_create("ring");
    tcase_set_timeout(t, 60);
    tcase_add_loop_test(t, ring_closed_form, 0, 6);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
