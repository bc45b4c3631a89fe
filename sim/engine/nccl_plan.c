/* NCCL's choice on a platform (nccl_plan.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/engine/collective_sim.h"
#include "sim/engine/nccl_plan.h"

int nccl_comm_of(const platform *p, int ranks, nccl_comm *out)
{
    const device_info *gpu = platform_device(p, 0);
    memset(out, 0, sizeof *out);
    if (!gpu || gpu->compute_capability <= 0 || ranks < 1)
        return -1;
    int rpn = platform_ranks_per_node(p);
    out->ranks = ranks;
    out->nodes = rpn > 0 && ranks > rpn ? (ranks + rpn - 1) / rpn : 1;
    double cc = gpu->compute_capability;
    out->arch = cc >= 9 ? NCCL_HOPPER : cc >= 8 ? NCCL_AMPERE : NCCL_VOLTA;
    /* Inside a node: the first link toward the next GPU says NVLink or PCIe and
     * how many links (channels) NCCL spreads over. */
    int local = ranks < rpn ? ranks : rpn;
    double lat, bw = 0;
    const char *cls = NULL;
    int links = local > 1 ? platform_rank_links(p, 0, 1, &cls) : 0;
    if (local > 1)
        platform_path(p, 0, 1, &lat, &bw);
    out->intra_nvlink = cls && strncmp(cls, "nvlink", 6) == 0;
    out->channels = links > 0 ? links : 1;
    /* Across nodes: a channel's ring leaves by one NIC; the node's NICs in parallel. */
    if (out->nodes > 1) {
        double ibw;
        platform_path(p, 0, rpn, &lat, &ibw);
        int nics = 0;
        for (int r = 0; r < rpn; r++) {
            int seen = 0;
            for (int q = 0; q < r && !seen; q++)
                seen = platform_rank_exit(p, q) && platform_rank_exit(p, r) &&
                       strcmp(platform_rank_exit(p, q), platform_rank_exit(p, r)) == 0;
            nics += !seen;
        }
        out->bus_inter_Bps = nics * ibw;
        out->nics = nics;
        if (local <= 1)
            bw = out->bus_inter_Bps;
    }
    out->bus_intra_Bps = bw;
    const char *names[64];
    const device_info *devs[64];
    int ns = platform_node_components(p, DEVICE_SWITCH, names, devs, 64);
    for (int i = 0; i < ns && i < 64; i++)
        out->nvls |= devs[i]->switch_reduction && out->intra_nvlink;
    int nc = platform_node_components(p, DEVICE_CPU, names, devs, 64);
    out->cpu_amd = nc > 0 && strcmp(devs[0]->vendor, "amd") == 0;
    return 0;
}

int nccl_plan_make(const platform *p, const coll_params *params, nccl_plan *out)
{
    return nccl_plan_make_reducing(p, params, 0, out);
}

int nccl_plan_make_reducing(const platform *p, const coll_params *params, double reduce_s_per_byte,
                            nccl_plan *out)
{
    memset(out, 0, sizeof *out);
    if (nccl_comm_of(p, params->ranks, &out->comm) || nccl_choose(&out->comm, params->op, params->bytes, &out->choice))
        return -1;
    out->params = *params;
    int n = params->ranks;
    double wire = nccl_wire_factor(out->choice.proto);
    if (out->choice.algo == NCCL_NVLS) {
        /* In-switch reduction: each GPU pushes its vector once (multimem
         * ld_reduce) and receives it once (multicast store), (n+1)/n of it per
         * direction against a ring's 2(n-1)/n: a ring of that volume through
         * the same links, without GPU reductions. */
        out->params.algo = ALGO_RING;
        wire *= (n + 1.0) / (2.0 * (n - 1));
        out->switch_reduces = 1;
    } else {
        out->params.algo = nccl_schedule_algo(out->choice.algo);
    }
    if (out->params.algo == ALGO_RING) {
        /* NCCL's rings follow direct links inside a node; across nodes it runs
         * a ring per channel, one channel per NIC, each leaving by its own. */
        out->params.ranks_per_node = platform_ranks_per_node(p);
        if (out->comm.nodes > 1) {
            out->params.channels = out->comm.nics;
            platform_ring_orders(p, out->params.channels < 8 ? out->params.channels : 8, out->params.node_order);
        } else { /* one node: as many rings as have links of their own (DGX-1: 6) */
            int rings = platform_ring_orders(p, 8, out->params.node_order);
            out->params.channels = rings > 1 ? rings : 1;
        }
    }
    out->params.bytes = params->bytes * wire;
    /* The links' own latency, which the simulation already charges: the
     * schedule's time on one byte. NCCL's figure beyond it is software. */
    coll_params tiny = out->params;
    tiny.bytes = 1;
    schedule s;
    tt_error err = {0};
    double hw_s = 0;
    if (schedule_build(&tiny, 1, 1.0, &s, &err) == TT_OK) {
        hw_s = coll_estimate_s(p, NULL, &s, 0, NULL);
        schedule_free(&s);
    }
    nccl_timing *t = &out->timing;
    t->on = 1;
    t->latency_s = out->choice.latency_s;
    t->hw_s = fmax(0, hw_s);
    t->launch_s = out->choice.launch_s;
    t->step_intra_s = out->choice.step_intra_s;
    t->step_inter_s = out->choice.step_inter_s;
    t->steps = out->params.algo == ALGO_RING && !out->switch_reduces ? out->choice.steps : 0;
    t->inter_steps = out->choice.inter_steps;
    t->slices = nccl_ring_slices(out->choice.proto);
    /* Simple cuts a block into chunks; LL and LL128 stream lines, one latency per step.
     * NCCL's channels: one per NVLink inside a node, one per NIC across nodes. */
    int ch = out->comm.nodes > 1 ? out->comm.nics : out->comm.channels;
    if (ch < 1)
        ch = 1;
    t->chunks = out->choice.proto == NCCL_SIMPLE ? ceil(out->params.bytes / ((double)ch * n * NCCL_RING_CHUNK_BYTES)) : 1;
    if (t->chunks < 1)
        t->chunks = 1;
    double wire_Bps = out->comm.nodes > 1 && out->comm.bus_inter_Bps > 0
                          ? fmin(out->comm.bus_intra_Bps, out->comm.bus_inter_Bps / (params->ranks / out->comm.nodes))
                          : out->comm.bus_intra_Bps;
    if (!out->switch_reduces && wire_Bps > 0)
        out->reduce_s_per_byte = fmax(0, reduce_s_per_byte - 1 / wire_Bps);
    return 0;
}

double nccl_timing_total_s(const nccl_timing *t, double simulated_s)
{
    if (!t->on || isnan(simulated_s))
        return simulated_s;
    if (t->steps <= 0)
        return simulated_s + fmax(0, t->latency_s - t->hw_s);
    double bw_s = fmax(0, simulated_s - t->hw_s); /* the transfers alone */
    double units = t->chunks * t->steps, unit_s = bw_s / units;
    double hidden_s = unit_s - unit_s / t->slices; /* a step's latency hides under its later slices */
    double exposed = t->launch_s + t->chunks * ((t->steps - t->inter_steps) * fmax(0, t->step_intra_s - hidden_s) +
                                                t->inter_steps * fmax(0, t->step_inter_s - hidden_s));
    /* The links' latency is a floor under NCCL's, pipelined the same way. */
    double links = units * fmax(0, t->hw_s / t->steps - hidden_s);
    return bw_s + fmax(exposed, links);
}

const char *nccl_plan_name(const nccl_plan *plan, char *buf, size_t buf_bytes)
{
    snprintf(buf, buf_bytes, "%s/%s", nccl_algo_name(plan->choice.algo), nccl_proto_name(plan->choice.proto));
    return buf;
}

void nccl_resolve(const platform *p, coll_params *params, double *reduce_s_per_byte, nccl_timing *timing,
                  char *name, size_t name_bytes)
{
    memset(timing, 0, sizeof *timing);
    if (name_bytes)
        name[0] = '\0';
    if (params->algo != ALGO_NCCL)
        return;
    nccl_plan plan;
    if (nccl_plan_make_reducing(p, params, *reduce_s_per_byte, &plan) == 0) {
        *params = plan.params;
        *reduce_s_per_byte = plan.reduce_s_per_byte;
        *timing = plan.timing;
        nccl_plan_name(&plan, name, name_bytes);
        return;
    }
    /* Not NCCL's hardware: the schedule native to the fabric. */
    const char *why;
    params->algo = ALGO_TORUS;
    if (params->op != OP_ALLREDUCE || !coll_algo_applies(params, &why))
        params->algo = ALGO_AUTO;
}
