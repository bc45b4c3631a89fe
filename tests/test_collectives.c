/* Collectives: every schedule computes its collective on real buffers for
 * 2..64 ranks (non-powers of two included), and the closed forms hold. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/closed_form.h"
#include "collectives/functional.h"
#include "collectives/schedule.h"
#include "platforms/platform.h"
#include "sim/collective_sim.h"
#include "tests/testutil.h"

static int ranks_per_node_for(int n)
{
    return n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1;
}

/* Loop index = op; all algorithms of the op, all rank counts 2..64, two
 * vector lengths (a few elements per rank, and fewer elements than ranks). */
START_TEST(functional_all_algorithms)
{
    coll_op op = (coll_op)_i;
    coll_algo algos[16];
    int na = coll_algos_for(op, algos, 16);
    ck_assert_int_gt(na, 2);
    for (int a = 0; a < na; a++)
        for (int n = 2; n <= 64; n++)
            for (int v = 0; v < 2; v++) {
                size_t count = v == 0 ? (size_t)(5 * n + 3) : (size_t)(n / 2 + 1);
                if (op == OP_ALLTOALL)
                    count = (size_t)n * (v == 0 ? 3 : 1);
                coll_params p = {.op = op, .algo = algos[a], .ranks = n, .bytes = (double)count,
                                 .chunk_bytes = v == 0 ? 4 : 0, .ranks_per_node = ranks_per_node_for(n)};
                schedule s;
                tt_error err = {0};
                const char *why;
                if (!coll_algo_applies(&p, &why)) {
                    ck_assert_int_eq(schedule_build(&p, count, 8, &s, &err), TT_EINPUT);
                    ck_assert_int_ne((n & (n - 1)), 0); /* only power-of-two limits exist */
                    continue;
                }
                ck_assert_int_eq(schedule_build(&p, count, 8, &s, &err), TT_OK);
                char msg[256];
                int rc = schedule_verify(&s, msg, sizeof msg);
                ck_assert_msg(rc == 0, "%s/%s n=%d count=%zu: %s", coll_op_name(op),
                              coll_algo_name(algos[a]), n, count, msg);
                schedule_free(&s);
            }
}
END_TEST

/* The verifier itself fails on a wrong schedule: a ring allgather with one
 * stage too few leaves blocks missing. */
START_TEST(functional_detects_wrong_result)
{
    coll_params p = {.op = OP_ALLGATHER, .algo = ALGO_RING, .ranks = 6, .bytes = 60};
    schedule s;
    tt_error err = {0};
    ck_assert_int_eq(schedule_build(&p, 60, 8, &s, &err), TT_OK);
    s.stages[0].steps--;
    char msg[256];
    ck_assert_int_eq(schedule_verify(&s, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "expected"));
    schedule_free(&s);
}
END_TEST

START_TEST(names_and_factors)
{
    coll_op op;
    coll_algo al;
    ck_assert_int_eq(coll_op_parse("alltoall", &op), 0);
    ck_assert_int_eq(op, OP_ALLTOALL);
    ck_assert_int_eq(coll_algo_parse("dbtree", &al), 0);
    ck_assert_int_eq(al, ALGO_DBTREE);
    ck_assert_int_eq(coll_algo_parse("ringg", &al), -1);
    ck_assert_double_eq_tol(coll_busbw_factor(OP_ALLREDUCE, 8), 1.75, 1e-12);
    ck_assert_double_eq_tol(coll_busbw_factor(OP_ALLGATHER, 8), 0.875, 1e-12);
    ck_assert_double_eq_tol(coll_busbw_factor(OP_BROADCAST, 8), 1.0, 1e-12);
}
END_TEST


/* An uncontended star: every rank on its own full-duplex link to one switch. */
static const double LINK_LAT_S = 1e-6, LINK_BW_BPS = 12.5e9, HOST_FLOPS = 1e12;
static const double GAMMA_S_PER_BYTE = 1.0 / 50e9; /* reduction at 50 GB/s */

static platform *star(int n)
{
    switched_spec spec = {1, n, LINK_BW_BPS, LINK_LAT_S, LINK_BW_BPS, LINK_LAT_S, HOST_FLOPS};
    tt_error err = {0};
    platform *p = platform_new_switched(&spec, &err);
    ck_assert_ptr_nonnull(p);
    return p;
}

static const double CF_SIZES[] = {1e4, 1e6, 1e8};

/* Every algorithm of every op, three rank counts (odd ones for the pipelined
 * binary trees, whose closed form needs two siblings at the deepest level),
 * three sizes batched in one simulation, within 1 % of the closed form. */
START_TEST(closed_form_all_algorithms)
{
    coll_op op = (coll_op)_i;
    coll_algo algos[16];
    int na = coll_algos_for(op, algos, 16);
    for (int a = 0; a < na; a++) {
        int odd = algos[a] == ALGO_TREE || algos[a] == ALGO_DBTREE;
        const int counts[3] = {odd ? 5 : 4, odd ? 7 : 8, odd ? 9 : 16};
        for (int c = 0; c < 3; c++) {
            int n = counts[c];
            platform *p = star(n);
            coll_request rq[3];
            coll_result res[3];
            for (int k = 0; k < 3; k++) {
                coll_params prm = {.op = op, .algo = algos[a], .ranks = n, .bytes = CF_SIZES[k],
                                   .chunk_bytes = CF_SIZES[k] / 8, .ranks_per_node = 2};
                rq[k] = (coll_request){prm, GAMMA_S_PER_BYTE, 0};
            }
            tt_error err = {0};
            ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, rq, 3, res, &err) == TT_OK, "%s", err.msg);
            for (int k = 0; k < 3; k++) {
                double cf = coll_closed_form_s(&rq[k].params, 2 * LINK_LAT_S, LINK_BW_BPS, GAMMA_S_PER_BYTE);
                ck_assert_msg(res[k].time_s > 0 && fabs(res[k].time_s / cf - 1) < 0.01,
                              "%s/%s n=%d bytes=%g: simulated %.9g s, closed form %.9g s",
                              coll_op_name(op), coll_algo_name(algos[a]), n, CF_SIZES[k],
                              res[k].time_s, cf);
            }
            platform_free(p);
        }
    }
}
END_TEST

/* The rounds executor gives the message-level time (within 0.5 %) on a star. */
START_TEST(rounds_match_messages)
{
    static const coll_algo ALG[] = {ALGO_RING, ALGO_RHD, ALGO_DBTREE, ALGO_HIER};
    int n = 12;
    platform *p = star(n);
    coll_request rq[8];
    coll_result res[8];
    for (int k = 0; k < 8; k++) {
        coll_params prm = {.op = OP_ALLREDUCE, .algo = ALG[k / 2], .ranks = n, .bytes = 16e6,
                           .chunk_bytes = 1e6, .ranks_per_node = 4};
        rq[k] = (coll_request){prm, GAMMA_S_PER_BYTE, k % 2};
    }
    tt_error err = {0};
    ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, rq, 8, res, &err) == TT_OK, "%s", err.msg);
    for (int k = 0; k < 8; k += 2)
        ck_assert_msg(fabs(res[k].time_s / res[k + 1].time_s - 1) < 0.005, "%s: rounds %.9g s, messages %.9g s",
                      coll_algo_name(ALG[k / 2]), res[k].time_s, res[k + 1].time_s);
    platform_free(p);
}
END_TEST

/* auto simulates every candidate and keeps the fastest: never slower than ring or rhd. */
START_TEST(auto_picks_fastest)
{
    platform *p = star(8);
    coll_request rq[6];
    coll_result res[6];
    const double sizes[2] = {1e3, 1e8};
    for (int k = 0; k < 6; k++) {
        coll_params prm = {.op = OP_ALLREDUCE, .algo = k % 3 == 0 ? ALGO_AUTO : k % 3 == 1 ? ALGO_RING : ALGO_RD,
                           .ranks = 8, .bytes = sizes[k / 3]};
        rq[k] = (coll_request){prm, 0, 0};
    }
    tt_error err = {0};
    ck_assert_int_eq(coll_simulate(p, NETWORK_IDEAL, rq, 6, res, &err), TT_OK);
    for (int k = 0; k < 6; k += 3) {
        ck_assert(res[k].time_s <= res[k + 1].time_s * (1 + 1e-9));
        ck_assert(res[k].time_s <= res[k + 2].time_s * (1 + 1e-9));
        ck_assert_int_ne(res[k].algo, ALGO_AUTO);
    }
    /* Small messages favour few steps, large ones bandwidth-optimal schedules. */
    ck_assert_int_ne(res[0].algo, ALGO_RING);
    ck_assert_int_ne(res[3].algo, ALGO_RD);
    platform_free(p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("collectives");
    TCase *t = tcase_create("functional");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, functional_all_algorithms, 0, OP_COUNT);
    tcase_add_test(t, functional_detects_wrong_result);
    tcase_add_test(t, names_and_factors);
    suite_add_tcase(s, t);
    t = tcase_create("simgrid");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, closed_form_all_algorithms, 0, OP_COUNT);
    tcase_add_test(t, rounds_match_messages);
    tcase_add_test(t, auto_picks_fastest);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
