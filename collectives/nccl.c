/* NCCL's topology search outcome and tuning model (nccl.h). Every constant
 * is NCCL's: src/graph/search.cc (speed arrays, channel duplication),
 * src/graph/topo.h (NVLink rate per link), src/graph/tuning.cc of NCCL
 * 2.23-2.27 (latencies in microseconds, bandwidths in GB/s). */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "collectives/nccl.h"
#include "collectives/schedule_impl.h"

enum { HW_NVLINK, HW_PCI, HW_NET };

/* NVLink rate per link as NCCL counts it (SM70/SM80/SM90/SM100_NVLINK_BW). */
static const double NVLINK_GBPS[] = {20.0, 20.0, 20.6, 40.1};

/* The per-channel rates the search tries, highest first: inside one node
 * (no NIC) and with NICs, by generation (speedArrayIntra/Inter, sm90, sm100). */
static const double SPEED_INTRA_V[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 0};
static const double SPEED_INTER_V[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                       7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12, 0};
static const double SPEED_INTRA_H[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0, 0};
static const double SPEED_INTER_H[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                       15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12, 0};
static const double SPEED_INTRA_B[] = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0, 0};
static const double SPEED_INTER_B[] = {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                       15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12, 0};
#define MAX_CHANNELS 32 /* MAXCHANNELS / 2: a graph's channels before the run-time doubling */
#define MAX_NVLS_HEADS 16

/* Launch latency (baseLat) and per-step latency by the hardware a step
 * crosses (hwLat), per algorithm x protocol. */
static const double BASE_LAT_US[NCCL_ALGOS][NCCL_PROTOS] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
static const double HW_LAT_US[3][NCCL_ALGOS][NCCL_PROTOS] = {
    {{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}}, /* NVLink */
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}},  /* PCIe */
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}},  /* network */
};
/* Per-channel caps by generation (rows) and 1 node / 2 nodes / more (columns);
 * LL's by GPU on one node and by CPU vendor (Intel, AMD) across nodes. */
static const double LL_MAX_GBPS[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
static const double RING_LL128_MAX_GBPS[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}};
static const double TREE_LL128_MAX_GBPS[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {73.4, 73.4, 58.0}};
static const double TREE_MAX_GBPS[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {77.4, 82.8, 72.0}};
/* Trees miss the model at medium sizes; NCCL scales their bandwidth by
 * these factors for sizes 64 B << k (k = 0..22). */
static const double TREE_CORRECTION[NCCL_PROTOS][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

static const double *speeds(nccl_arch arch, int inter)
{
    if (arch >= NCCL_BLACKWELL)
        return inter ? SPEED_INTER_B : SPEED_INTRA_B;
    if (arch == NCCL_HOPPER)
        return inter ? SPEED_INTER_H : SPEED_INTRA_H;
    return inter ? SPEED_INTER_V : SPEED_INTRA_V;
}

/* The first rate of the array at most max_bw whose min_channels fit in total_bw. */
static double first_speed(const double *arr, double max_bw, double total_bw, int min_channels)
{
    int i = 0;
    while (arr[i + 1] > 0 && (arr[i] > max_bw || arr[i] * min_channels > total_bw))
        i++;
    return arr[i];
}

/* ncclTopoDupChannels: fast channels are split in two of half the rate. */
static void dup_channels(nccl_graph *g, nccl_arch arch)
{
    if (g->channels == 0 || g->bw_intra_GBps < 25.0)
        return;
    if (arch > NCCL_AMPERE && g->bw_intra_GBps < 50.0 && g->channels > 4)
        return;
    int dup = g->channels * 2 < MAX_CHANNELS ? g->channels * 2 : MAX_CHANNELS;
    int div = (dup + g->channels - 1) / g->channels;
    g->bw_intra_GBps /= div;
    g->bw_inter_GBps /= div;
    g->channels = dup;
}

static int clamp_channels(double c)
{
    return c < 1 ? 1 : c > MAX_CHANNELS ? MAX_CHANNELS : (int)c;
}

/* The search for rings and trees: the highest rate of NCCL's array that the
 * paths carry, then as many channels at it as the GPUs' links (and across
 * nodes, the NICs) hold. A ring passes every GPU of a node; across nodes it
 * enters at one and leaves from another, so a GPU's links carry (g-1)/g of
 * the channels (NCCL relaxes trees likewise). */
static void search_ring_tree(const nccl_node *nd, int nodes, int tree, nccl_graph *out)
{
    int g = nd->gpus > 0 ? nd->gpus : 1;
    double link = nd->link_GBps > 0 ? nd->link_GBps : NVLINK_GBPS[nd->arch];
    double nvl = nd->nvlinks * link;
    double gpu_total = nd->nvlinks ? nvl : nd->p2p_GBps;
    double pair = nd->nvlinks ? (nd->nvswitch ? nvl : nd->pair_nvlinks * link) : nd->p2p_GBps;
    double relax = g > 1 && (tree || nodes > 1) ? (double)g / (g - 1) : 1.0;
    double s, ch;
    memset(out, 0, sizeof *out);
    if (nodes <= 1) {
        if (g < 2)
            return;
        s = first_speed(speeds(nd->arch, 0), pair, gpu_total * relax, 1);
        ch = floor(gpu_total * relax / s + 1e-9);
    } else {
        if (nd->nics < 1)
            return;
        double max_bw = fmin(nd->nic_GBps, nd->pcie_GBps > 0 ? nd->pcie_GBps : nd->nic_GBps);
        if (g > 1 && pair > 0) /* a channel also crosses the node */
            max_bw = fmin(max_bw, pair);
        s = first_speed(speeds(nd->arch, 1), max_bw, INFINITY, 1);
        double per_nic = fmax(1, floor(nd->nic_GBps / s + 1e-9));
        ch = nd->nics * per_nic;
        if (g > 1)
            ch = fmin(ch, floor(gpu_total * relax / s + 1e-9));
    }
    out->channels = clamp_channels(ch);
    out->bw_intra_GBps = out->bw_inter_GBps = s;
    out->simple_tree = tree && nd->arch >= NCCL_HOPPER && nodes > 1;
    dup_channels(out, nd->arch);
}

/* NVLS: one head per GPU (at most 16), each pulling its share of the
 * vector through the switch evenly; across nodes each head's NIC carries its
 * share to the other nodes (NVLS with SHARP, or NVLSTree). */
static void search_nvls(const nccl_node *nd, int nodes, nccl_graph *out)
{
    memset(out, 0, sizeof *out);
    if (!nd->nvls || !nd->nvswitch || nd->arch < NCCL_HOPPER || nd->gpus < 2)
        return;
    int heads = nd->gpus < MAX_NVLS_HEADS ? nd->gpus : MAX_NVLS_HEADS;
    double nvl = nd->nvlinks * NVLINK_GBPS[nd->arch];
    out->channels = heads;
    out->bw_intra_GBps = first_speed(speeds(nd->arch, 0), nvl, nvl, heads);
    out->bw_inter_GBps = out->bw_intra_GBps;
    if (nodes > 1) {
        if (nd->nics < 1)
            return (void)memset(out, 0, sizeof *out);
        double s = first_speed(speeds(nd->arch, 1), fmin(nd->nic_GBps, 2 * out->bw_intra_GBps), INFINITY, 1);
        out->bw_inter_GBps = s * nd->nics / heads;
    }
}

/* CollNet (SHARP): a head per NIC, each at the NIC's rate. */
static void search_collnet(const nccl_node *nd, int nodes, nccl_graph *out)
{
    memset(out, 0, sizeof *out);
    if (!nd->collnet || nodes < 2 || nd->nics < 1)
        return;
    double max_bw = fmin(nd->nic_GBps, nd->pcie_GBps > 0 ? nd->pcie_GBps : nd->nic_GBps);
    out->channels = nd->nics < nd->gpus ? nd->nics : nd->gpus;
    out->bw_intra_GBps = out->bw_inter_GBps = first_speed(speeds(nd->arch, 1), max_bw, INFINITY, 1);
}

void nccl_search(const nccl_node *node, int ranks, int nodes, nccl_comm *comm)
{
    memset(comm, 0, sizeof *comm);
    comm->ranks = ranks;
    comm->nodes = nodes;
    comm->node = *node;
    search_ring_tree(node, nodes, 0, &comm->graph[NCCL_RING]);
    search_ring_tree(node, nodes, 1, &comm->graph[NCCL_TREE]);
    search_collnet(node, nodes, &comm->graph[NCCL_COLLNET_DIRECT]);
    if (!node->nvswitch)
        memset(&comm->graph[NCCL_COLLNET_DIRECT], 0, sizeof(nccl_graph));
    search_collnet(node, nodes, &comm->graph[NCCL_COLLNET_CHAIN]);
    search_nvls(node, nodes, &comm->graph[NCCL_NVLS]);
    comm->graph[NCCL_NVLS_TREE] = comm->graph[NCCL_NVLS];
    if (nodes < 2)
        memset(&comm->graph[NCCL_NVLS_TREE], 0, sizeof(nccl_graph));
    if (nodes > 1 && !node->collnet) /* NVLS across nodes reduces in the network too */
        memset(&comm->graph[NCCL_NVLS], 0, sizeof(nccl_graph));
}

static int ring_steps(coll_op op, int n)
{
    return op == OP_ALLREDUCE ? 2 * (n - 1) : op == OP_REDUCE_SCATTER || op == OP_ALLGATHER ? n - 1 : n;
}

/* The algorithms NCCL has for op, and the protocols of each. */
static int algo_runs_op(nccl_algo a, coll_op op)
{
    if (op == OP_ALLTOALL)
        return 0;
    if (op == OP_BROADCAST || op == OP_REDUCE)
        return a == NCCL_RING;
    if (op == OP_ALLGATHER || op == OP_REDUCE_SCATTER)
        return a == NCCL_RING || a == NCCL_NVLS || a == NCCL_COLLNET_DIRECT;
    return 1;
}

/* LL128 is on by default only where NVIDIA validated it: NVLink inside the
 * node, on the generations NCCL lists, and across nodes only where a GPU
 * reaches its NIC without crossing the CPU (tuning.cc: typeInter <= PATH_PXB,
 * PATH_PXN on Hopper and later; LL128's 128-byte stores are not ordered
 * through a host bridge). */
static int ll128_by_default(const nccl_comm *c)
{
    int sm = c->node.sm;
    if (c->nodes > 1 && c->node.nic_via_cpu)
        return 0;
    return c->node.nvlinks > 0 && (sm == 70 || sm == 80 || sm == 90 || sm == 100 || sm == 120);
}

static int available(const nccl_comm *c, coll_op op, nccl_algo a, nccl_proto p)
{
    if (c->ranks < 2 || !algo_runs_op(a, op) || c->graph[a].channels == 0)
        return 0;
    if (a != NCCL_TREE && a != NCCL_RING && p != NCCL_SIMPLE)
        return 0; /* CollNet and NVLS run Simple only */
    return 1;
}

static int log2i(double x)
{
    int k = 0;
    while (x >= 2) {
        x /= 2;
        k++;
    }
    return k;
}

int nccl_tree_depth(const nccl_comm *c)
{
    return c->ranks / (c->nodes > 0 ? c->nodes : 1) - 1 + log2i(c->nodes);
}

/* NCCL's busBw and algorithm bandwidth for a x p on op (GB/s). */
static double model_bw(const nccl_comm *c, coll_op op, nccl_algo a, nccl_proto p)
{
    const nccl_graph *g = &c->graph[a];
    const nccl_node *nd = &c->node;
    int nodes = c->nodes, arch = (int)nd->arch, col = nodes <= 2 ? nodes - 1 : 2;
    int llrow = nodes == 1 ? arch : nd->cpu_amd ? 1 : 0;
    double ppn = (double)c->ranks / nodes, ch = g->channels;
    int collnet = a == NCCL_COLLNET_DIRECT || a == NCCL_COLLNET_CHAIN;
    double bw = nodes <= 2 || collnet ? g->bw_intra_GBps : g->bw_inter_GBps;
    if (a == NCCL_NVLS)
        bw = fmin(g->bw_intra_GBps, g->bw_inter_GBps);
    if (a == NCCL_NVLS_TREE)
        bw = fmin(g->bw_intra_GBps, nodes <= 2 ? g->bw_inter_GBps : g->bw_inter_GBps / 2);
    double bus = ch * bw;
    if (a == NCCL_RING && p == NCCL_LL)
        bus = fmin(LL_MAX_GBPS[llrow][col], bus * .5);
    if (a == NCCL_RING && p == NCCL_LL128)
        bus = fmin(bus * .92, ch * RING_LL128_MAX_GBPS[arch][col]);
    if (a == NCCL_TREE && op == OP_ALLREDUCE)
        bus = fmin(bus * .92, ch * TREE_MAX_GBPS[arch][col]);
    if (a == NCCL_TREE && p == NCCL_LL)
        bus = fmin(bus / 3.8, LL_MAX_GBPS[llrow][col]);
    if (a == NCCL_TREE && p == NCCL_LL128)
        bus = fmin(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * TREE_LL128_MAX_GBPS[arch][col]);
    if (a == NCCL_TREE && g->simple_tree)
        bus *= .85;
    if (a == NCCL_COLLNET_DIRECT) {
        if (op == OP_ALLGATHER || op == OP_REDUCE_SCATTER) {
            bus = ppn * bw;
            if (nodes > 1 && ppn > nd->nics)
                return 0; /* needs a NIC per GPU */
            double w = (ppn - 1) / (8 - 1);
            bus *= w * 0.85 + (1 - w) * 0.95;
        } else {
            double f = ppn / ch; /* GPUs per NIC, softened */
            f -= (f - 1) / 2;
            bus /= f;
            if (arch >= NCCL_HOPPER)
                bus *= .85;
        }
    }
    if (a != NCCL_RING && (op == OP_ALLGATHER || op == OP_REDUCE_SCATTER))
        return bus;
    if (a == NCCL_RING)
        return bus * c->ranks / ring_steps(op, c->ranks);
    if (a == NCCL_NVLS || a == NCCL_NVLS_TREE)
        return bus * 5.0 / 6.0;
    return bus * .5;
}

/* nccl_predict with LL128 allowed or not (NCCL_PROTO naming it turns it on anywhere). */
static int predict(const nccl_comm *c, coll_op op, double bytes, nccl_algo a, nccl_proto p, int ll128,
                   nccl_choice *out)
{
    if (!available(c, op, a, p) || (p == NCCL_LL128 && !ll128))
        return -1;
    const nccl_node *nd = &c->node;
    int nodes = c->nodes, n = c->ranks;
    double algbw = model_bw(c, op, a, p);
    if (a == NCCL_TREE && op == OP_ALLREDUCE) {
        int k = log2i(floor(bytes / 64));
        if (bytes >= 64 && k < 23)
            algbw *= TREE_CORRECTION[p][k];
    }
    if (!(algbw > 0))
        return -1;
    int intra_hw = nd->nvlinks ? HW_NVLINK : HW_PCI;
    double ppn = (double)n / nodes;
    double intra = HW_LAT_US[intra_hw][a][p];
    /* With one GPU per node every latency shows: the tree's network figure. */
    double inter = HW_LAT_US[HW_NET][ppn == 1 ? NCCL_TREE : a][p];
    double lat = BASE_LAT_US[a][p], base = lat;
    int steps = 0, net = 0;
    if (a == NCCL_RING) {
        if (op == OP_BROADCAST || op == OP_REDUCE) {
            lat += nodes == 1 ? intra : inter; /* a chain pipelines: one step (NCCL's sameChannels) */
        } else {
            steps = ring_steps(op, n);
            net = nodes == 1 ? 0 : op == OP_ALLREDUCE ? 2 * (nodes - 1) : nodes - 1;
            if (nodes > 1) /* every step of an inter-node ring posts network work */
                intra = fmax(intra, (nd->cpu_amd ? 2.0 : 1.0) * (p == NCCL_SIMPLE ? 3 : 1));
            lat += (steps - net) * intra + net * inter;
        }
        /* The ring's plateau (comm->nChannels: the graph's channels, doubled at run time). */
        if (p == NCCL_SIMPLE && nodes > 1 && op == OP_ALLREDUCE && bytes / (2.0 * c->graph[a].channels * n) >= 64) {
            double plateau = nd->arch < NCCL_AMPERE ? 1.9 : 1.4;
            lat *= plateau;
            base *= plateau;
            intra *= plateau;
            inter *= plateau;
        }
    } else if (a == NCCL_TREE) {
        lat += 2 * ((ppn - 1) * intra + log2i(nodes) * inter);
    } else if (a == NCCL_COLLNET_DIRECT) {
        lat += 2 * (fmin(1, ppn - 1) * intra + (ppn - 1) * 0.4) + inter; /* 0.4 us arity serialization */
    } else if (a == NCCL_COLLNET_CHAIN) {
        lat += 2 * (ppn - 1) * intra + inter;
    } else if (a == NCCL_NVLS) {
        lat = intra + (nodes > 1 ? inter : 0);
    } else { /* NVLS tree */
        lat += intra + 2 * log2i(nodes) * inter;
    }
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

int nccl_predict(const nccl_comm *c, coll_op op, double bytes, nccl_algo a, nccl_proto p, nccl_choice *out)
{
    return predict(c, op, bytes, a, p, ll128_by_default(c), out);
}

static const char *const ALGO_WORDS[NCCL_ALGOS] = {"tree", "ring", "collnetdirect", "collnetchain", "nvls", "nvlstree"};
static const char *const PROTO_WORDS[NCCL_PROTOS] = {"ll", "ll128", "simple"};

/* NCCL's list syntax: comma-separated names, or ^names for all but those. */
static int parse_list(const char *value, const char *const *words, int nwords, unsigned *mask, const char **bad,
                      int *bad_len)
{
    int neg = value[0] == '^';
    const char *s = value + neg;
    unsigned named = 0;
    for (;;) {
        size_t len = strcspn(s, ",");
        int found = -1;
        for (int i = 0; i < nwords && found < 0; i++)
            if (len == strlen(words[i]) && strncasecmp(s, words[i], len) == 0)
                found = i;
        if (found < 0) {
            *bad = s;
            *bad_len = (int)len;
            return -1;
        }
        named |= 1u << found;
        if (s[len] == '\0')
            break;
        s += len + 1;
    }
    *mask = neg ? ((1u << nwords) - 1) & ~named : named;
    return 0;
}

int nccl_parse_algos(const char *value, unsigned *mask, const char **bad, int *bad_len)
{
    return parse_list(value, ALGO_WORDS, NCCL_ALGOS, mask, bad, bad_len);
}

int nccl_parse_protos(const char *value, unsigned *mask, const char **bad, int *bad_len)
{
    return parse_list(value, PROTO_WORDS, NCCL_PROTOS, mask, bad, bad_len);
}

const char *nccl_algo_words(void)
{
    return "tree, ring, collnetdirect, collnetchain, nvls, nvlstree";
}

const char *nccl_proto_words(void)
{
    return "ll, ll128, simple";
}

int nccl_choose(const nccl_comm *c, unsigned algos, unsigned protos, coll_op op, double bytes, nccl_choice *out)
{
    int found = -1, ll128 = protos ? (int)(protos >> NCCL_LL128 & 1u) : ll128_by_default(c);
    for (int a = 0; a < NCCL_ALGOS; a++)
        for (int p = 0; p < NCCL_PROTOS; p++) {
            nccl_choice x;
            if ((algos && !(algos >> a & 1)) || (protos && !(protos >> p & 1)))
                continue;
            if (predict(c, op, bytes, (nccl_algo)a, (nccl_proto)p, ll128, &x) == 0 &&
                (found < 0 || x.time_s < out->time_s)) {
                *out = x;
                found = 0;
            }
        }
    return found;
}

double nccl_kernel_cap_Bps(const nccl_choice *choice)
{
    if (choice->algo == NCCL_TREE || (choice->algo == NCCL_RING && choice->proto != NCCL_SIMPLE))
        return choice->algbw_Bps;
    return 0;
}

double nccl_tree_chunk_bytes(double channel_bytes, int depth)
{
    double chunk = 4.0 * 1024 * 1024 / 8;
    while (channel_bytes / chunk < depth * 8 && chunk > 131072)
        chunk /= 2;
    while (channel_bytes / chunk < depth * 4 && chunk > 65536)
        chunk /= 2;
    while (channel_bytes / chunk < depth && chunk > 32768)
        chunk /= 2;
    return chunk;
}

double nccl_nvls_efficiency(nccl_arch arch)
{
    return arch >= NCCL_BLACKWELL ? 0.74 : 0.85;
}

double nccl_net_recv_factor(const nccl_comm *c, coll_op op, nccl_algo a)
{
    int n = c->ranks, nodes = c->nodes > 0 ? c->nodes : 1;
    if (a == NCCL_RING)
        return op == OP_BROADCAST || op == OP_REDUCE ? 1.0 : (double)ring_steps(op, n) / n;
    if (a == NCCL_TREE || a == NCCL_NVLS_TREE)
        return 2.0 * (nodes - 1) / nodes;
    return 1.0;
}

double nccl_net_step_s(nccl_algo a, nccl_proto p)
{
    return HW_LAT_US[HW_NET][a][p] * 1e-6;
}

double nccl_wire_factor(nccl_proto p)
{
    return p == NCCL_LL ? 2.0 : p == NCCL_LL128 ? 128.0 / 120.0 : 1.0;
}

int nccl_ring_slices(nccl_proto p)
{
    return p == NCCL_SIMPLE ? NCCL_RING_SLICES : 1;
}

const char *nccl_algo_name(nccl_algo a)
{
    static const char *const NAMES[NCCL_ALGOS] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree"};
    return NAMES[a];
}

const char *nccl_proto_name(nccl_proto p)
{
    static const char *const NAMES[] = {"LL", "LL128", "Simple"};
    return NAMES[p];
}
