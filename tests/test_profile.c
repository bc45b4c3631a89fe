/* Convergence profiles: the McCandlish fit on points with known S_min and B_noise,
 * the JSON round trip, and strict reading of bad files. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trainer/profile.h"
#include "tests/testutil.h"

/* S = 100 (1 + 1000 / B): S_min 100, E_min 1e5, B_crit 1000 */
static void exact_profile(conv_profile *p)
{
    profile_init(p, "fashion-mnist-mlp", "lamb", "test_accuracy", 0.85);
    const long batches[] = {4000, 250, 1000, 8000, 125}; /* out of order on purpose */
    tt_error err = {0};
    for (int i = 0; i < 5; i++) {
        long b = batches[i];
        profile_point pt = {.batch = b, .reached = 1, .steps = (long)(100 * (1 + 1000.0 / b)),
                            .noise_scale = 100.0 * (i + 1)};
        pt.examples = (double)pt.steps * b;
        pt.epochs = pt.examples / 60000;
        snprintf(pt.data, sizeof pt.data, "fashion-mnist");
        ck_assert_int_eq(profile_put(p, &pt, &err), TT_OK);
    }
    profile_point miss = {.batch = 16000, .reached = 0, .steps = 30, .noise_scale = NAN};
    ck_assert_int_eq(profile_put(p, &miss, &err), TT_OK);
    profile_add_source(p, "ttasim train --sweep-batch (test)");
    profile_refit(p);
}

START_TEST(fit_recovers_known_model)
{
    conv_profile p;
    exact_profile(&p);
    ck_assert_int_eq(p.npoints, 6);
    for (int i = 1; i < p.npoints; i++)
        ck_assert_int_lt(p.points[i - 1].batch, p.points[i].batch);
    ck_assert(p.fit.ok);
    ck_assert_double_eq_tol(p.fit.s_min, 100, 0.5);
    ck_assert_double_eq_tol(p.fit.e_min, 1e5, 500);
    ck_assert_double_eq_tol(p.fit.b_crit, 1000, 10);
    ck_assert_double_lt(p.fit.residual, 0.005);
    ck_assert_double_eq(p.noise_scale, 300); /* median of 100..500 (unreached has none) */
    /* replacing a point keeps one entry per batch */
    profile_point pt = p.points[0];
    pt.steps = 5000;
    ck_assert_int_eq(profile_put(&p, &pt, NULL), TT_OK);
    ck_assert_int_eq(p.npoints, 6);
    ck_assert_int_eq(profile_find(&p, 125)->steps, 5000);
    profile_refit(&p);
    ck_assert_double_gt(p.fit.residual, 0.05); /* now off the model */
    profile_free(&p);
}
END_TEST

START_TEST(round_trip)
{
    conv_profile p, q;
    exact_profile(&p);
    char path[64];
    tu_write_temp("", path, sizeof path);
    tt_error err = {0};
    ck_assert_int_eq(profile_save(&p, path, &err), TT_OK);
    ck_assert_int_eq(profile_load(path, &q, &err), TT_OK);
    unlink(path);
    ck_assert_str_eq(q.workload, "fashion-mnist-mlp");
    ck_assert_str_eq(q.optimizer, "lamb");
    ck_assert_str_eq(q.metric, "test_accuracy");
    ck_assert_double_eq(q.target, 0.85);
    ck_assert_int_eq(q.npoints, p.npoints);
    for (int i = 0; i < p.npoints; i++) {
        ck_assert_int_eq(q.points[i].batch, p.points[i].batch);
        ck_assert_int_eq(q.points[i].steps, p.points[i].steps);
        ck_assert_int_eq(q.points[i].reached, p.points[i].reached);
        ck_assert_double_eq_tol(q.points[i].examples, p.points[i].examples, 1e-6);
    }
    ck_assert(isnan(q.points[5].noise_scale));
    ck_assert_double_eq_tol(q.fit.b_crit, p.fit.b_crit, 1e-6);
    ck_assert_int_eq(q.nsources, 1);
    profile_free(&p);
    profile_free(&q);
}
END_TEST

static void load_bad(const char *text, const char *want)
{
    char path[64];
    tu_write_temp(text, path, sizeof path);
    conv_profile p;
    tt_error err = {0};
    ck_assert_int_eq(profile_load(path, &p, &err), TT_EINPUT);
    unlink(path);
    ck_assert_msg(strstr(err.msg, want), "error '%s' lacks '%s'", err.msg, want);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
}

#define HEAD "{\"format\": \"ttasim-convergence-profile\", \"version\": 1, \"workload\": \"w\", " \
             "\"optimizer\": \"lamb\", \"target\": {\"metric\": \"test_accuracy\", \"value\": 0.85}, "

START_TEST(strict_reading)
{
    load_bad("{\"format\": \"ttasim-trace\"}", "$.format: expected \"ttasim-convergence-profile\"");
    load_bad(HEAD "\"points\": [], \"fitt\": null}", "fitt");
    load_bad(HEAD "\"points\": [{\"batch\": 64, \"steps\": 10, \"epochs\": 1, \"examples\": 640}]}",
             "$.points[0]: missing required key \"reached\"");
    load_bad(HEAD "\"points\": [{\"batch\": 64, \"steps\": 10, \"epochs\": 1, \"examples\": 640, "
                  "\"reached\": true}, {\"batch\": 64, \"steps\": 9, \"epochs\": 1, "
                  "\"examples\": 576, \"reached\": true}]}",
             "batch 64 appears twice");
    load_bad(HEAD "\"points\": [{\"batch\": 0, \"steps\": 10, \"epochs\": 1, \"examples\": 640, "
                  "\"reached\": true}]}",
             "$.points[0].batch");
    load_bad("{\"format\": ", "invalid JSON");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fit_recovers_known_model);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, strict_reading);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
