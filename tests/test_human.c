/* sim/report/human.c: numbers as the text report prints them. */
#include <check.h>
#include <stdlib.h>

#include "sim/report/human.h"
#include "tests/testutil.h"

START_TEST(counts_grouped_by_thousands)
{
    char b[48];
    ck_assert_str_eq(human_count(28152.2, b, sizeof b), "28,150");
    ck_assert_str_eq(human_count(20470.4, b, sizeof b), "20,470");
    ck_assert_str_eq(human_count(1234567, b, sizeof b), "1,235,000");
    ck_assert_str_eq(human_count(999.5, b, sizeof b), "999.5");
    ck_assert_str_eq(human_count(1000, b, sizeof b), "1,000");
    ck_assert_str_eq(human_count(7.5, b, sizeof b), "7.5");
    ck_assert_str_eq(human_count(-45678, b, sizeof b), "-45,680");
    /* a short buffer is cut, never overrun */
    char s[4];
    ck_assert_str_eq(human_count(1234567, s, sizeof s), "1,");
}
END_TEST

START_TEST(durations_in_one_unit)
{
    char b[32];
    ck_assert_str_eq(human_duration(5634.31, b, sizeof b), "93.91 min");
    /* a band's end in its centre's unit, not its own */
    ck_assert_str_eq(human_duration_as(7206, 5634.31, b, sizeof b), "120.1 min");
    ck_assert_str_eq(human_duration(7206, b, sizeof b), "2.002 h");
    /* rounding noise of a difference reads as nothing */
    ck_assert_str_eq(human_duration(6.099e-19, b, sizeof b), "0 s");
    ck_assert_str_eq(human_duration(4.26e-4, b, sizeof b), "426 us");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("human");
    TCase *c = tcase_create("human");
    tcase_add_test(c, counts_grouped_by_thousands);
    tcase_add_test(c, durations_in_one_unit);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
