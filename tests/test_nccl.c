/* collectives/nccl.c: NCCL 2.19's tuning model picks what NCCL picks, with
 * its latencies, on communicators whose figures are worked out by hand. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>

#include "collectives/nccl.h"
#include "platforms/platform.h"
#include "sim/engine/nccl_plan.h"
#include "tests/testutil.h"

/* DGX A100: 8 GPUs, 12 NVLinks each at ~20 GB/s payload (nccl-tests #149). */
static nccl_comm dgx_a100(int nodes)
{
    nccl_comm c = {.ranks = 8 * nodes, .nodes = nodes, .arch = NCCL_AMPERE, .intra_nvlink = 1, .channels = 12,
                   .bus_intra_Bps = 240e9, .bus_inter_Bps = nodes > 1 ? 8 * 25e9 : 0, .cpu_amd = 1};
    return c;
}

START_TEST(small_allreduce_is_latency)
{
    nccl_comm c = dgx_a100(1);
    nccl_choice x;
    ck_assert_int_eq(nccl_choose(&c, OP_ALLREDUCE, 8, &x), 0);
    /* ring LL: 6.6 + 14 steps x 0.6 us = 15.0 us beats tree LL's 6.8 + 2 x 7 x 0.6 = 15.2. */
    ck_assert_int_eq(x.algo, NCCL_RING);
    ck_assert_int_eq(x.proto, NCCL_LL);
    ck_assert_double_eq_tol(x.latency_s, 15.0e-6, 1e-12);
    /* Two nodes: every ring step posts network work (2 us behind AMD CPUs), so
     * the tree wins: 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us. */
    c = dgx_a100(2);
    ck_assert_int_eq(nccl_choose(&c, OP_ALLREDUCE, 8, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_TREE);
    ck_assert_int_eq(x.proto, NCCL_LL);
    ck_assert_double_eq_tol(x.latency_s, 25.2e-6, 1e-12);
    nccl_choice ring;
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8, NCCL_RING, NCCL_LL, &ring), 0);
    ck_assert_double_eq_tol(ring.latency_s, (6.6 + 26 * 2.0 + 4 * 2.7) * 1e-6, 1e-12);
}
END_TEST

START_TEST(large_allreduce_is_ring_simple)
{
    nccl_comm c = dgx_a100(1);
    nccl_choice x;
    ck_assert_int_eq(nccl_choose(&c, OP_ALLREDUCE, 8e9, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_RING);
    ck_assert_int_eq(x.proto, NCCL_SIMPLE);
    /* algbw = 240 x 8 / 14; busbw = algbw x 14 / 8 = 240 GB/s. */
    ck_assert_double_eq_tol(x.algbw_Bps * coll_busbw_factor(OP_ALLREDUCE, 8), 240e9, 1);
    ck_assert_double_eq_tol(x.latency_s, (8.4 + 14 * 3.4) * 1e-6, 1e-12);
    /* LL128 costs 8 % of the line and is capped per channel: 220.8 GB/s bus. */
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_RING, NCCL_LL128, &x), 0);
    ck_assert_double_eq_tol(x.algbw_Bps * 14 / 8, 220.8e9, 1e3);
    /* Without NVLink (PCIe GPUs) NCCL keeps LL128 off. */
    c.intra_nvlink = 0;
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_RING, NCCL_LL128, &x), -1);
}
END_TEST

START_TEST(nvls_where_the_switch_reduces)
{
    /* DGX H100: 18 NVLink4 at 20 GB/s payload; NVLink SHARP in the switches. */
    nccl_comm c = {.ranks = 8, .nodes = 1, .arch = NCCL_HOPPER, .intra_nvlink = 1, .nvls = 1, .channels = 18,
                   .bus_intra_Bps = 360e9};
    nccl_choice x;
    ck_assert_int_eq(nccl_choose(&c, OP_ALLREDUCE, 8e9, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_NVLS);
    ck_assert_double_eq_tol(x.algbw_Bps, 300e9, 1e3);   /* 5/6 of the bus rate */
    ck_assert_double_eq_tol(x.latency_s, 23e-6, 1e-12); /* one NVLS step */
    ck_assert_int_eq(nccl_choose(&c, OP_ALLREDUCE, 1024, &x), 0);
    ck_assert_int_ne(x.algo, NCCL_NVLS); /* its 23 us do not pay off on small sizes */
    c.nvls = 0;
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_NVLS, NCCL_SIMPLE, &x), -1);
    /* Only rings for the other collectives; nothing for alltoall. */
    ck_assert_int_eq(nccl_choose(&c, OP_ALLGATHER, 1e9, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_RING);
    ck_assert_int_eq(nccl_choose(&c, OP_ALLTOALL, 1e9, &x), -1);
}
END_TEST

START_TEST(wire_and_schedules)
{
    ck_assert_double_eq(nccl_wire_factor(NCCL_LL), 2.0);
    ck_assert_double_eq_tol(nccl_wire_factor(NCCL_LL128), 128.0 / 120.0, 1e-15);
    ck_assert_double_eq(nccl_wire_factor(NCCL_SIMPLE), 1.0);
    ck_assert_int_eq(nccl_schedule_algo(NCCL_RING), ALGO_RING);
    ck_assert_int_eq(nccl_schedule_algo(NCCL_TREE), ALGO_DBTREE);
    ck_assert_str_eq(nccl_proto_name(NCCL_LL128), "LL128");
    ck_assert_str_eq(nccl_algo_name(NCCL_NVLS), "nvls");
}
END_TEST

static platform *load(const char *name, int nodes)
{
    platform_options o = {.nodes = nodes};
    tt_error err = {0};
    platform *p = platform_load(name, &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    return p;
}

/* The communicator read off the platforms NCCL would see. */
START_TEST(communicators_of_platforms)
{
    nccl_comm c;
    platform *p = load("dgx-a100", 2);
    ck_assert_int_eq(nccl_comm_of(p, 16, &c), 0);
    ck_assert_int_eq(c.nodes, 2);
    ck_assert_int_eq(c.arch, NCCL_AMPERE);
    ck_assert_int_eq(c.intra_nvlink, 1);
    ck_assert_int_eq(c.channels, 12);          /* 12 NVLinks into the NVSwitch crossbar */
    ck_assert_double_eq(c.bus_intra_Bps, 300e9);
    ck_assert_double_eq(c.bus_inter_Bps, 8 * 25e9); /* 8 HDR NICs */
    ck_assert_int_eq(c.nvls, 0);
    ck_assert_int_eq(c.cpu_amd, 1);             /* EPYC 7742 */
    ck_assert_int_eq(nccl_comm_of(p, 8, &c), 0);
    ck_assert_int_eq(c.nodes, 1);
    platform_free(p);
    p = load("dgx-h100", 1);
    ck_assert_int_eq(nccl_comm_of(p, 8, &c), 0);
    ck_assert_int_eq(c.arch, NCCL_HOPPER);
    ck_assert_int_eq(c.nvls, 1); /* NVSwitch gen3 reduces */
    ck_assert_int_eq(c.channels, 18);
    platform_free(p);
    p = load("tencent-p40", 2); /* PCIe GPUs: no NVLink, no LL128 */
    ck_assert_int_eq(nccl_comm_of(p, 16, &c), 0);
    ck_assert_int_eq(c.intra_nvlink, 0);
    ck_assert_int_eq(c.arch, NCCL_VOLTA);
    platform_free(p);
    p = load("tpu-v3-pod", 4); /* not a CUDA GPU */
    ck_assert_int_eq(nccl_comm_of(p, 16, &c), -1);
    platform_free(p);
}
END_TEST

/* The plan: the schedule NCCL's pick runs as, the bytes on the wire, and the
 * software latency on top of the links' own. */
START_TEST(plans)
{
    platform *p = load("dgx-a100", 1);
    nccl_plan plan;
    coll_params small = {.op = OP_ALLREDUCE, .ranks = 8, .bytes = 8};
    ck_assert_int_eq(nccl_plan_make(p, &small, &plan), 0);
    char name[32];
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "ring/LL");
    ck_assert_int_eq(plan.params.algo, ALGO_RING);
    ck_assert_double_eq(plan.params.bytes, 16); /* LL: a flag per 4 bytes */
    /* 15 us of NCCL latency, of which the 14 ring steps over GPU-switch-GPU (1 us each) are simulated. */
    ck_assert_double_eq_tol(nccl_timing_total_s(&plan.timing, 14e-6) - 14e-6, 15e-6 - 14 * 1e-6, 1e-9);
    coll_params big = {.op = OP_ALLREDUCE, .ranks = 8, .bytes = 8e9};
    ck_assert_int_eq(nccl_plan_make(p, &big, &plan), 0);
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "ring/Simple");
    ck_assert_double_eq(plan.params.bytes, 8e9);
    /* The pipelined reduction hides behind the wire: 1.9e-12 s/B (A100 HBM) < 1/300e9; a slower one shows the rest. */
    ck_assert_int_eq(nccl_plan_make_reducing(p, &big, 3 / 1555e9, &plan), 0);
    ck_assert_double_eq(plan.reduce_s_per_byte, 0);
    ck_assert_int_eq(nccl_plan_make_reducing(p, &big, 1e-11, &plan), 0);
    ck_assert_double_eq_tol(plan.reduce_s_per_byte, 1e-11 - 1 / 300e9, 1e-20);
    coll_params a2a = {.op = OP_ALLTOALL, .ranks = 8, .bytes = 8e9};
    ck_assert_int_eq(nccl_plan_make(p, &a2a, &plan), -1);
    platform_free(p);
    p = load("dgx-h100", 1);
    ck_assert_int_eq(nccl_plan_make(p, &big, &plan), 0);
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "nvls/Simple");
    ck_assert_int_eq(plan.switch_reduces, 1);
    ck_assert_double_eq_tol(plan.params.bytes, 8e9 * 9.0 / 14.0, 1); /* (n+1)/n against 2(n-1)/n */
    platform_free(p);
    /* Across DGX A100 nodes a ring per NIC (8 channels). */
    p = load("dgx-a100", 4);
    coll_params wide = {.op = OP_ALLREDUCE, .ranks = 32, .bytes = 1e9};
    ck_assert_int_eq(nccl_plan_make(p, &wide, &plan), 0);
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "ring/Simple");
    ck_assert_int_eq(plan.params.algo, ALGO_RING);
    ck_assert_int_eq(plan.params.channels, 8);
    platform_free(p);
    /* DGX-1: the ring follows the hybrid cube mesh's NVLinks; 4 EDR NICs, 4 channels. */
    p = load("dgx1-v100", 2);
    wide.ranks = 16;
    ck_assert_int_eq(nccl_plan_make(p, &wide, &plan), 0);
    ck_assert_int_eq(plan.params.channels, 4);
    /* 4 rings over direct NVLinks, never two on one link unit in one direction (6 units per GPU). */
    int load[8][8] = {{0}};
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 8; k++) {
            int a = plan.params.node_order[j][k], b = plan.params.node_order[j][(k + 1) % 8];
            ck_assert_int_eq(platform_hops(p, a, b), 1);
            load[a][b]++;
        }
    const char *cls;
    for (int j = 0; j < 4; j++) { /* ring j enters and leaves a node by NIC j, as NCCL's channel j */
        char want[8];
        snprintf(want, sizeof want, "nic%d", j);
        ck_assert_str_eq(platform_rank_exit(p, plan.params.node_order[j][0]), want);
        ck_assert_str_eq(platform_rank_exit(p, plan.params.node_order[j][7]), want);
    }
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            ck_assert(load[a][b] == 0 || load[a][b] <= platform_rank_links(p, a, b, &cls));
    /* One DGX-1: 6 NVLink units per GPU hold 6 rings of their own, as NCCL's 6 channels. */
    coll_params one = {.op = OP_ALLREDUCE, .ranks = 8, .bytes = 1e9};
    ck_assert_int_eq(nccl_plan_make(p, &one, &plan), 0);
    ck_assert_int_eq(plan.params.channels, 6);
    platform_free(p);
}
END_TEST

/* What a request for nccl becomes: NCCL's plan on GPUs, the torus schedule on a TPU slice, auto elsewhere. */
/* NCCL's ring latency in the simulated time: a step's latency is paid where
 * a slice waits for it, hidden under the later slices of a large block;
 * the launch is always paid; the links' latency is replaced, not added to. */
START_TEST(ring_latency_pipelines)
{
    /* 3 nodes of 8: 46 steps, 6 across the network (NCCL's plateau x 1.4). */
    nccl_timing t = {.on = 1, .latency_s = 1.4 * (8.4 + 40 * 3.4 + 6 * 14) * 1e-6, .hw_s = 26e-6,
                     .launch_s = 1.4 * 8.4e-6, .step_intra_s = 1.4 * 3.4e-6, .step_inter_s = 1.4 * 14e-6,
                     .steps = 46, .inter_steps = 6, .chunks = 1, .slices = 2};
    /* Large: 60 us per step, a slice of 30 us hides 19.6 us: launch only. */
    ck_assert_double_eq_tol(nccl_timing_total_s(&t, 26e-6 + 46 * 60e-6), 46 * 60e-6 + 1.4 * 8.4e-6, 1e-12);
    /* Small: every step's latency shows, NCCL's whole figure in place of the links'. */
    ck_assert_double_eq_tol(nccl_timing_total_s(&t, 26e-6 + 46e-9), 46e-9 + t.latency_s, 1e-7);
    /* In between: an inter-node step of 20 us hides 10 us of its 19.6. */
    double got = nccl_timing_total_s(&t, 26e-6 + 46 * 20e-6);
    ck_assert_double_eq_tol(got, 46 * 20e-6 + 1.4 * 8.4e-6 + 6 * (19.6e-6 - 10e-6), 1e-12);
    /* One slice per step (LL): NCCL's model, latency + transfers. */
    t.slices = 1;
    ck_assert_double_eq_tol(nccl_timing_total_s(&t, 26e-6 + 46 * 60e-6), 46 * 60e-6 + t.latency_s, 1e-12);
    /* The links' latency is a floor: NCCL's smaller figure does not undercut it. */
    t.latency_s = t.launch_s = t.step_intra_s = t.step_inter_s = 0;
    ck_assert_double_eq_tol(nccl_timing_total_s(&t, 26e-6 + 46e-9), 26e-6 + 46e-9, 1e-12);
    /* Not a ring (tree, NVLS, chains): NCCL's latency beyond the links'. */
    nccl_timing tree = {.on = 1, .latency_s = 25e-6, .hw_s = 5e-6};
    ck_assert_double_eq_tol(nccl_timing_total_s(&tree, 1e-3), 1e-3 + 20e-6, 1e-12);
}
END_TEST

START_TEST(resolve_requests)
{
    platform *p = load("dgx-a100", 1);
    coll_params prm = {.op = OP_ALLREDUCE, .algo = ALGO_NCCL, .ranks = 8, .bytes = 8};
    double gamma = 3 / 1555e9;
    nccl_timing overhead;
    char name[24];
    nccl_resolve(p, &prm, &gamma, &overhead, name, sizeof name);
    ck_assert_str_eq(name, "ring/LL");
    ck_assert_int_eq(prm.algo, ALGO_RING);
    ck_assert_double_eq_tol(nccl_timing_total_s(&overhead, 14e-6), 15e-6, 1e-9); /* 14 steps of 1 us simulated */
    ck_assert_double_eq(gamma, 0);
    platform_free(p);
    p = load("tpu-v3-pod", 8);
    prm = (coll_params){.op = OP_ALLREDUCE, .algo = ALGO_NCCL, .ranks = 32, .bytes = 1e6, .dims = {8, 4}};
    nccl_resolve(p, &prm, &gamma, &overhead, name, sizeof name);
    ck_assert_int_eq(prm.algo, ALGO_TORUS);
    ck_assert_str_eq(name, "");
    ck_assert_int_eq(overhead.on, 0);
    prm = (coll_params){.op = OP_ALLGATHER, .algo = ALGO_NCCL, .ranks = 32, .bytes = 1e6};
    nccl_resolve(p, &prm, &gamma, &overhead, name, sizeof name);
    ck_assert_int_eq(prm.algo, ALGO_AUTO);
    prm.algo = ALGO_RING; /* other requests untouched */
    nccl_resolve(p, &prm, &gamma, &overhead, name, sizeof name);
    ck_assert_int_eq(prm.algo, ALGO_RING);
    platform_free(p);
}
END_TEST

static json_t *collective_json(const char *args)
{
    static char out[65536];
    char cmd[512];
    snprintf(cmd, sizeof cmd, "collective %s --json", args);
    int rc = tu_run_ttasim(cmd, out, sizeof out);
    ck_assert_msg(rc == 0, "%s: %s", cmd, out);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "%s: %s", je.text, out);
    return doc;
}

static json_t *result(json_t *doc, size_t i)
{
    return json_array_get(json_object_get(doc, "results"), i);
}

/* 'ttasim collective' runs nccl by default: NCCL's pick and latency on GPUs
 * (busbw of a DGX A100 near nccl-tests' 230 GB/s; an 8-byte allreduce across
 * two nodes tens of microseconds, as NCCL's is), the torus on a TPU slice. */
START_TEST(cli_default_is_nccl)
{
    json_t *doc = collective_json("--platform dgx-a100 --bytes 8,8G");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 0), "nccl")), "ring/LL");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 1), "nccl")), "ring/Simple");
    double busbw = json_number_value(json_object_get(result(doc, 1), "busbw_Bps"));
    ck_assert_msg(busbw > 0.85 * 230e9 && busbw < 1.15 * 230e9, "busbw %g", busbw);
    json_decref(doc);
    doc = collective_json("--platform dgx-a100 --nodes 2 --bytes 8");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 0), "nccl")), "tree/LL");
    double t = json_number_value(json_object_get(result(doc, 0), "time_s"));
    ck_assert_msg(t > 20e-6 && t < 40e-6, "8 B over two nodes: %g s", t);
    json_decref(doc);
    doc = collective_json("--platform tpu-v3-pod --nodes 8 --bytes 1M");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 0), "algo")), "torus");
    ck_assert(json_is_null(json_object_get(result(doc, 0), "nccl")));
    json_decref(doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nccl");
    TCase *t = tcase_create("tuning");
    tcase_set_timeout(t, 60); /* the CLI and platform cases fork simulations: a loaded machine needs more than 4 s */
    tcase_add_test(t, small_allreduce_is_latency);
    tcase_add_test(t, large_allreduce_is_ring_simple);
    tcase_add_test(t, nvls_where_the_switch_reduces);
    tcase_add_test(t, wire_and_schedules);
    tcase_add_test(t, communicators_of_platforms);
    tcase_add_test(t, plans);
    tcase_add_test(t, ring_latency_pipelines);
    tcase_add_test(t, resolve_requests);
    tcase_add_test(t, cli_default_is_nccl);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
