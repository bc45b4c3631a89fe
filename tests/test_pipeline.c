/* sim/replay/pipeline.c: Megatron's schedules on timelines worked by hand. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay/pipeline.h"
#include "tests/testutil.h"

/* A pipeline's step: the latest end over its stages. */
static double run(int stages, int chunks, int mbs, double f, double b, double send, taskgraph **out,
                  pipeline **pl_out)
{
    double fw[64], bw[64];
    for (int v = 0; v < stages * chunks; v++) {
        fw[v] = f;
        bw[v] = b;
    }
    taskgraph *g = tg_create(stages, 1);
    pipeline_shape sh = {stages, chunks, mbs, fw, bw, send, NULL};
    tt_error err = {0};
    pipeline *pl = pipeline_build(g, &sh, &err);
    ck_assert_msg(pl != NULL, "%s", err.msg);
    ck_assert_msg(tg_schedule(g, &err) == TT_OK, "%s", err.msg);
    double end = 0;
    for (int s = 0; s < stages; s++)
        end = tg_rank_end_s(g, s) > end ? tg_rank_end_s(g, s) : end;
    *out = g;
    *pl_out = pl;
    return end;
}

/* 1F1B on 2 stages, 3 micro-batches, forward 1 s, backward 2 s, sends 0.5 s.
 * Stage 0 runs F0 F1 B0 F2 B1 B2, stage 1 F0 B0 F1 B1 F2 B2:
 * S0 F0 0-1, send 1-1.5; F1 1-2, send 2-2.5. S1 F0 1.5-2.5, B0 2.5-4.5,
 * send 4.5-5; S0 B0 5-7. S1 F1 4.5-5.5, B1 5.5-7.5, send 7.5-8. S0 F2 7-8,
 * send 8-8.5; S0 B1 8-10. S1 F2 8.5-9.5, B2 9.5-11.5, send 11.5-12; S0 B2
 * 12-14. */
START_TEST(one_f_one_b_by_hand)
{
    taskgraph *g;
    pipeline *pl;
    double end = run(2, 1, 3, 1, 2, 0.5, &g, &pl);
    ck_assert_double_eq_tol(end, 14, 1e-12);
    ck_assert_double_eq_tol(tg_start_s(g, pipeline_task(pl, 1, 0, 0, 0)), 1.5, 1e-12);
    ck_assert_double_eq_tol(tg_start_s(g, pipeline_task(pl, 0, 0, 0, 1)), 5, 1e-12);
    ck_assert_double_eq_tol(tg_start_s(g, pipeline_task(pl, 1, 0, 1, 0)), 4.5, 1e-12);
    ck_assert_double_eq_tol(tg_start_s(g, pipeline_task(pl, 0, 0, 2, 0)), 7, 1e-12);
    ck_assert_double_eq_tol(tg_start_s(g, pipeline_task(pl, 1, 0, 2, 0)), 8.5, 1e-12);
    ck_assert_double_eq_tol(tg_start_s(g, pipeline_task(pl, 0, 0, 2, 1)), 12, 1e-12);
    pipeline_free(pl);
    tg_free(g);
}
END_TEST

/* Without sends, uniform stages: 1F1B takes (m + p - 1)(f + b); the
 * interleaved schedule with v chunks of f and b each m v (f + b) + (p - 1)(f + b)
 * (Narayanan et al., SC21: the bubble shrinks by v). */
START_TEST(bubbles_as_published)
{
    taskgraph *g;
    pipeline *pl;
    ck_assert_double_eq_tol(run(4, 1, 8, 1, 2, 0, &g, &pl), (8 + 4 - 1) * 3.0, 1e-12);
    pipeline_free(pl);
    tg_free(g);
    ck_assert_double_eq_tol(run(4, 1, 2, 1, 2, 0, &g, &pl), (2 + 4 - 1) * 3.0, 1e-12);
    pipeline_free(pl);
    tg_free(g);
    ck_assert_double_eq_tol(run(2, 2, 4, 1, 2, 0, &g, &pl), 4 * 2 * 3.0 + 1 * 3.0, 1e-12);
    pipeline_free(pl);
    tg_free(g);
    ck_assert_double_eq_tol(run(4, 3, 8, 1, 2, 0, &g, &pl), 8 * 3 * 3.0 + 3 * 3.0, 1e-12);
    pipeline_free(pl);
    tg_free(g);
}
END_TEST

/* The last micro-batch's backward in pieces: 2 stages, 2 micro-batches,
 * forward 1 s, backward 2 s, no sends, stage 0's in 4 pieces. Stage 1 runs
 * F0 1-2, B0 2-4, F1 4-5, B1 5-7; stage 0's B1 follows at 7, piece k ending
 * at 7.5 + 0.5 k. Stage 1's is one piece. */
START_TEST(last_backward_in_pieces)
{
    double f[2] = {1, 1}, b[2] = {2, 2};
    int pieces[2] = {4, 1};
    taskgraph *g = tg_create(2, 1);
    pipeline_shape sh = {2, 1, 2, f, b, 0, pieces};
    tt_error err = {0};
    pipeline *pl = pipeline_build(g, &sh, &err);
    ck_assert_ptr_nonnull(pl);
    ck_assert_int_eq(tg_schedule(g, &err), TT_OK);
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq_tol(tg_end_s(g, pipeline_piece(pl, 0, 0, k)), 7.5 + 0.5 * k, 1e-12);
    ck_assert_int_eq(pipeline_piece(pl, 0, 0, 3), pipeline_task(pl, 0, 0, 1, 1));
    ck_assert_double_eq_tol(tg_end_s(g, pipeline_piece(pl, 1, 0, 0)), 7, 1e-12);
    pipeline_free(pl);
    tg_free(g);
}
END_TEST

START_TEST(interleaving_needs_whole_groups)
{
    double f[4] = {1, 1, 1, 1};
    taskgraph *g = tg_create(2, 1);
    pipeline_shape sh = {2, 2, 3, f, f, 0, NULL};
    tt_error err = {0};
    ck_assert_ptr_null(pipeline_build(g, &sh, &err));
    ck_assert_int_eq(err.code, TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "multiple of the pipeline stages"));
    tg_free(g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *t = tcase_create("schedules");
    tcase_add_test(t, one_f_one_b_by_hand);
    tcase_add_test(t, bubbles_as_published);
    tcase_add_test(t, last_backward_in_pieces);
    tcase_add_test(t, interleaving_needs_whole_groups);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
