/* ttasim run and ttasim check end to end on a generic star of 8 and the
 * hand-made trace: sweep, expectations, CSV/SVG/JUnit outputs, errors. */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "sim/report/expect.h"
#include "sim/report/report.h"
#include "tests/testutil.h"

#define TRACE TTASIM_SRCDIR "/tests/data/tiny-trace.json"

static const char *SCENARIO =
    "{\"version\": 1, \"name\": \"%s\",\n"
    " \"platform\": {\"name\": \"star\", \"nodes\": 8, \"link_bw_Bps\": \"12.5G\", \"link_latency_s\": \"1us\"},\n"
    " \"network\": \"ideal\",\n"
    " \"workload\": {\"trace\": \"" TRACE "\", \"global_batch\": %d, \"micro_batch\": %d},\n"
    " \"collectives\": {\"allreduce\": \"ring\"},\n"
    " \"convergence\": {\"mccandlish\": {\"s_min\": 1000, \"noise_scale\": 64}},\n"
    " \"reference\": {\"step_time_s\": 0.25, \"source\": \"made up\"}%s}\n";

static void write_scenario(char *path, size_t n, const char *name, int batch, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text, SCENARIO, name, batch, 8, extra);
    tu_write_temp(text, path, n);
}

static json_t *run_json(const char *path, int expect_rc, char *out, size_t n)
{
    char args[512];
    snprintf(args, sizeof args, "run --json --quiet %s", path); /* tu_run_ttasim merges stderr */
    return tu_run_ttasim_json(args, expect_rc, out, n);
}

/* Global batch 128 on 8 ranks at micro-batch 8: two micro-steps; steps to
 * target from McCandlish: 1000 (1 + 64 / 128) = 1500; reference echoed. */
START_TEST(run_accumulation_and_tta)
{
    char path[64], out[32768];
    write_scenario(path, sizeof path, "acc", 128, ", \"cost\": {\"pue\": 1.5}");
    json_t *doc = run_json(path, 0, out, sizeof out);
    unlink(path);
    double v;
    ck_assert(report_lookup(doc, "accumulation", &v) && v == 2);
    ck_assert(report_lookup(doc, "steps_to_target", &v) && fabs(v - 1500) < 1e-9);
    double t, tta, ref, ratio, usd, energy;
    ck_assert(report_lookup(doc, "step.time_s", &t));
    ck_assert(report_lookup(doc, "time_to_accuracy_s", &tta));
    ck_assert_double_eq_tol(tta, 1500 * t, 1e-9 * tta);
    ck_assert(report_lookup(doc, "reference.step_time_s", &ref) && ref == 0.25);
    ck_assert(report_lookup(doc, "reference.step_time_ratio", &ratio));
    ck_assert_double_eq_tol(ratio, t / 0.25, 1e-9);
    ck_assert(report_lookup(doc, "cost_usd", &usd) && usd == 0); /* generic device: no price */
    /* energy at the meter: PUE 1.5 x (8 x (300 W busy x compute+optimizer + 50 W the rest) + the star's
     * one 32-port switch at 5 W a port and 8 cables at 2 W, always on) per step */
    double busy = 0, compute, opt, ports, cables, other;
    ck_assert(report_lookup(doc, "step.compute_s", &compute));
    ck_assert(report_lookup(doc, "step.optimizer_s", &opt));
    busy = compute + opt;
    ck_assert(report_lookup(doc, "ownership.fabric_switch_ports", &ports) && ports == 8);
    ck_assert(report_lookup(doc, "ownership.fabric_cables", &cables) && cables == 8);
    ck_assert(report_lookup(doc, "ownership.fabric_switches", &other) && other == 1);
    ck_assert(report_lookup(doc, "ownership.it_power_other_w", &other) && other == 32 * 5 + 8 * 2);
    ck_assert(report_lookup(doc, "per_step.energy_j", &energy));
    ck_assert_double_eq_tol(energy, 1.5 * (8 * (300 * busy + 50 * (t - busy)) + 176 * t), 1e-9 * energy);
    /* owning: 8 x $10,000 + a 32-port switch at $400 a port + 8 cables x $300, over 4 years, plus the
     * energy at $0.10/kWh */
    double capex, owned;
    ck_assert(report_lookup(doc, "ownership.capex_usd.total", &capex) && capex == 95200);
    ck_assert(report_lookup(doc, "ownership.per_step_usd", &owned));
    ck_assert_double_eq_tol(owned, 95200 * t / (4 * 365.25 * 86400) + energy / 3.6e6 * 0.10, 1e-9 * owned);
    json_decref(doc);
}
END_TEST

START_TEST(run_sweep_outputs)
{
    char path[64], out[65536], args[512];
    const char *csv = "/tmp/ttasim-test-sweep.csv", *svg = "/tmp/ttasim-test-sweep.svg";
    /* the name's quotes test the CSV's quoting */
    write_scenario(path, sizeof path, "sweep \\\"q\\\"", 64, ", \"sweep\": {\"nodes\": [2, 4, 8]}");
    snprintf(args, sizeof args, "run %s --csv %s --svg %s", path, csv, svg);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "step.exposed_comm_s"));
    ck_assert_ptr_nonnull(strstr(out, "sweep"));
    json_t *doc = run_json(path, 0, out, sizeof out);
    unlink(path);
    double r2, r8, e8, b2;
    ck_assert(report_lookup(doc, "sweep[0].ranks", &r2) && r2 == 2);
    ck_assert(report_lookup(doc, "sweep[2].ranks", &r8) && r8 == 8);
    /* The global batch stays 64: 32 per rank on 2 ranks, so 4 micro-steps of 8. */
    ck_assert(report_lookup(doc, "sweep[0].accumulation", &b2) && b2 == 4);
    ck_assert(report_lookup(doc, "sweep[2].scaling_efficiency", &e8));
    ck_assert(e8 > 0.5 && e8 <= 1.0 + 1e-12);
    json_decref(doc);
    FILE *f = fopen(csv, "r");
    ck_assert_ptr_nonnull(f);
    int lines = 0;
    char line[1024];
    const char *quoted = "\"sweep \"\"q\"\"\","; /* RFC 4180 */
    while (fgets(line, sizeof line, f))
        if (lines++ > 0)
            ck_assert_msg(strncmp(line, quoted, strlen(quoted)) == 0, "%s", line);
    fclose(f);
    ck_assert_int_eq(lines, 4); /* header and three points */
    f = fopen(svg, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(out, "<svg"));
    ck_assert_ptr_nonnull(strstr(out, "Scaling efficiency"));
    ck_assert_ptr_nonnull(strstr(out, "</svg>"));
    unlink(csv);
    unlink(svg);
}
END_TEST

/* The run's algorithms are its own point's, not those of the sweep point
 * that happened to finish last (-j 2: either may). */
START_TEST(run_sweep_reports_its_own_algorithm)
{
    char path[64], out[65536], args[512];
    write_scenario(path, sizeof path, "algos", 64, ", \"sweep\": {\"collectives.allreduce\": [\"ring\", \"tree\"]}");
    snprintf(args, sizeof args, "run --json --quiet -j 2 %s", path);
    json_t *doc = tu_run_ttasim_json(args, 0, out, sizeof out);
    unlink(path);
    json_t *coll = json_object_get(doc, "collectives");
    ck_assert_str_eq(json_string_value(json_object_get(coll, "allreduce")), "ring");
    json_t *sweep = json_object_get(doc, "sweep");
    ck_assert_int_eq(json_array_size(sweep), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(sweep, 1), "label")),
                     "collectives.allreduce=tree");
    json_decref(doc);
}
END_TEST

/* "auto" tries every sharding plan; --links counts the winner's step, not
 * nothing (the plans are only candidates until one wins). */
START_TEST(run_auto_plan_counts_its_links)
{
    static char out[1 << 17];
    ck_assert_int_eq(tu_run_ttasim("run --quiet --links 3 " TTASIM_SRCDIR "/scenarios/examples/dgx-a100-dlrm-auto.json",
                                   out, sizeof out), 0);
    ck_assert_ptr_null(strstr(out, "none carried data"));
    ck_assert_ptr_nonnull(strstr(out, "busiest links   3 of 16"));
}
END_TEST

/* A sweep over the node count and a second path: one series per value of
 * the second path (a line across the nodes axis), and a title too wide for
 * the figure goes on to a second line. */
START_TEST(run_sweep_svg_series_follow_the_other_path)
{
    char path[64], out[65536], args[512];
    const char *svg = "/tmp/ttasim-test-series.svg";
    write_scenario(path, sizeof path,
                   "a scenario whose name is long enough to need a second line in the figure's title, as sweeps often do",
                   64, ", \"sweep\": {\"platform.nodes\": [2, 4], \"collectives.allreduce\": [\"ring\", \"direct\"]}");
    snprintf(args, sizeof args, "run --quiet %s --svg %s", path, svg);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    unlink(path);
    FILE *f = fopen(svg, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    unlink(svg);
    ck_assert_ptr_nonnull(strstr(out, ">A  collectives.allreduce=ring<"));
    ck_assert_ptr_nonnull(strstr(out, ">B  collectives.allreduce=direct<"));
    ck_assert_ptr_null(strstr(out, ">C  "));
    ck_assert_ptr_null(strstr(out, "platform.nodes="));
    ck_assert_ptr_nonnull(strstr(out, "<text x=\"24\" y=\"52\" font-size=\"17\" font-weight=\"bold\">"));
}
END_TEST

/* The scenario's optimizer and a trace's are names of trainer/optimizer.h's
 * table: a typo is refused (it was costed as one state word per parameter),
 * naming the JSON path and every valid name. */
START_TEST(run_unknown_optimizer)
{
    char out[8192];
    ck_assert_int_eq(tu_run_ttasim("run " TTASIM_SRCDIR "/scenarios/quickstart.json --set optimizer=lambb", out,
                                   sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "quickstart.json: $.optimizer: expected one of \"sgd\", \"momentum\", "
                                      "\"nesterov\", \"adamw\", \"lars\", \"lamb\", found \"lambb\" "
                                      "(did you mean \"lamb\"?)"));
    char trace[64], path[64], args[512];
    FILE *f = fopen(TRACE, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    fclose(f);
    out[n] = '\0';
    char *name = strstr(out, "\"optimizer\": {\"name\": \"sgd\"");
    ck_assert_ptr_nonnull(name);
    memcpy(strstr(name, "sgd"), "sgx", 3);
    tu_write_temp(out, trace, sizeof trace);
    char text[4096], edited[4096]; /* the scenario, on the edited copy */
    snprintf(text, sizeof text, SCENARIO, "trace-optimizer", 64, 8, "");
    char *at = strstr(text, TRACE);
    ck_assert_ptr_nonnull(at);
    snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - text), text, trace, at + strlen(TRACE));
    tu_write_temp(edited, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    unlink(path);
    unlink(trace);
    ck_assert_ptr_nonnull(strstr(out, "$.optimizer.name: expected one of"));
    ck_assert_ptr_nonnull(strstr(out, "found \"sgx\""));
}
END_TEST

/* `ttasim run PATH SETS` exits 2 naming `message`. */
static void refused(const char *path, const char *sets, const char *message)
{
    char args[512], out[32768];
    snprintf(args, sizeof args, "run %s %s", path, sets);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, message) != NULL, "%s: no \"%s\" in: %s", args, message, out);
}

START_TEST(run_expect_and_errors)
{
    char path[64], out[32768], args[512];
    write_scenario(path, sizeof path, "tight", 64, ", \"expect\": {\"step.time_s\": {\"max\": 1e-6}}");
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "step.time_s"));
    ck_assert_ptr_nonnull(strstr(out, "> max 1e-06"));
    unlink(path);
    write_scenario(path, sizeof path, "typo", 64, ", \"expect\": {\"step.tme_s\": {\"max\": 1}}");
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "step.tme_s"));
    unlink(path);
    write_scenario(path, sizeof path, "odd", 60, "");
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "does not split over 8 ranks"));
    unlink(path);
    /* 8,000 samples per micro-step: 1.5e8 activation bytes per 8 samples -> 150 GB. */
    char text[4096];
    snprintf(text, sizeof text, SCENARIO, "huge", 64000, 8000, "");
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "does not fit"));
    ck_assert_ptr_nonnull(strstr(out, "activations 150 GB"));
    unlink(path);
    /* the star has no CPU sockets to hold embedding tables */
    char host[4096];
    snprintf(text, sizeof text, SCENARIO, "host", 64, 8, "");
    char *w = strstr(text, "\"micro_batch\": 8}");
    ck_assert_ptr_nonnull(w);
    snprintf(host, sizeof host, "%.*s\"embeddings\": \"host\", %s", (int)(w - text), text, w);
    tu_write_temp(host, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "$.workload.embeddings: embedding tables in host memory need CPU sockets"));
    unlink(path);
    /* the distributed optimizer: ZeRO-3 needs transformer blocks to gather and no pipeline, other
     * stages are refused by range; a misspelt NCCL algorithm names itself */
    write_scenario(path, sizeof path, "zero", 64, ", \"parallel\": {\"zero\": 3}");
    refused(path, "", "which tensor and pipeline parallelism and ZeRO-3 split; use data parallelism only, with "
                      "$.parallel.zero 0 to 2");
    refused(path, "--set parallel.pipeline=2", "$.parallel.zero: 3 (ZeRO-3, FSDP's FULL_SHARD) with pipeline 2");
    refused(path, "--set parallel.zero=4", "$.parallel.zero");
    refused(path, "--set parallel.zero=1 --set collectives.nccl_algo=rign", "$.collectives.nccl_algo");
    refused(path, "--set parallel.zero=1 --set collectives.nccl_algo=rign", "\"rign\"");
    /* HugeCTR's grouped allreduce is one allreduce after the backward: not with ZeRO's reduce-scatters */
    refused(path, "--set parallel.zero=1 --set collectives.grouped=true", "$.collectives.grouped: one allreduce");
    refused(path, "--set parallel.zero=0 --set collectives.overlap_ar_a2a=1", "$.collectives.overlap_ar_a2a");
    unlink(path);
}
END_TEST

START_TEST(check_dir_junit)
{
    char dir[] = "/tmp/ttasim-check-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char a[256], b[256], t[256], junit[256], text[4096], args[1024], out[32768];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    snprintf(t, sizeof t, "%s/trace.json", dir);
    snprintf(junit, sizeof junit, "%s/junit.xml", dir);
    FILE *f = fopen(a, "w");
    snprintf(text, sizeof text, SCENARIO, "passes", 64, 8, ", \"expect\": {\"step.time_s\": {\"min\": 1e-6, \"max\": 10}}");
    fputs(text, f);
    fclose(f);
    f = fopen(b, "w");
    snprintf(text, sizeof text, SCENARIO, "fails", 64, 8, ", \"expect\": {\"reference.step_time_ratio\": {\"min\": 5}}");
    fputs(text, f);
    fclose(f);
    f = fopen(t, "w"); /* not a scenario: skipped */
    fputs("{\"format\": \"ttasim-trace\", \"version\": 1}", f);
    fclose(f);
    snprintf(args, sizeof args, "check %s --junit %s", dir, junit);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "PASS"));
    ck_assert_ptr_nonnull(strstr(out, "FAIL"));
    ck_assert_ptr_nonnull(strstr(out, "reference.step_time_ratio"));
    ck_assert_ptr_nonnull(strstr(out, "1 of 2 scenarios passed"));
    f = fopen(junit, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "tests=\"2\" failures=\"1\" errors=\"0\""));
    ck_assert_ptr_nonnull(strstr(text, "<testcase name=\"passes\""));
    ck_assert_ptr_nonnull(strstr(text, "<failure message=\"reference.step_time_ratio"));
    snprintf(args, sizeof args, "check --json --quiet %s", a);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_ptr_nonnull(doc);
    json_t *s0 = json_array_get(json_object_get(doc, "scenarios"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(s0, "name")), "passes");
    ck_assert(json_is_true(json_object_get(s0, "passed")));
    json_decref(doc);
    ck_assert_int_eq(tu_run_ttasim("check /nonexistent", out, sizeof out), 2);
    unlink(a);
    unlink(b);
    unlink(t);
    unlink(junit);
    rmdir(dir);
}
END_TEST

/* Phases: 3/4 of the steps at global batch 64, 1/4 at 128 (two micro-steps):
 * the step is the weighted mean of the two single-phase steps. */
START_TEST(run_phases)
{
    char path[64], out[32768];
    double t64, t128, t, mem128, mem;
    write_scenario(path, sizeof path, "b64", 64, "");
    json_t *doc = run_json(path, 0, out, sizeof out);
    ck_assert(report_lookup(doc, "step.time_s", &t64));
    json_decref(doc);
    unlink(path);
    write_scenario(path, sizeof path, "b128", 128, "");
    doc = run_json(path, 0, out, sizeof out);
    ck_assert(report_lookup(doc, "step.time_s", &t128));
    ck_assert(report_lookup(doc, "step.memory.total_bytes", &mem128));
    json_decref(doc);
    unlink(path);
    tu_write_temp("{\"version\": 1, \"name\": \"phased\",\n"
                  " \"platform\": {\"name\": \"star\", \"nodes\": 8, \"link_bw_Bps\": \"12.5G\", \"link_latency_s\": \"1us\"},\n"
                  " \"network\": \"ideal\", \"collectives\": {\"allreduce\": \"ring\"},\n"
                  " \"workload\": {\"global_batch\": 64, \"micro_batch\": 8, \"phases\": [\n"
                  "   {\"trace\": \"" TRACE "\", \"fraction\": 0.75},\n"
                  "   {\"trace\": \"" TRACE "\", \"fraction\": 0.25, \"global_batch\": 128}]},\n"
                  " \"convergence\": {\"steps\": 100}}\n", path, sizeof path);
    doc = run_json(path, 0, out, sizeof out);
    unlink(path);
    ck_assert(report_lookup(doc, "step.time_s", &t));
    ck_assert_double_eq_tol(t, 0.75 * t64 + 0.25 * t128, 1e-9 * t);
    ck_assert(report_lookup(doc, "step.memory.total_bytes", &mem));
    ck_assert_double_eq_tol(mem, mem128, 1);
    double tta;
    ck_assert(report_lookup(doc, "time_to_accuracy_s", &tta));
    ck_assert_double_eq_tol(tta, 100 * t, 1e-9 * tta);
    json_decref(doc);
}
END_TEST

/* A scenario on the fashion-mnist MLP profile with the "tiny" trace: refused (exit 2)
 * naming both models; accepted, it runs with the mismatch as an assumption and the
 * band in JSON: p10 < median < p90, each times the step time. */
START_TEST(run_profile_mismatch_and_band)
{
    char path[64], out[65536];
    static const char *const text =
        "{\"version\": 1, \"name\": \"mismatch\",\n"
        " \"platform\": {\"name\": \"star\", \"nodes\": 8, \"link_bw_Bps\": \"12.5G\", \"link_latency_s\": \"1us\"},\n"
        " \"network\": \"ideal\", \"collectives\": {\"allreduce\": \"ring\"},\n"
        " \"workload\": {\"trace\": \"" TRACE "\", \"global_batch\": 512, \"micro_batch\": 8},\n"
        " \"convergence\": {\"profile\": \"" TTASIM_SRCDIR "/scenarios/profiles/fashion-mnist-mlp-lamb.json\",\n"
        "   \"target\": {\"dataset\": \"fashion-mnist\", \"metric\": \"test_accuracy\", \"value\": %s}%s}}\n";
    char body[4096];
    snprintf(body, sizeof body, text, "0.85", "");
    tu_write_temp(body, path, sizeof path);
    char args[512];
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "the profile is for model mlp, the scenario's workload is tiny"));
    unlink(path);
    snprintf(body, sizeof body, text, "0.9", ", \"accept\": [\"model\"]");
    tu_write_temp(body, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "asks for test_accuracy 0.9, the profile reaches test_accuracy 0.85"), "%s", out);
    unlink(path);
    snprintf(body, sizeof body, text, "0.9", ", \"accept\": [\"model\", \"target\"]");
    tu_write_temp(body, path, sizeof path);
    json_t *doc = run_json(path, 0, out, sizeof out);
    unlink(path);
    double t, s, lo, hi, tlo, thi, clo, c, chi;
    ck_assert(report_lookup(doc, "step.time_s", &t));
    ck_assert(report_lookup(doc, "steps_to_target", &s) && s == 552); /* the profile's point at 512 */
    ck_assert(report_lookup(doc, "steps_to_target_p10", &lo) && report_lookup(doc, "steps_to_target_p90", &hi));
    ck_assert_double_lt(lo, s);
    ck_assert_double_gt(hi, s);
    /* one seed per batch in that profile: the band is the assumed 5 % run spread */
    ck_assert_double_eq_tol(hi, s * exp(1.2815515655446004 * 0.05), 1e-6 * s);
    ck_assert(report_lookup(doc, "time_to_accuracy_p10_s", &tlo) && report_lookup(doc, "time_to_accuracy_p90_s", &thi));
    ck_assert_double_eq_tol(tlo, lo * t, 1e-9 * tlo);
    ck_assert_double_eq_tol(thi, hi * t, 1e-9 * thi);
    ck_assert(report_lookup(doc, "cost_usd_p10", &clo) && report_lookup(doc, "cost_usd", &c) &&
              report_lookup(doc, "cost_usd_p90", &chi));
    ck_assert(clo <= c && c <= chi);
    char *dump = json_dumps(json_object_get(doc, "assumptions"), 0);
    ck_assert_ptr_nonnull(strstr(dump, "convergence.model = mlp's steps used for tiny"));
    ck_assert_ptr_nonnull(strstr(dump, "convergence.target = test_accuracy 0.9 asked"));
    ck_assert_ptr_nonnull(strstr(dump, "convergence.run_spread = 5 %"));
    free(dump);
    json_decref(doc);
}
END_TEST

/* ttasim profile loo: the published rows predicted without themselves, under the 15 % bar;
 * a profile's points from each other (the MLPerf ResNet-50 one within 11 %). */
START_TEST(profile_leave_one_out)
{
    char out[65536];
    ck_assert_int_eq(tu_run_ttasim("profile loo --json " TTASIM_SRCDIR "/scenarios/published/resnet50-goyal-2017.json "
                                   TTASIM_SRCDIR "/scenarios/published/resnet50-you-2018.json "
                                   TTASIM_SRCDIR "/scenarios/published/resnet50-jia-2018.json",
                                   out, sizeof out),
                     0);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_ptr_nonnull(doc);
    double v;
    /* You et al. 2018 (2,503 steps at 32K) against the 90-epoch point of the others (3,600) */
    ck_assert(report_lookup(doc, "scenarios[1].predicted_steps", &v));
    ck_assert_double_eq_tol(v, 3600, 1);
    ck_assert(report_lookup(doc, "scenarios[1].error", &v));
    ck_assert_double_gt(v, 0.4);
    /* Jia et al. 2018 at 65,536: log-log between 32K (3,519) and 81,920 (1,440) */
    ck_assert(report_lookup(doc, "scenarios[2].predicted_steps", &v));
    double u = log(2.0) / log(2.5);
    ck_assert_double_eq_tol(v, exp(log(3519.0) + u * log(1440.0 / 3519.0)), 1e-6);
    ck_assert(report_lookup(doc, "median_abs_error", &v));
    ck_assert_double_lt(v, 0.01); /* median of 0 %, 0.6 %, 44 % */
    json_decref(doc);
    ck_assert_int_eq(tu_run_ttasim("profile loo " TTASIM_SRCDIR "/scenarios/profiles/resnet50-imagenet-lars-mlperf.json",
                                   out, sizeof out),
                     0);
    ck_assert_ptr_nonnull(strstr(out, "resnet50-imagenet-lars-mlperf.json @ 3264"));
    ck_assert_int_eq(tu_run_ttasim("profile loo " TTASIM_SRCDIR "/scenarios/published/resnet50-you-2018.json", out,
                                   sizeof out),
                     1); /* one row, 44 % off: over the bar */
    ck_assert_ptr_nonnull(strstr(out, "exceeds 15 %"));
}
END_TEST

/* A model name makes the trace on the fly with the scenario's optimizer. */
START_TEST(run_model_on_the_fly)
{
    char path[64], out[32768];
    tu_write_temp("{\"version\": 1, \"name\": \"fly\",\n"
                  " \"platform\": {\"name\": \"star\", \"nodes\": 4, \"link_bw_Bps\": \"12.5G\", \"link_latency_s\": \"1us\"},\n"
                  " \"workload\": {\"model\": \"mlp\", \"global_batch\": 256}, \"optimizer\": \"lamb\",\n"
                  " \"collectives\": {\"allreduce\": \"ring\"},\n"
                  " \"convergence\": {\"mccandlish\": {\"s_min\": 500, \"noise_scale\": 128}}}\n", path, sizeof path);
    json_t *doc = run_json(path, 0, out, sizeof out);
    unlink(path);
    json_t *w = json_object_get(doc, "workload");
    ck_assert_str_eq(json_string_value(json_object_get(w, "model")), "mlp");
    ck_assert_ptr_null(strstr(out, "optimizer_step")); /* the trace has the LAMB update */
    double s, opt;
    ck_assert(report_lookup(doc, "steps_to_target", &s));
    ck_assert_double_eq_tol(s, 500 * (1 + 128 / 256.0), 1e-9);
    ck_assert(report_lookup(doc, "step.optimizer_s", &opt) && opt > 0);
    /* made in this process: the same step as from the file `ttasim trace` writes */
    char trace[64], args[256];
    snprintf(trace, sizeof trace, "/tmp/ttasim-test-fly-XXXXXX");
    int fd = mkstemp(trace);
    ck_assert_int_ge(fd, 0);
    close(fd);
    snprintf(args, sizeof args, "trace --model mlp --micro-batch 64 --optimizer lamb --out %s", trace);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    char text[1024];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"file\",\n"
             " \"platform\": {\"name\": \"star\", \"nodes\": 4, \"link_bw_Bps\": \"12.5G\", \"link_latency_s\": \"1us\"},\n"
             " \"workload\": {\"trace\": \"%s\", \"global_batch\": 256}, \"optimizer\": \"lamb\",\n"
             " \"collectives\": {\"allreduce\": \"ring\"},\n"
             " \"convergence\": {\"mccandlish\": {\"s_min\": 500, \"noise_scale\": 128}}}\n", trace);
    tu_write_temp(text, path, sizeof path);
    json_t *file = run_json(path, 0, out, sizeof out);
    unlink(path);
    unlink(trace);
    ck_assert(json_equal(json_object_get(doc, "step"), json_object_get(file, "step")));
    ck_assert(json_equal(json_object_get(doc, "per_step"), json_object_get(file, "per_step")));
    json_decref(file);
    json_decref(doc);
    /* a model the trainer does not know: the builder's error, at the scenario's path */
    tu_write_temp("{\"version\": 1, \"name\": \"fly\",\n"
                  " \"platform\": {\"name\": \"star\", \"nodes\": 4},\n"
                  " \"workload\": {\"model\": \"mlpx\", \"global_batch\": 256},\n"
                  " \"convergence\": {\"steps\": 10}}\n", path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    unlink(path);
    ck_assert_ptr_nonnull(strstr(out, ": $.workload.model: model mlpx: unknown model 'mlpx' (did you mean 'mlp'?)"));
}
END_TEST

/* Evaluation from the workload: 1000 steps of 64 over 6400 examples are 10
 * epochs, 5 evaluations every 2 epochs, each 1000 examples over 8 ranks =
 * 125 per rank = 16 forward passes of 8 at conv 1e11 / (1e13 x 0.6) + gemm
 * 2e11 / (1e13 x 0.7) + loss 1e6 B / (1e12 x 0.8) on the generic device. */
START_TEST(run_evaluation_from_workload)
{
    char path[64], out[32768];
    const char *text =
        "{\"version\": 1, \"name\": \"eval\",\n"
        " \"platform\": {\"name\": \"star\", \"nodes\": 8, \"link_bw_Bps\": \"12.5G\", \"link_latency_s\": \"1us\"},\n"
        " \"network\": \"ideal\",\n"
        " \"workload\": {\"trace\": \"" TRACE "\", \"global_batch\": 64, \"micro_batch\": 8,\n"
        "              \"dataset_examples\": 6400},\n"
        " \"collectives\": {\"allreduce\": \"ring\"}, \"convergence\": {\"steps\": 1000},\n"
        " \"evaluation\": {\"every_epochs\": 2, \"examples\": 1000}}\n";
    tu_write_temp(text, path, sizeof path);
    json_t *doc = run_json(path, 0, out, sizeof out);
    unlink(path);
    double eval, t, tta;
    double forward = 1e11 / (1e13 * 0.6) + 2e11 / (1e13 * 0.7) + 1e6 / (1e12 * 0.8);
    ck_assert(report_lookup(doc, "evaluation_s", &eval));
    ck_assert_double_eq_tol(eval, 5 * 16 * forward, 1e-9);
    ck_assert(report_lookup(doc, "step.time_s", &t));
    ck_assert(report_lookup(doc, "time_to_accuracy_s", &tta));
    ck_assert_double_eq_tol(tta, 1000 * t + eval, 1e-9 * tta);
    json_decref(doc);
    /* every 640 examples: every 10 steps of 64, 100 evaluations */
    char every[2048];
    snprintf(every, sizeof every, "%s", text);
    char *ep = strstr(every, "\"every_epochs\": 2,");
    memmove(ep + 22, ep + 18, strlen(ep + 18) + 1);
    memcpy(ep, "\"every_examples\": 640,", 22);
    tu_write_temp(every, path, sizeof path);
    doc = run_json(path, 0, out, sizeof out);
    unlink(path);
    ck_assert(report_lookup(doc, "evaluation_s", &eval));
    ck_assert_double_eq_tol(eval, 100 * 16 * forward, 1e-9);
    json_decref(doc);
    /* typed-in and workload evaluation together are refused, naming the path */
    char bad[2048];
    snprintf(bad, sizeof bad, "%s", text);
    char *at = strstr(bad, "\"examples\": 1000}");
    memcpy(at, "\"time_s\":   1000}", 17);
    tu_write_temp(bad, path, sizeof path);
    char args[512];
    snprintf(args, sizeof args, "run %s 2>&1", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    unlink(path);
    ck_assert_msg(strstr(out, "$.evaluation") != NULL, "%s", out);
}
END_TEST

/* BERT on TPU v3 (You et al. 2019, 16 chips): TF1 BERT clips the gradients by
 * their global norm before CrossShardOptimizer's cross_replica_sum, so the
 * scenario's allreduce follows the whole backward. By hand: the whole
 * allreduce is exposed and the step is compute + allreduce + optimizer; the
 * tpu-v3 GEMM efficiency was refitted on this row with it, so the step is its
 * published 0.298 s. Overlapped (DDP's rule), the allreduce would hide. */
START_TEST(run_tpu_bert_allreduce_after_backward)
{
    static char out[1 << 17];
    const char *row = "run --json --quiet " TTASIM_SRCDIR "/scenarios/published/bert-lamb-512.json";
    json_t *doc = tu_run_ttasim_json(row, 0, out, sizeof out);
    json_t *st = json_object_get(doc, "step");
    double comm = json_real_value(json_object_get(st, "comm_s"));
    double exposed = json_real_value(json_object_get(st, "exposed_comm_s"));
    double step = json_real_value(json_object_get(st, "time_s"));
    ck_assert_double_gt(comm, 0.010); /* 1.34 GB of fp32 gradients on the 4 x 4 torus */
    ck_assert_double_eq_tol(exposed, comm, 1e-12);
    ck_assert_double_eq_tol(step,
                            json_real_value(json_object_get(st, "compute_s")) + comm +
                                json_real_value(json_object_get(st, "optimizer_s")),
                            1e-9);
    ck_assert_double_eq_tol(step, 0.298, 0.0015);
    json_decref(doc);
    char args[512];
    snprintf(args, sizeof args, "%s --set collectives.overlap=true", row);
    doc = tu_run_ttasim_json(args, 0, out, sizeof out);
    st = json_object_get(doc, "step");
    ck_assert_double_lt(json_real_value(json_object_get(st, "exposed_comm_s")), 0.2 * comm);
    ck_assert_double_lt(json_real_value(json_object_get(st, "time_s")), step - 0.8 * comm);
    json_decref(doc);
}
END_TEST

/* Every number of every pinned 'run --json' (tests/pinned/) is a path that
 * expect_validate accepts for its scenario: the valid set follows the writer. */
static void pinned_paths(json_t *v, const char *prefix, scenario *sc, size_t *checked)
{
    char path[256];
    if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", key);
            pinned_paths(child, path, sc, checked);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            snprintf(path, sizeof path, "%s[%zu]", prefix, i);
            pinned_paths(json_array_get(v, i), path, sc, checked);
        }
    } else if (json_is_number(v) && strcmp(prefix, "expect") != 0) {
        sc->expect[0].metric = strdup(prefix);
        sc->n_expect = 1;
        tt_error err = {0};
        int rc = expect_validate(sc, &err);
        ck_assert_msg(rc == TT_OK, "%s: %s", sc->path, err.msg);
        free(sc->expect[0].metric);
        sc->n_expect = 0;
        (*checked)++;
    }
}

START_TEST(expect_paths_cover_the_pins)
{
    DIR *d = opendir(TTASIM_SRCDIR "/tests/pinned");
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    size_t pins = 0, checked = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char name[256], file[512], pin[512];
        snprintf(name, sizeof name, "%s", e->d_name);
        for (char *u; (u = strstr(name, "__"));) /* examples__x.json is scenarios/examples/x.json */
            memmove(u + 1, u + 2, strlen(u + 2) + 1), *u = '/';
        snprintf(file, sizeof file, TTASIM_SRCDIR "/scenarios/%s", name);
        snprintf(pin, sizeof pin, TTASIM_SRCDIR "/tests/pinned/%s", e->d_name);
        scenario sc;
        tt_error err = {0};
        ck_assert_msg(scenario_load(file, &sc, &err) == TT_OK, "%s", err.msg);
        for (size_t i = 0; i < sc.n_expect; i++)
            free(sc.expect[i].metric);
        sc.n_expect = 0;
        json_error_t je;
        json_t *doc = json_load_file(pin, 0, &je);
        ck_assert_msg(doc != NULL, "%s: %s", pin, je.text);
        json_object_del(doc, "expect"); /* expect_check's own echo of the bounds */
        pinned_paths(doc, "", &sc, &checked);
        json_decref(doc);
        scenario_free(&sc);
        pins++;
    }
    closedir(d);
    ck_assert_uint_gt(pins, 50);
    ck_assert_uint_gt(checked, 5000);
    /* and a typo is not: it names the closest path */
    char path[64], out[32768], args[512];
    write_scenario(path, sizeof path, "typo", 64, ", \"expect\": {\"step.memory.totl_bytes\": {\"max\": 1}}");
    scenario sc;
    tt_error err = {0};
    ck_assert_int_eq(scenario_load(path, &sc, &err), TT_OK);
    ck_assert_int_eq(expect_validate(&sc, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "$.expect[\"step.memory.totl_bytes\"]"));
    ck_assert_ptr_nonnull(strstr(err.msg, "did you mean \"step.memory.total_bytes\"?"));
    scenario_free(&sc);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    unlink(path);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("run");
    TCase *t = tcase_create("cli");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, run_accumulation_and_tta);
    tcase_add_test(t, run_evaluation_from_workload);
    tcase_add_test(t, run_sweep_outputs);
    tcase_add_test(t, run_sweep_svg_series_follow_the_other_path);
    tcase_add_test(t, run_sweep_reports_its_own_algorithm);
    tcase_add_test(t, run_auto_plan_counts_its_links);
    tcase_add_test(t, run_expect_and_errors);
    tcase_add_test(t, run_unknown_optimizer);
    tcase_add_test(t, check_dir_junit);
    tcase_add_test(t, expect_paths_cover_the_pins);
    tcase_add_test(t, run_phases);
    tcase_add_test(t, run_model_on_the_fly);
    tcase_add_test(t, run_profile_mismatch_and_band);
    tcase_add_test(t, profile_leave_one_out);
    tcase_add_test(t, run_tpu_bert_allreduce_after_backward);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
