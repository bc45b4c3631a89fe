#include "sim/replay/assumptions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay/framework.h"
#include "sim/replay/input_pipeline.h"

void assumptions_add(run_result *r, const char *text)
{
    char *copy;
    if (r->n_assumptions < RUN_MAX_ASSUMPTIONS && (copy = strdup(text)))
        r->assumptions[r->n_assumptions++] = copy;
}

/* The owner's numbers: every price and draw, the lifetime, PUE and electricity. */
static void note_ownership(run_result *r, const scenario *sc, const cluster *c)
{
    char buf[1024];
    for (int i = 0; i < c->sum.n_devices; i++) {
        const device_info *d = c->sum.devices[i].dev;
        if (!d->has_purchase)
            continue;
        int n = snprintf(buf, sizeof buf, "purchase.%s = $%.6g each", d->name, d->price_usd);
        if (d->kind != DEVICE_ACCELERATOR)
            n += snprintf(buf + n, sizeof buf - (size_t)n, ", %.4g W", d->power_w);
        if (d->switch_port_usd > 0 || d->cable_usd > 0)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "; fabric switch port $%.6g and %.4g W, cable $%.6g and "
                          "%.4g W", d->switch_port_usd, d->switch_port_w, d->cable_usd, d->cable_w);
        snprintf(buf + n, sizeof buf - (size_t)n, " (%s)", d->purchase_why);
        assumptions_add(r, buf);
    }
    snprintf(buf, sizeof buf, "ownership = capital cost over %.3g years, PUE %.3g, $%.3g per kWh (the scenario's "
             "\"cost\" block; defaults: %s)", sc->lifetime_years, sc->pue, sc->usd_per_kwh, COST_DEFAULTS_WHY);
    assumptions_add(r, buf);
}

/* The model-parallel tables' plan, as the point ran it. */
static void note_tables(run_result *r, const run_ctx *x, const run_point *pt)
{
    const scenario *sc = x->sc;
    char buf[512];
    char groups[256] = "";
    for (int g = 0, n = 0; g < pt->mix.n_groups && n < (int)sizeof groups; g++)
        n += snprintf(groups + n, sizeof groups - (size_t)n, "%s%s%.4g rows %s", g ? ", " : "per table group: ",
                      pt->mix.max_rows[g] > 0 ? "<= " : "above ",
                      pt->mix.max_rows[g] > 0 ? pt->mix.max_rows[g] : pt->mix.max_rows[g > 0 ? g - 1 : 0],
                      SHARDING_NAMES[pt->mix.plan[g]]);
    snprintf(buf, sizeof buf, "embedding.plan = %s%s (lookups %s: each row id Zipf(%g), rank 0 the hottest; "
             "sparse update of the distinct rows a micro-step touches, fused into the backward)",
             groups[0] ? groups : SHARDING_NAMES[pt->plan], sc->sharding == SHARD_AUTO ? ", the fastest that fits" : "",
             sc->index_zipf_s > 0 ? "as the scenario gives" : "as the synthetic click logs draw them",
             sc->index_zipf_s > 0 ? sc->index_zipf_s : x->tr[0].emb.zipf_s);
    assumptions_add(r, buf);
    if (pt->plan == SHARD_ROW_WISE)
        assumptions_add(r, "embedding.row_wise = row ids hashed evenly over the ranks' row blocks (each rank 1/R of "
                           "the lookups)");
}

void assumptions_note(run_result *r, const run_ctx *x, const cluster *c, const run_point *pt)
{
    const scenario *sc = x->sc;
    const platform *p = c->p;
    char buf[1024];
    for (int i = 0; i < platform_note_count(p) && r->n_notes < 4; i++)
        snprintf(r->notes[r->n_notes++], sizeof r->notes[0], "%s", platform_note(p, i));
    for (int i = 0; i < platform_assumption_count(p); i++) {
        const char *name, *value, *note;
        platform_assumption(p, i, &name, &value, &note);
        snprintf(buf, sizeof buf, "%s = %s (%s)", name, value, note ? note : "");
        assumptions_add(r, buf);
    }
    for (size_t i = 0; sc->assumptions && sc->assumptions[i]; i++)
        assumptions_add(r, sc->assumptions[i]);
    for (int i = 0; i < x->n_conv_notes; i++)
        assumptions_add(r, x->conv_notes[i]);
    for (size_t i = 0; i < sc->n_sets; i++) {
        snprintf(buf, sizeof buf, "%s (set on the command line: --set)", sc->sets[i]);
        assumptions_add(r, buf);
    }
    if (x->optimizer != x->tr[0].optimizer) {
        snprintf(buf, sizeof buf, "optimizer_step = the trace's %s update (the scenario's %s sets the optimizer "
                 "state in memory; make the trace with --optimizer %s for its exact update cost)",
                 x->tr[0].optimizer->name, x->optimizer->name, x->optimizer->name);
        assumptions_add(r, buf);
    }
    if (run_ctx_has_tables(x))
        note_tables(r, x, pt);
    if (pt->plan == SHARD_HOST)
        assumptions_add(r,
            "host_embedding.placement = table t on CPU socket t mod NS of the N nodes' S sockets each, tables "
            "sharded over every node (the trace merges its tables into one layer: each socket serves 1/NS of "
            "every sample's rows, the other nodes' over the NICs and the fabric; DRAM lookups and updates at the "
            "socket's mem_Bps x mem_efficiency, pipelined with the UPI/PCIe/NIC transfers, which run all at once "
            "on SimGrid)");
    if (sc->input_pipeline == INPUT_CPU_JPEG) {
        snprintf(buf, sizeof buf, "input.host = %d of the node's %d host cores x %.0f images/s per core (JPEG "
                 "decode, random-resized crop, flip, from single-core benchmarks: platforms/README.md), running "
                 "ahead of the accelerators: the step is max(their step, the node's images / the host's rate)",
                 input_pipeline_workers(c->host_cores, sc->input_threads), c->host_cores,
                 input_pipeline_core_images_per_s(INPUT_CPU_JPEG));
        assumptions_add(r, buf);
    }
    if (framework_is_eager(sc->framework)) {
        snprintf(buf, sizeof buf, "framework.host = at least %.0f us of host time per kernel (an eager op crosses "
                 "Python, the bindings, autograd, the op dispatcher, the library's choice and the launch: 5-25 us "
                 "summed, U: jiahuanglin.xyz, gpu_kernel_serving lesson 18)", FRAMEWORK_EAGER_OP_S * 1e6);
        assumptions_add(r, buf);
    }
    if (sc->fused_attention)
        assumptions_add(r,
            "attention = fused (FlashAttention, Dao et al. 2022: the S x S probabilities never reach device "
            "memory, an fp32 log-sum-exp per row is kept, S = QK^T and P are recomputed in the backward)");
    if (sc->autograd_activations)
        assumptions_add(r,
            "activations = autograd (what the backward reads, each tensor once, 1-byte dropout masks, fp32 "
            "normalisation statistics: Korthikanti et al. 2022's count)");
    double write_Bps, read_Bps;
    const char *storage_why;
    char notes[8][640];
    platform_storage(p, &write_Bps, &read_Bps, &storage_why);
    for (int i = 0, n = resilience_notes(&sc->resilience, &pt->res, storage_why, notes, 8); i < n; i++)
        assumptions_add(r, notes[i]);
    note_ownership(r, sc, c);
    if (r->price_per_h_usd <= 0) {
        snprintf(buf, sizeof buf, "price = 0 (the %s has no price per hour in its device definition: "
                 "cost_usd is 0)", r->accelerator);
        assumptions_add(r, buf);
    }
}
