/* NCCL's tuning model (nccl.h). Every constant is NCCL 2.19's
 * src/graph/tuning.cc (latencies in microseconds, bandwidths in GB/s). */
#include <math.h>

#include "collectives/nccl.h"
#include "collectives/schedule_impl.h"

enum { HW_NVLINK, HW_PCI, HW_NET };

/* Launch latency of each algorithm x protocol (LL, LL128, Simple). */
static const double BASE_LAT_US[NCCL_ALGOS][NCCL_PROTOS] = {{6.6, 14.0, 8.4}, {6.8, 14.0, 0}, {0, 0, 0}};
/* Per-step latency by the hardware a step crosses. */
static const double HW_LAT_US[3][NCCL_ALGOS][NCCL_PROTOS] = {
    {{.6, 1.9, 3.4}, {.6, 1.25, 28}, {0, 0, 23}},  /* NVLink: ring, tree, NVLS */
    {{1.0, 2.5, 5.7}, {1.0, 1.9, 28}, {0, 0, 0}},  /* PCIe */
    {{2.7, 4.0, 14.0}, {5.0, 8.5, 28}, {0, 0, 18}}, /* network */
};
/* Per-channel caps by generation (rows) and 1 node / 2 nodes / more (columns). */
static const double LL_MAX_GBPS[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}};
static const double RING_LL128_MAX_GBPS[3][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}};
static const double TREE_LL128_MAX_GBPS[3][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
static const double TREE_MAX_GBPS[3][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
/* Trees miss the model at medium sizes; NCCL scales their bandwidth by
 * these factors for sizes 64 B << k (k = 0..22). */
static const double TREE_CORRECTION[NCCL_PROTOS][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

static int ring_steps(coll_op op, int n)
{
    return op == OP_ALLREDUCE ? 2 * (n - 1) : op == OP_REDUCE_SCATTER || op == OP_ALLGATHER ? n - 1 : n;
}

/* Steps of a ring that cross the network (NCCL counts 2 per node for allreduce). */
static int ring_net_steps(coll_op op, int nodes)
{
    if (op == OP_ALLREDUCE)
        return nodes > 1 ? 2 * nodes : 0;
    return op == OP_REDUCE_SCATTER || op == OP_ALLGATHER ? nodes - 1 : nodes;
}

static int enabled(const nccl_comm *c, coll_op op, nccl_algo a, nccl_proto p)
{
    if (op == OP_ALLTOALL || c->ranks < 2)
        return 0;
    if (a != NCCL_RING && op != OP_ALLREDUCE)
        return 0;
    if (a == NCCL_NVLS && (p != NCCL_SIMPLE || !c->nvls || c->nodes > 1))
        return 0; /* multi-node NVLS needs CollNet (SHARP switches), not modelled */
    /* LL128 is on by default only where NVIDIA validated it: NVLink inside the node. */
    return p != NCCL_LL128 || c->intra_nvlink;
}

int nccl_predict(const nccl_comm *c, coll_op op, double bytes, nccl_algo a, nccl_proto p, nccl_choice *out)
{
    if (!enabled(c, op, a, p))
        return -1;
    int nodes = c->nodes, n = c->ranks, arch = (int)c->arch;
    int col = nodes <= 2 ? nodes - 1 : 2, llrow = nodes == 1 ? arch : c->cpu_amd ? 1 : 0;
    double ch = c->channels > 0 ? c->channels : 1;
    double intra_GBps = c->bus_intra_Bps / 1e9, inter_GBps = c->bus_inter_Bps / 1e9;
    /* Across nodes a channel's ring leaves by one NIC: the slower side bounds it. */
    double bus = nodes == 1 || inter_GBps <= 0 ? intra_GBps : fmin(intra_GBps, inter_GBps);
    double ppn = (double)n / nodes;

    if (a == NCCL_RING && p == NCCL_LL)
        bus = fmin(LL_MAX_GBPS[llrow][col], bus * (nodes > 1 || op == OP_ALLREDUCE || op == OP_REDUCE ? 0.25 : 1.0 / 3));
    if (a == NCCL_RING && p == NCCL_LL128)
        bus = fmin(bus * (ppn < 2 ? 0.7 : 0.92), ch * RING_LL128_MAX_GBPS[arch][col]);
    if (a == NCCL_TREE) {
        bus = fmin(bus * .92, ch * TREE_MAX_GBPS[arch][col]);
        if (p == NCCL_LL)
            bus = fmin(bus / 3.8, LL_MAX_GBPS[llrow][col]);
        if (p == NCCL_LL128)
            bus = fmin(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * TREE_LL128_MAX_GBPS[arch][col]);
    }
    double ratio = a == NCCL_RING ? (double)n / ring_steps(op, n) : a == NCCL_NVLS ? 5.0 / 6.0 : 0.5;
    double algbw = bus * ratio;

    int intra_hw = c->intra_nvlink ? HW_NVLINK : HW_PCI;
    double intra = HW_LAT_US[intra_hw][a][p], inter = HW_LAT_US[HW_NET][a][p], lat = BASE_LAT_US[a][p];
    double base = lat;
    int steps = 0, net = 0;
    if (a == NCCL_RING) {
        if (op == OP_BROADCAST || op == OP_REDUCE) {
            /* A chain pipelines: one step's latency (NCCL's sameChannels case). */
            lat += nodes == 1 ? intra : inter;
        } else {
            steps = ring_steps(op, n);
            net = ring_net_steps(op, nodes);
            if (nodes > 1) /* every step of an inter-node ring posts network work */
                intra = fmax(intra, (c->cpu_amd ? 2.0 : 1.0) * (p == NCCL_SIMPLE ? 3 : 1));
            lat += (steps - net) * intra + net * inter;
        }
        if (p == NCCL_SIMPLE && nodes > 1 && op == OP_ALLREDUCE && bytes / (ch * n) >= 64) {
            double plateau = c->arch == NCCL_VOLTA ? 1.9 : 1.4; /* the ring's plateau */
            lat *= plateau;
            base *= plateau;
            intra *= plateau;
            inter *= plateau;
        }
    } else if (a == NCCL_TREE) {
        lat += 2 * ((ppn - 1) * intra + ilog2_floor(nodes) * inter);
    } else {
        lat = intra;
    }
    if (a == NCCL_TREE) {
        double chunks = floor(bytes / 64);
        int k = chunks >= 1 ? ilog2_floor(chunks > 1e9 ? 1000000000 : (int)chunks) : 0;
        if (k < 23)
            algbw *= TREE_CORRECTION[p][k];
    }
    if (algbw <= 0)
        return -1;
    out->algo = a;
    out->proto = p;
    out->latency_s = lat * 1e-6;
    out->algbw_Bps = algbw * 1e9;
    out->time_s = out->latency_s + bytes / out->algbw_Bps;
    out->steps = steps;
    out->inter_steps = net;
    out->launch_s = steps ? base * 1e-6 : out->latency_s;
    out->step_intra_s = steps ? intra * 1e-6 : 0;
    out->step_inter_s = steps ? inter * 1e-6 : 0;
    return 0;
}

int nccl_choose(const nccl_comm *c, coll_op op, double bytes, nccl_choice *out)
{
    int found = -1;
    for (int a = 0; a < NCCL_ALGOS; a++)
        for (int p = 0; p < NCCL_PROTOS; p++) {
            nccl_choice x;
            if (nccl_predict(c, op, bytes, (nccl_algo)a, (nccl_proto)p, &x) == 0 &&
                (found < 0 || x.time_s < out->time_s)) {
                *out = x;
                found = 0;
            }
        }
    return found;
}

double nccl_wire_factor(nccl_proto p)
{
    return p == NCCL_LL ? 2.0 : p == NCCL_LL128 ? 128.0 / 120.0 : 1.0;
}

int nccl_ring_slices(nccl_proto p)
{
    return p == NCCL_SIMPLE ? NCCL_RING_SLICES : 1;
}

coll_algo nccl_schedule_algo(nccl_algo a)
{
    return a == NCCL_RING ? ALGO_RING : a == NCCL_TREE ? ALGO_DBTREE : ALGO_AUTO;
}

const char *nccl_algo_name(nccl_algo a)
{
    static const char *const NAMES[] = {"ring", "tree", "nvls"};
    return NAMES[a];
}

const char *nccl_proto_name(nccl_proto p)
{
    static const char *const NAMES[] = {"LL", "LL128", "Simple"};
    return NAMES[p];
}
