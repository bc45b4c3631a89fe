/* sim/replay/layout.c: parallel layouts and their communicators, against
 * Megatron-Core's own worked example and by hand; a layout's groups timed
 * all at once on the engine. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "platforms/platform.h"
#include "sim/engine/collective_sim.h"
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

/* Megatron-Core's MoE degrees: expert carved out of the dense data ranks.
 * Experts split by the tensor group (expert_tensor = tensor): on 16 ranks,
 * tensor 2 x data 8 with expert 4 is grid expert 4 x data 2, the expert
 * groups 4 ranks 2 apart. Experts whole on each rank (expert_tensor 1): the
 * expert group takes the tensor ranks first, tensor 2 x grid expert 2. */
START_TEST(experts_carved_out_of_data)
{
    int degree[LAYOUT_DIMS] = {[LAYOUT_TENSOR] = 2, [LAYOUT_EXPERT] = 4};
    layout l;
    tt_error err = {0};
    ck_assert_int_eq(layout_make_experts(degree, 0, NULL, 16, "$.parallel", &l, &err), TT_OK);
    ck_assert_int_eq(l.degree[LAYOUT_EXPERT], 4);
    ck_assert_int_eq(l.degree[LAYOUT_DATA], 2);
    ck_assert_uint_eq(l.expert_dims, LAYOUT_DIM(LAYOUT_EXPERT));
    expect_group(&l, l.expert_dims, 0, (int[]){0, 2, 4, 6}, 4);
    ck_assert_int_eq(layout_make_experts(degree, 1, NULL, 16, "$.parallel", &l, &err), TT_OK);
    ck_assert_int_eq(l.degree[LAYOUT_EXPERT], 2);
    ck_assert_int_eq(l.degree[LAYOUT_DATA], 4);
    ck_assert_int_eq(layout_group_size(&l, l.expert_dims), 4);
    expect_group(&l, l.expert_dims, 1, (int[]){4, 5, 6, 7}, 4);
    /* the dense replicas are still data 8 */
    ck_assert_int_eq(layout_group_size(&l, LAYOUT_DIM(LAYOUT_DATA) | LAYOUT_DIM(LAYOUT_EXPERT)), 8);
    degree[LAYOUT_EXPERT] = 3;
    ck_assert_int_eq(layout_make_experts(degree, 1, NULL, 16, "$.parallel", &l, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "$.parallel.expert: 3 expert-parallel ranks"));
    degree[LAYOUT_EXPERT] = 16;
    ck_assert_int_eq(layout_make_experts(degree, 0, NULL, 16, "$.parallel", &l, &err), TT_EINPUT);
}
END_TEST

/* Tensor 8 inside each of 2 nodes, data 2 across them: the data-parallel
 * groups are {g, g + 8}, one rank per node, all 8 allreducing 64 MB at once
 * (ring, ideal network, no reduction cost): two steps of 32 MB across the
 * network. On DGX A100 every GPU has its own NIC and rail: 8 groups take one
 * group's time. On HGX A100 with 4 NICs, GPUs 2k and 2k + 1 share NIC k:
 * each step's 32 MB goes at half the rate, T8 = T1 + 2 x 32 MB / rate. */
START_TEST(data_groups_share_nics)
{
    layout l;
    tt_error err = {0};
    ck_assert_int_eq(layout_make((int[LAYOUT_DIMS]){[LAYOUT_TENSOR] = 8}, NULL, 16, "$.parallel", &l, &err), TT_OK);
    unsigned dp = LAYOUT_DIM(LAYOUT_DATA);
    int members[16];
    for (int g = 0; g < layout_groups(&l, dp); g++)
        layout_group(&l, dp, g, members + 2 * g);
    static const char *const PLATFORMS[] = {"dgx-a100", "hgx-a100-4hdr"};
    for (int k = 0; k < 2; k++) {
        platform_options o = {.nodes = 2};
        platform *p = platform_load(PLATFORMS[k], &o, &err);
        ck_assert_msg(p != NULL, "%s", err.msg);
        coll_params prm = {.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 2, .bytes = 64e6};
        coll_request rq[2] = {coll_request_on(p, &prm, members, 1), coll_request_on(p, &prm, members, 8)};
        ck_assert_int_eq(rq[1].params.ranks_per_node, 1);
        ck_assert_int_eq(rq[1].replicas, 8);
        rq[0].reduce_s_per_byte = rq[1].reduce_s_per_byte = 0;
        coll_result r[2];
        ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, rq, 2, r, &err) == TT_OK, "%s", err.msg);
        double lat, bw;
        platform_path(p, 0, 8, &lat, &bw);
        double want = r[0].time_s + (k == 1 ? 2 * 32e6 / bw : 0);
        ck_assert_msg(fabs(r[1].time_s - want) < 1e-9 * want, "%s: one group %.9g s, eight %.9g s, expected %.9g s",
                      PLATFORMS[k], r[0].time_s, r[1].time_s, want);
        platform_free(p);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *t = tcase_create("layout");
    tcase_add_test(t, megatron_example);
    tcase_add_test(t, order_and_errors);
    tcase_add_test(t, experts_carved_out_of_data);
    tcase_add_test(t, data_groups_share_nics);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? 1 : 0;
}
