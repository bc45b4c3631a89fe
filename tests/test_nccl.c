/* collectives/nccl.c and sim/engine/nccl_plan.c: NCCL's topology search
 * outcome and tuning model pick what NCCL picks, with its latencies and
 * bandwidths, on nodes whose figures are worked out by hand here; the plan
 * runs the pick as NCCL's channels and pipelines; NCCL_ALGO/NCCL_PROTO force
 * it; the default's time grows with size and node count on every GPU platform. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collectives/nccl.h"
#include "platforms/platform.h"
#include "sim/engine/nccl_plan.h"
#include "tests/testutil.h"

/* DGX A100: 8 GPUs, 12 NVLinks each (NCCL counts 20 GB/s a link) into
 * NVSwitches, a 200G HDR NIC per GPU behind PCIe Gen4 (NCCL's 24 GB/s), EPYC. */
static nccl_comm dgx_a100(int nodes)
{
    nccl_node nd = {.gpus = 8, .arch = NCCL_AMPERE, .sm = 80, .nvlinks = 12, .nvswitch = 1, .pair_nvlinks = 12,
                    .pcie_GBps = 24, .nics = 8, .nic_GBps = 25, .cpu_amd = 1};
    nccl_comm c;
    nccl_search(&nd, 8 * nodes, nodes, &c);
    return c;
}

/* DGX H100: 18 NVLink4 (20.6 GB/s each) into NVSwitches that reduce, a 400G
 * NDR NIC per GPU behind PCIe Gen5 (48 GB/s), Xeon. */
static nccl_comm dgx_h100(int nodes, int sharp)
{
    nccl_node nd = {.gpus = 8, .arch = NCCL_HOPPER, .sm = 90, .nvlinks = 18, .nvswitch = 1, .pair_nvlinks = 18, .nvls = 1,
                    .pcie_GBps = 48, .nics = 8, .nic_GBps = 50, .collnet = sharp};
    nccl_comm c;
    nccl_search(&nd, 8 * nodes, nodes, &c);
    return c;
}

/* The search: the highest rate of NCCL's array the paths carry, as many
 * channels as the links hold, fast channels split in two. */
START_TEST(search_outcome)
{
    nccl_comm c = dgx_a100(1);
    /* 240 GB/s per GPU: 6 rings at 40, duplicated to 12 at 20. */
    ck_assert_int_eq(c.graph[NCCL_RING].channels, 12);
    ck_assert_double_eq(c.graph[NCCL_RING].bw_intra_GBps, 20);
    ck_assert_int_eq(c.graph[NCCL_NVLS].channels, 0); /* no NVLink SHARP on A100 */
    c = dgx_a100(4);
    /* Across nodes: min(NIC 25, PCIe 24) -> 24, one ring per NIC; not split below 25. */
    ck_assert_int_eq(c.graph[NCCL_RING].channels, 8);
    ck_assert_double_eq(c.graph[NCCL_RING].bw_inter_GBps, 24);
    ck_assert_int_eq(c.graph[NCCL_TREE].simple_tree, 0);
    c = dgx_h100(1, 0);
    /* 370.8 GB/s: 6 rings at 60 -> 12 at 30; NVLS 8 heads at 40 (8 x 50 > 370.8). */
    ck_assert_int_eq(c.graph[NCCL_RING].channels, 12);
    ck_assert_double_eq(c.graph[NCCL_RING].bw_intra_GBps, 30);
    ck_assert_int_eq(c.graph[NCCL_NVLS].channels, 8);
    ck_assert_double_eq(c.graph[NCCL_NVLS].bw_intra_GBps, 40);
    ck_assert_int_eq(c.graph[NCCL_NVLS_TREE].channels, 0); /* one node */
    c = dgx_h100(16, 0);
    /* 48 per NIC; 8 channels also fit the GPUs' links (370.8 x 8/7 / 48 = 8.8); Hopper keeps 48 < 50 whole. */
    ck_assert_int_eq(c.graph[NCCL_RING].channels, 8);
    ck_assert_double_eq(c.graph[NCCL_RING].bw_inter_GBps, 48);
    ck_assert_int_eq(c.graph[NCCL_TREE].simple_tree, 1);
    ck_assert_int_eq(c.graph[NCCL_NVLS_TREE].channels, 8);
    ck_assert_int_eq(c.graph[NCCL_NVLS].channels, 0);           /* NVLS across nodes needs CollNet */
    ck_assert_int_eq(c.graph[NCCL_COLLNET_DIRECT].channels, 0); /* no SHARP */
    c = dgx_h100(16, 1);
    ck_assert_int_eq(c.graph[NCCL_NVLS].channels, 8);
    ck_assert_int_eq(c.graph[NCCL_COLLNET_DIRECT].channels, 8);
    ck_assert_int_eq(c.graph[NCCL_COLLNET_CHAIN].channels, 8);
}
END_TEST

START_TEST(small_allreduce_is_latency)
{
    nccl_comm c = dgx_a100(1);
    nccl_choice x;
    ck_assert_int_eq(nccl_choose(&c, 0, 0, OP_ALLREDUCE, 8, &x), 0);
    /* ring LL: 6.6 + 14 steps x 0.6 us = 15.0 us beats tree LL's 6.8 + 2 x 7 x 0.6 = 15.2. */
    ck_assert_int_eq(x.algo, NCCL_RING);
    ck_assert_int_eq(x.proto, NCCL_LL);
    ck_assert_double_eq_tol(x.latency_s, 15.0e-6, 1e-12);
    /* Two nodes: every ring step posts network work (2 us behind AMD CPUs), so
     * the tree wins: 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us. */
    c = dgx_a100(2);
    ck_assert_int_eq(nccl_choose(&c, 0, 0, OP_ALLREDUCE, 8, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_TREE);
    ck_assert_int_eq(x.proto, NCCL_LL);
    ck_assert_double_eq_tol(x.latency_s, 25.2e-6, 1e-12);
    nccl_choice ring;
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8, NCCL_RING, NCCL_LL, &ring), 0);
    /* 30 steps, 2 of them across the network */
    ck_assert_double_eq_tol(ring.latency_s, (6.6 + 28 * 2.0 + 2 * 2.7) * 1e-6, 1e-12);
}
END_TEST

START_TEST(large_allreduce)
{
    nccl_comm c = dgx_a100(1);
    nccl_choice x;
    ck_assert_int_eq(nccl_choose(&c, 0, 0, OP_ALLREDUCE, 8e9, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_RING);
    ck_assert_int_eq(x.proto, NCCL_SIMPLE);
    /* busbw = 12 channels x 20 = 240 GB/s, algbw 240 x 8 / 14. */
    ck_assert_double_eq_tol(x.algbw_Bps * coll_busbw_factor(OP_ALLREDUCE, 8), 240e9, 1);
    ck_assert_double_eq_tol(x.latency_s, (8.4 + 14 * 3.4) * 1e-6, 1e-12);
    /* LL128 costs 8 % of the line: 220.8 GB/s bus. */
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_RING, NCCL_LL128, &x), 0);
    ck_assert_double_eq_tol(x.algbw_Bps * 14 / 8, 220.8e9, 1e3);
    /* Without NVLink (PCIe GPUs) NCCL keeps LL128 off, unless NCCL_PROTO names it. */
    c.node.nvlinks = 0;
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_RING, NCCL_LL128, &x), -1);
    ck_assert_int_eq(nccl_choose(&c, 0, 1u << NCCL_LL128, OP_ALLREDUCE, 8e9, &x), 0);
    ck_assert_int_eq(x.proto, NCCL_LL128);
    /* Across nodes LL128 needs a GPU-NIC path that stays off the CPU (NCCL's typeInter <= PXB):
     * 2 DGX A100 run it, the same nodes with their NICs behind the CPU do not, unless named. */
    c = dgx_a100(2);
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 64e6, NCCL_RING, NCCL_LL128, &x), 0);
    c.node.nic_via_cpu = 1;
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 64e6, NCCL_RING, NCCL_LL128, &x), -1);
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 64e6, NCCL_TREE, NCCL_LL128, &x), -1);
    ck_assert_int_eq(nccl_choose(&c, 0, 1u << NCCL_LL128, OP_ALLREDUCE, 64e6, &x), 0);
    ck_assert_int_eq(x.proto, NCCL_LL128);
    c = dgx_a100(1); /* inside one node no NIC is crossed */
    c.node.nic_via_cpu = 1;
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 64e6, NCCL_RING, NCCL_LL128, &x), 0);
    /* 2 DGX H100: ring at bwIntra, 8 x 48 = 384 busBw, algbw x 16/30; Simple's plateau 1.4 x. */
    c = dgx_h100(2, 0);
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_RING, NCCL_SIMPLE, &x), 0);
    ck_assert_double_eq_tol(x.algbw_Bps, 384e9 * 16 / 30, 1e3);
    ck_assert_double_eq_tol(x.latency_s, 1.4 * (8.4 + 28 * 3.4 + 2 * 14) * 1e-6, 1e-12);
    /* ... and NVLS tree: min(40, 48) x 8 heads x 5/6; the pick. */
    ck_assert_int_eq(nccl_choose(&c, 0, 0, OP_ALLREDUCE, 8e9, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_NVLS_TREE);
    ck_assert_double_eq_tol(x.algbw_Bps, 320e9 * 5 / 6, 1e3);
    ck_assert_double_eq_tol(x.latency_s, (25 + 2 * 1 * 14) * 1e-6, 1e-12);
    /* 16 nodes: the tree at bwInter, 8 x 48 x 0.92 capped at 8 x 36, x 0.85 (one GPU's NIC
     * carries it all on Hopper), x 0.5; NVLS tree at min(40, 48 / 2). */
    c = dgx_h100(16, 0);
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_TREE, NCCL_SIMPLE, &x), 0);
    ck_assert_double_eq_tol(x.algbw_Bps, 288e9 * 0.85 * 0.5, 1e3);
    ck_assert_double_eq_tol(x.latency_s, (8.4 + 2 * (7 * 4.0 + 4 * 14)) * 1e-6, 1e-12);
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_NVLS_TREE, NCCL_SIMPLE, &x), 0);
    ck_assert_double_eq_tol(x.algbw_Bps, 8 * 24e9 * 5 / 6, 1e3);
    /* The tree's kernels move at most NCCL's rate for them; a Simple ring's rate is the wire's. */
    ck_assert_double_eq(nccl_kernel_cap_Bps(&x), 0);
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_TREE, NCCL_SIMPLE, &x), 0);
    ck_assert_double_eq(nccl_kernel_cap_Bps(&x), x.algbw_Bps);
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_RING, NCCL_SIMPLE, &x), 0);
    ck_assert_double_eq(nccl_kernel_cap_Bps(&x), 0);
}
END_TEST

START_TEST(nvls_and_collnet)
{
    nccl_comm c = dgx_h100(1, 0);
    nccl_choice x;
    ck_assert_int_eq(nccl_choose(&c, 0, 0, OP_ALLREDUCE, 8e9, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_NVLS);
    ck_assert_double_eq_tol(x.algbw_Bps, 320e9 * 5 / 6, 1e3); /* 8 heads x 40, 5/6 */
    ck_assert_double_eq_tol(x.latency_s, 25e-6, 1e-12);       /* one NVLS step */
    ck_assert_int_eq(nccl_choose(&c, 0, 0, OP_ALLREDUCE, 1024, &x), 0);
    ck_assert_int_ne(x.algo, NCCL_NVLS); /* its 25 us do not pay off on small sizes */
    nccl_node plain = c.node;
    plain.nvls = 0;
    nccl_search(&plain, 8, 1, &c);
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_NVLS, NCCL_SIMPLE, &x), -1);
    /* Rings for allgather here (411 GB/s of algbw against NVLS's 320); nothing for alltoall. */
    ck_assert_int_eq(nccl_choose(&c, 0, 0, OP_ALLGATHER, 1e9, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_RING);
    ck_assert_int_eq(nccl_choose(&c, 0, 0, OP_ALLTOALL, 1e9, &x), -1);
    /* SHARP (NCCL_COLLNET_ENABLE): NVLS across nodes at min(40, 48) per head beats everything at 8 GB. */
    c = dgx_h100(16, 1);
    ck_assert_int_eq(nccl_choose(&c, 0, 0, OP_ALLREDUCE, 8e9, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_NVLS);
    ck_assert_double_eq_tol(x.latency_s, (25 + 18) * 1e-6, 1e-12);
    /* CollNet direct: 8 x 48 x 0.85 (Hopper), a NIC per GPU, x 0.5; latency 2 x (1 x 3.7 + 7 x 0.4) + 31. */
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_COLLNET_DIRECT, NCCL_SIMPLE, &x), 0);
    ck_assert_double_eq_tol(x.algbw_Bps, 384e9 * 0.85 * 0.5, 1e3);
    ck_assert_double_eq_tol(x.latency_s, (2 * (3.7 + 7 * 0.4) + 31) * 1e-6, 1e-12);
    ck_assert_int_eq(nccl_predict(&c, OP_ALLREDUCE, 8e9, NCCL_COLLNET_DIRECT, NCCL_LL, &x), -1);
}
END_TEST

/* NCCL_ALGO / NCCL_PROTO: NCCL's list syntax, case-insensitive, ^ for all but. */
START_TEST(environment_masks)
{
    unsigned m;
    const char *bad;
    int len;
    ck_assert_int_eq(nccl_parse_algos("Ring", &m, &bad, &len), 0);
    ck_assert_uint_eq(m, 1u << NCCL_RING);
    ck_assert_int_eq(nccl_parse_algos("^NVLS,nvlstree", &m, &bad, &len), 0);
    ck_assert_uint_eq(m, (1u << NCCL_TREE) | (1u << NCCL_RING) | (1u << NCCL_COLLNET_DIRECT) | (1u << NCCL_COLLNET_CHAIN));
    ck_assert_int_eq(nccl_parse_algos("tree,rign", &m, &bad, &len), -1);
    ck_assert_int_eq(len, 4);
    ck_assert_int_eq(strncmp(bad, "rign", 4), 0);
    ck_assert_int_eq(nccl_parse_protos("LL128,simple", &m, &bad, &len), 0);
    ck_assert_uint_eq(m, (1u << NCCL_LL128) | (1u << NCCL_SIMPLE));
    nccl_comm c = dgx_h100(1, 0);
    nccl_choice x;
    ck_assert_int_eq(nccl_choose(&c, 1u << NCCL_RING, 0, OP_ALLREDUCE, 8e9, &x), 0);
    ck_assert_int_eq(x.algo, NCCL_RING);
    ck_assert_int_eq(nccl_choose(&c, 1u << NCCL_RING, 1u << NCCL_LL, OP_ALLREDUCE, 8e9, &x), 0);
    ck_assert_int_eq(x.proto, NCCL_LL);
    /* nothing left that runs a broadcast */
    ck_assert_int_eq(nccl_choose(&c, 1u << NCCL_NVLS, 0, OP_BROADCAST, 8e9, &x), -1);
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

/* The node read off the platforms NCCL would see. */
START_TEST(communicators_of_platforms)
{
    nccl_comm c;
    platform *p = load("dgx-a100", 2);
    ck_assert_int_eq(nccl_comm_of(p, NULL, 16, 0, &c), 0);
    ck_assert_int_eq(c.nodes, 2);
    ck_assert_int_eq(c.node.gpus, 8);
    ck_assert_int_eq(c.node.arch, NCCL_AMPERE);
    ck_assert_int_eq(c.node.nvlinks, 12); /* 12 NVLinks into the NVSwitch crossbar */
    ck_assert_int_eq(c.node.nvswitch, 1);
    ck_assert_int_eq(c.node.nics, 8);     /* 8 HDR NICs */
    ck_assert_double_eq(c.node.nic_GBps, 25);
    ck_assert_double_eq(c.node.pcie_GBps, 24); /* Gen4's 32 GB/s as NCCL counts it */
    ck_assert_int_eq(c.node.nvls, 0);
    ck_assert_int_eq(c.node.cpu_amd, 1); /* EPYC 7742 */
    ck_assert_int_eq(nccl_comm_of(p, NULL, 8, 0, &c), 0);
    ck_assert_int_eq(c.nodes, 1);
    platform_free(p);
    p = load("dgx-h100", 2);
    ck_assert_int_eq(nccl_comm_of(p, NULL, 16, 0, &c), 0);
    ck_assert_int_eq(c.node.arch, NCCL_HOPPER);
    ck_assert_int_eq(c.node.nvls, 1); /* NVSwitch gen3 reduces */
    ck_assert_int_eq(c.node.nvlinks, 18);
    ck_assert_int_eq(c.node.collnet, 0);
    ck_assert_int_eq(nccl_comm_of(p, NULL, 16, 1, &c), 0); /* NCCL_COLLNET_ENABLE on a SHARP fabric */
    ck_assert_int_eq(c.node.collnet, platform_fabric_sharp(p));
    platform_free(p);
    p = load("dgx1-v100", 2); /* hybrid cube mesh: 6 NVLinks per GPU, at most 2 to one neighbour */
    ck_assert_int_eq(nccl_comm_of(p, NULL, 16, 0, &c), 0);
    ck_assert_int_eq(c.node.nvswitch, 0);
    ck_assert_int_eq(c.node.nvlinks, 6);
    ck_assert_int_eq(c.node.pair_nvlinks, 2);
    ck_assert_int_eq(c.node.nic_via_cpu, 0); /* NICs on the GPUs' PCIe switches (PXB) */
    platform_free(p);
    p = load("polaris", 2); /* 4 A100 linked pairwise, 2 NICs on the CPU's root ports (PHB) */
    ck_assert_int_eq(nccl_comm_of(p, NULL, 8, 0, &c), 0);
    ck_assert_int_eq(c.node.nvswitch, 0);
    ck_assert_int_eq(c.node.nvlinks, 12);
    ck_assert_int_eq(c.node.pair_nvlinks, 4);
    ck_assert_int_eq(c.node.nics, 2);
    ck_assert_int_eq(c.node.nic_via_cpu, 1);
    ck_assert_int_eq(c.node.cpu_amd, 1);
    ck_assert_int_eq(c.graph[NCCL_RING].channels, 2); /* one per NIC at 24 GB/s */
    ck_assert_double_eq(c.graph[NCCL_RING].bw_inter_GBps, 24);
    platform_free(p);
    p = load("tencent-p40", 2); /* PCIe GPUs: no NVLink, no LL128 */
    ck_assert_int_eq(nccl_comm_of(p, NULL, 16, 0, &c), 0);
    ck_assert_int_eq(c.node.nvlinks, 0);
    ck_assert(c.node.pcie_GBps > 0);
    ck_assert_int_eq(c.node.arch, NCCL_VOLTA);
    platform_free(p);
    p = load("tpu-v3-pod", 4); /* not a CUDA GPU */
    ck_assert_int_eq(nccl_comm_of(p, NULL, 16, 0, &c), -1);
    platform_free(p);
    /* GB200 NVL72: an allreduce over the rack's 72 GPUs stays in NVLink (one
     * node, no NIC); NVLS over more than 16 GPUs of a node has no schedule,
     * so it runs as NCCL's ring. Blackwell's NVLS reduce-scatter too. */
    p = load("gb200-nvl72", 2);
    ck_assert_int_eq(nccl_comm_of(p, NULL, 72, 0, &c), 0);
    ck_assert_int_eq(c.nodes, 1);
    ck_assert_int_eq(c.node.gpus, 72);
    ck_assert_int_eq(c.node.arch, NCCL_BLACKWELL);
    ck_assert_int_eq(c.node.nvswitch, 1);
    ck_assert_int_eq(c.node.nvlinks, 18);
    ck_assert_int_eq(c.node.nics, 0);
    nccl_plan plan;
    coll_params big = {.op = OP_ALLREDUCE, .ranks = 72, .bytes = 8e9};
    ck_assert_int_eq(nccl_plan_make(p, NULL, &big, 0, &plan), 0);
    ck_assert_int_eq(plan.choice.algo, NCCL_RING);
    ck_assert_int_eq(nccl_comm_of(p, NULL, 144, 0, &c), 0);
    ck_assert_int_eq(c.nodes, 2);
    ck_assert_int_eq(c.node.nics, 72);
    platform_free(p);
    p = load("dgx-b200", 1);
    coll_params rs = {.op = OP_REDUCE_SCATTER, .ranks = 8, .bytes = 1e8, .nccl_algos = 1u << NCCL_NVLS};
    ck_assert_int_eq(nccl_plan_make(p, NULL, &rs, 0, &plan), 0);
    ck_assert_int_eq(plan.choice.algo, NCCL_RING);
    ck_assert_int_eq(plan.params.algo, ALGO_RING);
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
    ck_assert_int_eq(nccl_plan_make(p, NULL, &small, 0, &plan), 0);
    char name[32];
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "ring/LL");
    ck_assert_int_eq(plan.params.algo, ALGO_RING);
    ck_assert_double_eq(plan.params.bytes, 16); /* LL: a flag per 4 bytes */
    /* 15 us of NCCL latency, of which the 14 ring steps over GPU-switch-GPU (1 us each) are simulated. */
    ck_assert_double_eq_tol(nccl_timing_total_s(&plan.timing, 14e-6) - 14e-6, 15e-6 - 14 * 1e-6, 1e-9);
    coll_params big = {.op = OP_ALLREDUCE, .ranks = 8, .bytes = 8e9};
    ck_assert_int_eq(nccl_plan_make(p, NULL, &big, 0, &plan), 0);
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "ring/Simple");
    ck_assert_double_eq(plan.params.bytes, 8e9);
    /* The pipelined reduction hides behind the wire (12 x 20 GB/s): 1.9e-12 s/B (A100 HBM) < 1/240e9; a
     * slower one shows the rest. */
    ck_assert_int_eq(nccl_plan_make(p, NULL, &big, 3 / 1555e9, &plan), 0);
    ck_assert_double_eq(plan.reduce_s_per_byte, 0);
    ck_assert_int_eq(nccl_plan_make(p, NULL, &big, 1e-11, &plan), 0);
    ck_assert_double_eq_tol(plan.reduce_s_per_byte, 1e-11 - 1 / 240e9, 1e-20);
    coll_params a2a = {.op = OP_ALLTOALL, .ranks = 8, .bytes = 8e9};
    ck_assert_int_eq(nccl_plan_make(p, NULL, &a2a, 0, &plan), -1);
    platform_free(p);
    /* One DGX H100: NVLS, the switch's shape, no GPU reduction, NCCL's 0.85 on Hopper. */
    p = load("dgx-h100", 1);
    ck_assert_int_eq(nccl_plan_make(p, NULL, &big, 1e-11, &plan), 0);
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "nvls/Simple");
    ck_assert_int_eq(plan.params.algo, ALGO_PIPELINE);
    ck_assert_int_eq(plan.params.pipe_intra, PIPE_SWITCH);
    ck_assert_int_eq(plan.params.pipe_inter, PIPE_NONE);
    ck_assert_double_eq(plan.params.switch_efficiency, 0.85);
    ck_assert_double_eq(plan.reduce_s_per_byte, 0);
    platform_free(p);
    /* 16 DGX H100: NVLS tree at 1 GB; forced tree: a chain per NIC on both trees, NCCL's 512 KiB chunks. */
    p = load("dgx-h100", 16);
    coll_params wide = {.op = OP_ALLREDUCE, .ranks = 128, .bytes = 1e9};
    ck_assert_int_eq(nccl_plan_make(p, NULL, &wide, 0, &plan), 0);
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "nvls_tree/Simple");
    ck_assert_int_eq(plan.params.pipe_inter, PIPE_DTREE);
    wide.nccl_algos = 1u << NCCL_TREE;
    ck_assert_int_eq(nccl_plan_make(p, NULL, &wide, 0, &plan), 0);
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "tree/Simple");
    ck_assert_int_eq(plan.params.pipe_intra, PIPE_CHAIN);
    ck_assert_int_eq(plan.params.channels, 8);
    ck_assert_int_eq(coll_pipeline_lanes(&plan.params), 16);
    ck_assert_double_eq(plan.params.chunk_bytes, 512 * 1024);
    ck_assert_double_eq_tol(plan.timing.cap_Bps, plan.choice.algbw_Bps, 1);
    wide.nccl_algos = 1u << NCCL_NVLS; /* NVLS across nodes without CollNet: NCCL has nothing to run */
    ck_assert_int_eq(nccl_plan_make(p, NULL, &wide, 0, &plan), -1);
    tt_error err = {0};
    nccl_timing timing;
    double gamma = 0;
    wide.algo = ALGO_NCCL;
    ck_assert_int_eq(nccl_resolve(p, NULL, &wide, &gamma, &timing, name, sizeof name, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "NCCL_ALGO"));
    platform_free(p);
    /* Across DGX A100 nodes a ring per NIC (8 channels). */
    p = load("dgx-a100", 4);
    wide = (coll_params){.op = OP_ALLREDUCE, .ranks = 32, .bytes = 1e9};
    ck_assert_int_eq(nccl_plan_make(p, NULL, &wide, 0, &plan), 0);
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "ring/Simple");
    ck_assert_int_eq(plan.params.algo, ALGO_RING);
    ck_assert_int_eq(plan.params.channels, 8);
    platform_free(p);
    /* DGX-1: the ring follows the hybrid cube mesh's NVLinks; 4 EDR NICs, 4 channels. */
    p = load("dgx1-v100", 2);
    wide.ranks = 16;
    wide.nccl_algos = 1u << NCCL_RING;
    ck_assert_int_eq(nccl_plan_make(p, NULL, &wide, 0, &plan), 0);
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
    coll_params one = {.op = OP_ALLREDUCE, .ranks = 8, .bytes = 1e9, .nccl_algos = 1u << NCCL_RING};
    ck_assert_int_eq(nccl_plan_make(p, NULL, &one, 0, &plan), 0);
    ck_assert_int_eq(plan.params.channels, 6);
    platform_free(p);
}
END_TEST

/* Where a GPU reaches its NIC only through the CPU (Polaris: PHB), NCCL's
 * receives cross the root complex into GPU memory at its peer-to-peer write
 * rate: a floor of the bytes the busiest node receives over its NICs at that
 * rate, and in a tree every pipeline step shows NCCL's network step latency.
 * Behind PCIe switches (DGX A100: PXB) no such floor. */
START_TEST(gdr_through_cpu)
{
    nccl_comm c = dgx_a100(4);
    ck_assert_double_eq_tol(nccl_net_recv_factor(&c, OP_ALLREDUCE, NCCL_RING), 2.0 * 31 / 32, 1e-12);
    ck_assert_double_eq_tol(nccl_net_recv_factor(&c, OP_ALLGATHER, NCCL_RING), 31.0 / 32, 1e-12);
    ck_assert_double_eq_tol(nccl_net_recv_factor(&c, OP_ALLREDUCE, NCCL_TREE), 1.5, 1e-12); /* 2 x 3/4 */
    ck_assert_double_eq(nccl_net_recv_factor(&c, OP_ALLREDUCE, NCCL_COLLNET_CHAIN), 1);
    ck_assert_double_eq_tol(nccl_net_step_s(NCCL_TREE, NCCL_SIMPLE), 14e-6, 1e-15);
    platform *p = load("dgx-a100", 2);
    ck_assert_int_eq(nccl_comm_of(p, NULL, 16, 0, &c), 0);
    ck_assert_double_eq(c.node.gdr_write_GBps, 0);
    nccl_plan plan;
    coll_params big = {.op = OP_ALLREDUCE, .ranks = 16, .bytes = 1 << 30};
    ck_assert_int_eq(nccl_plan_make(p, NULL, &big, 0, &plan), 0);
    ck_assert_double_eq(plan.timing.net_cap_Bps, 0);
    platform_free(p);
    p = load("polaris", 2);
    ck_assert_int_eq(nccl_comm_of(p, NULL, 8, 0, &c), 0);
    ck_assert_double_eq_tol(c.node.gdr_write_GBps, 15.72, 1e-9); /* the EPYC 7543P's p2p_write_Bps */
    big.ranks = 8;
    ck_assert_int_eq(nccl_plan_make(p, NULL, &big, 0, &plan), 0);
    char name[32];
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "ring/Simple");
    /* 2 NICs x 15.72 GB/s over the ring's 2 x 7/8 received per payload byte */
    ck_assert_double_eq_tol(plan.timing.net_cap_Bps, 2 * 15.72e9 / 1.75, 1);
    ck_assert_double_eq(plan.timing.net_steps_s, 0);
    double floor_s = plan.timing.latency_s + (1 << 30) / plan.timing.net_cap_Bps;
    ck_assert_double_eq_tol(nccl_timing_total_s(&plan.timing, 1e-3), floor_s, 1e-12);
    ck_assert(nccl_timing_total_s(&plan.timing, 1.0) > 0.99); /* a slower simulation stands */
    platform_free(p);
    /* 64 nodes, 16 MiB: the tree; 2 chains (a NIC each) on 2 trees, 4 MiB a lane (depth 3 + 6):
     * halved from 512 KiB while fewer than 8 x 9 chunks to 128 KiB, fewer than 4 x 9: 64 KiB, 64 chunks */
    p = load("polaris", 64);
    coll_params tree = {.op = OP_ALLREDUCE, .ranks = 256, .bytes = 16 << 20};
    ck_assert_int_eq(nccl_plan_make(p, NULL, &tree, 0, &plan), 0);
    ck_assert_str_eq(nccl_plan_name(&plan, name, sizeof name), "tree/Simple");
    ck_assert_double_eq(plan.params.chunk_bytes, 64 * 1024);
    ck_assert_int_eq(coll_pipeline_chunks(&plan.params, (size_t)plan.params.bytes), 64);
    ck_assert_double_eq_tol(plan.timing.net_cap_Bps, 2 * 15.72e9 / (2.0 * 63 / 64), 1);
    /* a chunk crosses 3 GPUs and 6 tree levels up, as many down: 64 chunks + 17 steps of fill, 14 us each */
    ck_assert_double_eq_tol(plan.timing.net_steps_s, (64 + 2 * 9 - 1) * 14e-6, 1e-12);
    floor_s = plan.timing.latency_s + (16 << 20) / plan.timing.net_cap_Bps + plan.timing.net_steps_s;
    ck_assert_double_eq_tol(nccl_timing_total_s(&plan.timing, 1e-4), floor_s, 1e-12);
    platform_free(p);
}
END_TEST

/* NCCL's latency in the simulated time: a ring step's latency is paid where
 * a slice waits for it, hidden under the later slices of a large block; the
 * launch is always paid; the links' latency is replaced, not added to. A
 * pipeline pays no latency in its steady steps. No kernel outruns its cap. */
START_TEST(latency_in_simulated_time)
{
    /* 3 nodes of 8: 46 steps, 4 across the network (NCCL's plateau x 1.4). */
    nccl_timing t = {.on = 1, .latency_s = 1.4 * (8.4 + 42 * 3.4 + 4 * 14) * 1e-6, .hw_s = 26e-6,
                     .launch_s = 1.4 * 8.4e-6, .step_intra_s = 1.4 * 3.4e-6, .step_inter_s = 1.4 * 14e-6,
                     .steps = 46, .inter_steps = 4, .chunks = 1, .slices = 2};
    /* Large: 60 us per step, a slice of 30 us hides 19.6 us: launch only. */
    ck_assert_double_eq_tol(nccl_timing_total_s(&t, 26e-6 + 46 * 60e-6), 46 * 60e-6 + 1.4 * 8.4e-6, 1e-12);
    /* Small: every step's latency shows, NCCL's whole figure in place of the links'. */
    ck_assert_double_eq_tol(nccl_timing_total_s(&t, 26e-6 + 46e-9), 46e-9 + t.latency_s, 1e-7);
    /* In between: an inter-node step of 20 us hides 10 us of its 19.6. */
    double got = nccl_timing_total_s(&t, 26e-6 + 46 * 20e-6);
    ck_assert_double_eq_tol(got, 46 * 20e-6 + 1.4 * 8.4e-6 + 4 * (19.6e-6 - 10e-6), 1e-12);
    /* One slice per step (LL): NCCL's model, latency + transfers. */
    t.slices = 1;
    ck_assert_double_eq_tol(nccl_timing_total_s(&t, 26e-6 + 46 * 60e-6), 46 * 60e-6 + t.latency_s, 1e-12);
    /* The links' latency is a floor, hop by hop as a chunk goes round (42 x 0.5 + 4 x 3 us): NCCL's
     * smaller figure does not undercut it, nor is the slowest hop charged every step. */
    t.latency_s = t.launch_s = t.step_intra_s = t.step_inter_s = 0;
    t.link_intra_s = 0.5e-6;
    t.link_inter_s = 3e-6;
    ck_assert_double_eq_tol(nccl_timing_total_s(&t, 26e-6 + 46e-9), 46e-9 + 33e-6, 1e-12);
    /* A chain: NCCL's latency beyond the links'. */
    nccl_timing chain = {.on = 1, .latency_s = 25e-6, .hw_s = 5e-6};
    ck_assert_double_eq_tol(nccl_timing_total_s(&chain, 1e-3), 1e-3 + 20e-6, 1e-12);
    /* A pipeline: 100 steady steps each paid 1 us of links in the simulation. */
    nccl_timing pipe = {.on = 1, .latency_s = 137e-6, .hw_s = 20e-6, .pipe_steady = 100, .pipe_lat_s = 1e-6};
    ck_assert_double_eq_tol(nccl_timing_total_s(&pipe, 1e-3), 1e-3 - 100e-6 + 117e-6, 1e-12);
    /* A kernel cap of 1 GB/s on 1 MB: latency + 1 ms at least. */
    pipe.cap_Bps = 1e9;
    pipe.bytes = 1e6;
    ck_assert_double_eq_tol(nccl_timing_total_s(&pipe, 1e-4), 137e-6 + 1e-3, 1e-12);
}
END_TEST

START_TEST(resolve_requests)
{
    platform *p = load("dgx-a100", 1);
    coll_params prm = {.op = OP_ALLREDUCE, .algo = ALGO_NCCL, .ranks = 8, .bytes = 8};
    double gamma = 3 / 1555e9;
    nccl_timing overhead;
    char name[24];
    tt_error err = {0};
    ck_assert_int_eq(nccl_resolve(p, NULL, &prm, &gamma, &overhead, name, sizeof name, &err), TT_OK);
    ck_assert_str_eq(name, "ring/LL");
    ck_assert_int_eq(prm.algo, ALGO_RING);
    ck_assert_double_eq_tol(nccl_timing_total_s(&overhead, 14e-6), 15e-6, 1e-9); /* 14 steps of 1 us simulated */
    ck_assert_double_eq(gamma, 0);
    platform_free(p);
    p = load("tpu-v3-pod", 8);
    prm = (coll_params){.op = OP_ALLREDUCE, .algo = ALGO_NCCL, .ranks = 32, .bytes = 1e6, .dims = {8, 4}};
    ck_assert_int_eq(nccl_resolve(p, NULL, &prm, &gamma, &overhead, name, sizeof name, &err), TT_OK);
    ck_assert_int_eq(prm.algo, ALGO_TORUS);
    ck_assert_str_eq(name, "");
    ck_assert_int_eq(overhead.on, 0);
    prm = (coll_params){.op = OP_ALLGATHER, .algo = ALGO_NCCL, .ranks = 32, .bytes = 1e6};
    ck_assert_int_eq(nccl_resolve(p, NULL, &prm, &gamma, &overhead, name, sizeof name, &err), TT_OK);
    ck_assert_int_eq(prm.algo, ALGO_AUTO);
    prm.algo = ALGO_RING; /* other requests untouched */
    ck_assert_int_eq(nccl_resolve(p, NULL, &prm, &gamma, &overhead, name, sizeof name, &err), TT_OK);
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
 * two nodes tens of microseconds, as NCCL's is), the torus on a TPU slice;
 * --nccl-algo forces as NCCL_ALGO does, and refuses what NCCL could not run. */
START_TEST(cli_default_is_nccl)
{
    json_t *doc = collective_json("--platform dgx-a100 --bytes 8,8G");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 0), "nccl")), "ring/LL");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 1), "nccl")), "ring/Simple");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 1), "algo")), "nccl");
    double busbw = json_number_value(json_object_get(result(doc, 1), "busbw_Bps"));
    ck_assert_msg(busbw > 0.85 * 230e9 && busbw < 1.15 * 230e9, "busbw %g", busbw);
    json_decref(doc);
    doc = collective_json("--platform dgx-a100 --nodes 2 --bytes 8");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 0), "nccl")), "tree/LL");
    double t = json_number_value(json_object_get(result(doc, 0), "time_s"));
    ck_assert_msg(t > 20e-6 && t < 40e-6, "8 B over two nodes: %g s", t);
    json_decref(doc);
    doc = collective_json("--platform dgx-h100 --nodes 4 --bytes 1G --nccl-algo tree --nccl-proto simple");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 0), "nccl")), "tree/Simple");
    json_decref(doc);
    doc = collective_json("--platform tpu-v3-pod --nodes 8 --bytes 1M");
    ck_assert_str_eq(json_string_value(json_object_get(result(doc, 0), "algo")), "torus");
    ck_assert(json_is_null(json_object_get(result(doc, 0), "nccl")));
    json_decref(doc);
    static char out[4096];
    ck_assert_int_eq(tu_run_ttasim("collective --platform dgx-a100 --nodes 2 --bytes 1G --nccl-algo nvls", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "no algorithm"));
    ck_assert_int_eq(tu_run_ttasim("collective --platform dgx-a100 --bytes 1G --nccl-proto LL129", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "'LL129'"));
}
END_TEST

/* The default (what NCCL picks, simulated) takes longer for more bytes and
 * for more nodes, on every built-in NVIDIA platform, from 1 to 16 nodes and
 * 64 KB to 1 GB. In size strictly. In nodes to 1 %: a ring's synchronous
 * steps round its per-step time by that much either way. The two Ethernet
 * clusters (Big Basin's 50 GbE, Tencent's 100 GbE) to 10 %: NCCL rates
 * their NICs at the port's speed, which their packets do not reach, so it
 * keeps a ring one node count longer than it pays (as NCCL itself would). */
START_TEST(default_monotone)
{
    static const char *const PLATFORMS[] = {"dgx-a100", "dgx-h100", "dgx1-v100", "dgx1-p100", "dgx2-v100",
                                            "hgx-a100-4hdr", "abci-v100", "polaris", "mn1-p100", "big-basin-p100",
                                            "tencent-p40"};
    static const int NODES[] = {1, 2, 3, 4, 8, 16};
    enum { NSIZES = 7, ETHERNET = 9 };
    for (size_t k = 0; k < sizeof PLATFORMS / sizeof *PLATFORMS; k++) {
        double prev[NSIZES] = {0}, slack = k >= ETHERNET ? 0.90 : 0.99;
        for (int i = 0; i < 6; i++) {
            char args[160];
            snprintf(args, sizeof args, "--platform %s --nodes %d --bytes 64K,1M,4M,16M,64M,256M,1G", PLATFORMS[k],
                     NODES[i]);
            json_t *doc = collective_json(args);
            double last = 0;
            for (int s = 0; s < NSIZES; s++) {
                double t = json_number_value(json_object_get(result(doc, (size_t)s), "time_s"));
                ck_assert_msg(t >= last, "%s: %d nodes, size %d: %g s after %g s", PLATFORMS[k], NODES[i], s, t, last);
                ck_assert_msg(t >= prev[s] * slack, "%s: size %d: %d nodes %g s, fewer nodes %g s", PLATFORMS[k], s,
                              NODES[i], t, prev[s]);
                last = prev[s] = t;
            }
            json_decref(doc);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nccl");
    TCase *t = tcase_create("tuning");
    tcase_set_timeout(t, 60); /* the CLI and platform cases fork simulations: a loaded machine needs more than 4 s */
    tcase_add_test(t, search_outcome);
    tcase_add_test(t, small_allreduce_is_latency);
    tcase_add_test(t, large_allreduce);
    tcase_add_test(t, nvls_and_collnet);
    tcase_add_test(t, environment_masks);
    tcase_add_test(t, communicators_of_platforms);
    tcase_add_test(t, plans);
    tcase_add_test(t, gdr_through_cpu);
    tcase_add_test(t, latency_in_simulated_time);
    tcase_add_test(t, resolve_requests);
    tcase_add_test(t, cli_default_is_nccl);
    suite_add_tcase(s, t);
    t = tcase_create("monotone");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, default_monotone);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
