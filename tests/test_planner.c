/* The planner's workflow end to end on small platforms: --set, partial
 * devices, sweeps over platform paths with a point that does not run,
 * micro-batches derived per point, ttasim compare, progress on a
 * non-terminal stderr. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "sim/report/report.h"
#include "tests/testutil.h"

#define TRACE TTASIM_SRCDIR "/tests/data/tiny-trace.json"

/* A star of 8 generic accelerators, the test trace, McCandlish steps; extra ends the object. */
static const char *STAR =
    "{\"version\": 1, \"name\": \"%s\",\n"
    " \"platform\": {\"name\": \"star\", \"nodes\": 8, \"link_bw_Bps\": \"%s\", \"link_latency_s\": \"1us\"},\n"
    " \"network\": \"ideal\",\n"
    " \"workload\": {\"trace\": \"" TRACE "\", \"global_batch\": 64, \"micro_batch\": 8},\n"
    " \"collectives\": {\"allreduce\": \"ring\"},\n"
    " \"convergence\": {\"mccandlish\": {\"s_min\": 1000, \"noise_scale\": 64}}%s}\n";

static void star(char *path, size_t n, const char *name, const char *bw, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text, STAR, name, bw, extra);
    tu_write_temp(text, path, n);
}

static json_t *json_of(const char *args, int want_rc)
{
    static char out[1 << 20];
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --quiet", args); /* tu_run_ttasim merges stderr into stdout */
    return tu_run_ttasim_json(cmd, want_rc, out, sizeof out);
}

static double num(json_t *doc, const char *path)
{
    double v = NAN;
    ck_assert_msg(report_lookup(doc, path, &v), "no number at %s", path);
    return v;
}

/* --set changes a workload value and a device's purchase price (a partial
 * device: no "kind"), and the result follows: batch, capex. */
START_TEST(set_overrides_scenario_and_device)
{
    char path[64], args[512];
    star(path, sizeof path, "set", "12.5G", "");
    snprintf(args, sizeof args, "run --json %s --set workload.global_batch=128 "
                                "--set devices.generic-accelerator.purchase.price_usd=20000", path);
    json_t *doc = json_of(args, 0);
    ck_assert(num(doc, "global_batch") == 128 && num(doc, "accumulation") == 2);
    /* 8 x $20,000 + one 32-port switch at $400 a port + 8 cables at $300 */
    ck_assert(num(doc, "ownership.capex_usd.total") == 8 * 20000 + 32 * 400 + 8 * 300);
    json_t *as = json_object_get(doc, "assumptions");
    int named = 0;
    for (size_t i = 0; i < json_array_size(as); i++)
        named |= strstr(json_string_value(json_array_get(as, i)), "workload.global_batch=128 (set on the command "
                                                                    "line") != NULL;
    ck_assert(named);
    json_decref(doc);
    /* a bad path names the option and the key */
    char out[8192];
    snprintf(args, sizeof args, "run %s --set platform.nodez=4", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--set"));
    ck_assert_ptr_nonnull(strstr(out, "unknown key \"nodez\" (did you mean \"nodes\"?)"));
    snprintf(args, sizeof args, "run %s --set nothing", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "expected PATH=VALUE"));
    unlink(path);
    /* check: the same bound passes as written and fails with the batch doubled */
    star(path, sizeof path, "bound", "12.5G", ", \"expect\": {\"global_batch\": {\"max\": 100}}");
    snprintf(args, sizeof args, "check --quiet %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    snprintf(args, sizeof args, "check --quiet %s --set workload.global_batch=128", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "global_batch"));
    unlink(path);
}
END_TEST

/* A scenario's partial device merges over the built-in one: busy power 400 W
 * instead of 300 W changes the energy by 8 x 100 W x busy time x PUE. */
START_TEST(partial_device_in_scenario)
{
    char a[64], b[64], args[512];
    star(a, sizeof a, "300w", "12.5G", ", \"cost\": {\"pue\": 1}");
    star(b, sizeof b, "400w", "12.5G", ", \"cost\": {\"pue\": 1}, \"devices\": {\"generic-accelerator\": {\"tdp_w\": 400}}");
    snprintf(args, sizeof args, "run --json %s", a);
    json_t *da = json_of(args, 0);
    snprintf(args, sizeof args, "run --json %s", b);
    json_t *db = json_of(args, 0);
    double busy = num(da, "step.compute_s") + num(da, "step.optimizer_s");
    ck_assert(num(db, "step.time_s") == num(da, "step.time_s"));
    ck_assert_double_eq_tol(num(db, "per_step.energy_j") - num(da, "per_step.energy_j"), 8 * 100 * busy, 1e-6);
    json_decref(da);
    json_decref(db);
    unlink(a);
    unlink(b);
}
END_TEST

/* A fat tree of 4 single-accelerator nodes, 2 per leaf, one NIC each. */
static const char *TREE =
    "{\"format\": \"ttasim-platform\", \"version\": 1, \"name\": \"tree4\", \"sources\": [\"test\"],\n"
    " \"assumptions\": [],\n"
    " \"node\": {\"components\": [{\"name\": \"gpu\", \"device\": \"v100-sxm2\"}, {\"name\": \"nic\", \"device\": \"ib-edr\"}],\n"
    "          \"links\": [{\"a\": \"gpu0\", \"b\": \"nic0\", \"bandwidth_Bps\": \"16G\", \"latency_s\": \"1us\"}]},\n"
    " \"fabric\": {\"topology\": \"fattree\", \"nodes\": 4, \"attach\": \"nic\", \"class\": \"ib-edr\",\n"
    "            \"link\": {\"bandwidth_Bps\": \"12.5G\", \"latency_s\": \"1us\"}, \"nodes_per_leaf\": 2}}\n";

/* A sweep over a fabric field: 2:1 oversubscription halves the uplinks (fewer
 * cables, a slower allreduce); a sweep over the global batch with a batch
 * that does not split over 4 ranks keeps its error in its row, the others run. */
START_TEST(sweep_over_platform_paths)
{
    char plat[64], path[64], text[4096], args[512];
    tu_write_temp(TREE, plat, sizeof plat);
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"tree\", \"platform\": {\"name\": \"%s\"}, \"network\": \"ideal\",\n"
             " \"workload\": {\"trace\": \"" TRACE "\", \"global_batch\": 64},\n"
             " \"collectives\": {\"allreduce\": \"rhd\"}, \"convergence\": {\"steps\": 100},\n"
             " \"sweep\": {\"platform.fabric.oversubscription\": [1, 2], \"global_batch\": [64, 66]}}\n",
             plat);
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run --json %s", path);
    json_t *doc = json_of(args, 0);
    json_t *sw = json_object_get(doc, "sweep");
    ck_assert_int_eq(json_array_size(sw), 4);
    /* [over 1: 64, 66], [over 2: 64, 66] */
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(sw, 2), "label")),
                     "platform.fabric.oversubscription=2");
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(json_array_get(sw, 1), "error")),
                                 "does not split over 4 ranks"));
    ck_assert_ptr_nonnull(json_object_get(json_array_get(sw, 3), "error"));
    /* 4 nodes, 2 per leaf: 4 node cables + 2 leaves x 2 up (1 when 2:1) */
    ck_assert(num(doc, "sweep[0].ownership.fabric_cables") == 8);
    ck_assert(num(doc, "sweep[2].ownership.fabric_cables") == 6);
    ck_assert(num(doc, "sweep[2].step.comm_s") > num(doc, "sweep[0].step.comm_s"));
    /* the micro-batch is not fixed: the whole 16 samples per rank fit in one */
    ck_assert(num(doc, "sweep[0].micro_batch") == 16 && num(doc, "sweep[0].accumulation") == 1);
    json_decref(doc);
    /* a misspelt swept path names the sweep and suggests the key */
    char out[8192];
    unlink(path);
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"bad\", \"platform\": {\"name\": \"%s\"},\n"
             " \"workload\": {\"trace\": \"" TRACE "\", \"global_batch\": 64}, \"convergence\": {\"steps\": 100},\n"
             " \"sweep\": {\"workload.global_bach\": [64]}}\n", plat);
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "$.sweep.workload.global_bach[0]"));
    ck_assert_ptr_nonnull(strstr(out, "did you mean \"global_batch\""));
    unlink(path);
    unlink(plat);
}
END_TEST

/* Without a fixed micro-batch, the largest that fits: 8,000 samples per
 * rank at 18.75 MB of activations each do not fit in 16 GiB; 800 do (1,000,
 * the next divisor, would need 18.75 GB). */
START_TEST(micro_batch_derived)
{
    char path[64], text[4096], args[512];
    snprintf(text, sizeof text, STAR, "derived", "12.5G", "");
    char *mb = strstr(text, ", \"micro_batch\": 8");
    ck_assert_ptr_nonnull(mb);
    memmove(mb, mb + strlen(", \"micro_batch\": 8"), strlen(mb + strlen(", \"micro_batch\": 8")) + 1);
    char *gb = strstr(text, "\"global_batch\": 64");
    memmove(gb + strlen("\"global_batch\": 64000"), gb + strlen("\"global_batch\": 64"),
            strlen(gb + strlen("\"global_batch\": 64")) + 1);
    memcpy(gb, "\"global_batch\": 64000", strlen("\"global_batch\": 64000"));
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run --json %s", path);
    json_t *doc = json_of(args, 0);
    ck_assert(num(doc, "micro_batch") == 800 && num(doc, "accumulation") == 10);
    json_decref(doc);
    unlink(path);
}
END_TEST

/* compare: the star on 12.5 GB/s links against one on 1.25 GB/s: the fast
 * one wins, the slow one loses on exposed communication; CSV one row each. */
START_TEST(compare_two_scenarios)
{
    char a[64], b[64], args[512], out[65536];
    const char *csv = "/tmp/ttasim-test-compare.csv", *svg = "/tmp/ttasim-test-compare.svg";
    star(a, sizeof a, "fast", "12.5G", "");
    star(b, sizeof b, "slow", "0.5G", "");
    snprintf(args, sizeof args, "compare --json %s %s", a, b);
    json_t *doc = json_of(args, 0);
    json_t *v = json_array_get(json_object_get(doc, "verdicts"), 0);
    char fast[80], slow[80];
    snprintf(fast, sizeof fast, "%.*s", (int)(strlen(a) - 5 - 5), a + 5); /* "/tmp/NAME.json" -> NAME */
    snprintf(slow, sizeof slow, "%.*s", (int)(strlen(b) - 5 - 5), b + 5);
    ck_assert_str_eq(json_string_value(json_object_get(v, "fastest")), fast);
    ck_assert_str_eq(json_string_value(json_object_get(v, "cheapest")), fast);
    json_t *why = json_array_get(json_object_get(v, "slower"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(why, "series")), slow);
    ck_assert_str_eq(json_string_value(json_object_get(why, "mostly")), "exposed communication");
    ck_assert(json_is_null(json_object_get(why, "bottleneck_link_class")));
    ck_assert(num(doc, "scenarios[1].step.exposed_comm_s") > num(doc, "scenarios[0].step.exposed_comm_s"));
    /* the purchase search: the fast one is also the cheaper (fewer rented hours), alone on the front */
    json_t *front = json_object_get(json_object_get(doc, "purchase"), "pareto_front");
    ck_assert_uint_eq(json_array_size(front), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(front, 0), "series")), fast);
    ck_assert_ptr_null(json_object_get(json_object_get(doc, "purchase"), "deadline_s"));
    double slow_s = num(doc, "scenarios[1].time_to_accuracy_s");
    json_decref(doc);
    /* within a deadline of twice the slow one's time both qualify: the cheaper, the fast one */
    snprintf(args, sizeof args, "compare --json %s %s --deadline %.17g --budget 1B", a, b, 2 * slow_s);
    doc = json_of(args, 0);
    json_t *pick = json_object_get(json_object_get(doc, "purchase"), "cheapest_within_deadline");
    ck_assert_str_eq(json_string_value(json_object_get(pick, "series")), fast);
    pick = json_object_get(json_object_get(doc, "purchase"), "fastest_within_budget");
    ck_assert_str_eq(json_string_value(json_object_get(pick, "series")), fast);
    ck_assert(num(doc, "purchase.budget_usd") == 1e9);
    json_decref(doc);
    /* a deadline no point meets is a failed expectation: exit 1, said on stderr */
    snprintf(args, sizeof args, "compare --quiet %s %s --deadline 1min", a, b);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "no point reaches the target within the deadline of 60 s"));
    ck_assert_ptr_nonnull(strstr(out, "pareto front: time to accuracy against"));
    snprintf(args, sizeof args, "compare --quiet %s %s --deadline 3weeks", a, b);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--deadline 3weeks: expected a positive duration"));
    snprintf(args, sizeof args, "compare --quiet %s %s --csv %s --svg %s", a, b, csv, svg);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "exposed communication +"));
    FILE *f = fopen(csv, "r");
    ck_assert_ptr_nonnull(f);
    int lines = 0;
    while (fgets(out, sizeof out, f))
        lines++;
    fclose(f);
    ck_assert_int_eq(lines, 3);
    f = fopen(svg, "r");
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(out, ">A  fast<"));
    ck_assert_ptr_nonnull(strstr(out, ">B  slow<"));
    ck_assert_ptr_nonnull(strstr(out, "against time to accuracy: the Pareto front joined"));
    unlink(csv);
    unlink(svg);
    snprintf(args, sizeof args, "compare %s", a);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "at least two scenario files"));
    unlink(a);
    unlink(b);
}
END_TEST

/* stderr that is not a terminal gets plain progress lines (first and last
 * at least); --quiet silences them. */
START_TEST(progress_lines_when_not_a_terminal)
{
    char path[64], args[512], err_path[] = "/tmp/ttasim-test-progress-XXXXXX", text[4096];
    int fd = mkstemp(err_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    star(path, sizeof path, "prog", "12.5G", ", \"sweep\": {\"nodes\": [2, 4]}");
    snprintf(args, sizeof args, "'%s/ttasim' run %s >/dev/null 2>%s", TTASIM_BUILDDIR, path, err_path);
    ck_assert_int_eq(system(args), 0);
    FILE *f = fopen(err_path, "r");
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "progress: run prog: 0/2 points done"));
    ck_assert_ptr_nonnull(strstr(text, "progress: run prog: 2/2 points done"));
    ck_assert_ptr_nonnull(strstr(text, "elapsed"));
    ck_assert_ptr_null(strchr(text, '\r')); /* no bar redrawn in place */
    snprintf(args, sizeof args, "'%s/ttasim' run --quiet %s >/dev/null 2>%s", TTASIM_BUILDDIR, path, err_path);
    ck_assert_int_eq(system(args), 0);
    f = fopen(err_path, "r");
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    ck_assert_int_eq(n, 0);
    unlink(err_path);
    unlink(path);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("planner");
    TCase *t = tcase_create("cli");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, set_overrides_scenario_and_device);
    tcase_add_test(t, partial_device_in_scenario);
    tcase_add_test(t, sweep_over_platform_paths);
    tcase_add_test(t, micro_batch_derived);
    tcase_add_test(t, compare_two_scenarios);
    tcase_add_test(t, progress_lines_when_not_a_terminal);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
