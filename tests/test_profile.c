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
    profile_init(p, "mlp", "fashion-mnist", "lamb", "test_accuracy", 0.85);
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
    snprintf(p->recipe.schedule, sizeof p->recipe.schedule, "poly, power 2");
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
    ck_assert_int_eq(q.version, PROFILE_VERSION);
    ck_assert_str_eq(q.model, "mlp");
    ck_assert_str_eq(q.dataset, "fashion-mnist");
    ck_assert_str_eq(q.recipe.optimizer, "lamb");
    ck_assert_str_eq(q.recipe.schedule, "poly, power 2");
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

/* A point's steps are its median run; an unreached run is slower than any reached
 * one; the spread is the sd of ln(steps), pooled over points whose runs all reached. */
START_TEST(runs_give_median_and_spread)
{
    conv_profile p;
    profile_init(&p, "mlp", "teacher", "lars", "test_accuracy", 0.8);
    p.dataset_examples = 1000;
    tt_error err = {0};
    profile_point pt = {.batch = 100, .noise_scale = NAN};
    const long steps[] = {100, 140, 120};
    for (int i = 0; i < 3; i++) {
        profile_run r = {.seed = (uint64_t)i + 1, .reached = 1, .steps = steps[i]};
        ck_assert_int_eq(profile_add_run(&p, &pt, &r, &err), TT_OK);
    }
    const profile_point *q = profile_find(&p, 100);
    ck_assert_int_eq(q->nruns, 3);
    ck_assert_int_eq(q->steps, 120);
    ck_assert(q->reached);
    ck_assert_double_eq_tol(q->epochs, 120 * 100 / 1000.0, 1e-12);
    double m = (log(100) + log(140) + log(120)) / 3;
    double sd = sqrt((pow(log(100) - m, 2) + pow(log(140) - m, 2) + pow(log(120) - m, 2)) / 2);
    ck_assert_double_eq_tol(q->log_sd, sd, 1e-12);
    /* two of three runs not reaching: the median run did not reach; steps = the budget */
    pt.batch = 1000;
    profile_run miss = {.seed = 1, .reached = 0, .steps = 50, .train_loss = 0.4, .test_loss = 0.5};
    profile_run hit = {.seed = 2, .reached = 1, .steps = 30};
    ck_assert_int_eq(profile_add_run(&p, &pt, &miss, &err), TT_OK);
    ck_assert_int_eq(profile_add_run(&p, &pt, &hit, &err), TT_OK);
    miss.seed = 3;
    ck_assert_int_eq(profile_add_run(&p, &pt, &miss, &err), TT_OK);
    q = profile_find(&p, 1000);
    ck_assert(!q->reached);
    ck_assert_int_eq(q->steps, 50);
    ck_assert(isnan(q->log_sd));
    profile_refit(&p);
    ck_assert_double_eq_tol(p.run_log_sd, sd, 1e-12); /* only the all-reached point counts */
    ck_assert_int_eq(profile_remove(&p, 1000), 1);
    ck_assert_int_eq(profile_remove(&p, 1000), 0);
    ck_assert_int_eq(p.npoints, 1);
    profile_free(&p);
}
END_TEST

/* Version 1 files still load: the model is the zoo name their workload ends with. */
START_TEST(version1_migrates)
{
    char path[64];
    tu_write_temp("{\"format\": \"ttasim-convergence-profile\", \"version\": 1, \"workload\": "
                  "\"wikipedia-books-bert-large\", \"optimizer\": \"lamb\", \"target\": {\"metric\": "
                  "\"squad_v1_f1\", \"value\": 90.5}, \"points\": [{\"batch\": 512, \"steps\": 1000, "
                  "\"epochs\": 1, \"examples\": 512000, \"reached\": true}]}", path, sizeof path);
    conv_profile p;
    tt_error err = {0};
    ck_assert_msg(profile_load(path, &p, &err) == TT_OK, "%s", err.msg);
    unlink(path);
    ck_assert_int_eq(p.version, 1);
    ck_assert_str_eq(p.model, "bert-large");
    ck_assert_str_eq(p.dataset, "wikipedia-books");
    ck_assert_str_eq(p.recipe.optimizer, "lamb");
    ck_assert_ptr_nonnull(strstr(p.recipe.schedule, "version 1"));
    profile_free(&p);
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
    load_bad("{\"format\": \"ttasim-convergence-profile\", \"version\": 2, \"model\": \"mlp\", "
             "\"dataset\": \"teacher\", \"target\": {\"metric\": \"test_accuracy\", \"value\": 0.8}, "
             "\"points\": []}", "missing required key \"recipe\"");
    load_bad("{\"format\": \"ttasim-convergence-profile\", \"version\": 3}", "$.version");
    load_bad(HEAD "\"points\": [{\"batch\": 64, \"steps\": 10, \"epochs\": 1, \"examples\": 640, "
                  "\"reached\": true, \"runs\": [{\"steps\": 0, \"reached\": true}]}]}",
             "$.points[0].runs[0].steps");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fit_recovers_known_model);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, runs_give_median_and_spread);
    tcase_add_test(tc, version1_migrates);
    tcase_add_test(tc, strict_reading);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
