/* sim/replay/layout.c: parallel layouts and their communicators, against
 * Megatron-Core's own worked example and by hand. */
#include <check.h>
#include <string.h>

#include "sim/replay/layout.h"
#include "tests/testutil.h"

static void expect_group(const layout *l, unsigned dims, int g, const int *want, int n)
{
    int got[64];
    ck_assert_int_eq(layout_group_size(l, dims), n);
    layout_group(l, dims, g, got);
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "group %d member %d: %d, expected %d", g, i, got[i], want[i]);
}

/* megatron/core/parallel_state.py, initialize_model_parallel's docstring: 16
 * GPUs, tensor 2, pipeline 4: 8 data-parallel groups [g0, g2], [g1, g3],
 * ..., 8 tensor groups [g0, g1], ..., 4 pipeline groups [g0, g4, g8, g12], ... */
START_TEST(megatron_example)
{
    int degree[LAYOUT_DIMS] = {[LAYOUT_TENSOR] = 2, [LAYOUT_PIPELINE] = 4};
    layout l;
    tt_error err = {0};
    ck_assert_int_eq(layout_make(degree, NULL, 16, "$.parallel", &l, &err), TT_OK);
    ck_assert_int_eq(l.degree[LAYOUT_DATA], 2); /* derived */
    ck_assert_int_eq(layout_groups(&l, LAYOUT_DIM(LAYOUT_DATA)), 8);
    ck_assert_int_eq(layout_groups(&l, LAYOUT_DIM(LAYOUT_TENSOR)), 8);
    ck_assert_int_eq(layout_groups(&l, LAYOUT_DIM(LAYOUT_PIPELINE)), 4);
    expect_group(&l, LAYOUT_DIM(LAYOUT_DATA), 0, (int[]){0, 2}, 2);
    expect_group(&l, LAYOUT_DIM(LAYOUT_DATA), 1, (int[]){1, 3}, 2);
    expect_group(&l, LAYOUT_DIM(LAYOUT_DATA), 7, (int[]){13, 15}, 2);
    expect_group(&l, LAYOUT_DIM(LAYOUT_TENSOR), 5, (int[]){10, 11}, 2);
    expect_group(&l, LAYOUT_DIM(LAYOUT_PIPELINE), 0, (int[]){0, 4, 8, 12}, 4);
    expect_group(&l, LAYOUT_DIM(LAYOUT_PIPELINE), 3, (int[]){3, 7, 11, 15}, 4);
    /* the model-parallel group: tensor x pipeline */
    expect_group(&l, LAYOUT_DIM(LAYOUT_TENSOR) | LAYOUT_DIM(LAYOUT_PIPELINE), 1,
                 (int[]){2, 3, 6, 7, 10, 11, 14, 15}, 8);
    int c[LAYOUT_DIMS];
    layout_coords(&l, 13, c);
    ck_assert_int_eq(c[LAYOUT_TENSOR], 1);
    ck_assert_int_eq(c[LAYOUT_DATA], 0);
    ck_assert_int_eq(c[LAYOUT_PIPELINE], 3);
    ck_assert_int_eq(layout_rank(&l, c), 13);
}
END_TEST

/* Another order puts data innermost: a data group is then 2 consecutive ranks. */
START_TEST(order_and_errors)
{
    int degree[LAYOUT_DIMS] = {[LAYOUT_TENSOR] = 2, [LAYOUT_EXPERT] = 2, [LAYOUT_DATA] = 2};
    layout l;
    tt_error err = {0};
    ck_assert_int_eq(layout_make(degree, "dp-tp-ep-cp-pp", 8, "$.parallel", &l, &err), TT_OK);
    expect_group(&l, LAYOUT_DIM(LAYOUT_DATA), 0, (int[]){0, 1}, 2);
    expect_group(&l, LAYOUT_DIM(LAYOUT_TENSOR), 0, (int[]){0, 2}, 2);
    /* a MoE model's dense layers replicate over data x expert */
    expect_group(&l, LAYOUT_DIM(LAYOUT_DATA) | LAYOUT_DIM(LAYOUT_EXPERT), 1, (int[]){2, 3, 6, 7}, 4);
    ck_assert_int_eq(layout_make(degree, "tp-cp-ep-dp", 8, "$.parallel", &l, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "$.parallel.order"));
    ck_assert_int_eq(layout_make(degree, "tp-tp-ep-dp-pp", 8, "$.parallel", &l, &err), TT_EINPUT);
    ck_assert_int_eq(layout_make(degree, NULL, 16, "$.parallel", &l, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "is 8 ranks, the platform has 16"));
    int three[LAYOUT_DIMS] = {[LAYOUT_TENSOR] = 3};
    ck_assert_int_eq(layout_make(three, NULL, 16, "$.parallel", &l, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "do not divide"));
    layout_data_only(12, &l);
    ck_assert_int_eq(layout_groups(&l, LAYOUT_DIM(LAYOUT_DATA)), 1);
    expect_group(&l, LAYOUT_DIM(LAYOUT_DATA), 0, (int[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *t = tcase_create("layout");
    tcase_add_test(t, megatron_example);
    tcase_add_test(t, order_and_errors);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? 1 : 0;
}
