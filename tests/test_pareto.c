/* sim/report/pareto.c: the purchase search's verdicts worked by hand. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "sim/report/pareto.h"
#include "tests/testutil.h"

/* Five clusters: (10 h, $50k), (20 h, $30k), (15 h, $60k: slower and
 * dearer than the first), (40 h, $30k: as dear as the second, slower),
 * (20 h, $30k again: the second's twin, on the front with it). */
static const double T[] = {10, 20, 15, 40, 20}, C[] = {50e3, 30e3, 60e3, 30e3, 30e3};

START_TEST(front_of_five)
{
    size_t order[5];
    ck_assert_uint_eq(pareto_front(T, C, 5, order), 3);
    /* fastest first; the twins in their order */
    ck_assert_uint_eq(order[0], 0);
    ck_assert_uint_eq(order[1], 1);
    ck_assert_uint_eq(order[2], 4);
}
END_TEST

START_TEST(picks_within_limits)
{
    /* within 18 h only the first and third: the first is cheaper */
    ck_assert_int_eq(pareto_cheapest_within(T, C, 5, 18), 0);
    /* within 25 h the $30k twins: the first of them */
    ck_assert_int_eq(pareto_cheapest_within(T, C, 5, 25), 1);
    ck_assert_int_eq(pareto_cheapest_within(T, C, 5, 5), -1);
    /* $40k buys 20 h at best; $55k the 10 h one */
    ck_assert_int_eq(pareto_fastest_within(T, C, 5, 40e3), 1);
    ck_assert_int_eq(pareto_fastest_within(T, C, 5, 55e3), 0);
    ck_assert_int_eq(pareto_fastest_within(T, C, 5, 1e3), -1);
}
END_TEST

/* A point that did not run (NaN) or has no cost is never picked nor on the front. */
START_TEST(points_without_values)
{
    const double t[] = {NAN, 30, 12}, c[] = {1e3, 0, 2e3};
    size_t order[3];
    ck_assert_uint_eq(pareto_front(t, c, 3, order), 1);
    ck_assert_uint_eq(order[0], 2);
    ck_assert_int_eq(pareto_cheapest_within(t, c, 3, 100), 2);
    ck_assert_int_eq(pareto_fastest_within(t, c, 3, 1e9), 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pareto");
    TCase *c = tcase_create("pareto");
    tcase_add_test(c, front_of_five);
    tcase_add_test(c, picks_within_limits);
    tcase_add_test(c, points_without_values);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
