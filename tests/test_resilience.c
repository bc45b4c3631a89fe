/* Failures, checkpoints and stragglers (sim/replay/resilience.h): Young's
 * interval, goodput and the expected maximum of N normals worked by hand,
 * the calibrated rates, a run's report, and the scenario's errors (exit 2). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/datapath.h"
#include "platforms/platform.h"
#include "sim/replay/cost.h"
#include "sim/replay/resilience.h"
#include "tests/testutil.h"

/* C = 50 s, MTBF 10,000 s: tau = sqrt(2 x 50 x 10,000) = 1,000 s; with 200 s
 * down per interruption, goodput = (1 - (200 + (1000 + 50) / 2) / 10,000) /
 * (1 + 50 / 1000) = 0.9275 / 1.05. */
START_TEST(young_and_goodput_hand_worked)
{
    ck_assert_double_eq_tol(resilience_interval_s(50, 1e4), 1000, 1e-9);
    ck_assert_double_eq_tol(resilience_goodput(1e4, 50, 1000, 200), 0.9275 / 1.05, 1e-12);
    /* no interruptions: only the checkpoints cost */
    ck_assert_double_eq_tol(resilience_goodput(INFINITY, 50, 1000, 200), 1 / 1.05, 1e-12);
    /* an interruption loses more than the time between two: no progress */
    ck_assert_double_eq(resilience_goodput(700, 50, 1000, 200), 0);
}
END_TEST

/* E[max of n standard normals]: 1 / sqrt(pi) for 2, 3 / (2 sqrt(pi)) for 3,
 * tabulated 1.16296 for 5 and 1.42360 for 8 (Harter 1961). */
START_TEST(normal_max_hand_worked)
{
    ck_assert_double_eq(resilience_normal_max(1), 0);
    ck_assert_double_eq_tol(resilience_normal_max(2), 1 / sqrt(M_PI), 1e-9);
    ck_assert_double_eq_tol(resilience_normal_max(3), 1.5 / sqrt(M_PI), 1e-9);
    ck_assert_double_eq_tol(resilience_normal_max(5), 1.16296, 1e-5);
    ck_assert_double_eq_tol(resilience_normal_max(8), 1.42360, 1e-5);
    ck_assert_double_eq_tol(resilience_normal_max(1000), 3.2414, 1e-3);
    resilience_options o;
    resilience_options_default(&o);
    ck_assert_double_eq(resilience_straggler_s(&o, 2.0, 8), 0); /* none unless asked */
    o.straggler_cv = 0.02;
    ck_assert_double_eq_tol(resilience_straggler_s(&o, 2.0, 2), 0.02 * 2.0 / sqrt(M_PI), 1e-9);
}
END_TEST

/* The calibration: a node of 8 GPUs and 8 NICs fails at Kokolis et al.'s
 * pooled rate, (2,000 x 6.50 + 1,000 x 2.34) / 3,000 per 1000 node-days,
 * split as Llama 3's Table 5 (GPU 196, HBM 72 of 466). */
START_TEST(calibrated_rates)
{
    resilience_options o;
    resilience_options_default(&o);
    const double node[RES_COMPONENTS] = {8, 8, 8, 8, 1, 1, 1};
    double per_node = 0;
    for (int c = 0; c < RES_COMPONENTS; c++)
        per_node += o.rate_per_day[c] * node[c];
    ck_assert_double_eq_tol(per_node, (2000 * 6.50 + 1000 * 2.34) / 3000 / 1000, 1e-15);
    ck_assert_double_eq_tol(o.rate_per_day[RES_GPU] * 8 / per_node, 196.0 / 466, 1e-12);
    ck_assert_double_eq_tol(o.rate_per_day[RES_HBM] * 8 / per_node, 72.0 / 466, 1e-12);
    ck_assert_double_eq_tol(o.rate_per_day[RES_PLANNED] / per_node, 47.0 / 466, 1e-12);
}
END_TEST

/* 1,000 GPUs at 0.001 a day: one interruption a day (MTBF 86,400 s); 1 TB at
 * 10 GB/s is C = 100 s, read at 20 GB/s 50 s, restart 600 s; tau =
 * sqrt(2 x 100 x 86,400) = 4156.92 s; goodput (1 - (650 + 4256.92 / 2) /
 * 86,400) / (1 + 100 / 4156.92) = 0.945106; 10 days of work take 914,183 s
 * with 10.58 interruptions. */
START_TEST(run_with_failures_hand_worked)
{
    resilience_options o;
    resilience_options_default(&o);
    for (int c = 0; c < RES_COMPONENTS; c++)
        o.rate_per_day[c] = c == RES_GPU ? 0.001 : 0;
    o.checkpoint_bytes = 1e12;
    o.storage_write_Bps = 1e10;
    o.storage_read_Bps = 2e10;
    resilience_inputs in = {.gpus = 1000, .nodes = 125, .nics = 1000, .state_bytes = 5e12, .time_s = 864000,
                            .time_p10_s = 800000, .time_p90_s = 900000, .busy_share = 0.5};
    cost_rates rates = {.ranks = 1000, .price_per_h_usd = 3.6, .busy_w = 700, .idle_w = 100, .pue = 1,
                        .lifetime_s = 1e8, .usd_per_j = 0};
    resilience_result r;
    resilience_of(&o, &in, &rates, &r);
    ck_assert_int_eq(r.on, 1);
    ck_assert_double_eq_tol(r.interruptions_per_day, 1, 1e-12);
    ck_assert_double_eq_tol(r.per_day[RES_GPU], 1, 1e-12);
    ck_assert_double_eq_tol(r.mtbf_s, 86400, 1e-6);
    ck_assert_double_eq_tol(r.checkpoint_write_s, 100, 1e-9);
    ck_assert_double_eq_tol(r.checkpoint_read_s, 50, 1e-9);
    ck_assert_double_eq_tol(r.checkpoint_interval_s, 4156.921938165306, 1e-6);
    ck_assert_double_eq_tol(r.goodput, 0.9451061661225947, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 914183.01030101, 1e-3);
    ck_assert_double_eq_tol(r.interruptions, 10.580821878483912, 1e-9);
    /* the band: Poisson(10.58) has its 10th percentile at 7 and 90th at 15 */
    ck_assert(r.goodput_p10 < r.goodput && r.goodput < r.goodput_p90);
    ck_assert(r.time_p10_s < 800000 / r.goodput && r.time_p90_s > 900000 / r.goodput);
    /* rent: 1,000 GPUs at $3.6 an hour for the extra 50,183 s */
    ck_assert_double_eq_tol(r.lost_usd, (914183.01030101 - 864000) * 1000 * 3.6 / 3600, 1e-2);
    /* failures off: nothing reported */
    o.failures = 0;
    resilience_of(&o, &in, &rates, &r);
    ck_assert_int_eq(r.on, 0);
    ck_assert_double_eq(r.interruptions_per_day, 0);
}
END_TEST

/* GPT-3 Small on one DGX H100 for 100,000 steps, with `extra` keys. */
static void write_scenario(const char *extra, char *path, size_t len)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"t\", \"platform\": {\"name\": \"dgx-h100\", \"nodes\": 1},"
             " \"workload\": {\"model\": \"gpt3-125m\", \"global_batch\": 64, \"micro_batch\": 1, \"precision\":"
             " \"bf16\"}, \"optimizer\": \"adamw\", \"convergence\": {\"steps\": 100000}%s}", extra);
    tu_write_temp(text, path, len);
}

/* A run through the CLI: its report's keys and values. */
static json_t *run_json(const char *resilience, char *out, size_t len)
{
    char path[64], args[128];
    write_scenario(resilience, path, sizeof path);
    snprintf(args, sizeof args, "run %s --json --quiet", path);
    json_t *doc = tu_run_ttasim_json(args, 0, out, len);
    unlink(path);
    return doc;
}

static double at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    ck_assert_msg(json_is_number(v), "%s.%s is not a number", a, b ? b : "");
    return json_number_value(v);
}

START_TEST(report_keys)
{
    char out[1 << 17];
    json_t *doc = run_json("", out, sizeof out);
    /* a DGX H100 (8 GPUs, 8 NICs) fails at the calibration node's rate */
    ck_assert_double_eq_tol(at(doc, "resilience", "interruptions_per_day"), 0.0051133333333, 1e-12);
    /* GPT-3 Small's 125M parameters in bf16 with fp32 master weights and two fp32 moments: 14 bytes each */
    double params = at(doc, "resilience", "checkpoint_bytes") / 14;
    ck_assert_double_gt(params, 1.2e8);
    ck_assert_double_lt(params, 1.3e8);
    double tta = at(doc, "time_to_accuracy_s", NULL), g = at(doc, "resilience", "goodput");
    ck_assert_double_eq_tol(at(doc, "time_to_accuracy_with_failures_s", NULL), tta / g, 1e-6 * tta);
    ck_assert_double_gt(at(doc, "cost_usd_with_failures", NULL), at(doc, "cost_usd", NULL));
    ck_assert_ptr_null(json_object_get(json_object_get(doc, "step"), "straggler_s"));
    double compute_s = at(doc, "step", "compute_s"), step_s = at(doc, "step", "time_s");
    json_decref(doc);
    /* stragglers: 8 ranks, each 5 % sd: the step waits 0.05 x 1.4236 of the compute */
    doc = run_json(", \"resilience\": {\"failures\": false, \"stragglers\": {\"cv\": 0.05}}", out, sizeof out);
    ck_assert_ptr_null(json_object_get(doc, "resilience"));
    ck_assert_ptr_null(json_object_get(doc, "time_to_accuracy_with_failures_s"));
    ck_assert_double_eq_tol(at(doc, "step", "straggler_s"), 0.05 * 1.42360 * compute_s, 1e-5 * compute_s);
    ck_assert_double_eq_tol(at(doc, "step", "time_s"), step_s + at(doc, "step", "straggler_s"), 1e-9);
    json_decref(doc);
}
END_TEST

/* A platform's optional "storage": absent on the built-ins, read when given,
 * its keys checked. */
static platform *storage_platform(json_t *storage, tt_error *err)
{
    char src[4096], path[64];
    ck_assert_int_eq(datapath_find("platforms/dgx-h100.json", src, sizeof src), 0);
    json_t *doc = json_load_file(src, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    json_object_set_new(doc, "storage", storage);
    char *text = json_dumps(doc, 0);
    tu_write_temp(text, path, sizeof path);
    platform *p = platform_load(path, NULL, err);
    unlink(path);
    free(text);
    json_decref(doc);
    return p;
}

START_TEST(platform_storage_property)
{
    tt_error err = {0};
    double w, r;
    const char *why;
    platform *p = platform_load("dgx-h100", NULL, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(platform_storage(p, &w, &r, &why), 0);
    platform_free(p);
    p = storage_platform(json_pack("{s:s, s:f, s:s}", "write_Bps", "2T", "read_Bps", 7e12, "why", "U: t"), &err);
    ck_assert_msg(p, "%s", err.msg);
    ck_assert_int_eq(platform_storage(p, &w, &r, &why), 1);
    ck_assert_double_eq(w, 2e12);
    ck_assert_double_eq(r, 7e12);
    ck_assert_str_eq(why, "U: t");
    platform_free(p);
    ck_assert_ptr_null(storage_platform(json_pack("{s:f, s:f}", "write_Bps", 1e9, "read_Bps", 1e9), &err));
    ck_assert_msg(strstr(err.msg, "$.storage") && strstr(err.msg, "why"), "%s", err.msg);
    ck_assert_ptr_null(storage_platform(json_pack("{s:f, s:f, s:s, s:i}", "write_Bps", 1e9, "read_Bps", 1e9, "why",
                                                  "x", "writes_Bps", 1), &err));
    ck_assert_msg(strstr(err.msg, "$.storage") && strstr(err.msg, "write_Bps"), "%s", err.msg);
}
END_TEST

static void run_expect(const char *resilience, const char *needle)
{
    char extra[512], path[64], args[128], out[8192];
    snprintf(extra, sizeof extra, ", \"resilience\": %s", resilience);
    write_scenario(extra, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    int got = tu_run_ttasim(args, out, sizeof out);
    unlink(path);
    ck_assert_msg(got == 2, "exit %d, expected 2: %s", got, out);
    ck_assert_msg(strstr(out, needle), "expected \"%s\" in: %s", needle, out);
}

START_TEST(scenario_errors_exit_2)
{
    run_expect("{\"failure\": true}", "$.resilience");
    run_expect("{\"failure\": true}", "\"failures\"");
    run_expect("{\"rates\": {\"gpus\": 0.1}}", "$.resilience.rates");
    run_expect("{\"rates\": {\"gpus\": 0.1}}", "\"gpu\"");
    run_expect("{\"stragglers\": {\"cv\": 2}}", "$.resilience.stragglers.cv");
    run_expect("{\"stragglers\": {}}", "missing required key \"cv\"");
    run_expect("{\"restart_s\": -1}", "$.resilience.restart_s");
    run_expect("{\"storage_write_Bps\": \"fast\"}", "$.resilience.storage_write_Bps");
    run_expect("{\"failures\": false, \"restart_s\": 10}", "turns off");
    run_expect("[]", "$.resilience");
    /* without failures the report has no resilience block to bound */
    run_expect("{\"failures\": false}, \"expect\": {\"resilience.goodput\": {\"min\": 0}}",
               "$.expect[\"resilience.goodput\"]");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("resilience");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, young_and_goodput_hand_worked);
    tcase_add_test(t, normal_max_hand_worked);
    tcase_add_test(t, calibrated_rates);
    tcase_add_test(t, run_with_failures_hand_worked);
    tcase_add_test(t, report_keys);
    tcase_add_test(t, platform_storage_property);
    tcase_add_test(t, scenario_errors_exit_2);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? 1 : 0;
}
