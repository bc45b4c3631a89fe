/* Collectives: every schedule computes its collective on real buffers for
 * 2..64 ranks (non-powers of two included), and the closed forms hold. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectives/closed_form.h"
#include "collectives/functional.h"
#include "collectives/schedule.h"
#include "platforms/platform.h"
#include "sim/engine/collective_fluid.h"
#include "sim/engine/collective_sim.h"
#include "sim/engine/engine.h"
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
                                 .chunk_bytes = v == 0 ? 4 : 0, .ranks_per_node = ranks_per_node_for(n),
                                 .nics_per_node = v == 0 ? 0 : ranks_per_node_for(n) / 2};
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

/* The N-D torus allreduce on 3-D and lopsided grids (sides of 1 skipped)
 * computes the sum; a grid that does not hold the ranks is refused. */
START_TEST(functional_torus_grids)
{
    static const int GRIDS[][3] = {{2, 2, 2}, {4, 3, 2}, {3, 1, 5}, {2, 5, 3}, {4, 4, 4}, {7, 1, 1}};
    for (size_t k = 0; k < sizeof GRIDS / sizeof GRIDS[0]; k++)
        for (int v = 0; v < 2; v++) {
            int n = GRIDS[k][0] * GRIDS[k][1] * GRIDS[k][2];
            size_t count = v ? (size_t)(n / 2 + 1) : (size_t)(7 * n + 5);
            coll_params p = {.op = OP_ALLREDUCE, .algo = ALGO_TORUS, .ranks = n, .bytes = (double)count,
                             .dims = {GRIDS[k][0], GRIDS[k][1], GRIDS[k][2]}};
            schedule s;
            tt_error err = {0};
            ck_assert_int_eq(schedule_build(&p, count, 8, &s, &err), TT_OK);
            char msg[256];
            ck_assert_msg(schedule_verify(&s, msg, sizeof msg) == 0, "grid %dx%dx%d count %zu: %s", GRIDS[k][0],
                          GRIDS[k][1], GRIDS[k][2], count, msg);
            /* One reduce-scatter and one allgather phase per side longer than 1. */
            int phases = 2 * ((GRIDS[k][0] > 1) + (GRIDS[k][1] > 1) + (GRIDS[k][2] > 1));
            ck_assert_int_eq(s.nstages, phases);
            schedule_free(&s);
        }
    /* Pods (a multi-pod slice): the pods' rings are one more, slowest dimension, a 4-D grid included. */
    static const int PODS[][4] = {{2, 2, 1, 3}, {4, 3, 1, 2}, {2, 2, 2, 2}, {3, 1, 1, 4}};
    for (size_t k = 0; k < sizeof PODS / sizeof PODS[0]; k++)
        for (int algo = 0; algo < 2; algo++) {
            int n = PODS[k][0] * PODS[k][1] * PODS[k][2] * PODS[k][3];
            size_t count = (size_t)(5 * n + 3);
            coll_params p = {.op = OP_ALLREDUCE, .algo = algo ? ALGO_TORUS : ALGO_TORUS2D, .ranks = n,
                             .bytes = (double)count, .dims = {PODS[k][0], PODS[k][1], PODS[k][2]},
                             .pods = PODS[k][3]};
            schedule s;
            tt_error err = {0};
            ck_assert_msg(schedule_build(&p, count, 8, &s, &err) == TT_OK, "%s", err.msg);
            char msg[256];
            ck_assert_msg(schedule_verify(&s, msg, sizeof msg) == 0, "grid %dx%dx%d x %d pods: %s", PODS[k][0],
                          PODS[k][1], PODS[k][2], PODS[k][3], msg);
            int sides = (PODS[k][0] > 1) + (PODS[k][1] > 1) + (PODS[k][2] > 1);
            if (algo) /* torus: one phase pair per side, and the pods' */
                ck_assert_int_eq(s.nstages, 2 * (sides + 1));
            schedule_free(&s);
        }
    coll_params podless = {.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 8, .bytes = 8, .pods = 2};
    const char *why_pods;
    ck_assert_int_eq(coll_algo_applies(&podless, &why_pods), 0);
    coll_params bad = {.op = OP_ALLREDUCE, .algo = ALGO_TORUS, .ranks = 30, .bytes = 300, .dims = {4, 4, 2}};
    const char *why;
    ck_assert_int_eq(coll_algo_applies(&bad, &why), 0);
    ck_assert_ptr_nonnull(strstr(why, "grid"));
    /* On a star the phases add up: 4 x 4 x 4 moves M (1 - 1/64) twice, 2 (3 + 3 + 3) alphas. */
    coll_params p = {.op = OP_ALLREDUCE, .algo = ALGO_TORUS, .ranks = 64, .bytes = 64e6, .dims = {4, 4, 4}};
    double want = 2 * 9 * 1e-6 + 2 * (1 - 1.0 / 64) * 64e6 / 10e9;
    ck_assert_double_eq_tol(coll_closed_form_s(&p, 1e-6, 10e9, 0), want, 1e-12);
}
END_TEST

/* NCCL-like channel rings: 1..5 rings (allreduce; one for the others)
 * rotated inside nodes of 4 along a permuted node order compute allreduce,
 * reduce-scatter and allgather; ring j's node-crossing flows leave at
 * distinct node ranks. */
START_TEST(functional_channel_rings)
{
    static const coll_op OPS[] = {OP_ALLREDUCE, OP_REDUCE_SCATTER, OP_ALLGATHER};
    for (int o = 0; o < 3; o++)
        for (int c = 1; c <= 5; c++)
            for (int v = 0; v < 2; v++) {
                size_t count = v ? 9 : 7 * 16 + 5;
                coll_params p = {.op = OPS[o], .algo = ALGO_RING, .ranks = 16, .bytes = (double)count,
                                 .ranks_per_node = 4, .channels = c,
                                 .node_order = {{2, 0, 3, 1}, {1, 3, 0, 2}, {3, 2, 1, 0}}};
                schedule s;
                tt_error err = {0};
                ck_assert_int_eq(schedule_build(&p, count, 8, &s, &err), TT_OK);
                char msg[256];
                ck_assert_msg(schedule_verify(&s, msg, sizeof msg) == 0, "%s c=%d count=%zu: %s",
                              coll_op_name(OPS[o]), c, count, msg);
                if (o == 0 && c == 4 && v == 0) { /* rank order, rotated per ring */
                    schedule_free(&s);
                    memset(p.node_order, 0, sizeof p.node_order);
                    ck_assert_int_eq(schedule_build(&p, count, 8, &s, &err), TT_OK);
                    xfer xs[64];
                    size_t nx = schedule_step(&s, 0, 0, xs);
                    int leaves[4] = {0};
                    for (size_t k = 0; k < nx; k++)
                        if (xs[k].src / 4 != xs[k].dst / 4 && xs[k].src / 4 == 0)
                            leaves[xs[k].src % 4]++;
                    for (int r = 0; r < 4; r++)
                        ck_assert_int_eq(leaves[r], 1); /* each of node 0's ranks carries one ring out */
                }
                schedule_free(&s);
            }
}
END_TEST

/* NCCL's pipelines: a chain per channel through each node and the double
 * binary tree over the nodes' heads, chunks reduced up and broadcast down at
 * once, compute the allreduce; no rank forwards a chunk before it holds it.
 * The switches' shapes (NVLS, SHARP) are timing only: their steady state is
 * still identical steps. */
START_TEST(functional_pipelines)
{
    static const int NODES[] = {1, 2, 3, 5, 8, 13};
    for (int i = 0; i < 6; i++)
        for (int g = 1; g <= 4; g++)
            for (int c = 1; c <= 3; c++)
                for (int v = 0; v < 2; v++) {
                    int n = NODES[i] * g;
                    if (n < 2)
                        continue;
                    size_t count = v ? 7 : 40 * (size_t)n + 3;
                    coll_params p = {.op = OP_ALLREDUCE, .algo = ALGO_PIPELINE, .ranks = n, .bytes = (double)count * 8,
                                     .ranks_per_node = g, .channels = c, .chunk_bytes = 8 * 5,
                                     .pipe_intra = PIPE_CHAIN, .pipe_inter = NODES[i] > 1 ? PIPE_DTREE : PIPE_NONE,
                                     .node_order = {{1, 0, 3, 2}}};
                    if (g < 4)
                        memset(p.node_order, 0, sizeof p.node_order);
                    schedule s;
                    tt_error err = {0};
                    ck_assert_int_eq(schedule_build(&p, count, 8, &s, &err), TT_OK);
                    char msg[256];
                    ck_assert_msg(schedule_verify(&s, msg, sizeof msg) == 0, "%d nodes x %d, %d channels, %zu: %s",
                                  NODES[i], g, c, count, msg);
                    ck_assert_int_eq(s.switched, 0);
                    schedule_free(&s);
                }
    /* 8 nodes of 4, NVLS tree: steps = chunks + the depth (RS, up 3, down 3, AG = 7 steps of delay). */
    coll_params p = {.op = OP_ALLREDUCE, .algo = ALGO_PIPELINE, .ranks = 32, .bytes = 8e6, .ranks_per_node = 4,
                     .chunk_bytes = 1e5, .pipe_intra = PIPE_SWITCH, .pipe_inter = PIPE_DTREE};
    schedule s;
    tt_error err = {0};
    ck_assert_int_eq(schedule_build(&p, (size_t)8e6, 1, &s, &err), TT_OK);
    ck_assert_int_eq(s.switched, 1);
    ck_assert_int_eq(coll_pipeline_lanes(&p), 8); /* 4 heads x 2 trees */
    ck_assert_int_eq(schedule_steps(&s), 10 + 7);  /* 1 MB lanes in 0.1 MB chunks */
    char msg[256];
    ck_assert_msg(schedule_verify(&s, msg, sizeof msg) == 0, "%s", msg);
    schedule_free(&s);
    p.pipe_inter = PIPE_SHARP; /* RS, the switch, AG */
    ck_assert_int_eq(schedule_build(&p, (size_t)8e6, 1, &s, &err), TT_OK);
    ck_assert_int_eq(schedule_steps(&s), 20 + 2); /* one tree: 4 lanes of 2 MB */
    ck_assert_msg(schedule_verify(&s, msg, sizeof msg) == 0, "%s", msg);
    schedule_free(&s);
    p.algo = ALGO_PIPELINE;
    p.op = OP_ALLGATHER;
    const char *why;
    ck_assert(!coll_algo_applies(&p, &why));
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
static const double LINK_LAT_S = 1e-6, LINK_BW_BPS = 12.5e9;
static const double GAMMA_S_PER_BYTE = 1.0 / 50e9; /* reduction at 50 GB/s */

static platform *star(int n)
{
    platform_options opt = {.nodes = n, .link_bw_Bps = LINK_BW_BPS, .link_latency_s = LINK_LAT_S};
    tt_error err = {0};
    platform *p = platform_load("star", &opt, &err);
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
                                   .chunk_bytes = CF_SIZES[k] / 8, .ranks_per_node = 2 + 2 * (c > 0),
                                   .nics_per_node = c == 2 ? 2 : 0};
                rq[k] = (coll_request){prm, GAMMA_S_PER_BYTE, 0, 0, 0, NULL, 1, 0, 0};
            }
            tt_error err = {0};
            ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, rq, 3, res, &err) == TT_OK, "%s", err.msg);
            /* The torus rings reduce as the data streams in: at 50 GB/s the reduction
             * hides under a star link's 12.5 GB/s, so their time has no gamma term. */
            double g = algos[a] == ALGO_TORUS || algos[a] == ALGO_TORUS2D ? 0 : GAMMA_S_PER_BYTE;
            for (int k = 0; k < 3; k++) {
                double cf = coll_closed_form_s(&rq[k].params, 2 * LINK_LAT_S, LINK_BW_BPS, g);
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
    static const coll_algo ALG[] = {ALGO_RING, ALGO_RHD, ALGO_DBTREE, ALGO_HIER, ALGO_TORUS};
    int n = 12;
    platform *p = star(n);
    coll_request rq[10];
    coll_result res[10];
    for (int k = 0; k < 10; k++) {
        coll_params prm = {.op = OP_ALLREDUCE, .algo = ALG[k / 2], .ranks = n, .bytes = 16e6,
                           .chunk_bytes = 1e6, .ranks_per_node = 4};
        rq[k] = (coll_request){prm, GAMMA_S_PER_BYTE, k % 2, 0, 0, NULL, 1, 0, 0};
    }
    tt_error err = {0};
    ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, rq, 10, res, &err) == TT_OK, "%s", err.msg);
    for (int k = 0; k < 10; k += 2)
        ck_assert_msg(fabs(res[k].time_s / res[k + 1].time_s - 1) < 0.005, "%s: rounds %.9g s, messages %.9g s",
                      coll_algo_name(ALG[k / 2]), res[k].time_s, res[k + 1].time_s);
    platform_free(p);
}
END_TEST

/* A 64-rank fat tree of 16-rank leaves, non-blocking or with 4:1 uplinks. */
static platform *fattree64(int oversubscription)
{
    char text[1024], path[64];
    snprintf(text, sizeof text,
             "{\"format\": \"ttasim-platform\", \"version\": 1, \"name\": \"osub%d\", \"description\": \"test\",\n"
             " \"sources\": [\"test\"], \"assumptions\": [],\n"
             " \"node\": {\"components\": [{\"name\": \"acc\", \"device\": \"generic-accelerator\", \"count\": 1}], \"links\": []},\n"
             " \"fabric\": {\"topology\": \"fattree\", \"attach\": \"acc\", \"nodes\": 64,\n"
             "   \"link\": {\"bandwidth_Bps\": 12.5e9, \"latency_s\": \"1us\"},\n"
             "   \"nodes_per_leaf\": 16, \"levels\": 2, \"oversubscription\": %d}}\n",
             oversubscription, oversubscription);
    tu_write_temp(text, path, sizeof path);
    tt_error err = {0};
    platform *p = platform_load(path, NULL, &err);
    unlink(path);
    ck_assert_msg(p != NULL, "%s", err.msg);
    return p;
}

/* auto screens its candidates by lower bounds (coll_estimate_s) and
 * simulates only those that can win: it must pick what simulating every
 * candidate picks. On a 48-rank switch direct wins (all-pairs classes, folds
 * and generated tree steps screened); on a 64-rank fat tree with 4:1 uplinks
 * direct's all-pairs congest them and other schedules win. */
START_TEST(auto_picks_fastest)
{
    enum { NSIZES = 3 };
    static const double SIZES[NSIZES] = {1e3, 1e6, 1e8};
    platform *plats[2] = {star(48), fattree64(4)};
    for (int pl = 0; pl < 2; pl++) {
        platform *p = plats[pl];
        int n = platform_ranks(p);
        coll_algo cand[16];
        int nc = coll_algos_for(OP_ALLREDUCE, cand, 16), nr = 0;
        coll_request rq[NSIZES * 17];
        coll_result res[NSIZES * 17];
        for (int z = 0; z < NSIZES; z++)
            for (int c = -1; c < nc; c++) {
                coll_params prm = {.op = OP_ALLREDUCE, .algo = c < 0 ? ALGO_AUTO : cand[c], .ranks = n,
                                   .bytes = SIZES[z], .chunk_bytes = 1 << 18};
                const char *why;
                if (c < 0 || coll_algo_applies(&prm, &why))
                    rq[nr++] = (coll_request){prm, GAMMA_S_PER_BYTE, 0, 0, 0, NULL, 1, 0, 0};
            }
        tt_error err = {0};
        ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, rq, nr, res, &err) == TT_OK, "%s", err.msg);
        int picks[NSIZES] = {0};
        for (int k = 0, z = 0; k < nr; z++) {
            int a = k++, best = -1;
            for (; k < nr && rq[k].params.algo != ALGO_AUTO; k++)
                if (best < 0 || res[k].time_s < res[best].time_s)
                    best = k;
            ck_assert_int_ge(best, 0);
            for (int j = a + 1; j < k; j++) { /* the estimate bounds each simulation from below */
                schedule sc;
                ck_assert_int_eq(schedule_build(&rq[j].params, (size_t)rq[j].params.bytes, 1.0, &sc, &err), TT_OK);
                double est = coll_estimate_s(p, NULL, &sc, GAMMA_S_PER_BYTE, NULL);
                schedule_free(&sc);
                /* plus SimGrid's timing precision (precision/timing, 1e-9 s): a generic
                 * link's rate is its payload rate, so the bound can be exact */
                ck_assert_msg(est > 0 && est <= res[j].time_s * (1 + 1e-9) + 1e-9,
                              "%s %s, %g bytes: bound %.9g s, simulated %.9g s", platform_name(p),
                              coll_algo_name(rq[j].params.algo), rq[j].params.bytes, est, res[j].time_s);
                /* on the switch a tree rank's two chunks per step on its one link put the trees past direct */
                if (pl == 0 && z == NSIZES - 1 && rq[j].params.algo == ALGO_TREE)
                    ck_assert_msg(est > res[best].time_s, "tree's bound %.9g s, best %.9g s", est, res[best].time_s);
            }
            ck_assert_msg(fabs(res[a].time_s / res[best].time_s - 1) < 1e-9,
                          "%s, %g bytes: auto picked %s (%.9g s), simulating all picks %s (%.9g s)", platform_name(p),
                          rq[a].params.bytes, coll_algo_name(res[a].algo), res[a].time_s,
                          coll_algo_name(res[best].algo), res[best].time_s);
            picks[z] = res[a].algo;
        }
        if (pl == 1) { /* small messages favour few steps, large ones bandwidth-optimal schedules */
            ck_assert_int_ne(picks[0], ALGO_RING);
            ck_assert_int_ne(picks[2], ALGO_RD);
            ck_assert_int_ne(picks[2], ALGO_DIRECT);
        }
        platform_free(p);
    }
}
END_TEST

/* Contention: on 4:1 uplinks, alltoall (pairwise and direct), whose flows
 * mostly leave their leaf, slow down about 4x (at least 2.5x); the ring,
 * with one flow per leaf uplink, does not slow down at all. */
START_TEST(contention_oversubscribed_fattree)
{
    coll_request rq[3] = {
        {{.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 64, .bytes = 64e6}, 0, 0, 0, 0, NULL, 1, 0, 0},
        {{.op = OP_ALLTOALL, .algo = ALGO_PAIRWISE, .ranks = 64, .bytes = 64e6}, 0, 0, 0, 0, NULL, 1, 0, 0},
        {{.op = OP_ALLTOALL, .algo = ALGO_DIRECT, .ranks = 64, .bytes = 64e6}, 0, 0, 0, 0, NULL, 1, 0, 0},
    };
    coll_result full[3], thin[3];
    tt_error err = {0};
    platform *p1 = fattree64(1), *p4 = fattree64(4);
    ck_assert_msg(coll_simulate(p1, NETWORK_IDEAL, rq, 3, full, &err) == TT_OK, "%s", err.msg);
    ck_assert_msg(coll_simulate(p4, NETWORK_IDEAL, rq, 3, thin, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq_tol(thin[0].time_s / full[0].time_s, 1.0, 1e-6);
    for (int k = 1; k < 3; k++)
        ck_assert_msg(thin[k].time_s / full[k].time_s > 2.5 && thin[k].time_s / full[k].time_s < 4.01,
                      "%s: %.9g s on 4:1 uplinks, %.9g s non-blocking", coll_algo_name(rq[k].params.algo),
                      thin[k].time_s, full[k].time_s);
    platform_free(p1);
    platform_free(p4);
}
END_TEST

/* On a 32 x 32 torus, the 2D-torus allreduce (rings per dimension, both
 * directions) beats the flat ring at 1,024 ranks, by fewer steps and twice
 * the links; and the window-free uniform rounds keep it quick. */
START_TEST(torus2d_beats_ring_1024)
{
    platform_options o = {.nodes = 1024, .link_bw_Bps = 12.5e9, .link_latency_s = 1e-6};
    tt_error err = {0};
    platform *p = platform_load("torus2d", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    coll_request rq[2] = {
        {{.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 1024, .bytes = 100e6}, 0, 0, 0, 0, NULL, 1, 0, 0},
        {{.op = OP_ALLREDUCE, .algo = ALGO_TORUS2D, .ranks = 1024, .bytes = 100e6}, 0, 0, 0, 0, NULL, 1, 0, 0},
    };
    coll_result r[2];
    ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, rq, 2, r, &err) == TT_OK, "%s", err.msg);
    ck_assert_msg(r[1].time_s < 0.7 * r[0].time_s, "torus2d %.9g s, ring %.9g s", r[1].time_s, r[0].time_s);
    platform_free(p);
}
END_TEST

/* The torus allreduce on the pods' published slice shapes gets slower, never
 * faster, as the slice grows (102 MB, ResNet-50's gradients), runs above one
 * link's rate, and on v4 the 3-D schedule beats a 2-D grid folded over z. */
START_TEST(torus_monotone_in_slice_size)
{
    static const struct { const char *pod; int nodes; } SLICES[] = {
        {"tpu-v3-pod", 4}, {"tpu-v3-pod", 8}, {"tpu-v3-pod", 16}, {"tpu-v3-pod", 32}, {"tpu-v3-pod", 64},
        {"tpu-v3-pod", 128}, {"tpu-v4-pod", 16}, {"tpu-v4-pod", 32}, {"tpu-v4-pod", 64}, {"tpu-v4-pod", 128}};
    double prev = 0;
    for (size_t k = 0; k < sizeof SLICES / sizeof SLICES[0]; k++) {
        platform_options o = {.nodes = SLICES[k].nodes};
        tt_error err = {0};
        platform *p = platform_load(SLICES[k].pod, &o, &err);
        ck_assert_msg(p != NULL, "%s", err.msg);
        int n = platform_ranks(p);
        coll_request rq[2] = {{{.op = OP_ALLREDUCE, .algo = ALGO_TORUS, .ranks = n, .bytes = 102e6}, 0, 0, 0, 0, NULL, 1, 0, 0},
                              {{.op = OP_ALLREDUCE, .algo = ALGO_TORUS2D, .ranks = n, .bytes = 102e6}, 0, 0, 0, 0, NULL, 1, 0, 0}};
        platform_torus_dims(p, rq[0].params.dims);
        platform_torus_dims(p, rq[1].params.dims);
        coll_result r[2];
        ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, rq, 2, r, &err) == TT_OK, "%s", err.msg);
        if (k == 6)
            prev = 0; /* v4 starts its own series */
        ck_assert_msg(r[0].time_s >= prev, "%s, %d chips: %.6g s, smaller slice %.6g s", SLICES[k].pod, n,
                      r[0].time_s, prev);
        prev = r[0].time_s;
        /* Both directions of a dimension's links at once: busbw above one link's 45 GB/s (v4), 100 GB/s (v3). */
        double busbw = coll_busbw_factor(OP_ALLREDUCE, n) * 102e6 / r[0].time_s, link = k >= 6 ? 45e9 : 100e9;
        ck_assert_msg(busbw > 1.3 * link, "%s, %d chips: busbw %.4g B/s", SLICES[k].pod, n, busbw);
        if (k >= 6) /* the 3-D schedule against a 2-D grid folded over the third dimension */
            ck_assert_msg(r[0].time_s < r[1].time_s, "%d v4 chips: 3-D %.6g s, 2-D %.6g s", n, r[0].time_s,
                          r[1].time_s);
        platform_free(p);
    }
}
END_TEST

/* Cross-traffic makes the ranks of a fat-tree ring finish rounds apart: the
 * rounds executor then measures free-running windows and still gives the
 * message-level time within 0.5 %. */
START_TEST(rounds_match_messages_calibrated_fattree)
{
    platform *p = fattree64(1);
    coll_request rq[2] = {
        {{.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 64, .bytes = 64e6}, GAMMA_S_PER_BYTE, 0, 0, 0, NULL, 1, 0, 0},
        {{.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 64, .bytes = 64e6}, GAMMA_S_PER_BYTE, 1, 0, 0, NULL, 1, 0, 0},
    };
    coll_result r[2];
    tt_error err = {0};
    ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, rq, 2, r, &err) == TT_OK, "%s", err.msg);
    ck_assert_msg(fabs(r[0].time_s / r[1].time_s - 1) < 0.005, "rounds %.9g s, messages %.9g s", r[0].time_s,
                  r[1].time_s);
    platform_free(p);
}
END_TEST

/* A flat ring on an 8 x 8 torus: the flows crossing to the next row take two
 * hops, so ranks finish rounds apart, but no two flows share a link: the
 * rounds executor keeps the synchronous round's pace (round_solo) and gives
 * the message-level time within 1 %, with and without streamed reductions
 * (ring and torus2d on the same 8 x 8 grid). */
START_TEST(flat_ring_on_torus_matches_messages)
{
    platform_options o = {.nodes = 64, .link_bw_Bps = 12.5e9, .link_latency_s = 1e-6};
    tt_error err = {0};
    platform *p = platform_load("torus2d", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    coll_request rq[4];
    for (int k = 0; k < 4; k++)
        rq[k] = (coll_request){{.op = OP_ALLREDUCE, .algo = k < 2 ? ALGO_RING : ALGO_TORUS2D, .ranks = 64,
                                .bytes = 16e6, .dims = {8, 8}},
                               GAMMA_S_PER_BYTE, k % 2, 0, 0, NULL, 1, 0, 0};
    coll_result r[4];
    ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, rq, 4, r, &err) == TT_OK, "%s", err.msg);
    for (int k = 0; k < 4; k += 2)
        ck_assert_msg(fabs(r[k].time_s / r[k + 1].time_s - 1) < 0.01, "%s: rounds %.9g s, messages %.9g s",
                      coll_algo_name(rq[k].params.algo), r[k].time_s, r[k + 1].time_s);
    platform_free(p);
}
END_TEST

/* Every built-in platform (two nodes of it) runs auto allreduce and alltoall. */
START_TEST(builtins_run_auto)
{
    tt_error err = {0};
    char **names = platform_list(&err);
    ck_assert_ptr_nonnull(names);
    int count = 0;
    for (int i = 0; names[i]; i++) {
        platform_options o = {.nodes = 2};
        platform *p = platform_load(names[i], &o, &err);
        ck_assert_msg(p != NULL, "%s: %s", names[i], err.msg);
        int n = platform_ranks(p);
        coll_request rq[2] = {
            {{.op = OP_ALLREDUCE, .algo = ALGO_AUTO, .ranks = n, .bytes = 1e6, .chunk_bytes = 1 << 18,
              .ranks_per_node = platform_ranks_per_node(p)}, 0, 0, 0, 0, NULL, 1, 0, 0},
            {{.op = OP_ALLTOALL, .algo = ALGO_AUTO, .ranks = n, .bytes = 1e6,
              .ranks_per_node = platform_ranks_per_node(p)}, 0, 0, 0, 0, NULL, 1, 0, 0},
        };
        coll_result r[2];
        ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, rq, 2, r, &err) == TT_OK, "%s: %s", names[i], err.msg);
        for (int k = 0; k < 2; k++) {
            double lat, bw;
            platform_path(p, 0, n - 1, &lat, &bw);
            /* No faster than one rank's share crossing the fastest path in one step. */
            ck_assert_msg(r[k].time_s > lat && r[k].algo != ALGO_AUTO, "%s: %.9g s", names[i], r[k].time_s);
        }
        platform_free(p);
        count++;
    }
    ck_assert_int_ge(count, 10);
    platform_list_free(names);
}
END_TEST

/* ttasim collective: the JSON contract (busbw = algbw x nccl-tests' factor,
 * time equal to the closed form on an ideal star) and input errors (exit 2). */
START_TEST(cli_collective)
{
    static char out[65536];
    int rc = tu_run_ttasim("collective --platform star --nodes 8 --link-bw 12.5e9 --link-latency 1us "
                           "--op allgather --algo ring --bytes 1M,64M --network ideal --json",
                           out, sizeof out);
    ck_assert_msg(rc == 0, "%s", out);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "%s: %s", je.text, out);
    json_t *res = json_object_get(doc, "results");
    ck_assert_int_eq(json_array_size(res), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *r = json_array_get(res, i);
        double bytes = json_number_value(json_object_get(r, "bytes"));
        double t = json_number_value(json_object_get(r, "time_s"));
        double algbw = json_number_value(json_object_get(r, "algbw_Bps"));
        double busbw = json_number_value(json_object_get(r, "busbw_Bps"));
        ck_assert_str_eq(json_string_value(json_object_get(r, "op")), "allgather");
        ck_assert_str_eq(json_string_value(json_object_get(r, "algo")), "ring");
        ck_assert_int_eq(json_integer_value(json_object_get(r, "ranks")), 8);
        coll_params prm = {.op = OP_ALLGATHER, .algo = ALGO_RING, .ranks = 8, .bytes = bytes};
        double cf = coll_closed_form_s(&prm, 2e-6, 12.5e9, 0);
        ck_assert_msg(fabs(t / cf - 1) < 0.01, "%g bytes: %.9g s, closed form %.9g s", bytes, t, cf);
        ck_assert_double_eq_tol(algbw, bytes / t, 1e-6 * algbw);
        ck_assert_double_eq_tol(busbw, algbw * 7 / 8, 1e-6 * busbw);
    }
    json_decref(doc);
    rc = tu_run_ttasim("collective --platform star --op allreduse --bytes 1M", out, sizeof out);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "did you mean 'allreduce'") != NULL, "%s", out);
    rc = tu_run_ttasim("collective --platform star --op alltoall --algo dbtree --bytes 1M", out, sizeof out);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "does not implement") != NULL, "%s", out);
    rc = tu_run_ttasim("collective --platform star --bytes 12X", out, sizeof out);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "--bytes") != NULL, "%s", out);
    /* A --bytes list longer than 1,023 characters keeps its last size whole. */
    char cmd[2048] = "collective --platform star --nodes 4 --algo ring --network ideal --json --bytes ";
    for (int i = 0; i < 55; i++)
        strcat(cmd, "0000000000000001000,");
    strcat(cmd, "2000000");
    rc = tu_run_ttasim(cmd, out, sizeof out);
    ck_assert_msg(rc == 0, "%s", out);
    doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "%s: %s", je.text, out);
    res = json_object_get(doc, "results");
    ck_assert_int_eq(json_array_size(res), 56);
    ck_assert_double_eq(json_number_value(json_object_get(json_array_get(res, 55), "bytes")), 2e6);
    json_decref(doc);
}
END_TEST

/* A multi-pod slice worked by hand: pods of a 4 x 4 ICI torus (4 chips a
 * node, ICI 1e10 B/s and 1 us a hop), joined by a data-centre NIC of 8e9 B/s
 * per node, 5 us. On the ideal network, without reduction cost, the
 * allreduce of M bytes is each pod's torus reduce-scatter and all-gather
 * (per dimension of k: 2 (k - 1) steps of 1 us + (M_d / k) / (2 x 1e10),
 * both rings on their own direction of the links), and between them the
 * shards' rings over the pods: 2 (P - 1) steps of 5 us + (M / 16 / P) / S,
 * S = 8e9 / 4 = 2e9 B/s a chip's share of its node's NIC. With 3 pods each
 * ring's block (M / 16 / 2P) crosses its own cable at S / 2; with 2 pods
 * both rings' blocks cross the one cable to the other pod at S. One pod is
 * the torus alone, and the same as the file without its "dcn". */
static const char *MULTIPOD_JSON =
    "{\"format\": \"ttasim-platform\", \"version\": 1, \"name\": \"tiny-pods\", \"description\": \"test\",\n"
    " \"sources\": [\"hand-made\"], \"assumptions\": [],\n"
    " \"node\": {\"components\": [{\"name\": \"chip\", \"device\": \"generic-accelerator\", \"count\": 4}], \"links\": []},\n"
    " \"fabric\": {\"topology\": \"torus2d\", \"nodes\": 4, \"class\": \"ici\",\n"
    "   \"link\": {\"bandwidth_Bps\": 1e10, \"latency_s\": \"1us\"}, \"dims\": [4, 4]%s}}\n";
static const char *MULTIPOD_DCN = ",\n \"dcn\": {\"bandwidth_Bps\": 8e9, \"latency_s\": \"5us\", \"assumptions\": "
                                  "[{\"name\": \"dcn\", \"value\": \"8e9\", \"why\": \"U: test\"}]}";

static platform *multipod_load(int pods, int with_dcn)
{
    char text[2048], path[256];
    snprintf(text, sizeof text, MULTIPOD_JSON, with_dcn ? MULTIPOD_DCN : "");
    platform_options o = {.nodes = 4 * pods};
    tt_error err = {0};
    platform *p = platform_load(tu_write_temp(text, path, sizeof path), &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    unlink(path);
    return p;
}

static double multipod_allreduce_s(const platform *p, double bytes)
{
    coll_params asked = {.op = OP_ALLREDUCE, .algo = ALGO_TORUS2D, .bytes = bytes};
    coll_request rq = coll_request_build(p, &asked);
    rq.reduce_s_per_byte = 0;
    coll_result r;
    tt_error err = {0};
    ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, &rq, 1, &r, &err) == TT_OK, "%s", err.msg);
    ck_assert_int_eq(rq.params.pods, platform_pods(p) > 1 ? platform_pods(p) : 0);
    return r.time_s;
}

START_TEST(multipod_allreduce_by_hand)
{
    const double M = 1048576, ici = 1e10, ici_s = 1e-6, dcn_s = 5e-6;
    double torus = 0, Md = M;
    for (int d = 0; d < 2; d++) { /* 4 x 4 */
        torus += 2 * 3 * (ici_s + Md / 4 / (2 * ici));
        Md /= 4;
    }
    /* one pod: the torus alone, with or without a "dcn" */
    platform *one = multipod_load(1, 1), *plain = multipod_load(1, 0);
    ck_assert_int_eq(platform_pods(one), 1);
    int plain_assumptions = platform_assumption_count(plain);
    ck_assert_int_eq(platform_assumption_count(one), plain_assumptions); /* dcn's: multi-pod only */
    double t1 = multipod_allreduce_s(one, M);
    ck_assert_msg(fabs(t1 / torus - 1) < 1e-6, "one pod: simulated %.9g s, by hand %.9g s", t1, torus);
    ck_assert_double_eq(t1, multipod_allreduce_s(plain, M));
    platform_free(one);
    platform_free(plain);
    for (int pods = 2; pods <= 3; pods++) {
        platform *p = multipod_load(pods, 1);
        ck_assert_int_eq(platform_pods(p), pods);
        ck_assert_int_eq(platform_ranks(p), 16 * pods);
        ck_assert_int_eq(platform_assumption_count(p), plain_assumptions + 1);
        double cable = 8e9 / 4 / (pods > 2 ? 2 : 1), lat, bw;
        /* chip 5 of pod 0 to its counterpart in pod 1: one DCN hop */
        ck_assert_int_eq(platform_path(p, 5, 16 + 5, &lat, &bw), 1);
        ck_assert_double_eq_tol(lat, dcn_s, 1e-15);
        ck_assert_double_eq(bw, cable);
        /* to another chip of pod 1: the ICI hops in pod 0 first, then the DCN */
        ck_assert_int_eq(platform_path(p, 0, 16 + 5, &lat, &bw), 3);
        ck_assert_double_eq_tol(lat, 2 * ici_s + dcn_s, 1e-15);
        ck_assert_double_eq(bw, cable);
        double want = torus + 2 * (pods - 1) * (dcn_s + M / 16 / pods / (8e9 / 4));
        double got = multipod_allreduce_s(p, M);
        /* (1e-4: M / 48 is no whole number of bytes, the ring's blocks differ by one) */
        ck_assert_msg(fabs(got / want - 1) < 1e-4, "%d pods: simulated %.9g s, by hand %.9g s", pods, got, want);
        platform_summary s;
        platform_summarize(p, &s);
        ck_assert_double_eq(s.bisection_Bps, 4 * 8e9); /* a pod's 4 NICs */
        platform_free(p);
    }
    /* 24 chips are not whole pods; 32 without a "dcn" are more than the pod */
    char text[2048], path[256];
    tt_error err = {0};
    platform_options o = {.nodes = 6};
    snprintf(text, sizeof text, MULTIPOD_JSON, MULTIPOD_DCN);
    ck_assert_ptr_null(platform_load(tu_write_temp(text, path, sizeof path), &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "whole pods"));
    unlink(path);
    o.nodes = 8;
    snprintf(text, sizeof text, MULTIPOD_JSON, "");
    ck_assert_ptr_null(platform_load(tu_write_temp(text, path, sizeof path), &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "fabric.dcn"));
    unlink(path);
}
END_TEST

/* The torus schedule adds no per-step overhead on a torus: on 4 x 4,
 * 4 x 4 x 4 and 4 x 2 grids the ideal-network time is, per step, one link
 * latency plus a ring's block over one link (the two rings use both
 * directions: beta = 2 links), the reduce-scatter steps at least the
 * reduction of both rings' blocks, which streams under the transfer (2
 * GB/s: reduction-bound; 400 GB/s: hidden, the closed form without gamma).
 * A side of 2 joins a pair by two cables, the direct and the wrap-around:
 * the 4 x 2 grid runs its second dimension at both cables' rate too. */
START_TEST(torus_schedule_matches_closed_form)
{
    static const struct { const char *fabric; int nodes, dims[3]; } GRIDS[] = {
        {"torus2d", 16, {4, 4, 1}}, {"torus3d", 64, {4, 4, 4}}, {"torus2d", 8, {4, 2, 1}}};
    static const double GAMMAS[] = {1.0 / 400e9, 1.0 / 2e9};
    const double lat_s = 500e-9, link_Bps = 50.0 * 1073741824.0, bytes = 1048576;
    for (int k = 0; k < 3; k++) {
        platform_options o = {.nodes = GRIDS[k].nodes, .link_bw_Bps = link_Bps, .link_latency_s = lat_s};
        tt_error err = {0};
        platform *p = platform_load(GRIDS[k].fabric, &o, &err);
        ck_assert_msg(p != NULL, "%s", err.msg);
        coll_request rq[2];
        for (int m = 0; m < 2; m++) {
            rq[m] = (coll_request){.params = {.op = OP_ALLREDUCE, .algo = ALGO_TORUS, .ranks = GRIDS[k].nodes,
                                              .bytes = bytes},
                                   .reduce_s_per_byte = GAMMAS[m]};
            ck_assert_int_ge(platform_torus_dims(p, rq[m].params.dims), 2);
            ck_assert_mem_eq(rq[m].params.dims, GRIDS[k].dims, sizeof rq[m].params.dims);
        }
        coll_result r[2];
        ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, rq, 2, r, &err) == TT_OK, "%s", err.msg);
        /* the paths the estimate uses agree: one hop along the side of 2 at both cables' rate */
        double lat, bw, bw2;
        platform_path(p, 0, 1, &lat, &bw);
        platform_path(p, 0, 4, &lat, &bw2);
        ck_assert_double_eq(bw2, (GRIDS[k].dims[1] == 2 ? 2 : 1) * bw);
        for (int m = 0; m < 2; m++) {
            double want = 0, Md = bytes;
            for (int d = 0; d < 3; d++) {
                double kd = GRIDS[k].dims[d], step_s = lat_s + Md / kd / (2 * link_Bps);
                if (kd > 1)
                    want += (kd - 1) * (fmax(step_s, Md / kd * GAMMAS[m]) + step_s);
                Md /= kd;
            }
            ck_assert_msg(fabs(r[m].time_s / want - 1) < 1e-3, "%s %d nodes, reduction %.3g s/B: simulated %.9g s, "
                          "expected %.9g s", GRIDS[k].fabric, GRIDS[k].nodes, GAMMAS[m], r[m].time_s, want);
            if (m == 0) /* hidden: the closed form of the physical grid without its gamma term */
                ck_assert_double_eq_tol(r[m].time_s, coll_closed_form_s(&rq[m].params, lat_s, 2 * link_Bps, 0),
                                        1e-3 * want);
        }
        platform_free(p);
    }
}
END_TEST

/* The step patterns schedules announce (schedule_step_pattern) are what
 * their steps generate: no flow for a local step, one flow out of and into
 * every rank for a permutation, every ordered pair for all pairs, each flow
 * of the announced bytes, each rank reducing the announced bytes. Alltoall
 * (three node sizes), direct allreduce, reduce-scatter and allgather
 * (blocks equal or not), recursive halving and doubling, 2..40 ranks. */
START_TEST(step_patterns_match_steps)
{
    static const struct { coll_op op; coll_algo algo; } CASES[] = {
        {OP_ALLTOALL, ALGO_PAIRWISE}, {OP_ALLTOALL, ALGO_DIRECT}, {OP_ALLTOALL, ALGO_BRUCK},
        {OP_ALLTOALL, ALGO_HIER}, {OP_ALLREDUCE, ALGO_DIRECT}, {OP_REDUCE_SCATTER, ALGO_DIRECT},
        {OP_ALLGATHER, ALGO_DIRECT}, {OP_ALLREDUCE, ALGO_RHD}, {OP_ALLREDUCE, ALGO_RD},
        {OP_REDUCE_SCATTER, ALGO_RHD}, {OP_ALLGATHER, ALGO_RD}};
    enum { NCASES = sizeof CASES / sizeof CASES[0] };
    int classed[NCASES] = {0};
    for (int a = 0; a < NCASES; a++)
        for (int n = 2; n <= 40; n++)
            for (int v = 0; v < 3; v++) {
                int rpn = v == 0 ? 1 : v == 1 ? n : ranks_per_node_for(n);
                size_t count = (size_t)(3 * n) + (CASES[a].op != OP_ALLTOALL && v == 2); /* v 2: unequal blocks */
                coll_params p = {.op = CASES[a].op, .algo = CASES[a].algo, .ranks = n, .bytes = (double)count,
                                 .ranks_per_node = rpn};
                schedule s;
                tt_error err = {0};
                const char *why;
                if (!coll_algo_applies(&p, &why))
                    continue;
                ck_assert_int_eq(schedule_build(&p, count, 8, &s, &err), TT_OK);
                xfer *xs = malloc(sizeof *xs * (s.max_step_xfers + 1));
                coll_flow *fl = malloc(sizeof *fl * (s.max_step_xfers + 1));
                int *out = calloc((size_t)n, sizeof *out), *in = calloc((size_t)n, sizeof *in);
                double *red = calloc((size_t)n, sizeof *red);
                for (int st = 0; st < s.nstages; st++)
                    for (int t = 0; t < s.stages[st].steps; t++) {
                        double fb = -1, fr = -1;
                        step_pattern k = schedule_step_pattern(&s, st, t, &fb, &fr);
                        size_t nx = schedule_step(&s, st, t, xs), nf = schedule_merge_flows(&s, xs, nx, fl);
                        if (k == STEP_GENERAL)
                            continue;
                        classed[a]++;
                        memset(out, 0, sizeof *out * (size_t)n);
                        memset(in, 0, sizeof *in * (size_t)n);
                        memset(red, 0, sizeof *red * (size_t)n);
                        for (size_t x = 0; x < nx; x++)
                            if (xs[x].op == XFER_REDUCE)
                                red[xs[x].dst] += (double)xs[x].len * 8;
                        for (size_t f = 0; f < nf; f++) {
                            out[fl[f].src]++;
                            in[fl[f].dst]++;
                            ck_assert_msg(fl[f].bytes == fb, "%s/%s n=%d rpn=%d step %d: %g bytes, announced %g",
                                          coll_op_name(CASES[a].op), coll_algo_name(CASES[a].algo), n, rpn, t,
                                          fl[f].bytes, fb);
                        }
                        int want = k == STEP_LOCAL ? 0 : k == STEP_PERMUTATION ? 1 : n - 1;
                        for (int r = 0; r < n; r++) {
                            ck_assert_msg(out[r] == want && in[r] == want, "%s/%s n=%d rpn=%d step %d: rank %d "
                                          "sends %d and receives %d flows, pattern %d wants %d",
                                          coll_op_name(CASES[a].op), coll_algo_name(CASES[a].algo), n, rpn, t, r,
                                          out[r], in[r], k, want);
                            ck_assert_msg(red[r] == fr, "%s/%s n=%d step %d: rank %d reduces %g bytes, announced %g",
                                          coll_op_name(CASES[a].op), coll_algo_name(CASES[a].algo), n, t, r, red[r],
                                          fr);
                        }
                    }
                free(out);
                free(in);
                free(red);
                free(xs);
                free(fl);
                schedule_free(&s);
            }
    for (int a = 0; a < NCASES; a++)
        ck_assert_msg(classed[a] > 0, "%s/%s: no step announced", coll_op_name(CASES[a].op),
                      coll_algo_name(CASES[a].algo));
}
END_TEST

/* Only a flat single switch is a symmetric crossbar: fat trees, tori and
 * nodes of several accelerators behind NICs refuse the class shortcut. */
START_TEST(symmetric_crossbar_only_flat_switch)
{
    platform *p = star(24), *f = fattree64(1);
    ck_assert_int_eq(coll_symmetric_crossbar(p), 1);
    ck_assert_int_eq(coll_symmetric_crossbar(f), 0);
    platform_free(p);
    platform_free(f);
    static const char *const OTHERS[] = {"torus2d", "ring", "fattree", "dgx1-v100", "dgx-a100"};
    for (int i = 0; i < 5; i++) {
        platform_options o = {.nodes = 4};
        tt_error err = {0};
        platform *q = platform_load(OTHERS[i], &o, &err);
        ck_assert_msg(q != NULL, "%s", err.msg);
        ck_assert_msg(coll_symmetric_crossbar(q) == 0, "%s", OTHERS[i]);
        platform_free(q);
    }
}
END_TEST

/* On a 24-rank switch (calibrated network: cross-traffic, bandwidth factor)
 * the rounds executor's classes (a permutation as one swap, all pairs on 16
 * ranks) give the message-level executor's time, which simulates every
 * flow, within 1 % (alltoall; direct, rhd and rd allreduce with their reductions);
 * auto is never slower than the algorithm it could pick. */
START_TEST(alltoall_classes_match_messages)
{
    static const coll_algo ALG[] = {ALGO_PAIRWISE, ALGO_DIRECT, ALGO_BRUCK, ALGO_HIER};
    static const double SIZES[] = {24e6, 24e3};
    int n = 24;
    platform *p = star(n);
    coll_request rq[18];
    coll_result res[18];
    for (int k = 0; k < 18; k++) {
        coll_params prm = {.op = OP_ALLTOALL, .algo = k < 16 ? ALG[k / 4] : ALGO_AUTO, .ranks = n,
                           .bytes = SIZES[k < 16 ? k / 2 % 2 : k - 16]};
        rq[k] = (coll_request){.params = prm, .reduce_s_per_byte = GAMMA_S_PER_BYTE, .messages = k < 16 ? k % 2 : 0};
    }
    tt_error err = {0};
    ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, rq, 18, res, &err) == TT_OK, "%s", err.msg);
    /* Allreduce with reductions: direct on 24 ranks, recursive halving-doubling and doubling on 16. */
    static const coll_algo AR[] = {ALGO_DIRECT, ALGO_RHD, ALGO_RD};
    coll_request ar[6];
    coll_result arr[6];
    for (int k = 0; k < 6; k++)
        ar[k] = (coll_request){.params = {.op = OP_ALLREDUCE, .algo = AR[k / 2], .ranks = k < 2 ? n : 16, .bytes = 24e6},
                               .reduce_s_per_byte = GAMMA_S_PER_BYTE, .messages = k % 2};
    ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, ar, 6, arr, &err) == TT_OK, "%s", err.msg);
    for (int k = 0; k < 6; k += 2)
        ck_assert_msg(fabs(arr[k].time_s / arr[k + 1].time_s - 1) < 0.01, "%s allreduce: rounds %.9g s, messages %.9g s",
                      coll_algo_name(AR[k / 2]), arr[k].time_s, arr[k + 1].time_s);
    for (int k = 0; k < 16; k += 2)
        ck_assert_msg(fabs(res[k].time_s / res[k + 1].time_s - 1) < 0.01, "%s, %g bytes: rounds %.9g s, messages %.9g s",
                      coll_algo_name(rq[k].params.algo), rq[k].params.bytes, res[k].time_s, res[k + 1].time_s);
    for (int z = 0; z < 2; z++)
        for (int a = 0; a < 4; a++)
            ck_assert_msg(res[16 + z].time_s <= res[a * 4 + z * 2].time_s * (1 + 1e-9), "auto %.9g s (%s), %s %.9g s",
                          res[16 + z].time_s, coll_algo_name(res[16 + z].algo), coll_algo_name(ALG[a]),
                          res[a * 4 + z * 2].time_s);
    platform_free(p);
}
END_TEST

/* Rounds solved by coupled components (collective_fluid.h) against the same
 * rounds simulated whole on SimGrid: NCCL's double binary tree on 24 DGX
 * A100 nodes (relays across rails; two scalable units, so flows through the
 * spine weigh less by their longer latency) at ResNet-50's smallest and
 * largest gradient buckets, with cross-traffic (calibrated) and without
 * (ideal); a pipelined binary tree's fill and drain with reductions on a
 * non-blocking fat tree. The same sharing solved per
 * component: the trees on DGX A100 within 1e-6 where every stage is filling
 * or draining (the small bucket); the large bucket's steady state runs as
 * synchronous rounds where SimGrid runs free windows: within 5e-4 (measured
 * 1.2e-4); the fat tree's within 1.2e-2 (measured 1.02e-2 since its fill
 * and drain run free: see the assertion).
 * Oversubscribed fat trees and tori refuse it. */
START_TEST(fluid_rounds_match_simgrid)
{
    platform_options o = {.nodes = 24};
    tt_error err = {0};
    platform *p = platform_load("dgx-a100", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(coll_fluid_applies(p), 1);
    static const double SIZES[] = {4371200, 16801246};
    for (int net = 0; net < 2; net++) {
        coll_request rq[4];
        coll_result r[4];
        for (int k = 0; k < 4; k++) {
            coll_params asked = {.op = OP_ALLREDUCE, .algo = ALGO_DBTREE, .bytes = SIZES[k / 2]};
            rq[k] = coll_request_build(p, &asked);
            rq[k].fluid_flows = k % 2 ? -1 : 1;
        }
        int nr = net ? 2 : 4; /* ideal: the small bucket only */
        ck_assert_msg(coll_simulate(p, net ? NETWORK_IDEAL : NETWORK_CALIBRATED, rq, nr, r, &err) == TT_OK, "%s",
                      err.msg);
        for (int k = 0; k < nr; k += 2)
            ck_assert_msg(fabs(r[k].time_s / r[k + 1].time_s - 1) < (k ? 5e-4 : 1e-6),
                          "%s, %g bytes: components %.12g s, whole %.12g s",
                          net ? "ideal" : "calibrated", SIZES[k / 2], r[k].time_s, r[k + 1].time_s);
    }
    platform_free(p);
    platform *f = fattree64(1), *over = fattree64(4);
    ck_assert_int_eq(coll_fluid_applies(f), 1);
    ck_assert_int_eq(coll_fluid_applies(over), 0);
    coll_request rq[2];
    coll_result r[2];
    for (int k = 0; k < 2; k++)
        rq[k] = (coll_request){.params = {.op = OP_ALLREDUCE, .algo = ALGO_TREE, .ranks = 64, .bytes = 8e6,
                                          .chunk_bytes = 1e6},
                               .reduce_s_per_byte = GAMMA_S_PER_BYTE, .fluid_flows = k ? -1 : 1};
    ck_assert_msg(coll_simulate(f, NETWORK_CALIBRATED, rq, 2, r, &err) == TT_OK, "%s", err.msg);
    /* 1.02 % fast (5.8104 vs 5.8701 ms): free-running, a rank's next step shares links with the steps others
     * are still in, which components solved step by step do not see (on DGX A100 above they match) */
    ck_assert_msg(fabs(r[0].time_s / r[1].time_s - 1) < 1.2e-2, "tree: components %.12g s, whole %.12g s", r[0].time_s,
                  r[1].time_s);
    /* A ring's identical stage is not a pipelined tree's: it keeps SimGrid's
     * free-running windows (its ranks do not finish together, and out of
     * lockstep it runs slower), so the components leave its time unchanged
     * (were they to run it in lockstep: 8 % faster). */
    for (int k = 0; k < 2; k++)
        rq[k].params.algo = ALGO_RING;
    ck_assert_msg(coll_simulate(f, NETWORK_CALIBRATED, rq, 2, r, &err) == TT_OK, "%s", err.msg);
    ck_assert_msg(fabs(r[0].time_s / r[1].time_s - 1) < 1e-9, "ring: components %.12g s, whole %.12g s", r[0].time_s,
                  r[1].time_s);
    platform_free(f);
    platform_free(over);
    platform_options t = {.nodes = 64, .link_bw_Bps = 12.5e9, .link_latency_s = 1e-6};
    platform *torus = platform_load("torus2d", &t, &err);
    ck_assert_msg(torus != NULL, "%s", err.msg);
    ck_assert_int_eq(coll_fluid_applies(torus), 0);
    platform_free(torus);
}
END_TEST

/* Issue 15: NCCL's tree (the double binary tree it runs) on DGX A100, rounds
 * against messages within 1 %. Synchronous fill and drain rounds added the
 * slowest edge of every depth (NVLink and network mixed): +5.2 % and +1.9 % on
 * 8 nodes, +4.7 % and +1.8 % on 16. Free-running they follow the slowest
 * path: measured +0.65 % and +0.18 % (2 nodes), 0 and +0.044 % (8), 0 and
 * +0.042 % (16) for the small and large bucket. */
/* Communicators named by their ranks, several at once: two data-parallel
 * groups of 8 on the even and the odd GPUs of 2 nodes (a tensor-parallel
 * degree of 2), each a ring allreduce of 64 MB, ideal network, no reduction
 * cost. Each ring crosses between the nodes twice (GPU 6 -> 8, 14 -> 0; the
 * odd ring 7 -> 9, 15 -> 1). On HGX A100 with 4 NICs, GPUs 2k and 2k+1 share
 * NIC k: both rings' crossings share a NIC, each gets half of it, and every
 * one of the 14 steps takes its 8 MB block's time once more:
 * T2 = T1 + 14 x 8 MB / the NIC route's rate. On DGX A100 each GPU has its
 * own NIC (and the crossings relay over the group's own GPUs): nothing is
 * shared, and the two groups take one group's time. */
START_TEST(concurrent_communicators_share_links)
{
    int even[8], both[16];
    for (int i = 0; i < 8; i++) {
        even[i] = both[i] = 2 * i;
        both[8 + i] = 2 * i + 1;
    }
    static const char *const PLATFORMS[] = {"hgx-a100-4hdr", "dgx-a100"};
    for (int k = 0; k < 2; k++) {
        platform_options o = {.nodes = 2};
        tt_error err = {0};
        platform *p = platform_load(PLATFORMS[k], &o, &err);
        ck_assert_msg(p != NULL, "%s", err.msg);
        coll_params prm = {.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 8, .bytes = 64e6};
        coll_request rq[2] = {{.params = prm, .members = even, .replicas = 1},
                              {.params = prm, .members = both, .replicas = 2}};
        coll_result r[2];
        ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, rq, 2, r, &err) == TT_OK, "%s", err.msg);
        double lat, bw;
        platform_path(p, 6, 8, &lat, &bw);
        double shared = k == 0 ? 14 * 8e6 / bw : 0;
        ck_assert_msg(fabs(r[1].time_s - (r[0].time_s + shared)) < 1e-9 * r[1].time_s,
                      "%s: one group %.9g s, two at once %.9g s, expected %.9g s", PLATFORMS[k], r[0].time_s,
                      r[1].time_s, r[0].time_s + shared);
        platform_free(p);
    }
    /* a member out of range, or twice, is refused */
    platform_options o = {.nodes = 2};
    tt_error err = {0};
    platform *p = platform_load("dgx-a100", &o, &err);
    int bad[8] = {0, 2, 4, 6, 8, 10, 12, 12};
    coll_request rq = {.params = {.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = 8, .bytes = 1e6}, .members = bad};
    coll_result r;
    ck_assert_int_eq(coll_simulate(p, NETWORK_IDEAL, &rq, 1, &r, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "already a member"));
    platform_free(p);
}
END_TEST

START_TEST(nccl_tree_rounds_match_messages)
{
    static const int NODES[] = {2, 8, 16};
    static const double SIZES[] = {4098000, 15751168};
    for (int i = 0; i < 3; i++) {
        platform_options o = {.nodes = NODES[i]};
        tt_error err = {0};
        platform *p = platform_load("dgx-a100", &o, &err);
        ck_assert_msg(p != NULL, "%s", err.msg);
        coll_request rq[4];
        coll_result r[4];
        for (int k = 0; k < 4; k++) {
            coll_params asked = {.op = OP_ALLREDUCE, .algo = ALGO_DBTREE, .bytes = SIZES[k / 2]};
            rq[k] = coll_request_build(p, &asked);
            rq[k].messages = k % 2;
        }
        ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, rq, 4, r, &err) == TT_OK, "%s", err.msg);
        for (int k = 0; k < 4; k += 2)
            ck_assert_msg(fabs(r[k].time_s / r[k + 1].time_s - 1) < 0.01, "%d nodes, %g bytes: rounds %.9g s, messages %.9g s",
                          NODES[i], SIZES[k / 2], r[k].time_s, r[k + 1].time_s);
        platform_free(p);
    }
}
END_TEST

/* Three requests on the 40 DGX H100 nodes of p, on all 320 ranks but the
 * third, which runs on two rails' communicators at once (each node's ranks
 * 3 and 5), as a batch folded against the same on the whole platform
 * (a batch folds when all its requests do); every round is solved by
 * components (fluid_flows 1) so that they fold: equal (1e-9). */
static void fold_against_whole(const platform *p, const coll_op *ops, const coll_algo *algos, double bytes,
                               int fold_identical)
{
    tt_error err = {0};
    int rails[80];
    for (int j = 0; j < 40; j++) {
        rails[j] = 8 * j + 3;
        rails[40 + j] = 8 * j + 5;
    }
    coll_request rq[2][3];
    coll_result r[2][3];
    for (int k = 0; k < 6; k++) {
        coll_params asked = {.op = ops[k % 3], .algo = algos[k % 3], .bytes = bytes};
        coll_request *q = &rq[k / 3][k % 3];
        if (k % 3 == 2) {
            asked.ranks = 40;
            *q = coll_request_on(p, &asked, rails, 2);
        } else {
            *q = coll_request_build(p, &asked);
        }
        q->fluid_flows = 1;
        q->full_platform = k / 3;
        q->fold_identical = fold_identical;
    }
    for (int f = 0; f < 2; f++)
        ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, rq[f], 3, r[f], &err) == TT_OK, "%s", err.msg);
    for (int k = 0; k < 3; k++) {
        ck_assert_msg(r[0][k].time_s > 0 && fabs(r[0][k].time_s / r[1][k].time_s - 1) < 1e-9,
                      "request %d: folded %.12g s, whole %.12g s", k, r[0][k].time_s, r[1][k].time_s);
        ck_assert_msg(r[0][k].algo == r[1][k].algo, "request %d: folded ran %s, whole %s", k,
                      coll_algo_name(r[0][k].algo), coll_algo_name(r[1][k].algo));
    }
}

/* Issue 32: a platform of one leaf and one node more (platform_fold_nodes)
 * holds every route of DGX H100's rails, so a collective solved by
 * components there, each folded link told apart by the node or leaf it
 * stands for, takes the whole platform's time: NCCL's allreduce on all 320
 * ranks of 40 nodes (two leaves), dbtree, and two rails' communicators at
 * once (contending for nothing but their own links); rounds of every size
 * solved by components (fluid_flows 1) so that they fold. */
START_TEST(fold_matches_full)
{
    platform_options o = {.nodes = 40};
    tt_error err = {0};
    platform *p = platform_load("dgx-h100", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(platform_fold_nodes(p), 33);
    ck_assert_int_eq(platform_fold_rank(p, 8 * 5 + 2, 8 * 5 + 7), 7);       /* same node */
    ck_assert_int_eq(platform_fold_rank(p, 8 * 5 + 2, 8 * 31 + 7), 8 + 7);  /* same leaf */
    ck_assert_int_eq(platform_fold_rank(p, 8 * 5 + 2, 8 * 39 + 7), 256 + 7); /* the other leaf */
    char first[64];
    ck_assert_int_eq(platform_link_owner(p, "n32-l3_UP", first, sizeof first), OWNER_TO_NODE);
    ck_assert_str_eq(first, "n0-l3_UP");
    ck_assert_int_eq(platform_link_owner(p, "g0-up_DOWN", first, sizeof first), OWNER_FROM_LEAF);
    ck_assert_int_eq(platform_link_owner(p, "spine_link_1_UP", first, sizeof first), OWNER_TO_LEAF);
    ck_assert_str_eq(first, "spine_link_0_UP");
    ck_assert_int_eq(platform_owner_index(p, OWNER_TO_LEAF, 0, 8 * 39), 40 + 1);
    static const coll_op ops[3] = {OP_ALLREDUCE, OP_ALLREDUCE, OP_ALLREDUCE};
    static const coll_algo algos[3] = {ALGO_NCCL, ALGO_DBTREE, ALGO_NCCL};
    fold_against_whole(p, ops, algos, 25e6, 0);
    /* a third leaf adds nothing a fold needs; 33 nodes are the fold itself */
    platform_free(p);
    o.nodes = 33;
    p = platform_load("dgx-h100", &o, &err);
    ck_assert_int_eq(platform_fold_nodes(p), 0);
    platform_free(p);
}
END_TEST

/* Rings' identical stages folded (coll_request.fold_identical): the
 * synchronous round solved by components on the folded platform against
 * SimGrid's rounds on the whole one: NCCL's ring reduce-scatter and
 * all-gather over the 320 ranks of 40 DGX H100 nodes, and a plain ring
 * allreduce on two rails' communicators at once, equal (1e-9). */
START_TEST(fold_identical_near_full)
{
    platform_options o = {.nodes = 40};
    tt_error err = {0};
    platform *p = platform_load("dgx-h100", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    static const coll_op ops[3] = {OP_REDUCE_SCATTER, OP_ALLGATHER, OP_ALLREDUCE};
    static const coll_algo algos[3] = {ALGO_NCCL, ALGO_NCCL, ALGO_RING};
    fold_against_whole(p, ops, algos, 64e6, 1);
    platform_free(p);
}
END_TEST

/* auto on the folded platform where identical stages fold (at 4,096 DGX
 * H100 nodes and more; forced here by fold_identical): every candidate it
 * screens solved by components, so it picks the same algorithm, in the same
 * time, as screening SimGrid's rounds on the whole platform (BERT-Large on
 * 131,072 H100 no longer parses 16,384 nodes' XML): allreduce and
 * reduce-scatter on 320 ranks, allreduce on two rails' communicators. */
START_TEST(fold_auto_matches_full)
{
    platform_options o = {.nodes = 40};
    tt_error err = {0};
    platform *p = platform_load("dgx-h100", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    static const coll_op ops[3] = {OP_ALLREDUCE, OP_REDUCE_SCATTER, OP_ALLREDUCE};
    static const coll_algo algos[3] = {ALGO_AUTO, ALGO_AUTO, ALGO_AUTO};
    fold_against_whole(p, ops, algos, 64e6, 1);
    platform_free(p);
}
END_TEST

/* --links on the folded platform: each folded link's bytes counted for the
 * link of the whole platform it stands for, so the count equals the whole
 * platform's (NCCL's allreduce on 320 ranks of 40 DGX H100 nodes, two
 * leaves): the same links used, per class, and the same busiest links. */
START_TEST(fold_links_match_full)
{
    platform_options o = {.nodes = 40};
    tt_error err = {0};
    platform *p = platform_load("dgx-h100", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    coll_params asked = {.op = OP_ALLREDUCE, .algo = ALGO_NCCL, .bytes = 25e6};
    coll_result r[2];
    for (int f = 0; f < 2; f++) {
        coll_request rq = coll_request_build(p, &asked);
        rq.fluid_flows = 1;
        rq.links = 1;
        rq.full_platform = f;
        ck_assert_msg(coll_simulate(p, NETWORK_CALIBRATED, &rq, 1, &r[f], &err) == TT_OK, "%s", err.msg);
    }
    const link_usage *a = &r[0].links, *b = &r[1].links;
    ck_assert_msg(fabs(r[0].time_s / r[1].time_s - 1) < 1e-9, "folded %.12g s, whole %.12g s", r[0].time_s,
                  r[1].time_s);
    ck_assert_int_gt(a->links_used, 1000);
    ck_assert_int_eq(a->links_used, b->links_used);
    ck_assert_int_eq(a->n_classes, b->n_classes);
    for (int j = 0; j < a->n_classes; j++) {
        int k = 0;
        while (k < b->n_classes && strcmp(a->classes[j].cls, b->classes[k].cls) != 0)
            k++;
        ck_assert_msg(k < b->n_classes, "class %s only folded", a->classes[j].cls);
        ck_assert_int_eq(a->classes[j].links, b->classes[k].links);
        ck_assert_msg(fabs(a->classes[j].bytes / b->classes[k].bytes - 1) < 1e-12, "%s: %.15g against %.15g bytes",
                      a->classes[j].cls, a->classes[j].bytes, b->classes[k].bytes);
    }
    ck_assert_int_eq(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        ck_assert_str_eq(a->top[i].link.name, b->top[i].link.name);
        ck_assert_msg(a->top[i].bytes == b->top[i].bytes, "%s: %.17g against %.17g bytes", a->top[i].link.name,
                      a->top[i].bytes, b->top[i].bytes);
    }
    platform_free(p);
}
END_TEST

/* Estimate first: NCCL's allreduce over 131,072 GPUs (16,384 DGX H100
 * nodes) loads a folded platform of 33 nodes, so only the estimate of its
 * rounds can stop it: past --max-time it is refused before anything
 * runs, its message naming the rounds' share. */
START_TEST(estimate_refuses_past_max_time)
{
    platform_options o = {.nodes = 16384};
    tt_error err = {0};
    platform *p = platform_load("dgx-h100", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    coll_params asked = {.op = OP_ALLREDUCE, .algo = ALGO_NCCL, .bytes = 100e6};
    coll_request rq = coll_request_build(p, &asked);
    coll_result r;
    double was = sim_max_load_time();
    sim_set_max_load_time(2);
    ck_assert_int_eq(coll_simulate(p, NETWORK_CALIBRATED, &rq, 1, &r, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "for the collectives' rounds), more than --max-time 2"), "%s", err.msg);
    double est_s = atof(strstr(err.msg, "about ") + 6);
    ck_assert_msg(est_s > 2 && est_s < 300, "%s", err.msg);
    sim_set_max_load_time(was);
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
    tcase_add_test(t, functional_torus_grids);
    tcase_add_test(t, functional_channel_rings);
    tcase_add_test(t, functional_pipelines);
    tcase_add_test(t, names_and_factors);
    tcase_add_test(t, step_patterns_match_steps);
    tcase_add_test(t, symmetric_crossbar_only_flat_switch);
    suite_add_tcase(s, t);
    t = tcase_create("simgrid");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, closed_form_all_algorithms, 0, OP_COUNT);
    tcase_add_test(t, rounds_match_messages);
    tcase_add_test(t, auto_picks_fastest);
    tcase_add_test(t, contention_oversubscribed_fattree);
    tcase_add_test(t, torus2d_beats_ring_1024);
    tcase_add_test(t, flat_ring_on_torus_matches_messages);
    tcase_add_test(t, torus_monotone_in_slice_size);
    tcase_add_test(t, cli_collective);
    tcase_add_test(t, rounds_match_messages_calibrated_fattree);
    tcase_add_test(t, builtins_run_auto);
    tcase_add_test(t, alltoall_classes_match_messages);
    tcase_add_test(t, fluid_rounds_match_simgrid);
    tcase_add_test(t, nccl_tree_rounds_match_messages);
    tcase_add_test(t, fold_matches_full);
    tcase_add_test(t, fold_identical_near_full);
    tcase_add_test(t, fold_auto_matches_full);
    tcase_add_test(t, fold_links_match_full);
    tcase_add_test(t, estimate_refuses_past_max_time);
    tcase_add_test(t, concurrent_communicators_share_links);
    tcase_add_test(t, torus_schedule_matches_closed_form);
    tcase_add_test(t, multipod_allreduce_by_hand);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
