/* sim/report/scaling.c: where more accelerators stop paying off, worked by hand. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/report/scaling.h"
#include "tests/testutil.h"

static void point(run_point *p, int nodes, long batch, double step_s, double steps)
{
    memset(p, 0, sizeof *p);
    p->nodes = nodes;
    p->ranks = 8 * nodes;
    p->global_batch = batch;
    p->step.time_s = step_s;
    p->steps_to_target = steps;
    p->samples_to_target = steps * batch;
    p->time_to_accuracy_s = steps * step_s;
}

/* 1 node: batch 64 (1,000 steps of 1 s) beats 128 (600 of 2 s). 4 nodes:
 * batch 128 (700 of 0.6 s, 420 s) beats 256 (400 of 1.1 s). 2 nodes, listed
 * after them: batch 128, 600 steps of 1 s. 8 nodes does not run. From 1 to 2
 * nodes: 1000 / 600 = 1.667x of 2x, tokens 76,800 / 64,000 = 1.2x, rank time
 * per sample 16 / 128 against 8 / 64 = 1x: data efficiency. From 2 to 4:
 * 600 / 420 = 1.429x, tokens 89,600 / 76,800 = 1.167x, rank time 0.6 x 32 /
 * 128 = 0.15 against 0.125 = 1.2x: per-sample time. */
START_TEST(fastest_per_size_and_what_limits)
{
    static run_point pts[6];
    point(&pts[0], 1, 64, 1.0, 1000);
    point(&pts[1], 1, 128, 2.0, 600);
    point(&pts[2], 4, 256, 1.1, 400);
    point(&pts[3], 4, 128, 0.6, 700);
    point(&pts[4], 2, 128, 1.0, 600);
    point(&pts[5], 8, 128, 1.0, 600);
    snprintf(pts[5].error, sizeof pts[5].error, "does not fit");
    run_result r = {.n_points = 6, .points = pts};
    scaling_row rows[8];
    ck_assert_uint_eq(scaling_rows(&r, rows, 8), 3);
    ck_assert_ptr_eq(rows[0].best, &pts[0]);
    ck_assert_ptr_eq(rows[1].best, &pts[4]);
    ck_assert_ptr_eq(rows[2].best, &pts[3]);
    ck_assert_double_eq_tol(rows[1].speedup, 1000.0 / 600, 1e-12);
    ck_assert_double_eq_tol(rows[1].efficiency, 1000.0 / 600 / 2, 1e-12);
    ck_assert_double_eq_tol(rows[1].tokens_ratio, 1.2, 1e-12);
    ck_assert_double_eq_tol(rows[1].rank_time_ratio, 1.0, 1e-12);
    ck_assert_str_eq(scaling_limit(&rows[1]), "data efficiency");
    ck_assert_double_eq_tol(rows[2].speedup, 600.0 / 420, 1e-12);
    ck_assert_double_eq_tol(rows[2].efficiency, 600.0 / 420 / 2, 1e-12);
    ck_assert_double_eq_tol(rows[2].tokens_ratio, 89600.0 / 76800, 1e-12);
    ck_assert_double_eq_tol(rows[2].rank_time_ratio, 1.2, 1e-12);
    ck_assert_str_eq(scaling_limit(&rows[2]), "per-sample time");
    /* the efficiency is what the two ratios leave */
    ck_assert_double_eq_tol(rows[2].efficiency, 1 / (rows[2].tokens_ratio * rows[2].rank_time_ratio), 1e-12);
    /* a sweep of other paths too: its points are not alike, no rows */
    snprintf(pts[2].label, sizeof pts[2].label, "platform.fabric.oversubscription=2");
    ck_assert_uint_eq(scaling_rows(&r, rows, 8), 0);
    /* one node count: nothing to compare */
    r.n_points = 2;
    pts[2].label[0] = '\0';
    ck_assert_uint_eq(scaling_rows(&r, rows, 8), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scaling");
    TCase *tc = tcase_create("scaling");
    tcase_add_test(tc, fastest_per_size_and_what_limits);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
