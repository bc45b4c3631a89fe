#include "sim/replay/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/schedule.h"
#include "common/parallel.h"
#include "platforms/platform.h"
#include "sim/engine/collective_sim.h"
#include "sim/replay/convergence.h"
#include "sim/replay/input_pipeline.h"
#include "sim/replay/traffic.h"
#include "sim/replay/workload.h"

/* ---- stage 1: the scenario's platform at a node count ---- */

static platform *load_platform(const scenario *sc, int nodes, tt_error *err)
{
    platform_options opt = scenario_platform_options(sc, nodes);
    platform *p = platform_load(sc->platform, &opt, err);
    if (!p)
        tt_error_prefix(err, "%s: $.platform%s: ", sc->path, sc->fabric || sc->devices ? " (with its overrides)" : "");
    return p;
}

/* ---- stage 2: the workload at this point's batch ---- */

static int split_batch(const scenario *sc, const workload *t, int want_micro, int ranks, long *global, int *micro,
                       int *accum, tt_error *err)
{
    long gb = *global;
    if (gb == 0) { /* no global batch: the micro-batch on every rank */
        *micro = want_micro ? want_micro : t->micro_batch;
        *accum = 1;
        *global = (long)*micro * ranks;
        return TT_OK;
    }
    if (gb % ranks != 0)
        return tt_error_set(err, TT_EINPUT, "%s: the global batch %ld does not split over %d ranks; "
                            "use a multiple of %d", sc->path, gb, ranks, ranks);
    long per_rank = gb / ranks;
    long mb = want_micro ? want_micro : per_rank;
    if (per_rank % mb != 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.workload.micro_batch: %ld samples per rank (global batch "
                            "%ld over %d ranks) is not a multiple of the micro-batch %ld", sc->path, per_rank,
                            gb, ranks, mb);
    *micro = (int)mb;
    *accum = (int)(per_rank / mb);
    return TT_OK;
}

/* Without a fixed micro-batch, a point runs the largest micro-batch that
 * divides its samples per rank and fits in the device's memory (step_replay's
 * memory check, with collectives of no duration), accumulating the rest. */
static void fit_micro_batch(const workload *t, const device_model *d, step_options *o, size_t n_coll)
{
    long per_rank = (long)o->micro_batch * o->accumulation;
    double *zero = calloc(n_coll + 1, sizeof *zero);
    step_result r;
    tt_error ignored = {0};
    for (long mb = per_rank; zero && mb >= 1; mb--) {
        if (per_rank % mb != 0)
            continue;
        o->micro_batch = (int)mb;
        o->accumulation = (int)(per_rank / mb);
        if (step_replay(t, d, o, zero, &r, &ignored) == TT_OK)
            break;
    }
    free(zero); /* when nothing fits, micro-batch 1 stays and step_replay says why */
}

static int optimizer_state_words(const char *name)
{
    if (strcmp(name, "sgd") == 0)
        return 0;
    if (strcmp(name, "adamw") == 0 || strcmp(name, "adam") == 0 || strcmp(name, "lamb") == 0)
        return 2;
    return 1; /* momentum, nesterov, lars */
}

/* ---- stage 3: the step's collectives on SimGrid, one simulation ---- */

/* Intel's socket-to-socket links in platform files ("class": "upi"). */
#define UPI_CLASS "upi"

/* Collective i's bytes over UPI (upi_bytes non-NULL: CPU ranks), from the
 * schedule of the algorithm that ran at the upper request's parameters. */
static int upi_traffic(const platform *p, const step_coll *c, size_t n, const coll_request *req,
                       const int *req_hi, const coll_result *out, double *upi_bytes, tt_error *err)
{
    int rc = TT_OK;
    for (size_t i = 0; rc == TT_OK && i < n; i++) {
        upi_bytes[i] = 0;
        if (c[i].bytes <= 0)
            continue;
        coll_params cp = req[req_hi[c[i].op]].params;
        cp.algo = out[req_hi[c[i].op]].algo;
        cp.bytes = c[i].bytes;
        rc = traffic_class_bytes(p, &cp, UPI_CLASS, &upi_bytes[i], err);
    }
    return rc;
}

/* A collective's time on a fixed platform and algorithm is affine in its
 * size (each round costs latency plus bytes over its bandwidth share, and
 * the reductions are linear), so per operation only the smallest and largest
 * sizes are simulated and the other buckets interpolated between them: two
 * SimGrid runs per operation however many bucket sizes the trace has. The
 * slope's part of a time is what its bytes hold the links (wire_s, for
 * concurrent collectives); with one size there is no split: all of it. */
/* links (not NULL): the step's link loads, collective i counted per_step[i]
 * times, each scaled from its operation's largest simulated size (the bytes
 * on a link are linear in the size too). */
static int time_collectives(const scenario *sc, const platform *p, const step_coll *c, size_t n,
                            const double *per_step, double *coll_s, double *wire_s, double *upi_bytes,
                            run_result *res, link_usage *links, tt_error *err)
{
    int ranks = platform_ranks(p);
    static const coll_op OPS[STEP_OPS] = {OP_ALLREDUCE, OP_ALLTOALL, OP_REDUCE_SCATTER, OP_ALLGATHER};
    coll_algo algo[STEP_OPS] = {sc->allreduce_algo, sc->alltoall_algo, ALGO_AUTO, ALGO_AUTO};
    for (size_t i = 0; i < n; i++) {
        coll_s[i] = wire_s[i] = 0;
        if (upi_bytes)
            upi_bytes[i] = 0;
    }
    if (ranks == 1) {
        snprintf(res->allreduce, sizeof res->allreduce, "none (1 rank)");
        return TT_OK;
    }
    double lo[STEP_OPS] = {0}, hi[STEP_OPS] = {0};
    for (size_t i = 0; i < n; i++) {
        int op = c[i].op;
        if (c[i].bytes <= 0) /* nothing to move (a plan without this collective) */
            continue;
        lo[op] = lo[op] == 0 || c[i].bytes < lo[op] ? c[i].bytes : lo[op];
        hi[op] = c[i].bytes > hi[op] ? c[i].bytes : hi[op];
    }
    coll_request req[2 * STEP_OPS];
    int nreq = 0, req_lo[STEP_OPS] = {-1, -1, -1, -1}, req_hi[STEP_OPS] = {-1, -1, -1, -1};
    for (int op = 0; op < STEP_OPS; op++) {
        if (hi[op] <= 0)
            continue;
        for (int end = 0; end < 2; end++) {
            if (end == 1 && hi[op] == lo[op]) {
                req_hi[op] = req_lo[op];
                continue;
            }
            coll_params asked = {.op = OPS[op], .algo = algo[op], .bytes = end ? hi[op] : lo[op]};
            if (OPS[op] == OP_ALLREDUCE) { /* hier's inter-node phase (scenario's collectives.inter_node, staging) */
                asked.inter = sc->inter_algo;
                asked.staging = sc->staging;
            }
            req[nreq] = coll_request_build(p, &asked);
            req[nreq].links = links && end == (hi[op] > lo[op]);
            *(end ? &req_hi[op] : &req_lo[op]) = nreq++;
        }
    }
    coll_result out[2 * STEP_OPS];
    int rc = req_hi[STEP_ALLREDUCE] >= 0 ? coll_staging_check(p, &req[req_hi[STEP_ALLREDUCE]].params, err) : TT_OK;
    if (rc)
        return tt_error_prefix(err, "%s: $.collectives.staging: ", sc->path);
    rc = nreq > 0 ? coll_simulate(p, (network_model)sc->network, req, nreq, out, err) : TT_OK;
    for (size_t i = 0; rc == TT_OK && i < n; i++) {
        int op = c[i].op;
        if (c[i].bytes <= 0)
            continue;
        double t_lo = out[req_lo[op]].time_s, t_hi = out[req_hi[op]].time_s;
        double u = hi[op] > lo[op] ? (c[i].bytes - lo[op]) / (hi[op] - lo[op]) : 0;
        coll_s[i] = t_lo + u * (t_hi - t_lo);
        wire_s[i] = hi[op] > lo[op] ? fmax(0.0, fmin(coll_s[i], c[i].bytes * (t_hi - t_lo) / (hi[op] - lo[op])))
                                    : coll_s[i];
        if (links)
            link_usage_add(links, &out[req_hi[op]].links, per_step[i] * c[i].bytes / hi[op]);
    }
    if (rc == TT_OK && upi_bytes)
        rc = upi_traffic(p, c, n, req, req_hi, out, upi_bytes, err);
    for (int op = 0; rc == TT_OK && op <= STEP_ALLTOALL; op++)
        if (req_hi[op] >= 0) {
            char *dst = op == STEP_ALLREDUCE ? res->allreduce : res->alltoall;
            const coll_result *o = &out[req_hi[op]];
            const coll_params *asked = &req[req_hi[op]].params;
            char how[64] = ""; /* hier's options and the contexts in flight, as the report names them */
            if (asked->inter == ALGO_RHD)
                snprintf(how, sizeof how, "rhd");
            if (asked->staging == STAGING_HOST)
                snprintf(how + strlen(how), sizeof how - strlen(how), "%shost-staged", how[0] ? ", " : "");
            if (sc->concurrent_ops > 1)
                snprintf(how + strlen(how), sizeof how - strlen(how), "%s%d at once", how[0] ? ", " : "",
                         sc->concurrent_ops);
            snprintf(dst, sizeof res->allreduce, "%s%s%s%s%s%s%s", coll_algo_name(o->algo), o->nccl[0] ? " (nccl " : "",
                     o->nccl, o->nccl[0] ? ")" : "", how[0] ? " (" : "", how, how[0] ? ")" : "");
        }
    return rc;
}

/* What a point needs besides its scenario: the workload's traces and the
 * convergence model, loaded once and shared by the points that agree on them. */
typedef struct run_ctx {
    const scenario *sc;
    workload tr[SCENARIO_MAX_PHASES];
    convergence *conv;
    char conv_notes[CONVERGENCE_MAX_NOTES + 1][512]; /* mismatches accepted, the run spread assumed */
    int n_conv_notes;
    run_result *res;
    int links; /* count link loads at the scenario's own point (run_result.links) */
    const sharding_mix *mix; /* the table groups' plans being run (NULL: one plan for every table) */
} run_ctx;

/* One phase of the workload at a point: its batch split and its step. */
typedef struct phase_plan {
    long global_batch;
    int micro_batch, accumulation;
    step_options o;
    size_t first_coll, n_coll; /* its collectives in the point's list */
    host_emb_time host;        /* EMB_HOST: per micro-step */
    sharding_cost tables;      /* model-parallel tables on the accelerators */
    sharding_cost groups[SHARD_MAX_GROUPS]; /* per table group, with a mix */
    int group_tables[SHARD_MAX_GROUPS];
    step_result r;
} phase_plan;

/* ---- stage 3b: embedding rows to and from the CPU sockets on SimGrid ---- */

/* Tables in host memory: every phase's per-micro-step rows timed in one
 * simulation of every node's sockets and accelerators (host_embedding.h);
 * links (not NULL): their links added to the step's, every micro-step of
 * every phase weighted by the phase's share. */
static int time_host_embeddings(const scenario *sc, const platform *p, const workload *tr, phase_plan *ph,
                                link_usage *links, tt_error *err)
{
    step_host_load load[SCENARIO_MAX_PHASES];
    host_emb_time t[SCENARIO_MAX_PHASES];
    double weight[SCENARIO_MAX_PHASES];
    link_usage host_links;
    for (size_t k = 0; k < sc->n_phases; k++) {
        step_host_load_of(&tr[k], &ph[k].o, &load[k]);
        weight[k] = sc->phases[k].fraction * ph[k].o.accumulation;
    }
    if (host_embedding_time(p, (network_model)sc->network, load, (int)sc->n_phases, weight, t,
                            links ? &host_links : NULL, err) != TT_OK)
        return tt_error_prefix(err, "%s: $.workload.embeddings: ", sc->path);
    if (links)
        link_usage_add(links, &host_links, 1.0);
    for (size_t k = 0; k < sc->n_phases; k++) {
        ph[k].o.host_forward_s = t[k].forward_s;
        ph[k].o.host_backward_s = t[k].backward_s;
        ph[k].host = t[k];
    }
    return TT_OK;
}

/* ---- stages 4 and 5: step cost, then steps and time to the target ---- */

/* Whether the workload has model-parallel tables a plan applies to. */
static int has_tables(const run_ctx *x)
{
    for (size_t k = 0; k < x->sc->n_phases; k++)
        if (x->tr[k].emb.n_tables > 0)
            return 1;
    return 0;
}


static void add_assumption(run_result *r, const char *text)
{
    if (r->n_assumptions < RUN_MAX_ASSUMPTIONS)
        r->assumptions[r->n_assumptions++] = strdup(text);
}

/* The owner's numbers: every price and draw, the lifetime, PUE and electricity. */
static void note_ownership(const scenario *sc, const platform *p, run_result *r)
{
    char buf[1024];
    platform_summary s;
    platform_summarize(p, &s);
    for (int i = 0; i < s.n_devices; i++) {
        const device_info *d = s.devices[i].dev;
        if (!d->has_purchase)
            continue;
        int n = snprintf(buf, sizeof buf, "purchase.%s = $%.6g each", d->name, d->price_usd);
        if (d->kind != DEVICE_ACCELERATOR)
            n += snprintf(buf + n, sizeof buf - (size_t)n, ", %.4g W", d->power_w);
        if (d->switch_port_usd > 0 || d->cable_usd > 0)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "; fabric switch port $%.6g and %.4g W, cable $%.6g and "
                          "%.4g W", d->switch_port_usd, d->switch_port_w, d->cable_usd, d->cable_w);
        snprintf(buf + n, sizeof buf - (size_t)n, " (%s)", d->purchase_why);
        add_assumption(r, buf);
    }
    snprintf(buf, sizeof buf, "ownership = capital cost over %.3g years, PUE %.3g, $%.3g per kWh (the scenario's "
             "\"cost\" block; defaults: %s)", sc->lifetime_years, sc->pue, sc->usd_per_kwh, COST_DEFAULTS_WHY);
    add_assumption(r, buf);
}

/* Host cores of one node: its CPU components' cores. */
static int node_host_cores(const platform *p)
{
    platform_summary sum;
    platform_summarize(p, &sum);
    long cores = 0;
    for (int i = 0; i < sum.n_devices; i++)
        if (sum.devices[i].dev->kind == DEVICE_CPU)
            cores += sum.devices[i].count * sum.devices[i].dev->cores;
    return sum.nodes > 0 ? (int)(cores / sum.nodes) : 0;
}

static void note_assumptions(run_ctx *x, const platform *p, const run_point *base)
{
    run_result *r = x->res;
    if (r->n_assumptions)
        return;
    for (int i = 0; i < platform_note_count(p) && r->n_notes < 4; i++)
        snprintf(r->notes[r->n_notes++], sizeof r->notes[0], "%s", platform_note(p, i));
    for (int i = 0; i < platform_assumption_count(p) && r->n_assumptions < RUN_MAX_ASSUMPTIONS; i++) {
        const char *name, *value, *note;
        platform_assumption(p, i, &name, &value, &note);
        char buf[1024];
        snprintf(buf, sizeof buf, "%s = %s (%s)", name, value, note ? note : "");
        r->assumptions[r->n_assumptions++] = strdup(buf);
    }
    for (size_t i = 0; x->sc->assumptions && x->sc->assumptions[i] && r->n_assumptions < RUN_MAX_ASSUMPTIONS; i++)
        r->assumptions[r->n_assumptions++] = strdup(x->sc->assumptions[i]);
    for (int i = 0; i < x->n_conv_notes && r->n_assumptions < RUN_MAX_ASSUMPTIONS; i++)
        r->assumptions[r->n_assumptions++] = strdup(x->conv_notes[i]);
    for (size_t i = 0; i < x->sc->n_sets && r->n_assumptions < RUN_MAX_ASSUMPTIONS; i++) {
        char buf[600];
        snprintf(buf, sizeof buf, "%s (set on the command line: --set)", x->sc->sets[i]);
        r->assumptions[r->n_assumptions++] = strdup(buf);
    }
    if (strcmp(r->optimizer, x->tr[0].optimizer) != 0 && r->n_assumptions < RUN_MAX_ASSUMPTIONS) {
        char buf[256];
        snprintf(buf, sizeof buf, "optimizer_step = the trace's %s update (the scenario's %s sets the optimizer "
                 "state in memory; make the trace with --optimizer %s for its exact update cost)",
                 x->tr[0].optimizer, r->optimizer, r->optimizer);
        r->assumptions[r->n_assumptions++] = strdup(buf);
    }
    if (has_tables(x) && r->n_assumptions < RUN_MAX_ASSUMPTIONS) {
        char buf[512];
        char groups[256] = "";
        for (int g = 0, n = 0; g < base->mix.n_groups && n < (int)sizeof groups; g++)
            n += snprintf(groups + n, sizeof groups - (size_t)n, "%s%s%.4g rows %s", g ? ", " : "per table group: ",
                          base->mix.max_rows[g] > 0 ? "<= " : "above ",
                          base->mix.max_rows[g] > 0 ? base->mix.max_rows[g] : base->mix.max_rows[g > 0 ? g - 1 : 0],
                          SHARDING_NAMES[base->mix.plan[g]]);
        snprintf(buf, sizeof buf, "embedding.plan = %s%s (lookups %s: each row id Zipf(%g), rank 0 the hottest; "
                 "sparse update of the distinct rows a micro-step touches, fused into the backward)",
                 groups[0] ? groups : SHARDING_NAMES[base->plan],
                 x->sc->sharding == SHARD_AUTO ? ", the fastest that fits" : "",
                 x->sc->index_zipf_s > 0 ? "as the scenario gives" : "as the synthetic click logs draw them",
                 x->sc->index_zipf_s > 0 ? x->sc->index_zipf_s : x->tr[0].emb.zipf_s);
        r->assumptions[r->n_assumptions++] = strdup(buf);
    }
    if (has_tables(x) && base->plan == SHARD_ROW_WISE && r->n_assumptions < RUN_MAX_ASSUMPTIONS)
        r->assumptions[r->n_assumptions++] = strdup(
            "embedding.row_wise = row ids hashed evenly over the ranks' row blocks (each rank 1/R of the lookups)");
    if (base->plan == SHARD_HOST && r->n_assumptions < RUN_MAX_ASSUMPTIONS)
        r->assumptions[r->n_assumptions++] = strdup(
            "host_embedding.placement = table t on CPU socket t mod NS of the N nodes' S sockets each, tables "
            "sharded over every node (the trace merges its tables into one layer: each socket serves 1/NS of "
            "every sample's rows, the other nodes' over the NICs and the fabric; DRAM lookups and updates at the "
            "socket's mem_Bps x mem_efficiency, pipelined with the UPI/PCIe/NIC transfers, which run all at once "
            "on SimGrid)");
    if (x->sc->input_pipeline == INPUT_CPU_JPEG && r->n_assumptions < RUN_MAX_ASSUMPTIONS) {
        char buf[512];
        int cores = node_host_cores(p), threads = x->sc->input_threads;
        snprintf(buf, sizeof buf, "input.host = %d of the node's %d host cores x %.0f images/s per core (JPEG "
                 "decode, random-resized crop, flip, from single-core benchmarks: platforms/README.md), running "
                 "ahead of the accelerators: the step is max(their step, the node's images / the host's rate)",
                 input_pipeline_workers(cores, threads), cores,
                 input_pipeline_core_images_per_s(INPUT_CPU_JPEG));
        r->assumptions[r->n_assumptions++] = strdup(buf);
    }
    if (x->sc->fused_attention && r->n_assumptions < RUN_MAX_ASSUMPTIONS)
        r->assumptions[r->n_assumptions++] = strdup(
            "attention = fused (FlashAttention, Dao et al. 2022: the S x S probabilities never reach device "
            "memory, an fp32 log-sum-exp per row is kept, S = QK^T and P are recomputed in the backward)");
    if (x->sc->autograd_activations && r->n_assumptions < RUN_MAX_ASSUMPTIONS)
        r->assumptions[r->n_assumptions++] = strdup(
            "activations = autograd (what the backward reads, each tensor once, 1-byte dropout masks, fp32 "
            "normalisation statistics: Korthikanti et al. 2022's count)");
    note_ownership(x->sc, p, r);
    if (r->price_per_h_usd <= 0 && r->n_assumptions < RUN_MAX_ASSUMPTIONS) {
        char buf[256];
        snprintf(buf, sizeof buf, "price = 0 (the %s has no price per hour in its device definition: "
                 "cost_usd is 0)", r->accelerator);
        r->assumptions[r->n_assumptions++] = strdup(buf);
    }
}

/* Each phase's step waits on the host input pipeline when it is the slower
 * (workload.input): a node's host prepares its ranks' samples of the step. */
static int wait_for_input(const scenario *sc, const platform *p, phase_plan *ph, tt_error *err)
{
    double host_images_per_s;
    int rc = input_pipeline_host_images_per_s((input_pipeline_kind)sc->input_pipeline, node_host_cores(p),
                                              sc->input_threads, sc->path, platform_name(p), &host_images_per_s, err);
    for (size_t k = 0; rc == TT_OK && k < sc->n_phases && host_images_per_s > 0; k++) {
        step_result *r = &ph[k].r;
        double images = (double)ph[k].o.micro_batch * ph[k].o.accumulation * platform_ranks_per_node(p);
        input_pipeline_step(r->time_s, images, host_images_per_s, &r->input_s, &r->input_wait_s);
        r->time_s += r->input_wait_s;
        r->idle_s += r->input_wait_s;
    }
    return rc;
}

/* The point's step: every phase replayed, weighted by its share of the steps. */
static void combine_phases(const scenario *sc, const phase_plan *ph, double peak_flops, run_point *pt)
{
    step_result *s = &pt->step;
    double samples = 0;
    for (size_t k = 0; k < sc->n_phases; k++) {
        double f = sc->phases[k].fraction;
        const step_result *r = &ph[k].r;
        s->time_s += f * r->time_s;
        s->compute_s += f * r->compute_s;
        s->comm_s += f * r->comm_s;
        s->exposed_comm_s += f * r->exposed_comm_s;
        s->optimizer_s += f * r->optimizer_s;
        s->host_embedding_s += f * r->host_embedding_s;
        s->input_s += f * r->input_s;
        s->input_wait_s += f * r->input_wait_s;
        s->idle_s += f * r->idle_s;
        pt->host.forward_s += f * ph[k].host.forward_s;
        pt->host.backward_s += f * ph[k].host.backward_s;
        pt->host.forward_transfer_s += f * ph[k].host.forward_transfer_s;
        pt->host.backward_transfer_s += f * ph[k].host.backward_transfer_s;
        pt->host.lookup_s += f * ph[k].host.lookup_s;
        pt->host.update_s += f * ph[k].host.update_s;
        s->model_flops += f * r->model_flops;
        s->compute_bytes += f * r->compute_bytes;
        samples += f * ph[k].global_batch;
        if (r->memory.total_bytes > s->memory.total_bytes)
            s->memory = r->memory;
    }
    s->mfu = s->model_flops / (s->time_s * peak_flops);
    pt->global_batch = ph[0].global_batch;
    pt->micro_batch = ph[0].micro_batch;
    pt->accumulation = ph[0].accumulation;
    pt->samples_per_s = samples / s->time_s;
}

/* Evaluation time over `steps` steps: typed in (every_steps x time_s), or from
 * the workload: `examples` forward passes split over the ranks at the first
 * phase's micro-batch, after every `every_epochs` epochs. */
static double evaluation_s(const scenario *sc, const workload *t, const device_model *d, const phase_plan *ph,
                           const run_point *pt, double steps)
{
    if (sc->eval_every_steps > 0)
        return floor(steps / sc->eval_every_steps) * sc->eval_time_s;
    if (sc->eval_every_epochs <= 0)
        return 0;
    double epochs = steps * pt->global_batch / sc->dataset_examples;
    double evals = floor(epochs / sc->eval_every_epochs + 1e-9);
    double passes = ceil(ceil(sc->eval_examples / pt->ranks) / ph->o.micro_batch);
    return evals * passes * step_forward_s(t, d, &ph->o);
}

/* Time, cost and energy of `steps` steps with eval_s of evaluation (busy time). */
static double run_for(const run_point *pt, const cost_rates *rates, double steps, double eval_s, cost *total)
{
    double time_s = steps * pt->step.time_s + eval_s;
    *total = cost_of(rates, time_s, (pt->step.compute_s + pt->step.optimizer_s) * steps + eval_s);
    return time_s;
}

static void time_to_target(run_ctx *x, const device_info *dev, const device_model *d, const phase_plan *ph,
                           run_point *pt)
{
    const scenario *sc = x->sc;
    if (x->conv) {
        convergence_estimate e = convergence_at(x->conv, (double)pt->global_batch);
        pt->steps_to_target = e.steps;
        pt->steps_p10 = e.p10;
        pt->steps_p90 = e.p90;
        pt->extrapolated = e.extrapolated;
        pt->failed_batch = e.failed_batch;
    } else { /* a fixed step count has no band */
        pt->steps_to_target = pt->steps_p10 = pt->steps_p90 = sc->fixed_steps;
    }
    if (sc->dataset_examples > 0)
        pt->epochs = pt->steps_to_target * pt->samples_per_s * pt->step.time_s / sc->dataset_examples;
    pt->eval_s = evaluation_s(sc, &x->tr[0], d, &ph[0], pt, pt->steps_to_target);
    double lifetime_s = sc->lifetime_years * 365.25 * 86400;
    cost_rates rates = {pt->ranks, dev->price_usd_per_h, dev->tdp_w, dev->idle_w, pt->bill.other_w, sc->pue,
                        pt->bill.total_usd, lifetime_s, sc->usd_per_kwh / 3.6e6};
    pt->per_step = cost_of(&rates, pt->step.time_s, pt->step.compute_s + pt->step.optimizer_s);
    pt->time_to_accuracy_s = run_for(pt, &rates, pt->steps_to_target, pt->eval_s, &pt->total);
    pt->time_to_accuracy_p10_s = run_for(pt, &rates, pt->steps_p10,
                                         evaluation_s(sc, &x->tr[0], d, &ph[0], pt, pt->steps_p10), &pt->total_p10);
    pt->time_to_accuracy_p90_s = run_for(pt, &rates, pt->steps_p90,
                                         evaluation_s(sc, &x->tr[0], d, &ph[0], pt, pt->steps_p90), &pt->total_p90);
    if (pt->bill.total_usd > 0)
        pt->tco_usd = pt->bill.total_usd + pt->per_step.energy_usd / pt->step.time_s * lifetime_s;
}

/* The model-parallel tables of a phase under a plan: on the accelerators, or,
 * in host memory, the traffic of each accelerator's share of its node's. */
static int plan_tables(const run_ctx *x, size_t k, const char *precision, sharding_kind plan, const platform *p,
                       const device_model *d, phase_plan *pp, tt_error *err)
{
    int node_ranks = platform_ranks_per_node(p);
    const scenario *sc = x->sc;
    const workload *t = &x->tr[k];
    tt_dtype dt;
    int rc = dtype_parse(sc->table_precision ? sc->table_precision : precision, &dt, err);
    if (rc || t->emb.n_tables == 0)
        return rc;
    sharding_options so = {.ranks = pp->o.ranks, .micro_batch = pp->micro_batch, .table_dtype_bytes = dtype_bytes(dt),
                           .act_dtype_bytes = pp->o.dtype_bytes, .grad_dtype_bytes = pp->o.grad_dtype_bytes,
                           .master_weights = sc->master_weights, .optimizer = (embedding_optimizer)sc->table_optimizer,
                           .zipf_s = sc->index_zipf_s > 0 ? sc->index_zipf_s : t->emb.zipf_s,
                           .mem_Bps = d->mem_Bps, .dispatch_s = framework_kernel_s((framework)sc->framework, d->dispatch_s), .node_ranks = node_ranks,
                           .ids = (embedding_ids)sc->embedding_ids};
    /* the hybrid plan's hot set and the ids' alltoall are timed on the slowest route from rank 0 */
    for (int r = 1; r < pp->o.ranks; r++) {
        double lat_s, bw_Bps;
        platform_path(p, 0, r, &lat_s, &bw_Bps);
        so.link_latency_s = fmax(so.link_latency_s, lat_s);
        so.link_Bps = r == 1 ? bw_Bps : fmin(so.link_Bps, bw_Bps);
    }
    if (plan != SHARD_HOST && x->mix) {
        sharding_mix_cost_of(&t->emb, x->mix, &so, &pp->tables, pp->groups, pp->group_tables);
    } else if (plan != SHARD_HOST) {
        sharding_cost_of(&t->emb, plan, &so, &pp->tables);
    } else {
        /* a node's sockets hold every table and serve its accelerators' samples: the
         * node's lookups and updates as one replica, each accelerator's share of them */
        double a = (double)node_ranks;
        so.ranks = 1;
        so.micro_batch = pp->micro_batch * node_ranks;
        sharding_cost c;
        sharding_cost_of(&t->emb, SHARD_DATA_PARALLEL, &so, &c);
        pp->tables = (sharding_cost){.kind = SHARD_HOST, .lookup_bytes = c.lookup_bytes / a,
                                     .lookup_flops = c.lookup_flops / a, .update_bytes = c.update_bytes / a,
                                     .update_flops = c.update_flops / a, .lookups = c.lookups / a,
                                     .unique_rows = c.unique_rows / a};
    }
    pp->o.tables = &pp->tables;
    return TT_OK;
}

/* CPU sockets as ranks: a socket without math at the precision would emulate
 * it, slower than fp32, so it is refused; and the tables already live in the
 * ranks' own memory, so "host" has nothing to move. */
static int check_cpu_ranks(const scenario *sc, const platform *p, const char *precision, sharding_kind plan,
                           tt_error *err)
{
    if (platform_rank_kind(p) != DEVICE_CPU)
        return TT_OK;
    const device_info *dev = platform_device(p, 0);
    tt_dtype dt;
    int rc = dtype_parse(precision, &dt, err);
    if (rc)
        return rc;
    if (dev->peak_flops[dt] <= 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.workload.precision: %s (%s), but the CPU socket %s has no %s "
                            "peak in its device definition (\"peak_flops\"): use fp32, or a CPU with %s math "
                            "(cooper-lake-8s has bf16)", sc->path, precision, sc->precision ? "the scenario's" : "the trace's",
                            dev->name, precision, precision);
    if (plan == SHARD_HOST)
        return tt_error_set(err, TT_EINPUT, "%s: $.workload.embeddings: \"host\" moves the tables to the CPU sockets, "
                            "but with $.platform.ranks \"cpu\" the sockets are the ranks and the tables are in their "
                            "memory already: use a sharding plan over the ranks ($.workload.embedding.sharding: "
                            "table_wise, row_wise, column_wise, hybrid or auto)", sc->path);
    return TT_OK;
}

/* A phase's UPI bytes per step: its gradient buckets and replicated rows once,
 * its embedding collectives every micro-step. */
static double phase_upi_bytes(const workload *t, const phase_plan *pp, const double *upi_bytes)
{
    const double *b = upi_bytes + pp->first_coll;
    double s = 0;
    for (size_t i = 0; i < pp->n_coll; i++)
        s += b[i] * (i >= t->n_buckets && i < t->n_buckets + t->n_comm ? pp->accumulation : 1);
    return s;
}

/* The point under one sharding plan. probe (auto): a plan whose memory does
 * not fit gives time_s = +inf instead of an error. `note`: the scenario's own
 * point lists the run's assumptions; sweep points, which may run in other
 * processes, and auto's probes leave them to the caller. */
static int run_point_plan(run_ctx *x, int nodes, long global_batch, sharding_kind plan, int probe, int note,
                          run_point *pt, tt_error *err)
{
    const scenario *sc = x->sc;
    memset(pt, 0, sizeof *pt);
    pt->plan = plan;
    platform *p = load_platform(sc, nodes, err);
    if (!p)
        return err->code;
    const char *precision = sc->precision ? sc->precision : x->tr[0].precision;
    device_model d;
    int rc = device_model_of(platform_device(p, 0), precision, &d, err);
    if (rc == TT_OK)
        rc = check_cpu_ranks(sc, p, precision, plan, err);
    if (sc->fusion >= 0)
        d.fusion = sc->fusion;
    pt->nodes = platform_nodes(p);
    pt->ranks = platform_ranks(p);
    pt->cpu_ranks = platform_rank_kind(p) == DEVICE_CPU;
    phase_plan ph[SCENARIO_MAX_PHASES];
    memset(ph, 0, sizeof ph);
    size_t total_coll = 0;
    for (size_t k = 0; k < sc->n_phases; k++)
        total_coll += x->tr[k].n_buckets + x->tr[k].n_comm + 1;
    step_coll *c = calloc(total_coll + 1, sizeof *c);
    double *coll_s = calloc(total_coll + 1, sizeof *coll_s);
    double *wire_s = calloc(total_coll + 1, sizeof *wire_s);
    double *upi_bytes = pt->cpu_ranks ? calloc(total_coll + 1, sizeof *upi_bytes) : NULL;
    double *per_step = calloc(total_coll + 1, sizeof *per_step); /* times per step, phases weighted */
    if (rc == TT_OK && (!c || !coll_s || !wire_s || !per_step || (pt->cpu_ranks && !upi_bytes)))
        rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
    size_t nc = 0;
    int fits = 1;
    for (size_t k = 0; rc == TT_OK && k < sc->n_phases; k++) {
        const scenario_phase *sp = &sc->phases[k];
        phase_plan *pp = &ph[k];
        pp->global_batch = sp->global_batch ? sp->global_batch : global_batch;
        rc = split_batch(sc, &x->tr[k], sp->micro_batch ? sp->micro_batch : sc->micro_batch, pt->ranks,
                         &pp->global_batch, &pp->micro_batch, &pp->accumulation, err);
        if (rc)
            break;
        step_options *o = &pp->o;
        o->micro_batch = pp->micro_batch;
        o->accumulation = pp->accumulation;
        tt_dtype dt, grad_dt;
        if ((rc = dtype_parse(precision, &dt, err)) ||
            (rc = dtype_parse(sc->gradient_precision ? sc->gradient_precision : precision, &grad_dt, err)))
            break;
        o->dtype_bytes = dtype_bytes(dt);
        o->grad_dtype_bytes = dtype_bytes(grad_dt);
        o->overlap = sc->overlap;
        o->concurrent_ops = sc->concurrent_ops;
        o->ranks = pt->ranks;
        o->optimizer_state_words = optimizer_state_words(x->res->optimizer);
        o->embeddings = plan == SHARD_HOST ? EMB_HOST : EMB_ACCELERATORS;
        if ((rc = plan_tables(x, k, precision, plan, p, &d, pp, err)))
            break;
        o->recompute = sc->recompute;
        o->fused_attention = sc->fused_attention;
        o->autograd_activations = sc->autograd_activations;
        o->framework = (framework)sc->framework;
        if (!sp->micro_batch && !sc->micro_batch && pp->global_batch) {
            fit_micro_batch(&x->tr[k], &d, o, x->tr[k].n_buckets + x->tr[k].n_comm);
            pp->micro_batch = o->micro_batch;
            pp->accumulation = o->accumulation;
            if ((rc = plan_tables(x, k, precision, plan, p, &d, pp, err))) /* at the fitted micro-batch */
                break;
        }
        step_memory m;
        step_memory_of(&x->tr[k], o, &m);
        fits &= m.total_bytes <= d.mem_bytes;
        pp->first_coll = nc;
        pp->n_coll = step_collectives(&x->tr[k], o, c + nc);
        for (size_t i = nc; i < nc + pp->n_coll; i++) /* alltoalls run every micro-step */
            per_step[i] = sp->fraction * (c[i].op == STEP_ALLTOALL ? pp->accumulation : 1);
        nc += pp->n_coll;
    }
    if (rc == TT_OK && probe && !fits) {
        pt->step.time_s = INFINITY;
        free(c);
        free(coll_s);
        free(wire_s);
        free(upi_bytes);
        free(per_step);
        platform_free(p);
        return TT_OK;
    }
    link_usage *links = note && x->links ? &x->res->links : NULL;
    if (links) /* the point's own step only, however often it is planned */
        memset(links, 0, sizeof *links);
    if (rc == TT_OK)
        rc = time_collectives(sc, p, c, nc, per_step, coll_s, wire_s, upi_bytes, x->res, links, err);
    if (rc == TT_OK && plan == SHARD_HOST)
        rc = time_host_embeddings(sc, p, x->tr, ph, links, err);
    for (size_t k = 0; rc == TT_OK && k < sc->n_phases; k++) {
        ph[k].o.coll_wire_s = wire_s + ph[k].first_coll;
        rc = step_replay(&x->tr[k], &d, &ph[k].o, coll_s + ph[k].first_coll, &ph[k].r, err);
    }
    if (rc == TT_OK)
        rc = wait_for_input(sc, p, ph, err);
    if (rc == TT_OK) {
        const device_info *dev = platform_device(p, 0);
        run_result *r = x->res;
        snprintf(pt->platform, sizeof pt->platform, "%s", platform_name(p));
        if (!r->platform[0]) { /* the base point, or the first that runs */
            r->price_per_h_usd = dev->price_usd_per_h;
            r->busy_w = dev->tdp_w;
            r->idle_w = dev->idle_w;
            r->peak_flops = d.peak_flops;
            snprintf(r->accelerator, sizeof r->accelerator, "%s", dev->name);
            snprintf(r->platform, sizeof r->platform, "%s", platform_name(p));
        }
        combine_phases(sc, ph, d.peak_flops, pt);
        for (size_t k = 0; upi_bytes && k < sc->n_phases; k++)
            pt->upi_bytes += sc->phases[k].fraction * phase_upi_bytes(&x->tr[k], &ph[k], upi_bytes);
        pt->tables = ph[0].tables;
        pt->n_tables = x->tr[0].emb.n_tables;
        if (x->mix) {
            pt->mix = *x->mix;
            memcpy(pt->groups, ph[0].groups, sizeof pt->groups);
            memcpy(pt->group_tables, ph[0].group_tables, sizeof pt->group_tables);
        }
        cost_bill_of(p, &pt->bill);
        time_to_target(x, dev, &d, ph, pt);
        if (note)
            note_assumptions(x, p, pt);
    }
    free(c);
    free(coll_s);
    free(wire_s);
    free(upi_bytes);
    free(per_step);
    platform_free(p);
    return rc;
}

/* A plan per table group: each "auto" group in turn takes the plan that
 * makes the step fastest with the other groups as they stand (the autos
 * start table_wise, or row_wise beside a row_wise group; a plan that does
 * not fit is +inf, one that conflicts with the others is skipped). */
static int run_point_mix(run_ctx *x, int nodes, long global_batch, int note, run_point *pt, tt_error *err)
{
    sharding_mix m = x->sc->shard_mix;
    int row_wise = 0, rc = TT_OK;
    for (int g = 0; g < m.n_groups; g++)
        row_wise |= m.plan[g] == SHARD_ROW_WISE;
    for (int g = 0; g < m.n_groups; g++)
        if (m.plan[g] == SHARD_AUTO)
            m.plan[g] = row_wise ? SHARD_ROW_WISE : SHARD_TABLE_WISE;
    x->mix = &m;
    run_point cand;
    for (int g = 0; rc == TT_OK && g < m.n_groups; g++) {
        if (x->sc->shard_mix.plan[g] != SHARD_AUTO)
            continue;
        sharding_kind best = m.plan[g];
        double best_s = INFINITY;
        for (int k = 0; rc == TT_OK && k < SHARD_HOST; k++) {
            m.plan[g] = (sharding_kind)k;
            if (sharding_mix_conflict(&m))
                continue;
            rc = run_point_plan(x, nodes, global_batch, m.plan[0], 1, 0, &cand, err);
            if (rc == TT_OK && cand.step.time_s < best_s) {
                best_s = cand.step.time_s;
                best = (sharding_kind)k;
            }
        }
        m.plan[g] = best;
    }
    if (rc == TT_OK)
        rc = run_point_plan(x, nodes, global_batch, m.plan[0], 0, note, pt, err);
    x->mix = NULL;
    return rc;
}

/* The point under the scenario's plan, or under each plan for "auto": the
 * fastest that fits (host memory only on platforms with CPU sockets). */
static int run_point_at(run_ctx *x, int nodes, long global_batch, int note, run_point *pt, tt_error *err)
{
    const scenario *sc = x->sc;
    if (sc->shard_mix.n_groups > 0 && has_tables(x))
        return run_point_mix(x, nodes, global_batch, note, pt, err);
    if (sc->sharding != SHARD_AUTO || !has_tables(x))
        return run_point_plan(x, nodes, global_batch, sc->sharding == SHARD_AUTO ? SHARD_TABLE_WISE : (sharding_kind)sc->sharding,
                              0, note, pt, err);
    platform *p = load_platform(sc, nodes, err);
    if (!p)
        return err->code;
    platform_summary sum;
    platform_summarize(p, &sum);
    platform_free(p);
    run_point cand;
    pt->step.time_s = INFINITY;
    for (int k = 0; k < SHARD_COUNT; k++) {
        if (k == SHARD_HOST && (sum.cpu_sockets == 0 || sc->cpu_ranks)) /* no sockets, or they are the ranks */
            continue;
        int rc = run_point_plan(x, nodes, global_batch, (sharding_kind)k, 1, 0, &cand, err);
        if (rc)
            return rc;
        if (cand.step.time_s < pt->step.time_s)
            *pt = cand;
    }
    if (isinf(pt->step.time_s))
        return run_point_plan(x, nodes, global_batch, SHARD_TABLE_WISE, 0, note, pt, err); /* names what does not fit */
    if (!note)
        return TT_OK;
    if (!(p = load_platform(sc, nodes, err)))
        return err->code;
    note_assumptions(x, p, pt);
    platform_free(p);
    return TT_OK;
}

static int load_workload(run_ctx *x, tt_error *err)
{
    const scenario *sc = x->sc;
    int rc = TT_OK;
    for (size_t k = 0; rc == TT_OK && k < sc->n_phases; k++) {
        const scenario_phase *sp = &sc->phases[k];
        int mb = sp->micro_batch ? sp->micro_batch : sc->micro_batch;
        long gb = sp->global_batch ? sp->global_batch : sc->global_batch;
        if (!sp->trace_path && mb == 0 && gb > 0) {
            /* a trace made at the scenario's samples per rank replays them unscaled */
            platform *p = load_platform(sc, sc->nodes, err);
            if (!p)
                return err->code;
            int ranks = platform_ranks(p);
            platform_free(p);
            mb = gb % ranks == 0 && gb / ranks <= (1 << 24) ? (int)(gb / ranks) : 0;
        }
        rc = sp->trace_path ? workload_load(sp->trace_path, &x->tr[k], err)
                            : workload_make(sp->model, mb, sc->precision, sc->bucket_bytes, sc->optimizer, &x->tr[k], err);
    }
    if (rc)
        return rc;
    run_result *r = x->res;
    snprintf(r->model, sizeof r->model, "%s", x->tr[0].model);
    snprintf(r->precision, sizeof r->precision, "%s", sc->precision ? sc->precision : x->tr[0].precision);
    snprintf(r->optimizer, sizeof r->optimizer, "%s", sc->optimizer ? sc->optimizer : x->tr[0].optimizer);
    if (sc->conv == CONV_PROFILE) {
        if ((rc = convergence_load(sc->profile_path, &x->conv, err)))
            return rc;
        convergence_request want = {r->model, sc->target_dataset, sc->target_metric, sc->target_value,
                                    !!(sc->accept_mismatch & SCENARIO_ACCEPT_MODEL),
                                    !!(sc->accept_mismatch & SCENARIO_ACCEPT_DATASET),
                                    !!(sc->accept_mismatch & SCENARIO_ACCEPT_TARGET)};
        if ((rc = convergence_match(x->conv, &want, sc->path, x->conv_notes, &x->n_conv_notes, err)))
            return rc;
    } else if (sc->conv == CONV_MCCANDLISH) {
        if (!(x->conv = convergence_mccandlish(sc->s_min, sc->noise_scale)))
            return tt_error_set(err, TT_EINTERNAL, "convergence: out of memory");
    }
    if (x->conv) {
        int assumed;
        double sd = convergence_run_sd(x->conv, &assumed);
        if (assumed)
            snprintf(x->conv_notes[x->n_conv_notes++], sizeof x->conv_notes[0],
                     "convergence.run_spread = %.0f %% sd of the steps to target between seeded runs (U: the "
                     "convergence source states no repeated runs; MLPerf's reference runs spread 1-8 %%): the "
                     "band is its 10th-90th percentile, widened by the model's error between and beyond points",
                     100 * sd);
        if (convergence_recipe(x->conv)) {
            r->recipe = *convergence_recipe(x->conv);
            r->has_recipe = 1;
        }
        snprintf(r->convergence, sizeof r->convergence, "%s", convergence_source(x->conv));
        snprintf(r->target, sizeof r->target, "%s", convergence_target(x->conv));
    } else if (sc->conv == CONV_STEPS) {
        snprintf(r->convergence, sizeof r->convergence, "fixed number of steps from the scenario");
        snprintf(r->target, sizeof r->target, "%.0f steps", sc->fixed_steps);
    } else {
        return tt_error_set(err, TT_EINPUT, "%s: missing \"convergence\": give a \"profile\", \"mccandlish\" "
                            "{s_min, noise_scale} or \"steps\" to get the time to accuracy", sc->path);
    }
    return TT_OK;
}

static void free_ctx(run_ctx *x)
{
    for (size_t k = 0; k < SCENARIO_MAX_PHASES; k++)
        if (x->tr[k].path)
            workload_free(&x->tr[k]);
    convergence_free(x->conv);
}

/* A point that cannot run (its batch does not split over the ranks, it does
 * not fit in memory, a swept value the platform refuses) keeps its error in
 * its row; other failures stop the run. */
static int note_point_error(int rc, run_point *pt, tt_error *err)
{
    if (rc != TT_EINPUT)
        return rc;
    snprintf(pt->error, sizeof pt->error, "%s", err->msg);
    err->code = TT_OK;
    err->msg[0] = '\0';
    return TT_OK;
}

/* Whether a sweep point's scenario needs its own traces or convergence model. */
static int same_workload(const scenario *a, const scenario *b)
{
    static const char *const keys[] = {"workload", "optimizer", "convergence", NULL};
    for (int i = 0; keys[i]; i++) {
        json_t *x = json_object_get(a->doc, keys[i]), *y = json_object_get(b->doc, keys[i]);
        if ((x || y) && !json_equal(x, y))
            return 0;
    }
    return 1;
}

/* Combination `combo` of the swept paths (the last varies fastest): its
 * scenario and its label. */
static int path_point(const scenario *sc, size_t combo, scenario *out, char *label, size_t label_bytes,
                      tt_error *err)
{
    json_t *vals[SCENARIO_MAX_SWEEP_PATHS];
    size_t used = 0;
    label[0] = '\0';
    for (size_t k = sc->n_sweep_paths; k-- > 0;) {
        size_t n = json_array_size(sc->sweep_values[k]);
        vals[k] = json_array_get(sc->sweep_values[k], combo % n);
        combo /= n;
    }
    for (size_t k = 0; k < sc->n_sweep_paths; k++) {
        char *text = json_dumps(vals[k], JSON_ENCODE_ANY | JSON_COMPACT), real[32];
        const char *shown = json_is_string(vals[k]) ? json_string_value(vals[k]) : text;
        if (json_is_real(vals[k])) { /* 0.8, not Jansson's 0.80000000000000004 */
            snprintf(real, sizeof real, "%.6g", json_real_value(vals[k]));
            shown = real;
        }
        used += (size_t)snprintf(label + used, used < label_bytes ? label_bytes - used : 0, "%s%s=%s",
                                 k ? ", " : "", sc->sweep_path[k], shown ? shown : "?");
        free(text);
    }
    return scenario_at(sc, sc->sweep_path, vals, sc->n_sweep_paths, out, err);
}

/* A sweep point as a worker hands it back, and as a shard records it: the
 * point (or the error that stops the run), and the run's fields it set. */
typedef struct point_outcome {
    int present, rc, reused;
    tt_error err;
    run_point pt;
    run_result fields; /* scalars only: its pointers are cleared */
} point_outcome;

size_t run_record_bytes(void)
{
    return sizeof(point_outcome);
}

size_t run_sweep_points(const scenario *sc)
{
    if (!sc->n_sweep_batch && !sc->n_sweep_nodes && !sc->n_sweep_paths)
        return 0;
    size_t n = (sc->n_sweep_batch ? sc->n_sweep_batch : 1) * (sc->n_sweep_nodes ? sc->n_sweep_nodes : 1);
    for (size_t k = 0; k < sc->n_sweep_paths; k++)
        n *= json_array_size(sc->sweep_values[k]);
    return n;
}

/* The sweep as independent points: point i is combination i / grid of the
 * swept paths, then node count (i mod grid) / nb and batch i mod nb. */
typedef struct sweep {
    run_ctx *x;
    size_t nb, grid;
    const size_t *own; /* the points this process runs, in sweep order */
    void (*progress)(size_t done, size_t total);
} sweep;

/* Point i's context: its combination's scenario and, when that changes the
 * workload, its own traces and convergence model. */
typedef struct point_ctx {
    run_ctx x;
    scenario psc;
    int paths, own;
    char label[160];
} point_ctx;

static int point_open(const sweep *s, size_t i, run_result *res, point_ctx *pc, tt_error *err)
{
    const scenario *sc = s->x->sc;
    memset(pc, 0, sizeof *pc);
    pc->x = *s->x;
    pc->x.res = res;
    pc->paths = sc->n_sweep_paths > 0;
    if (!pc->paths)
        return TT_OK;
    int rc = path_point(sc, i / s->grid, &pc->psc, pc->label, sizeof pc->label, err);
    if (rc)
        return rc;
    pc->x.sc = &pc->psc;
    pc->own = !same_workload(sc, &pc->psc);
    if (pc->own) {
        memset(pc->x.tr, 0, sizeof pc->x.tr);
        pc->x.conv = NULL;
        rc = load_workload(&pc->x, err);
    }
    return rc;
}

static void point_close(point_ctx *pc)
{
    if (pc->own)
        free_ctx(&pc->x);
    if (pc->paths)
        scenario_free(&pc->psc);
}

static void point_request(const sweep *s, const scenario *ps, size_t i, int *nodes, long *gb)
{
    size_t g = i % s->grid;
    *nodes = ps->n_sweep_nodes ? ps->sweep_nodes[g / s->nb] : ps->nodes;
    *gb = ps->n_sweep_batch ? ps->sweep_batch[g % s->nb] : ps->global_batch;
}

static void sweep_point(void *arg, size_t j, void *result)
{
    const sweep *s = arg;
    const run_result *out = s->x->res;
    point_outcome *o = result;
    size_t i = s->own[j];
    o->present = 1;
    o->fields = *out;
    o->fields.allreduce[0] = o->fields.alltoall[0] = '\0'; /* set again only if this point simulates them */
    point_ctx pc;
    o->rc = point_open(s, i, &o->fields, &pc, &o->err);
    int nodes = 0;
    long gb = 0;
    if (o->rc == TT_OK)
        point_request(s, pc.x.sc, i, &nodes, &gb);
    /* the scenario's own point (same request) is usually in its sweep: not simulated twice */
    if (o->rc == TT_OK && !pc.paths && nodes == s->x->sc->nodes && gb == s->x->sc->global_batch &&
        !out->base.error[0]) {
        o->pt = out->base;
        o->reused = 1;
    } else if (o->rc == TT_OK) {
        o->rc = note_point_error(run_point_at(&pc.x, nodes, gb, 0, &o->pt, &o->err), &o->pt, &o->err);
        if (o->pt.error[0]) {
            o->pt.nodes = nodes ? nodes : out->base.nodes;
            o->pt.global_batch = gb;
        }
    }
    snprintf(o->pt.label, sizeof o->pt.label, "%s", pc.label);
    point_close(&pc);
    memset(o->fields.assumptions, 0, sizeof o->fields.assumptions); /* the caller's: not carried */
    o->fields.n_assumptions = 0;
    o->fields.points = NULL;
}

static void sweep_progress(void *arg, size_t done, size_t total)
{
    const sweep *s = arg;
    if (s->progress)
        s->progress(done, total);
}

/* What a point leaves in the run, as when points ran one after another: the
 * algorithms of the last that simulated them, the platform of the first that ran. */
static void adopt_fields(run_result *out, const point_outcome *o)
{
    const run_result *from = &o->fields;
    if (from->allreduce[0])
        memcpy(out->allreduce, from->allreduce, sizeof out->allreduce);
    if (from->alltoall[0])
        memcpy(out->alltoall, from->alltoall, sizeof out->alltoall);
    if (out->platform[0] || !from->platform[0])
        return;
    memcpy(out->platform, from->platform, sizeof out->platform);
    memcpy(out->accelerator, from->accelerator, sizeof out->accelerator);
    out->price_per_h_usd = from->price_per_h_usd;
    out->busy_w = from->busy_w;
    out->idle_w = from->idle_w;
    out->peak_flops = from->peak_flops;
}

/* When the scenario's own point could not run, the first sweep point that
 * did names the assumptions (its platform again: no simulation). */
static int note_first_point(const sweep *s, const point_outcome *o, size_t n, tt_error *err)
{
    size_t i = 0;
    while (i < n && (o[i].reused || o[i].pt.error[0]))
        i++;
    if (i == n)
        return TT_OK;
    point_ctx pc;
    int rc = point_open(s, i, s->x->res, &pc, err), nodes;
    long gb;
    platform *p = NULL;
    if (rc == TT_OK) {
        point_request(s, pc.x.sc, i, &nodes, &gb);
        p = load_platform(pc.x.sc, nodes, err);
        rc = p ? TT_OK : err->code;
    }
    if (p)
        note_assumptions(&pc.x, p, &o[i].pt);
    platform_free(p);
    point_close(&pc);
    return rc;
}

/* Points this process runs: all, or its shard's (i mod shards); `jobs` at a time. */
static int run_own_points(const sweep *s, point_outcome *o, size_t m, const run_options *opt, tt_error *err)
{
    point_outcome *mine = calloc(m + 1, sizeof *mine);
    if (!mine)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    int rc = parallel_run(m, opt->jobs, sizeof *mine, sweep_point, sweep_progress, (void *)s, mine, err);
    for (size_t j = 0; rc == TT_OK && j < m; j++)
        o[s->own[j]] = mine[j];
    free(mine);
    return rc;
}

/* The records a merge was given: every point must be in one of them. */
static int take_records(const run_options *opt, const sweep *s, point_outcome *o, size_t n, tt_error *err)
{
    const scenario *sc = s->x->sc;
    memcpy(o, opt->records, n * sizeof *o);
    for (size_t i = 0; i < n; i++)
        if (!o[i].present)
            return tt_error_set(err, TT_EINPUT, "%s: sweep point %zu (%s%snodes %d, global batch %ld) is in none "
                                "of the shards given; merge every shard of the run", sc->path, i,
                                o[i].pt.label, o[i].pt.label[0] ? ", " : "",
                                sc->n_sweep_nodes ? sc->sweep_nodes[(i % s->grid) / s->nb] : sc->nodes,
                                sc->n_sweep_batch ? sc->sweep_batch[i % s->nb] : sc->global_batch);
    return TT_OK;
}

/* Every sweep point, opt->jobs at a time (or this shard's, or a merge's
 * records); points and errors taken in sweep order. */
static int run_sweep(run_ctx *x, const run_options *opt, tt_error *err)
{
    const scenario *sc = x->sc;
    run_result *out = x->res;
    size_t nb = sc->n_sweep_batch ? sc->n_sweep_batch : 1;
    size_t n = run_sweep_points(sc), m = 0;
    int shards = opt->shards > 1 ? opt->shards : 1;
    out->points = calloc(n, sizeof *out->points);
    point_outcome *o = calloc(n, sizeof *o);
    size_t *own = calloc(n, sizeof *own);
    if (!out->points || !o || !own) {
        free(o);
        free(own);
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if ((int)(i % (size_t)shards) == opt->shard)
            own[m++] = i;
    sweep s = {x, nb, nb * (sc->n_sweep_nodes ? sc->n_sweep_nodes : 1), own, opt->progress};
    if (opt->progress && !opt->records)
        opt->progress(0, m);
    int rc = opt->records ? take_records(opt, &s, o, n, err) : run_own_points(&s, o, m, opt, err);
    if (rc == TT_OK && shards > 1) { /* a shard: its records go to merge */
        out->records = o;
        out->n_records = n;
        free(own);
        return TT_OK;
    }
    for (size_t i = 0; rc == TT_OK && i < n; i++) {
        if (o[i].rc) {
            *err = o[i].err;
            rc = o[i].rc;
            break;
        }
        out->points[out->n_points++] = o[i].pt;
        if (!o[i].reused)
            adopt_fields(out, &o[i]);
    }
    if (rc == TT_OK && out->n_assumptions == 0)
        rc = note_first_point(&s, o, n, err);
    free(o);
    free(own);
    /* scaling efficiency: throughput per rank against the first point */
    for (size_t i = 0; rc == TT_OK && i < out->n_points && sc->n_sweep_nodes > 1; i++) {
        const run_point *a = &out->points[0], *b = &out->points[i];
        if (!a->error[0] && !b->error[0])
            out->points[i].scaling_efficiency = (b->samples_per_s / b->ranks) / (a->samples_per_s / a->ranks);
    }
    return rc;
}

int run_scenario(const scenario *sc, const run_options *opt, run_result *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->allreduce, sizeof out->allreduce, "none");
    snprintf(out->alltoall, sizeof out->alltoall, "none");
    run_ctx x = {.sc = sc, .res = out, .links = opt->links};
    out->links_shown = opt->links;
    int swept = run_sweep_points(sc) > 0;
    int rc = load_workload(&x, err);
    if (rc == TT_OK)
        rc = run_point_at(&x, sc->nodes, sc->global_batch, 1, &out->base, err);
    if (swept)
        rc = note_point_error(rc, &out->base, err);
    if (rc == TT_OK && swept)
        rc = run_sweep(&x, opt, err);
    /* a point at or beyond a batch where the profile's runs failed: said once */
    double failed = out->base.failed_batch;
    for (size_t i = 0; i < out->n_points && failed == 0; i++)
        failed = out->points[i].failed_batch;
    if (rc == TT_OK && failed > 0 && out->n_assumptions < RUN_MAX_ASSUMPTIONS) {
        char buf[512];
        snprintf(buf, sizeof buf, "convergence.not_reached = the profile's runs at batch %.0f did not reach the "
                 "target; steps at that batch and above are the fit's, which those runs contradict", failed);
        out->assumptions[out->n_assumptions++] = strdup(buf);
    }
    free_ctx(&x);
    return rc;
}

void run_result_free(run_result *r)
{
    for (size_t i = 0; i < r->n_assumptions; i++)
        free(r->assumptions[i]);
    free(r->points);
    free(r->records);
    memset(r, 0, sizeof *r);
}
