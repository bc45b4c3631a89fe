/* Steps to target (profiles, the McCandlish fit) and cost/energy. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/datapath.h"
#include "sim/replay/convergence.h"
#include "sim/replay/cost.h"
#include "tests/testutil.h"

static double steps_at(const convergence *c, double batch, int *extrapolated)
{
    convergence_estimate e = convergence_at(c, batch);
    *extrapolated = e.extrapolated;
    return e.steps;
}

/* A profile of S = 1000 (1 + 512 / B) outside its points follows the fit. */
START_TEST(profile_fit_extrapolates)
{
    char text[2048], path[64];
    int len = snprintf(text, sizeof text, "{\"format\": \"ttasim-convergence-profile\", \"version\": 1,"
                       " \"workload\": \"w\", \"optimizer\": \"sgd\", \"target\": {\"metric\": \"acc\","
                       " \"value\": 0.9}, \"points\": [");
    double b[] = {64, 256, 1024, 4096};
    for (int i = 0; i < 4; i++) {
        double s = 1000 * (1 + 512 / b[i]);
        len += snprintf(text + len, sizeof text - len, "%s{\"batch\": %g, \"steps\": %g, \"epochs\": 1,"
                        " \"examples\": %g, \"reached\": true}", i ? ", " : "", b[i], s, s * b[i]);
    }
    snprintf(text + len, sizeof text - len, "], \"fit\": null, \"noise_scale\": null, \"sources\": []}");
    tu_write_temp(text, path, sizeof path);
    convergence *c;
    tt_error err = {0};
    ck_assert_msg(convergence_load(path, &c, &err) == TT_OK, "%s", err.msg);
    unlink(path);
    double s_min, e_min, b_crit, res;
    convergence_fit_params(c, &s_min, &e_min, &b_crit, &res);
    ck_assert_double_eq_tol(s_min, 1000, 1e-6);
    ck_assert_double_eq_tol(b_crit, 512, 1e-6);
    int ex;
    ck_assert_double_eq_tol(steps_at(c, 16384, &ex), 1000 * (1 + 512 / 16384.0), 1e-6);
    ck_assert_int_eq(ex, 1);
    /* Inside: log-log interpolation between 256 and 1024 (not the fit). */
    double lin = sqrt(3000.0 * 1500.0);
    ck_assert_double_eq_tol(steps_at(c, 512, &ex), lin, 1e-6);
    ck_assert_int_eq(ex, 0);
    convergence_free(c);
}
END_TEST

START_TEST(published_profile_interpolates)
{
    char path[4096];
    ck_assert_int_eq(datapath_find("scenarios/profiles/resnet50-imagenet-lars.json", path, sizeof path), 0);
    convergence *c;
    tt_error err = {0};
    ck_assert_msg(convergence_load(path, &c, &err) == TT_OK, "%s", err.msg);
    int ex;
    ck_assert_double_eq(steps_at(c, 32768, &ex), 3519);
    ck_assert_int_eq(ex, 0);
    ck_assert_double_eq(steps_at(c, 81920, &ex), 1440);
    /* Half-way in log B between 32K and 64K: the geometric mean of the steps. */
    double mid = steps_at(c, sqrt(32768.0 * 65536.0), &ex);
    ck_assert_double_eq_tol(mid, sqrt(3519.0 * 1800.0), 1e-6);
    ck_assert_int_eq(ex, 0);
    /* Beyond the points: the fit, flagged. */
    double s_min, e_min, b_crit, res;
    convergence_fit_params(c, &s_min, &e_min, &b_crit, &res);
    ck_assert(s_min > 0 && b_crit > 0);
    /* the fit's shape from the last point (the fit misses 1,440 at 81,920 a little) */
    ck_assert_double_eq_tol(steps_at(c, 163840, &ex), 1440 * (s_min + e_min / 163840) / (s_min + e_min / 81920), 1e-9);
    ck_assert_int_eq(ex, 1);
    ck_assert_ptr_nonnull(strstr(convergence_target(c), "top1_accuracy 0.749"));
    convergence_free(c);
}
END_TEST

START_TEST(profile_errors)
{
    char path[64];
    tu_write_temp("{\"format\": \"ttasim-convergence-profile\", \"version\": 1, \"workload\": \"w\",\n"
                  " \"optimizer\": \"sgd\", \"target\": {\"metric\": \"acc\", \"value\": 0.9},\n"
                  " \"points\": [{\"batch\": 64, \"steps\": 10, \"epochs\": 1, \"examples\": 640, \"reached\": false}],\n"
                  " \"fit\": null, \"noise_scale\": null, \"sources\": []}\n", path, sizeof path);
    convergence *c;
    tt_error err = {0};
    ck_assert_int_eq(convergence_load(path, &c, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "no point reached the target"));
    unlink(path);
    /* One reached point gives no fit: beyond it, its number of examples. */
    tu_write_temp("{\"format\": \"ttasim-convergence-profile\", \"version\": 1, \"workload\": \"w\",\n"
                  " \"optimizer\": \"sgd\", \"target\": {\"metric\": \"acc\", \"value\": 0.9},\n"
                  " \"points\": [{\"batch\": 100, \"steps\": 1000, \"epochs\": 1, \"examples\": 1e5, \"reached\": true}],\n"
                  " \"fit\": null, \"noise_scale\": null, \"sources\": []}\n", path, sizeof path);
    ck_assert_msg(convergence_load(path, &c, &err) == TT_OK, "%s", err.msg);
    int ex;
    ck_assert_double_eq_tol(steps_at(c, 400, &ex), 250, 1e-9);
    ck_assert_int_eq(ex, 1);
    convergence_free(c);
    unlink(path);
    tu_write_temp("{\"format\": \"ttasim-trace\", \"version\": 1}", path, sizeof path);
    ck_assert_int_eq(convergence_load(path, &c, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "$.format"));
    unlink(path);
}
END_TEST

START_TEST(mccandlish_model)
{
    convergence *c = convergence_mccandlish(2000, 1000);
    int ex;
    ck_assert_double_eq_tol(steps_at(c, 1000, &ex), 4000, 1e-9);
    ck_assert_double_eq_tol(steps_at(c, 1e9, &ex), 2000, 1e-2);
    ck_assert_int_eq(ex, 0);
    convergence_free(c);
}
END_TEST

/* The band: the run spread alone at a measured batch, wider between points by the
 * profile's interpolation error, and wider beyond them by the fit's covariance. */
START_TEST(band_from_runs_and_fit)
{
    conv_profile p;
    profile_init(&p, "mlp", "teacher", "lamb", "test_accuracy", 0.8);
    tt_error err = {0};
    const long b[] = {64, 256, 1024, 4096};
    const double wiggle[] = {1.0, 1.1, 0.95, 1.0}; /* off the McCandlish curve, so the fit has residuals */
    for (int i = 0; i < 4; i++) {
        profile_point pt = {.batch = b[i], .noise_scale = NAN};
        double s = 1000 * (1 + 512.0 / b[i]) * wiggle[i];
        for (int k = -1; k <= 1; k++) { /* three runs, +-10 % */
            profile_run r = {.seed = (uint64_t)k + 2, .reached = 1, .steps = lround(s * (1 + 0.1 * k))};
            ck_assert_int_eq(profile_add_run(&p, &pt, &r, &err), TT_OK);
        }
    }
    profile_refit(&p);
    ck_assert(p.fit.ok);
    convergence *c;
    ck_assert_int_eq(convergence_from_profile(&p, "test", &c, &err), TT_OK);
    int assumed;
    double sd = convergence_run_sd(c, &assumed);
    ck_assert_int_eq(assumed, 0);
    ck_assert_double_eq_tol(sd, p.run_log_sd, 1e-12);
    ck_assert_double_gt(sd, 0.08);
    ck_assert_double_lt(sd, 0.12);
    convergence_estimate at = convergence_at(c, 256);
    ck_assert_double_eq(at.steps, (double)profile_find(&p, 256)->steps);
    ck_assert_double_eq_tol(at.log_sd, sd, 1e-12);
    ck_assert_double_eq_tol(at.p10, at.steps * exp(-1.2815515655446004 * sd), 1e-9);
    ck_assert_double_eq_tol(at.p90, at.steps * exp(1.2815515655446004 * sd), 1e-9);
    convergence_estimate mid = convergence_at(c, 512);
    ck_assert_double_gt(mid.log_sd, sd);
    convergence_estimate far = convergence_at(c, 65536), farther = convergence_at(c, 1 << 20);
    ck_assert(far.extrapolated);
    ck_assert_double_gt(far.log_sd, mid.log_sd);
    ck_assert_double_ge(farther.log_sd, far.log_sd);
    ck_assert_double_lt(far.p10, far.steps);
    ck_assert_double_gt(far.p90, far.steps);
    convergence_free(c);
    /* without runs the spread is the named default */
    for (int i = 0; i < p.npoints; i++)
        p.points[i].nruns = 0, p.points[i].log_sd = NAN;
    profile_refit(&p);
    ck_assert_int_eq(convergence_from_profile(&p, "test", &c, &err), TT_OK);
    ck_assert_double_eq(convergence_run_sd(c, &assumed), CONVERGENCE_DEFAULT_RUN_SD);
    ck_assert_int_eq(assumed, 1);
    convergence_free(c);
    profile_free(&p);
}
END_TEST

/* A batch at or beyond one whose runs did not reach the target is flagged; below it,
 * and below the reached points, not. */
START_TEST(failed_batch_flagged)
{
    conv_profile p;
    profile_init(&p, "mlp", "teacher", "lars", "test_accuracy", 0.65);
    tt_error err = {0};
    const long b[] = {256, 1024, 32768, 81920};
    const long steps[] = {400, 110, 366, 43};
    for (int i = 0; i < 4; i++) {
        profile_point pt = {.batch = b[i], .steps = steps[i], .reached = i < 2, .noise_scale = NAN};
        ck_assert_int_eq(profile_put(&p, &pt, &err), TT_OK);
    }
    profile_refit(&p);
    convergence *c;
    ck_assert_int_eq(convergence_from_profile(&p, "lars", &c, &err), TT_OK);
    ck_assert_double_eq(convergence_at(c, 1024).failed_batch, 0);
    ck_assert_double_eq(convergence_at(c, 16384).failed_batch, 0);
    ck_assert(convergence_at(c, 16384).extrapolated);
    ck_assert_double_eq(convergence_at(c, 32768).failed_batch, 32768);
    ck_assert_double_eq(convergence_at(c, 131072).failed_batch, 32768);
    convergence_free(c);
    profile_free(&p);
}
END_TEST

/* A profile of another model, dataset or target is refused unless accepted. */
START_TEST(mismatch_refused_or_noted)
{
    conv_profile p;
    profile_init(&p, "mlp", "fashion-mnist", "lamb", "test_accuracy", 0.85);
    profile_point pt = {.batch = 256, .steps = 800, .reached = 1, .noise_scale = NAN};
    tt_error err = {0};
    ck_assert_int_eq(profile_put(&p, &pt, &err), TT_OK);
    convergence *c;
    ck_assert_int_eq(convergence_from_profile(&p, "fm.json", &c, &err), TT_OK);
    char notes[CONVERGENCE_MAX_NOTES][512];
    int n;
    convergence_request want = {"resnet50", "imagenet", "top1_accuracy", 0.759, 0, 0, 0};
    ck_assert_int_eq(convergence_match(c, &want, "s.json", notes, &n, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "model mlp"));
    ck_assert_ptr_nonnull(strstr(err.msg, "resnet50"));
    ck_assert_ptr_nonnull(strstr(err.msg, "s.json: $.convergence.profile"));
    want.model = "mlp";
    ck_assert_int_eq(convergence_match(c, &want, "s.json", notes, &n, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "$.convergence.target.dataset"));
    want.dataset = "fashion-mnist";
    ck_assert_int_eq(convergence_match(c, &want, "s.json", notes, &n, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "asks for top1_accuracy 0.759, the profile reaches test_accuracy 0.85"));
    want.accept_target = 1;
    ck_assert_int_eq(convergence_match(c, &want, "s.json", notes, &n, &err), TT_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_ptr_nonnull(strstr(notes[0], "convergence.target = top1_accuracy 0.759 asked"));
    want.metric = "test_accuracy";
    want.target = 0.85;
    want.accept_target = 0;
    ck_assert_int_eq(convergence_match(c, &want, "s.json", notes, &n, &err), TT_OK);
    ck_assert_int_eq(n, 0);
    convergence_free(c);
    profile_free(&p);
}
END_TEST

START_TEST(cost_follows_utilisation)
{
    cost_rates r = {.ranks = 8, .price_per_h_usd = 3.0, .busy_w = 300, .idle_w = 50};
    cost c = cost_of(&r, 3600, 1800);
    ck_assert_double_eq_tol(c.usd, 24.0, 1e-9);
    ck_assert_double_eq_tol(c.energy_j, 8 * (300 * 1800 + 50 * 1800), 1e-6);
    /* owning: a $1M cluster over 1000 h costs $1,000 an hour; 1 kW of the rest at PUE 1.5, $0.2/kWh */
    r.other_w = 1000;
    r.pue = 1.5;
    r.capex_usd = 1e6;
    r.lifetime_s = 1000 * 3600.0;
    r.usd_per_j = 0.2 / 3.6e6;
    c = cost_of(&r, 3600, 1800);
    double it_j = 8 * (300 * 1800 + 50 * 1800) + 1000 * 3600.0;
    ck_assert_double_eq_tol(c.energy_j, 1.5 * it_j, 1e-6);
    ck_assert_double_eq_tol(c.capex_usd, 1000, 1e-9);
    ck_assert_double_eq_tol(c.energy_usd, 1.5 * it_j / 3.6e6 * 0.2, 1e-9);
    ck_assert_double_eq_tol(c.owned_usd, c.capex_usd + c.energy_usd, 1e-9);
}
END_TEST

/* The bill of a DGX H100 cluster from platforms/devices.json's purchase
 * blocks: 8 GPUs ($25k), 2 CPU sockets with the server ($25k, 900 W), 4
 * NVSwitches ($3k, 100 W), 4 PCIe switches ($500, 25 W), 8 NDR NICs ($2k,
 * 25 W) per node; NDR switches of 64 ports at $550 and 15 W a port, cables $2,500 and 17 W. */
static void dgx_h100_bill(int nodes, const char *fabric_json, cost_bill *b)
{
    json_error_t je;
    json_t *fabric = fabric_json ? json_loads(fabric_json, 0, &je) : NULL;
    platform_options o = {.nodes = nodes, .fabric = fabric, .overlay_file = "test"};
    tt_error err = {0};
    platform *p = platform_load("dgx-h100", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    platform_summary s;
    platform_summarize(p, &s);
    cost_bill_of(p, &s, b);
    platform_free(p);
    json_decref(fabric);
}

START_TEST(cost_bill_counts_the_fabric)
{
    cost_bill b;
    /* 4 nodes on one rail leaf level: 32 cables, 32 switch ports, one switch per rail */
    dgx_h100_bill(4, NULL, &b);
    ck_assert_str_eq(b.missing, "");
    ck_assert_double_eq_tol(b.accelerators_usd, 32 * 25000, 1e-6);
    ck_assert_double_eq_tol(b.servers_usd, 4 * (2 * 25000 + 4 * 3000 + 4 * 500), 1e-6);
    ck_assert_double_eq_tol(b.nics_usd, 32 * 2000, 1e-6);
    ck_assert_int_eq(b.fabric_cables, 32);
    ck_assert_int_eq(b.fabric_switch_ports, 32);
    ck_assert_int_eq(b.fabric_switches, 8);
    ck_assert_double_eq_tol(b.total_usd, 800000 + 256000 + 64000 + 8 * 64 * 550 + 32 * 2500, 1e-6);
    ck_assert_double_eq_tol(b.other_w, 4 * (2 * 900 + 4 * 100 + 4 * 25 + 8 * 25) + 8 * 64 * 15 + 32 * 17, 1e-9);
    /* 16 nodes, 4 per leaf, two levels: 128 node cables, 4 leaves x 4 node-ports up x 8 NICs = 128 more;
     * oversubscribed 2:1 only half go up */
    dgx_h100_bill(16, "{\"topology\": \"fattree\", \"nodes_per_leaf\": 4}", &b);
    ck_assert_int_eq(b.fabric_cables, 256);
    ck_assert_int_eq(b.fabric_switch_ports, 128 + 2 * 128);
    ck_assert_int_eq(b.fabric_switches, 4 + 2); /* 4 leaves of 32 + 32 ports; 4 spine elements of 32, two a switch */
    dgx_h100_bill(16, "{\"topology\": \"fattree\", \"nodes_per_leaf\": 4, \"oversubscription\": 2}", &b);
    ck_assert_int_eq(b.fabric_cables, 192);
    ck_assert_int_eq(b.fabric_switch_ports, 128 + 2 * 64);
    ck_assert_int_eq(b.fabric_switches, 4 + 1); /* leaves of 32 + 16 ports cannot share a switch */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tta");
    TCase *t = tcase_create("convergence");
    tcase_add_test(t, profile_fit_extrapolates);
    tcase_add_test(t, published_profile_interpolates);
    tcase_add_test(t, profile_errors);
    tcase_add_test(t, mccandlish_model);
    tcase_add_test(t, band_from_runs_and_fit);
    tcase_add_test(t, mismatch_refused_or_noted);
    tcase_add_test(t, failed_batch_flagged);
    tcase_add_test(t, cost_follows_utilisation);
    tcase_add_test(t, cost_bill_counts_the_fabric);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
