/* sim/replay/taskgraph.c: the scheduler on graphs worked out by hand. */
#include <check.h>
#include <string.h>

#include "sim/replay/taskgraph.h"
#include "tests/testutil.h"

/* Two ranks, two streams. Rank 0: kernel A (1 ms), then collective C with
 * rank 1, then kernel B (0.2 ms) that needs C. Rank 1: kernel D (2 ms), C,
 * kernel E (0.3 ms) that needs C. C (0.5 ms) starts when both ranks reach it,
 * at 2 ms, and ends at 2.5 ms; B waits 1.5 ms and ends at 2.7 ms, E waits
 * 0.5 ms and ends at 2.8 ms. A collective of rank 0 alone, F (0.4 ms), after
 * A, waits for C on the one context: 2.5-2.9 ms, and nothing waits for it. */
START_TEST(two_ranks_two_streams)
{
    taskgraph *g = tg_create(2, 1);
    ck_assert_ptr_nonnull(g);
    long a = tg_add(g, 0, TG_COMPUTE, TG_KERNEL, 1e-3, 0, -1);
    long c0 = tg_add(g, 0, TG_COMM, TG_COLLECTIVE, 0.5e-3, 0, 7);
    long b = tg_add(g, 0, TG_COMPUTE, TG_KERNEL, 0.2e-3, 0, -1);
    long f = tg_add(g, 0, TG_COMM, TG_COLLECTIVE, 0.4e-3, 0, -1);
    long d = tg_add(g, 1, TG_COMPUTE, TG_KERNEL, 2e-3, 0, -1);
    long c1 = tg_add(g, 1, TG_COMM, TG_COLLECTIVE, 0.5e-3, 0, 7);
    long e = tg_add(g, 1, TG_COMPUTE, TG_KERNEL, 0.3e-3, 0, -1);
    ck_assert_int_eq(tg_after(g, c0, a) || tg_after(g, b, c0) || tg_after(g, f, a) || tg_after(g, c1, d) ||
                     tg_after(g, e, c1), 0);
    tt_error err = {0};
    ck_assert_int_eq(tg_schedule(g, &err), TT_OK);
    ck_assert_double_eq_tol(tg_start_s(g, c0), 2e-3, 1e-12);
    ck_assert_double_eq_tol(tg_start_s(g, c1), 2e-3, 1e-12);
    ck_assert_double_eq_tol(tg_end_s(g, b), 2.7e-3, 1e-12);
    ck_assert_double_eq_tol(tg_end_s(g, e), 2.8e-3, 1e-12);
    ck_assert_double_eq_tol(tg_start_s(g, f), 2.5e-3, 1e-12);
    ck_assert_double_eq_tol(tg_rank_end_s(g, 0), 2.9e-3, 1e-12);
    tg_breakdown br;
    tg_rank_breakdown(g, 0, &br);
    ck_assert_double_eq_tol(br.kernel_s, 1.2e-3, 1e-12);
    ck_assert_double_eq_tol(br.collective_s, 0.9e-3, 1e-12);
    ck_assert_double_eq_tol(br.exposed_comm_s, 1.5e-3, 1e-12);
    tg_rank_breakdown(g, 1, &br);
    ck_assert_double_eq_tol(br.exposed_comm_s, 0.5e-3, 1e-12);
    tg_free(g);
}
END_TEST

/* Two contexts, taken in turn: X (0.5 ms, its bytes 0.3 ms) and Y (0.1 ms,
 * bytes 0.05 ms), both ready at 0: Y no longer waits for X, but its bytes
 * queue behind X's (links busy to 0.3 ms): Y ends at max(0.1, 0.35) = 0.35 ms.
 * A host task H (1 ms) and a kernel K waiting for it: K's wait counts as the
 * host's, not the collectives'. */
START_TEST(contexts_and_host)
{
    taskgraph *g = tg_create(1, 2);
    long x = tg_add(g, 0, TG_COMM, TG_COLLECTIVE, 0.5e-3, 0.3e-3, -1);
    long y = tg_add(g, 0, TG_COMM, TG_COLLECTIVE, 0.1e-3, 0.05e-3, -1);
    long h = tg_add(g, 0, TG_HOST, TG_HOST_WORK, 1e-3, 0, -1);
    long k = tg_add(g, 0, TG_COMPUTE, TG_KERNEL, 0.1e-3, 0, -1);
    ck_assert_int_eq(tg_after(g, k, h) || tg_after(g, k, y), 0);
    tt_error err = {0};
    ck_assert_int_eq(tg_schedule(g, &err), TT_OK);
    ck_assert_double_eq_tol(tg_end_s(g, x), 0.5e-3, 1e-12);
    ck_assert_double_eq_tol(tg_end_s(g, y), 0.35e-3, 1e-12);
    ck_assert_double_eq_tol(tg_start_s(g, k), 1e-3, 1e-12);
    tg_breakdown br;
    tg_rank_breakdown(g, 0, &br);
    ck_assert_double_eq_tol(br.host_wait_s, 1e-3, 1e-12);
    ck_assert_double_eq_tol(br.exposed_comm_s, 0, 1e-15);
    tg_free(g);
    /* a cycle is refused, naming how many tasks are stuck */
    g = tg_create(1, 1);
    long p = tg_add(g, 0, TG_COMPUTE, TG_KERNEL, 1, 0, -1), q = tg_add(g, 0, TG_COMPUTE, TG_KERNEL, 1, 0, -1);
    tg_after(g, p, q);
    ck_assert_int_eq(tg_schedule(g, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "2 of 2 tasks cannot start"));
    tg_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("taskgraph");
    TCase *t = tcase_create("schedule");
    tcase_add_test(t, two_ranks_two_streams);
    tcase_add_test(t, contexts_and_host);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? 1 : 0;
}
