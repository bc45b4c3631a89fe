/* Steps to target (profiles, the McCandlish fit) and cost/energy. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/datapath.h"
#include "sim/convergence.h"
#include "sim/cost.h"
#include "tests/testutil.h"

START_TEST(fit_recovers_mccandlish)
{
    /* S = 1000 (1 + 500 / B) exactly: S_min 1000, E_min 5e5. */
    double b[] = {64, 256, 1024, 4096}, s[4];
    for (int i = 0; i < 4; i++)
        s[i] = 1000 * (1 + 500 / b[i]);
    double s_min, e_min, res;
    convergence_fit(b, s, 4, &s_min, &e_min, &res);
    ck_assert_double_eq_tol(s_min, 1000, 1e-6);
    ck_assert_double_eq_tol(e_min, 5e5, 1e-3);
    ck_assert(res < 1e-9);
    /* Perfect scaling (S = 9e6 / B) gives S_min 0, not a negative one. */
    for (int i = 0; i < 4; i++)
        s[i] = 9e6 / b[i] * (i == 2 ? 1.01 : 1);
    convergence_fit(b, s, 4, &s_min, &e_min, &res);
    ck_assert(s_min >= 0);
    ck_assert(fabs(e_min / 9e6 - 1) < 0.01);
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
    ck_assert_double_eq(convergence_steps(c, 32768, &ex), 3519);
    ck_assert_int_eq(ex, 0);
    ck_assert_double_eq(convergence_steps(c, 81920, &ex), 1440);
    /* Half-way in log B between 32K and 64K: the geometric mean of the steps. */
    double mid = convergence_steps(c, sqrt(32768.0 * 65536.0), &ex);
    ck_assert_double_eq_tol(mid, sqrt(3519.0 * 1800.0), 1e-6);
    ck_assert_int_eq(ex, 0);
    /* Beyond the points: the fit, flagged. */
    double far = convergence_steps(c, 163840, &ex);
    ck_assert_int_eq(ex, 1);
    ck_assert(far < 1440 && far > 500);
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
    ck_assert_double_eq_tol(convergence_steps(c, 1000, &ex), 4000, 1e-9);
    ck_assert_double_eq_tol(convergence_steps(c, 1e9, &ex), 2000, 1e-2);
    ck_assert_int_eq(ex, 0);
    convergence_free(c);
}
END_TEST

START_TEST(cost_follows_utilisation)
{
    cost_rates r = {8, 3.0, 300, 50};
    cost c = cost_of(&r, 3600, 1800);
    ck_assert_double_eq_tol(c.usd, 24.0, 1e-9);
    ck_assert_double_eq_tol(c.energy_j, 8 * (300 * 1800 + 50 * 1800), 1e-6);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tta");
    TCase *t = tcase_create("convergence");
    tcase_add_test(t, fit_recovers_mccandlish);
    tcase_add_test(t, published_profile_interpolates);
    tcase_add_test(t, profile_errors);
    tcase_add_test(t, mccandlish_model);
    tcase_add_test(t, cost_follows_utilisation);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
