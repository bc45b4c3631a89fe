/* CPU sockets as training ranks (platform.ranks "cpu"): ranks on the
 * sockets, a step built from the socket's roofline, the intra-node allreduce
 * carried by UPI, and clear refusals of what cannot run. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "platforms/platform.h"
#include "sim/replay/traffic.h"
#include "tests/testutil.h"

#define TINY TTASIM_SRCDIR "/tests/data/tiny-trace.json"

static platform *zion_sockets(int nodes)
{
    platform_options o = {.nodes = nodes, .rank_kind = DEVICE_CPU};
    tt_error err = {0};
    platform *p = platform_load("zion", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    return p;
}

/* "ttasim run" of a one-node scenario on the tiny trace; returns the exit status. */
static int run_tiny(const char *plat, const char *precision, const char *extra, char *out, size_t n)
{
    char text[1024], path[64], args[256];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"cpu\", \"platform\": {\"name\": \"%s\", \"nodes\": 1, \"ranks\": \"cpu\"},\n"
             " \"workload\": {\"trace\": \"" TINY "\", \"global_batch\": 64, \"precision\": \"%s\"%s},\n"
             " \"optimizer\": \"sgd\", \"convergence\": {\"steps\": 10}}\n",
             plat, precision, extra);
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run --json %s", path);
    int rc = tu_run_ttasim(args, out, n);
    unlink(path);
    return rc;
}

START_TEST(ranks_are_the_sockets)
{
    platform *p = zion_sockets(2);
    char host[64];
    ck_assert_int_eq(platform_ranks(p), 16);
    ck_assert_int_eq(platform_rank_kind(p), DEVICE_CPU);
    ck_assert_str_eq(platform_device(p, 11)->name, "cooper-lake-8s");
    ck_assert_str_eq(platform_rank_host(p, 11, host, sizeof host), "n1-cpu3");
    /* the sockets form a cube of UPI links: 0-1 adjacent, 0-7 opposite corners */
    ck_assert_int_eq(platform_path_class_links(p, 0, 1, "upi"), 1);
    ck_assert_int_eq(platform_path_class_links(p, 0, 7, "upi"), 3);
    /* across nodes a socket leaves by its own NIC: no UPI on either side */
    ck_assert_int_eq(platform_path_class_links(p, 0, 8, "upi"), 0);
    ck_assert_str_eq(platform_rank_exit(p, 3), "nic3");
    platform_free(p);
}
END_TEST

/* A ring allreduce of B bytes over one node's 8 sockets sends 2 x 7/8 x B
 * from each socket to the next; the ring 0..7 crosses 1+2+1+3+1+2+1+3 = 14
 * UPI links of the cube. */
START_TEST(upi_carries_the_intra_node_allreduce)
{
    platform *p = zion_sockets(1);
    coll_params c = {.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 8, .bytes = 8e6};
    double upi = 0, pcie = 0;
    tt_error err = {0};
    ck_assert_int_eq(traffic_class_bytes(p, &c, "upi", &upi, &err), TT_OK);
    ck_assert_int_eq(traffic_class_bytes(p, &c, "pcie3", &pcie, &err), TT_OK);
    ck_assert_double_eq_tol(upi, 2.0 * 7 / 8 * 8e6 * 14, 1);
    ck_assert_double_eq(pcie, 0); /* nothing detours through the PCIe switches or the OAMs */
    platform_free(p);
}
END_TEST

/* The tiny trace at its own micro-batch (8 per socket), fp32, on Cooper Lake
 * sockets: conv at 0.6 and GEMM at 0.7 of 5.1968 TFLOP/s (compute bound), the
 * loss's forward and backward each one 10 us dispatch. */
START_TEST(step_is_the_socket_roofline)
{
    char out[1 << 16];
    ck_assert_int_eq(run_tiny("zion", "fp32", "", out, sizeof out), 0);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "not JSON: %s", out);
    double peak = 5.1968e12;
    double want = 3e11 / (peak * 0.6) + 6e11 / (peak * 0.7) + 2 * 1e-5;
    json_t *step = json_object_get(doc, "step");
    ck_assert_double_eq_tol(json_real_value(json_object_get(step, "compute_s")), want, want * 1e-9);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "ranks")), 8);
    json_t *sock = json_object_get(json_object_get(doc, "cpu_ranks"), "per_socket");
    ck_assert_double_eq_tol(json_real_value(json_object_get(sock, "flops")), 9e11, 1);
    /* conv 1e8 + 2e8, fc 1e8 + 2e8, loss 1e6 + 1e6: the trace's own bytes at its batch */
    ck_assert_double_eq_tol(json_real_value(json_object_get(sock, "bytes")), 6.02e8, 1);
    /* the gradient buckets' ring allreduce crosses UPI inside the node */
    ck_assert(json_real_value(json_object_get(json_object_get(doc, "cpu_ranks"), "upi_bytes_per_step")) > 0);
    json_decref(doc);
}
END_TEST

START_TEST(refusals_name_the_json_path)
{
    char out[1 << 14];
    /* the DGX A100's EPYC 7742 has no bf16 */
    ck_assert_int_eq(run_tiny("dgx-a100", "bf16", "", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "$.workload.precision") && strstr(out, "epyc-7742 has no bf16"), "%s", out);
    /* a generic platform's node is one accelerator: no socket to train on */
    ck_assert_int_eq(run_tiny("star", "fp32", "", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "$.platform") && strstr(out, "no CPU socket"), "%s", out);
    /* the sockets are the ranks: host memory has nothing to move */
    ck_assert_int_eq(run_tiny("zion", "fp32", ", \"embeddings\": \"host\"", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "$.workload.embeddings") && strstr(out, "are the ranks"), "%s", out);
    /* naming the CPU as the accelerator points to platform.ranks */
    ck_assert_int_eq(tu_run_ttasim("run " TTASIM_SRCDIR "/scenarios/examples/zion-dlrm.json --set "
                                   "platform.accelerator=cooper-lake-8s", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "platform.ranks"), "%s", out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpu_ranks");
    TCase *tc = tcase_create("cpu_ranks");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, ranks_are_the_sockets);
    tcase_add_test(tc, upi_carries_the_intra_node_allreduce);
    tcase_add_test(tc, step_is_the_socket_roofline);
    tcase_add_test(tc, refusals_name_the_json_path);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
