/* NCCL's choice on a platform (nccl_plan.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/engine/collective_sim.h"
#include "sim/engine/nccl_plan.h"

/* NCCL's figure for a PCIe link: width x rate / 80 (topo.cc), 3/4 of the
 * raw rate (Gen3 x16 12 GB/s, topo.h PCI_BW; Gen4 24, Gen5 48). */
#define NCCL_PCIE_SHARE 0.75

/* Where a node's GPUs hang off two CPU sockets, NCCL rates a path between
 * them at the sockets' link (topo.h: BDW_QPI_BW 6 GB/s, SKL 10, SRP 22, AMD
 * 16), an Intel link at 5/6 of it (INTEL_P2P_OVERHEAD: P2P traffic in 64-byte
 * packets); INFINITY when no path crosses one or its rate is unknown. */
static double socket_link_GBps(const platform *p, const int *members, int ranks)
{
    int crosses = 0, m0 = members ? members[0] : 0, rpn = platform_ranks_per_node(p) > 0 ? platform_ranks_per_node(p) : 1;
    for (int i = 1; i < ranks && !crosses; i++) {
        int m = members ? members[i] : i;
        crosses = m / rpn == m0 / rpn &&
                  (platform_path_class_links(p, m0, m, "qpi") > 0 || platform_path_class_links(p, m0, m, "upi") > 0);
    }
    const char *names[64];
    const device_info *devs[64];
    int nc = platform_node_components(p, DEVICE_CPU, names, devs, 64);
    if (!crosses || nc < 1 || devs[0]->nccl_socket_Bps <= 0)
        return INFINITY;
    double bw = devs[0]->nccl_socket_Bps / 1e9;
    return strcmp(devs[0]->vendor, "intel") == 0 ? bw * 5 / 6 : bw;
}

/* Whether a shortest route from component a to b (hops long) passes a CPU
 * socket: NCCL's PHB or SYS between a GPU and its NIC. */
static int path_crosses_cpu(const platform *p, const char *a, const char *b, int hops)
{
    const char *names[64];
    const device_info *devs[64];
    int nc = platform_node_components(p, DEVICE_CPU, names, devs, 64);
    for (int i = 0; i < nc && i < 64; i++) {
        double lat, bw;
        int ha = platform_component_path(p, a, names[i], &lat, &bw), hb = platform_component_path(p, names[i], b, &lat, &bw);
        if (ha > 0 && hb > 0 && ha + hb == hops)
            return 1;
    }
    return 0;
}

/* The platform rank of the communicator's i-th member. */
static int member(const int *members, int i)
{
    return members ? members[i] : i;
}

int nccl_comm_of(const platform *p, const int *members, int ranks, int collnet, nccl_comm *out)
{
    int m0 = member(members, 0);
    const device_info *gpu = platform_device(p, m0);
    memset(out, 0, sizeof *out);
    if (!gpu || gpu->collective_library == COLL_LIB_NONE || ranks < 1)
        return -1;
    int rpn = platform_ranks_per_node(p) > 0 ? platform_ranks_per_node(p) : 1;
    /* the members on the first member's node; the first member on another node */
    int g = 0, m1 = -1, far = -1;
    for (int i = 0; i < ranks; i++) {
        int m = member(members, i);
        if (m / rpn == m0 / rpn) {
            g++;
            if (m != m0 && m1 < 0)
                m1 = m;
        } else if (far < 0) {
            far = m;
        }
    }
    int nodes = (ranks + g - 1) / g;
    nccl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.gpus = g;
    double cc = gpu->compute_capability;
    nd.arch = cc >= 10 ? NCCL_BLACKWELL : cc >= 9 ? NCCL_HOPPER : cc >= 8 ? NCCL_AMPERE : NCCL_VOLTA;
    nd.sm = (int)lround(cc * 10);
    if (gpu->collective_library == COLL_LIB_RCCL) {
        /* RCCL (NCCL 2.2x's fork) keeps NCCL's search and tuner; its tables
         * for AMD GPUs are its own: U, NCCL's Hopper speeds, caps and
         * latencies stand in for them, and no sm: LL128 stays off by default
         * (RCCL_LL128_FORCE_ENABLE turns it on); xGMI links count at the
         * device's library_link_Bps (RCCL's ncclTopoXGMISpeed). */
        nd.arch = NCCL_HOPPER;
        nd.sm = 0;
        nd.link_GBps = gpu->library_link_Bps / 1e9;
    }
    /* Inside a node: NVLink to the next GPU through a switch (two hops) or
     * direct links to each neighbour; else PCIe. */
    const char *cls = NULL;
    int pair = m1 >= 0 ? platform_rank_links(p, m0, m1, &cls) : 0;
    double lat, bw = 0;
    /* xGMI (AMD's Infinity Fabric between GPUs) is what RCCL's topology
     * treats as NCCL treats NVLink. */
    if (cls && (strncmp(cls, "nvlink", 6) == 0 || strncmp(cls, "xgmi", 4) == 0)) {
        nd.nvswitch = platform_hops(p, m0, m1) > 1;
        nd.pair_nvlinks = pair;
        nd.nvlinks = nd.nvswitch ? pair : 0;
        for (int i = 0; !nd.nvswitch && i < ranks; i++) {
            int m = member(members, i);
            const char *c2 = NULL;
            int k = m != m0 && m / rpn == m0 / rpn && platform_hops(p, m0, m) == 1 ? platform_rank_links(p, m0, m, &c2) : 0;
            nd.nvlinks += k;
            nd.pair_nvlinks = k > nd.pair_nvlinks ? k : nd.pair_nvlinks;
        }
    } else if (g > 1) {
        nd.p2p_GBps = INFINITY;
        for (int i = 0; i < ranks; i++) {
            int m = member(members, i);
            if (m == m0 || m / rpn != m0 / rpn)
                continue;
            platform_path(p, m0, m, &lat, &bw);
            nd.p2p_GBps = fmin(nd.p2p_GBps, NCCL_PCIE_SHARE * bw / 1e9);
        }
        nd.p2p_GBps = fmin(nd.p2p_GBps, socket_link_GBps(p, members, ranks));
    }
    /* The node's NICs: the distinct components its members leave by. */
    const char *gpu0 = platform_rank_component(p, m0), *exit0 = platform_rank_exit(p, m0);
    if (nodes > 1 && exit0 && far >= 0) {
        for (int i = 0; i < ranks; i++) {
            int m = member(members, i), seen = m / rpn != m0 / rpn;
            for (int j = 0; j < i && !seen; j++) {
                int q = member(members, j);
                seen = q / rpn == m0 / rpn && strcmp(platform_rank_exit(p, q), platform_rank_exit(p, m)) == 0;
            }
            nd.nics += !seen;
        }
        double nic_bw = 0, pcie_bw = 0;
        int hops = gpu0 ? platform_component_path(p, gpu0, exit0, &lat, &pcie_bw) : -1;
        if (hops >= 0) {
            const char *nn[64];
            const device_info *nics[64];
            int k = platform_node_components(p, DEVICE_NIC, nn, nics, 64);
            for (int i = 0; i < k && i < 64; i++)
                if (strcmp(nn[i], exit0) == 0)
                    nic_bw = nics[i]->bandwidth_Bps;
        }
        double ibw;
        platform_path(p, m0, far, &lat, &ibw);
        nd.nic_GBps = (nic_bw > 0 ? nic_bw : ibw) / 1e9;
        nd.pcie_GBps = pcie_bw > 0 ? NCCL_PCIE_SHARE * pcie_bw / 1e9 : nd.nic_GBps;
        nd.collnet = collnet && platform_fabric_sharp(p);
        nd.nic_via_cpu = hops > 0 && path_crosses_cpu(p, gpu0, exit0, hops);
        const char *cn[64];
        const device_info *cpus[64];
        if (nd.nic_via_cpu && platform_node_components(p, DEVICE_CPU, cn, cpus, 64) > 0)
            nd.gdr_write_GBps = cpus[0]->p2p_write_Bps / 1e9;
    }
    const char *names[64];
    const device_info *devs[64];
    int ns = platform_node_components(p, DEVICE_SWITCH, names, devs, 64);
    for (int i = 0; i < ns && i < 64; i++)
        nd.nvls |= devs[i]->switch_reduction && nd.nvswitch;
    int nc = platform_node_components(p, DEVICE_CPU, names, devs, 64);
    nd.cpu_amd = nc > 0 && strcmp(devs[0]->vendor, "amd") == 0;
    nccl_search(&nd, ranks, nodes, out);
    return 0;
}

/* The shapes NCCL's pipelined algorithms run as (collectives/pipeline.c). */
static void pipeline_shape(nccl_algo a, int nodes, coll_params *q)
{
    q->algo = ALGO_PIPELINE;
    q->pipe_intra = a == NCCL_TREE || a == NCCL_COLLNET_CHAIN ? PIPE_CHAIN
                    : a == NCCL_COLLNET_DIRECT                 ? PIPE_DIRECT
                                                               : PIPE_SWITCH;
    q->pipe_inter = nodes < 2                                      ? PIPE_NONE
                    : a == NCCL_TREE || a == NCCL_NVLS_TREE       ? PIPE_DTREE
                                                                  : PIPE_SHARP;
}

int nccl_plan_make(const platform *p, const int *members, const coll_params *params, double reduce_s_per_byte,
                   nccl_plan *out)
{
    memset(out, 0, sizeof *out);
    if (nccl_comm_of(p, members, params->ranks, params->nccl_collnet, &out->comm) ||
        nccl_choose(&out->comm, params->nccl_algos, params->nccl_protos, params->op, params->bytes, &out->choice))
        return -1;
    /* NVLS and CollNet allgathers and reduce-scatters (Blackwell's NCCL picks
     * them), and pipelines over more than a schedule's 16 GPUs of a node (an
     * NVL72 rack), have no schedule here: NCCL's best ring runs instead. */
    if ((params->op != OP_ALLREDUCE || out->comm.node.gpus > 16) && out->choice.algo != NCCL_RING &&
        nccl_choose(&out->comm, 1u << NCCL_RING, params->nccl_protos, params->op, params->bytes, &out->choice))
        return -1;
    const nccl_comm *c = &out->comm;
    nccl_algo a = out->choice.algo;
    out->params = *params;
    coll_params *q = &out->params;
    int n = params->ranks, nodes = c->nodes, g = c->node.gpus;
    double wire = nccl_wire_factor(out->choice.proto);
    q->ranks_per_node = g;
    q->bytes = params->bytes * wire;
    int lanes = 1, ch = c->graph[a].channels;
    /* the platform's link-following orders are over a whole node's ranks; a
     * communicator of part of each node takes its members in order */
    int whole = g == platform_ranks_per_node(p) && (!members || members[0] % g == 0);
    if (a == NCCL_RING) {
        /* Rings follow direct links inside a node; across nodes one per NIC,
         * each leaving by its own (NCCL's channels per NIC run alike). */
        q->algo = ALGO_RING;
        if (nodes > 1) {
            q->channels = c->node.nics;
            if (whole)
                platform_ring_orders(p, q->channels < 8 ? q->channels : 8, 1, q->node_order);
        } else { /* one node: as many rings as have links of their own (DGX-1: 6) */
            int rings = whole ? platform_ring_orders(p, 8, 0, q->node_order) : 0;
            q->channels = rings > 1 ? rings : 1;
        }
        lanes = 2 * ch;
    } else {
        pipeline_shape(a, nodes, q);
        q->ranks_per_node = g;
        q->switch_efficiency = nccl_nvls_efficiency(c->node.arch);
        if (a == NCCL_TREE || a == NCCL_COLLNET_CHAIN) {
            /* a chain per channel from the GPU of its NIC; NCCL doubles a tree's channels onto its second tree */
            q->channels = nodes > 1 && c->node.nics > 0 && ch > c->node.nics ? c->node.nics : ch;
            if (q->channels > 16)
                q->channels = 16;
            if (whole)
                platform_ring_orders(p, q->channels < 8 ? q->channels : 8, nodes > 1, q->node_order);
            lanes = q->channels * (q->pipe_inter == PIPE_DTREE ? 2 : 1);
        } else {
            lanes = g * (q->pipe_inter == PIPE_DTREE ? 2 : 1);
        }
        q->chunk_bytes = nccl_tree_chunk_bytes(q->bytes / lanes, nccl_tree_depth(c));
    }
    /* The links' own latency, which the simulation already charges: the
     * schedule's time on a byte per block of every lane (a single byte would
     * leave most steps empty). NCCL's figure beyond it is software. */
    coll_params tiny = *q;
    tiny.bytes = (double)n * 64;
    tiny.chunk_bytes = 0;
    schedule s;
    tt_error err = {0};
    double hw_s = 0;
    long tiny_steps = 0;
    if (schedule_build(&tiny, (size_t)tiny.bytes, 1.0, &s, &err) == TT_OK) {
        hw_s = coll_estimate_s(p, members, &s, 0, NULL);
        tiny_steps = schedule_steps(&s);
        schedule_free(&s);
    }
    nccl_timing *t = &out->timing;
    if (q->algo == ALGO_PIPELINE && tiny_steps > 0) {
        /* what every steady step's edges pay at least: the latency inside a node
         * (the network's where each node has one GPU) */
        double bw;
        platform_path(p, member(members, 0), member(members, 1), &t->pipe_lat_s, &bw);
        t->pipe_steady = coll_pipeline_chunks(q, (size_t)llround(q->bytes)) - (tiny_steps - 1);
        if (t->pipe_steady < 0)
            t->pipe_steady = 0;
    }
    t->on = 1;
    t->latency_s = out->choice.latency_s;
    t->hw_s = fmax(0, hw_s);
    t->launch_s = out->choice.launch_s;
    t->step_intra_s = out->choice.step_intra_s;
    t->step_inter_s = out->choice.step_inter_s;
    t->steps = q->algo == ALGO_RING ? out->choice.steps : 0;
    double lat_bw;
    if (g > 1)
        platform_path(p, member(members, 0), member(members, 1), &t->link_intra_s, &lat_bw);
    if (nodes > 1)
        platform_path(p, member(members, 0), member(members, g), &t->link_inter_s, &lat_bw);
    t->inter_steps = out->choice.inter_steps;
    t->slices = nccl_ring_slices(out->choice.proto);
    t->bytes = params->bytes;
    t->cap_Bps = nccl_kernel_cap_Bps(&out->choice);
    if (nodes > 1 && c->node.gdr_write_GBps > 0 && c->node.nics > 0) {
        t->net_cap_Bps = c->node.nics * c->node.gdr_write_GBps * 1e9 / (nccl_net_recv_factor(c, params->op, a) * wire);
        /* a tree's chunk is received, flushed through the root complex and only then
         * reduced and passed on: every step of its pipeline shows NCCL's network step */
        if (q->algo == ALGO_PIPELINE && q->pipe_inter == PIPE_DTREE && tiny_steps > 0)
            t->net_steps_s = (coll_pipeline_chunks(q, (size_t)llround(q->bytes)) + tiny_steps - 1) *
                             nccl_net_step_s(a, out->choice.proto);
    }
    /* Simple cuts a ring's block into chunks; LL and LL128 stream lines, one latency per step. */
    t->chunks = out->choice.proto == NCCL_SIMPLE ? ceil(q->bytes / ((double)lanes * n * NCCL_RING_CHUNK_BYTES)) : 1;
    if (t->chunks < 1)
        t->chunks = 1;
    /* What the wire carries per rank: the slower of a GPU's links and its share of the NICs. */
    double intra_Bps = g > 1 ? c->graph[NCCL_RING].channels * c->graph[NCCL_RING].bw_intra_GBps * 1e9 : 0;
    double nic_Bps = nodes > 1 && g > 0 ? c->node.nics * c->node.nic_GBps * 1e9 / g : 0;
    double wire_Bps = intra_Bps > 0 && nic_Bps > 0 ? fmin(intra_Bps, nic_Bps) : intra_Bps > 0 ? intra_Bps : nic_Bps;
    int gpus_reduce = !(q->algo == ALGO_PIPELINE && q->pipe_intra == PIPE_SWITCH && q->pipe_inter != PIPE_DTREE);
    if (gpus_reduce && wire_Bps > 0)
        out->reduce_s_per_byte = fmax(0, reduce_s_per_byte - 1 / wire_Bps);
    return 0;
}

double nccl_timing_total_s(const nccl_timing *t, double simulated_s)
{
    if (!t->on || isnan(simulated_s))
        return simulated_s;
    double total;
    if (t->pipe_steady > 0 || (t->steps <= 0 && t->cap_Bps > 0)) {
        /* a pipeline: its steady steps without their links' latency; where NCCL's
         * rate is its kernels' (the tree), its model is the floor below, whose
         * latency already holds the fill's chunk per hop, else its latency beyond
         * the links' adds */
        total = fmax(0, simulated_s - t->pipe_steady * t->pipe_lat_s);
        if (t->cap_Bps <= 0)
            total += fmax(0, t->latency_s - t->hw_s);
    } else if (t->steps <= 0) {
        total = simulated_s + fmax(0, t->latency_s - t->hw_s);
    } else {
        double bw_s = fmax(0, simulated_s - t->hw_s); /* the transfers alone */
        double units = t->chunks * t->steps, unit_s = bw_s / units;
        double hidden_s = unit_s - unit_s / t->slices; /* a step's latency hides under its later slices */
        double exposed = t->launch_s + t->chunks * ((t->steps - t->inter_steps) * fmax(0, t->step_intra_s - hidden_s) +
                                                    t->inter_steps * fmax(0, t->step_inter_s - hidden_s));
        /* The links' latency is a floor under NCCL's, pipelined the same way. */
        double links = t->chunks * ((t->steps - t->inter_steps) * fmax(0, t->link_intra_s - hidden_s) +
                                    t->inter_steps * fmax(0, t->link_inter_s - hidden_s));
        total = bw_s + fmax(exposed, links);
    }
    if (t->cap_Bps > 0) /* the kernels cannot outrun NCCL's per-channel limits */
        total = fmax(total, t->latency_s + t->bytes / t->cap_Bps);
    if (t->net_cap_Bps > 0) /* nor the NICs' receives their path into GPU memory */
        total = fmax(total, t->latency_s + t->bytes / t->net_cap_Bps + t->net_steps_s);
    return total;
}

const char *nccl_plan_name(const nccl_plan *plan, char *buf, size_t buf_bytes)
{
    snprintf(buf, buf_bytes, "%s/%s", nccl_algo_name(plan->choice.algo), nccl_proto_name(plan->choice.proto));
    return buf;
}

int nccl_resolve(const platform *p, const int *members, coll_params *params, double *reduce_s_per_byte,
                 nccl_timing *timing, char *name, size_t name_bytes, tt_error *err)
{
    memset(timing, 0, sizeof *timing);
    if (name_bytes)
        name[0] = '\0';
    if (params->algo != ALGO_NCCL)
        return TT_OK;
    nccl_plan plan;
    nccl_comm c;
    if (nccl_plan_make(p, members, params, *reduce_s_per_byte, &plan) == 0) {
        *params = plan.params;
        *reduce_s_per_byte = plan.reduce_s_per_byte;
        *timing = plan.timing;
        nccl_plan_name(&plan, name, name_bytes);
        return TT_OK;
    }
    if (params->op != OP_ALLTOALL && nccl_comm_of(p, members, params->ranks, 0, &c) == 0)
        return tt_error_set(err, TT_EINPUT,
                            "%s on %d ranks of %s: NCCL has no algorithm and protocol left to run it under the "
                            "NCCL_ALGO/NCCL_PROTO given (NCCL fails with 'no algorithm/protocol available'); allow "
                            "ring and simple", coll_op_name(params->op), params->ranks, platform_name(p));
    /* Not NCCL's hardware: the schedule native to the fabric. */
    const char *why;
    params->algo = ALGO_TORUS;
    if (params->op != OP_ALLREDUCE || !coll_algo_applies(params, &why))
        params->algo = ALGO_AUTO;
    return TT_OK;
}
