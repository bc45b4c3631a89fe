/* ttasim plan (sim/replay/layout_search.c) on a 1.3B GPT over 16 A100 whose
 * memory is cut to 6 GB, so that both pruning reasons occur: the counts of
 * the enumeration and the pruning, the ranking, rows that `run --set`
 * reproduces, the same output for any -j, and the errors. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "tests/testutil.h"

static const char *SCENARIO =
    "{\"version\": 1, \"name\": \"GPT 1.3B on 16 A100 of %s\",\n"
    " \"platform\": {\"name\": \"dgx-a100\", \"nodes\": 2, \"accelerator\": \"a100-sxm4-40gb\"},\n"
    " \"workload\": {\"model\": {\"family\": \"gpt\", \"layers\": 24, \"hidden\": 2048, \"heads\": 16, \"vocab\": 51200},\n"
    "              \"seq_len\": 2048, \"global_batch\": 256, \"micro_batch\": 1, \"precision\": \"bf16\",\n"
    "              \"gradient_precision\": \"fp32\"},\n"
    " \"optimizer\": \"adamw\",\n"
    " \"devices\": {\"a100-sxm4-40gb\": {\"mem_bytes\": \"%s\"}},\n"
    " \"parallel\": {\"tensor\": 2, \"pipeline\": 2, \"sequence_parallel\": true, \"zero\": 1},\n"
    " \"convergence\": {\"steps\": 1}}\n";

static void write_scenario(char *path, size_t n, const char *mem)
{
    char text[2048];
    snprintf(text, sizeof text, SCENARIO, mem, mem);
    tu_write_temp(text, path, n);
}

static long geti(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    ck_assert_msg(json_is_integer(v), "%s is not an integer", k);
    return (long)json_integer_value(v);
}

static double getd(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    ck_assert_msg(json_is_number(v), "%s is not a number", k);
    return json_number_value(v);
}

/* The counts, worked from the model: 24 blocks, 16 heads, 16 ranks, 8 a
 * node, batch 256. Tensor 1, 2, 4, 8 x context 1, 2, 4, 8 x pipelines
 * dividing 16 / (tensor x context) x chunks 1-8 make 173 degree sets, 692
 * with the 4 micro-batches; 80 of those sets do not split 24 blocks (320);
 * each of the 372 layouts six times (ZeRO 1, 2 x recompute none, selective,
 * full), the 52 without a pipeline (13 tensor x context sets x 4 micro-
 * batches) three more (ZeRO 3): 2,388 screened. At 6 GB, 48 do not hold
 * their parameters, gradients and optimizer state, 1,036 more not their
 * activations. */
START_TEST(plan_counts_and_ranking)
{
    char path[64], out[1 << 17], args[256];
    write_scenario(path, sizeof path, "6G");
    snprintf(args, sizeof args, "plan --json --quiet -j 2 %s", path);
    json_t *doc = tu_run_ttasim_json(args, 0, out, sizeof out);
    unlink(path);
    json_t *s = json_object_get(doc, "search");
    ck_assert_int_eq(geti(s, "combinations"), 692);
    ck_assert_int_eq(geti(json_object_get(s, "rejected"), "model"), 320);
    ck_assert_int_eq(geti(json_object_get(s, "rejected"), "ranks"), 0);
    ck_assert_int_eq(geti(json_object_get(s, "rejected"), "batch"), 0);
    ck_assert_int_eq(geti(s, "screened"), 2388);
    ck_assert_int_eq(geti(json_object_get(s, "pruned"), "memory_state"), 48);
    ck_assert_int_eq(geti(json_object_get(s, "pruned"), "memory_activations"), 1036);
    ck_assert_int_eq(geti(json_object_get(s, "pruned"), "other"), 0);
    ck_assert_int_eq(geti(s, "feasible"), 2388 - 48 - 1036);
    /* the ranking: ZeRO 3 with tensor 2 and selective recomputation (parameters sharded and the
     * attention's scores recomputed, not kept: room for micro-batches of 2 to 8), then a context
     * pair over 8 NICs without tensor parallelism's blocking collectives, then ZeRO 2 */
    static const int want[5][7] = {/* tensor, pipeline, chunks, context, data, micro-batch, zero */
                                   {2, 1, 1, 2, 4, 4, 3}, {2, 1, 1, 1, 8, 2, 3}, {2, 1, 1, 4, 2, 8, 3},
                                   {1, 1, 1, 2, 8, 1, 2}, {2, 1, 1, 2, 4, 2, 2}};
    json_t *rows = json_object_get(doc, "layouts");
    ck_assert_int_eq((int)json_array_size(rows), 15);
    double last = 0;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *r = json_array_get(rows, i);
        double t = getd(json_object_get(r, "step"), "time_s");
        ck_assert_msg(t >= last, "row %zu (%g s) is faster than the row above (%g s)", i, t, last);
        last = t;
        ck_assert(getd(json_object_get(r, "memory"), "total_bytes") <= 6e9);
        if (i >= 5)
            continue;
        long got[7] = {geti(r, "tensor"), geti(r, "pipeline"), geti(r, "virtual_stages"), geti(r, "context"),
                       geti(r, "data"), geti(r, "micro_batch"), geti(r, "zero")};
        for (int k = 0; k < 7; k++)
            ck_assert_msg(got[k] == want[i][k], "row %zu, field %d: %ld, expected %d", i, k, got[k], want[i][k]);
        ck_assert_str_eq(json_string_value(json_object_get(r, "recompute")), "selective");
        ck_assert(json_is_true(json_object_get(r, "sequence_parallel")) == (got[0] > 1));
    }
    /* the first row's communicators, worked from DGX A100 (NVLink3 300 GB/s a direction, a 25 GB/s
     * HDR NIC a GPU): tensor and context pairs in a node; the dense gradients' group (data 4 x
     * context 2) 4 ranks a node on 2 nodes, leaving each by its members' 4 NICs, a ring's hop
     * between the nodes at 4 x 25 GB/s; no pipeline */
    json_t *comms = json_object_get(json_array_get(rows, 0), "communicators");
    json_t *tp = json_object_get(comms, "tp"), *dp = json_object_get(comms, "dp");
    ck_assert_int_eq(geti(tp, "size"), 2);
    ck_assert_int_eq(geti(tp, "nodes"), 1);
    ck_assert_int_eq(geti(tp, "nics"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(tp, "node_link_class")), "nvlink3");
    ck_assert_double_eq_tol(getd(tp, "ring_Bps"), 300e9, 1);
    ck_assert_int_eq(geti(dp, "size"), 8);
    ck_assert_int_eq(geti(dp, "nodes"), 2);
    ck_assert_int_eq(geti(dp, "nics"), 4);
    ck_assert_double_eq_tol(getd(dp, "ring_Bps"), 100e9, 1);
    ck_assert_int_eq(geti(json_object_get(comms, "cp"), "size"), 2);
    ck_assert_ptr_null(json_object_get(comms, "pp"));
    /* the screen is within 6 % of the simulation on every simulated row (it leaves out the
     * contention of a node's tensor and context groups on NVLink: 5.3 % at tensor 2 x context 4) */
    json_t *sc = json_object_get(doc, "screen");
    ck_assert_int_eq(geti(sc, "simulated"), 15);
    ck_assert(getd(sc, "error_max") < 0.06 && getd(sc, "error_max") > 0);
    /* the scenario's own layout (tensor 2, pipeline 2, micro-batch 1, ZeRO 1) does not fit in 6 GB */
    json_t *own = json_object_get(doc, "scenario_layout");
    const char *why = json_string_value(json_object_get(own, "error"));
    ck_assert_ptr_nonnull(strstr(why, "does not fit"));
    ck_assert_ptr_nonnull(strstr(why, "activations")); /* the rank's breakdown, and keys that exist */
    ck_assert_ptr_nonnull(strstr(why, "$.parallel.recompute"));
    json_decref(doc);
}
END_TEST

/* A row's "set" makes `run` simulate the same step: the first row (ZeRO 3),
 * and one with a pipeline of 2 stages of 6 chunks each (without selective
 * recomputation, whose rows come first). */
START_TEST(plan_rows_are_runs)
{
    char path[64], out[1 << 17], args[2048];
    write_scenario(path, sizeof path, "6G");
    snprintf(args, sizeof args, "plan --json --quiet --top 8 --simulate 8 --recompute none,full %s", path);
    json_t *doc = tu_run_ttasim_json(args, 0, out, sizeof out);
    json_t *rows = json_object_get(doc, "layouts");
    ck_assert_int_eq((int)json_array_size(rows), 8);
    size_t pick[2] = {0, 3};
    for (int k = 0; k < 2; k++) {
        json_t *r = json_array_get(rows, pick[k]);
        snprintf(args, sizeof args, "run --json --quiet %s %s", path, json_string_value(json_object_get(r, "set")));
        json_t *run = tu_run_ttasim_json(args, 0, out, sizeof out);
        double want = getd(json_object_get(r, "step"), "time_s");
        double got = getd(json_object_get(run, "step"), "time_s");
        ck_assert_msg(fabs(got - want) <= 1e-9 * want, "row %zu: run %.12g s, plan %.12g s", pick[k], got, want);
        json_decref(run);
    }
    ck_assert_int_eq(geti(json_array_get(rows, 0), "zero"), 3);
    ck_assert_int_eq(geti(json_array_get(rows, 3), "virtual_stages"), 6);
    json_decref(doc);
    unlink(path);
}
END_TEST

START_TEST(plan_same_for_any_jobs)
{
    char path[64], a[1 << 15], b[1 << 15], args[256];
    write_scenario(path, sizeof path, "6G");
    snprintf(args, sizeof args, "plan --quiet -j 1 --simulate 5 %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, a, sizeof a), 0);
    snprintf(args, sizeof args, "plan --quiet -j 3 --simulate 5 %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, b, sizeof b), 0);
    unlink(path);
    ck_assert_str_eq(a, b);
    ck_assert_ptr_nonnull(strstr(a, "48 by parameters, gradients and optimizer state alone, 1036 with activations"));
}
END_TEST

START_TEST(plan_errors)
{
    char path[64], out[8192];
    write_scenario(path, sizeof path, "1G");
    char args[256];
    snprintf(args, sizeof args, "plan --quiet %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "none of the 2388 layouts screened fits in the 1 GB of a device"));
    snprintf(args, sizeof args, "plan --quiet --top 6 --simulate 5 %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--simulate 5 is fewer than --top 6"));
    unlink(path);
    ck_assert_int_eq(tu_run_ttasim("plan --quiet --batch 0 x.json", out, sizeof out), 2);
    ck_assert_int_eq(tu_run_ttasim("plan --quiet " TTASIM_SRCDIR "/scenarios/collectives/dgx-a100-allreduce-8g.json",
                                   out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "a collective scenario has no training step"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout_search");
    TCase *tc = tcase_create("plan");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, plan_counts_and_ranking);
    tcase_add_test(tc, plan_rows_are_runs);
    tcase_add_test(tc, plan_same_for_any_jobs);
    tcase_add_test(tc, plan_errors);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
