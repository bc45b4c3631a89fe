#include "sim/replay/chakra.h"
#include "sim/replay/point.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/closed_form.h"
#include "collectives/nccl.h"
#include "sim/engine/host_embedding.h"
#include "sim/engine/nccl_plan.h"
#include "sim/replay/coll_timing.h"
#include "sim/replay/input_pipeline.h"
#include "sim/replay/step_transformer.h"

/* ---- the workload at this point's batch ---- */

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
    if (per_rank > RUN_MAX_SAMPLES_PER_RANK) /* micro-batch and accumulation are ints */
        return tt_error_set(err, TT_EINPUT, "%s: $.workload.global_batch: %ld samples per rank (global batch %ld "
                            "over %d ranks), more than %d; use a smaller global batch or more ranks", sc->path,
                            per_rank, gb, ranks, RUN_MAX_SAMPLES_PER_RANK);
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
    double *zero = calloc(n_coll, sizeof *zero);
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
    tf_options tf;             /* model parallelism (tf.layout NULL: data parallelism only) */
    step_result r;
} phase_plan;

/* What the ids' input alltoall charges (workload.embedding.ids "alltoall"),
 * as the step would run it. On NVIDIA GPUs at what bounds it, a node's NICs
 * (nccl_comm_of) for what leaves the node, a GPU's links for the rest.
 * Elsewhere pairwise exchanges on the slowest route from rank 0. */
static void ids_alltoall_cost(const scenario *sc, const platform *p, int ranks, sharding_options *so)
{
    nccl_comm c;
    int g = platform_ranks_per_node(p) < ranks ? platform_ranks_per_node(p) : ranks;
    double lat_s = 0, bw_Bps = 0;
    if (nccl_comm_of(p, NULL, ranks, sc->nccl_collnet, &c) == 0) {
        double lat_in = 0, bw_in = 0, off = 0, on = (double)(g - 1) / ranks;
        if (g > 1)
            platform_path(p, 0, 1, &lat_in, &bw_in);
        so->alltoall_s_per_byte = bw_in > 0 ? on / bw_in : 0;
        if (c.nodes > 1) {
            platform_path(p, 0, platform_ranks_per_node(p), &lat_s, &bw_Bps);
            off = (double)(ranks - g) / ranks;
            double nic_Bps = fmin(bw_Bps, c.node.nic_GBps * 1e9);
            so->alltoall_s_per_byte = fmax(so->alltoall_s_per_byte, off * g / (c.node.nics * nic_Bps));
        }
        so->alltoall_latency_s = fmax(lat_in, lat_s);
        return;
    }
    for (int r = 1; r < ranks; r++) {
        double l, b;
        platform_path(p, 0, r, &l, &b);
        lat_s = fmax(lat_s, l);
        bw_Bps = r == 1 ? b : fmin(bw_Bps, b);
    }
    const double probe = 256.0 * 1024 * 1024;
    coll_params q = {.op = OP_ALLTOALL, .algo = ALGO_PAIRWISE, .ranks = ranks};
    so->alltoall_latency_s = coll_closed_form_s(&q, lat_s, bw_Bps, 0);
    q.bytes = probe;
    so->alltoall_s_per_byte = (coll_closed_form_s(&q, lat_s, bw_Bps, 0) - so->alltoall_latency_s) / probe;
}

/* The model-parallel tables of a phase under a plan: on the accelerators, or,
 * in host memory, the traffic of each accelerator's share of its node's. */
static int plan_tables(const run_ctx *x, size_t k, sharding_kind plan, const sharding_mix *mix, const platform *p,
                       const device_model *d, phase_plan *pp, tt_error *err)
{
    int node_ranks = platform_ranks_per_node(p);
    const scenario *sc = x->sc;
    const workload *t = &x->tr[k];
    tt_dtype dt;
    int rc = dtype_parse(sc->table_precision ? sc->table_precision : x->precision, &dt, err);
    if (rc || t->emb.n_tables == 0)
        return rc;
    sharding_options so = {.ranks = pp->o.ranks, .micro_batch = pp->micro_batch, .table_dtype_bytes = dtype_bytes(dt),
                           .act_dtype_bytes = pp->o.dtype_bytes, .grad_dtype_bytes = pp->o.grad_dtype_bytes,
                           .master_weights = sc->master_weights, .optimizer = sc->table_optimizer,
                           .zipf_s = sc->index_zipf_s > 0 ? sc->index_zipf_s : t->emb.zipf_s,
                           .mem_Bps = d->mem_Bps, .dispatch_s = framework_kernel_s(sc->framework, d->dispatch_s), .node_ranks = node_ranks,
                           .ids = sc->embedding_ids, .hybrid = sc->hybrid};
    ids_alltoall_cost(sc, p, pp->o.ranks, &so);
    if (plan != SHARD_HOST && mix) {
        sharding_mix_cost_of(&t->emb, mix, &so, &pp->tables, pp->groups, pp->group_tables);
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

/* ---- embedding rows to and from the CPU sockets on SimGrid ---- */

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
    if (host_embedding_time(p, sc->network, load, (int)sc->n_phases, weight, t,
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

/* ---- the step, then steps and time to the target ---- */

/* Each phase's step waits on the host input pipeline when it is the slower
 * (workload.input): a node's host prepares its ranks' samples of the step. */
static int wait_for_input(const scenario *sc, const cluster *c, phase_plan *ph, tt_error *err)
{
    double host_images_per_s;
    int rc = input_pipeline_host_images_per_s(sc->input_pipeline, c->host_cores,
                                              sc->input_threads, sc->path, platform_name(c->p), &host_images_per_s,
                                              err);
    for (size_t k = 0; rc == TT_OK && k < sc->n_phases && host_images_per_s > 0; k++) {
        step_result *r = &ph[k].r;
        double images = (double)ph[k].o.micro_batch * ph[k].o.accumulation * platform_ranks_per_node(c->p);
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
        s->tp_comm_s += f * r->tp_comm_s;
        s->cp_comm_s += f * r->cp_comm_s;
        s->ep_comm_s += f * r->ep_comm_s;
        s->bubble_s += f * r->bubble_s;
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
 * the workload: `examples` forward passes split over the data-parallel
 * replicas at the first phase's micro-batch, after every `every_epochs` epochs
 * or every `every_examples` examples (every ceil(every_examples / batch)
 * steps, as MLPerf's language models evaluate). A pipeline's replica runs its
 * micro-batches forward one after another: the first through every stage, the
 * rest at its busiest stage's pace. */
static double evaluation_s(const scenario *sc, const workload *t, const device_model *d, const phase_plan *ph,
                           const run_point *pt, double steps)
{
    if (sc->eval_every_steps > 0)
        return floor(steps / sc->eval_every_steps) * sc->eval_time_s;
    double evals;
    if (sc->eval_every_examples > 0)
        evals = floor(steps / ceil(sc->eval_every_examples / pt->global_batch) + 1e-9);
    else if (sc->eval_every_epochs > 0)
        evals = floor(steps * pt->global_batch / sc->dataset_examples / sc->eval_every_epochs + 1e-9);
    else
        return 0;
    const layout *l = ph->tf.layout;
    if (!l)
        return evals * ceil(ceil(sc->eval_examples / pt->ranks) / ph->o.micro_batch) * step_forward_s(t, d, &ph->o);
    int replicas = layout_groups(l, LAYOUT_DIM(LAYOUT_TENSOR) | LAYOUT_DIM(LAYOUT_CONTEXT) | LAYOUT_DIM(LAYOUT_PIPELINE));
    double passes = ceil(ceil(sc->eval_examples / replicas) / ph->o.micro_batch);
    return evals * (ph->r.forward_fill_s + (passes - 1) * ph->r.forward_beat_s);
}

/* Time, cost and energy of `steps` steps with eval_s of evaluation (busy time). */
static double run_for(const run_point *pt, const cost_rates *rates, double steps, double eval_s, cost *total)
{
    double time_s = steps * pt->step.time_s + eval_s;
    *total = cost_of(rates, time_s, (pt->step.compute_s + pt->step.optimizer_s) * steps + eval_s);
    return time_s;
}

/* Renting, power and owning at this point (cost.h). */
static cost_rates rates_of(const scenario *sc, const device_info *dev, const run_point *pt)
{
    return (cost_rates){pt->ranks, dev->price_usd_per_h, dev->tdp_w, dev->idle_w, pt->bill.other_w, sc->pue,
                        pt->bill.total_usd, sc->lifetime_years * 365.25 * 86400, sc->usd_per_kwh / 3.6e6};
}

static void time_to_target(const run_ctx *x, const device_info *dev, const device_model *d, const phase_plan *ph,
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
    cost_rates rates = rates_of(sc, dev, pt);
    double lifetime_s = rates.lifetime_s;
    pt->per_step = cost_of(&rates, pt->step.time_s, pt->step.compute_s + pt->step.optimizer_s);
    pt->time_to_accuracy_s = run_for(pt, &rates, pt->steps_to_target, pt->eval_s, &pt->total);
    pt->time_to_accuracy_p10_s = run_for(pt, &rates, pt->steps_p10,
                                         evaluation_s(sc, &x->tr[0], d, &ph[0], pt, pt->steps_p10), &pt->total_p10);
    pt->time_to_accuracy_p90_s = run_for(pt, &rates, pt->steps_p90,
                                         evaluation_s(sc, &x->tr[0], d, &ph[0], pt, pt->steps_p90), &pt->total_p90);
    if (pt->bill.total_usd > 0)
        pt->tco_usd = pt->bill.total_usd + pt->per_step.energy_usd / pt->step.time_s * lifetime_s;
}

/* The slowest device of the step's group sets its pace (resilience.stragglers):
 * the wait is idle time. Returns it. */
static double wait_for_stragglers(const scenario *sc, run_point *pt)
{
    double lag = resilience_straggler_s(&sc->resilience, pt->step.compute_s, pt->ranks);
    double scale = pt->step.time_s / (pt->step.time_s + lag);
    pt->step.time_s += lag;
    pt->step.idle_s += lag;
    pt->step.mfu *= scale;
    pt->samples_per_s *= scale;
    return lag;
}

void point_failures(const run_ctx *x, const cluster *c, run_point *pt)
{
    const scenario *sc = x->sc;
    tt_dtype dt;
    double straggler_s = pt->res.straggler_s, bytes = 4;
    if (dtype_parse(x->precision, &dt, NULL) == TT_OK && dtype_bytes(dt) < 4)
        bytes = 4 + dtype_bytes(dt); /* fp32 master weights and the low-precision copy */
    resilience_inputs in = {.gpus = pt->cpu_ranks ? 0 : c->sum.accelerators, .nodes = c->sum.nodes,
                            .nics = c->sum.nics,
                            .state_bytes = x->tr[0].params * (bytes + 4.0 * x->optimizer->state_words),
                            .time_s = pt->time_to_accuracy_s, .time_p10_s = pt->time_to_accuracy_p10_s,
                            .time_p90_s = pt->time_to_accuracy_p90_s,
                            .busy_share = (pt->step.compute_s + pt->step.optimizer_s) / pt->step.time_s};
    const char *why;
    platform_storage(c->p, &in.platform_write_Bps, &in.platform_read_Bps, &why);
    cost_rates rates = rates_of(sc, platform_device(c->p, 0), pt);
    resilience_of(&sc->resilience, &in, &rates, &pt->res);
    pt->res.straggler_s = straggler_s;
    pt->res.straggler_group = pt->ranks;
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

/* The step's collectives, one list over the phases (each phase's from
 * first_coll), and how often each runs per step, phases weighted. */
typedef struct point_colls {
    step_coll *c;
    double *per_step;
    coll_times t;
    size_t n;
} point_colls;

static int colls_alloc(const run_ctx *x, int cpu_ranks, point_colls *pc, tt_error *err)
{
    size_t total = 0;
    for (size_t k = 0; k < x->sc->n_phases; k++)
        total += step_collectives_max(&x->tr[k]) + TF_COLLS;
    memset(pc, 0, sizeof *pc);
    pc->c = calloc(total + 1, sizeof *pc->c);
    pc->per_step = calloc(total + 1, sizeof *pc->per_step);
    pc->t.coll_s = calloc(total + 1, sizeof *pc->t.coll_s);
    pc->t.wire_s = calloc(total + 1, sizeof *pc->t.wire_s);
    pc->t.upi_bytes = cpu_ranks ? calloc(total + 1, sizeof *pc->t.upi_bytes) : NULL;
    if (!pc->c || !pc->per_step || !pc->t.coll_s || !pc->t.wire_s || (cpu_ranks && !pc->t.upi_bytes))
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    return TT_OK;
}

static void colls_free(point_colls *pc)
{
    free(pc->c);
    free(pc->per_step);
    free(pc->t.coll_s);
    free(pc->t.wire_s);
    free(pc->t.upi_bytes);
}

/* Tensor, pipeline, context or expert parallelism: the transformer's step. */
static int model_parallel(const layout *l)
{
    return l->degree[LAYOUT_TENSOR] * l->degree[LAYOUT_PIPELINE] * l->degree[LAYOUT_CONTEXT] *
               l->degree[LAYOUT_EXPERT] > 1;
}

/* The scenario names a layout (a degree in "parallel"): its run reports the
 * layout, tokens and memory per rank as a model-parallel one does, also when
 * it is data parallel only and takes the data-parallel step. */
static int states_layout(const scenario *sc)
{
    for (int d = 0; d < LAYOUT_DIMS; d++)
        if (sc->degree[d] > 0)
            return 1;
    return 0;
}

/* One micro-batch's activations from pipeline stage 0 to stage 1, every
 * rank of a stage sending its own at once, each on its route (rank 0's
 * stands for them): its latency and bytes at its bandwidth. */
static double send_s(const platform *p, const workload *t, const phase_plan *pp)
{
    const layout *l = pp->tf.layout;
    if (l->degree[LAYOUT_PIPELINE] == 1)
        return 0;
    int coord[LAYOUT_DIMS] = {[LAYOUT_PIPELINE] = 1};
    double lat = 0, bw = 0;
    platform_path(p, 0, layout_rank(l, coord), &lat, &bw);
    return lat + (bw > 0 ? tf_send_bytes(t, &pp->o, &pp->tf) / bw : 0);
}

/* Phase k's batch split, step options and tables; its collectives appended to pc. */
static int plan_phase(const run_ctx *x, const cluster *c, const device_model *d, size_t k, long global_batch,
                      const layout *lay, sharding_kind plan, const sharding_mix *mix, phase_plan *pp,
                      point_colls *pc, int *fits, tt_error *err)
{
    const scenario *sc = x->sc;
    /* the batch is split over the data-parallel groups' ranks (the expert ranks among them) */
    int ranks = lay->degree[LAYOUT_DATA] * lay->degree[LAYOUT_EXPERT];
    const scenario_phase *sp = &sc->phases[k];
    const workload *t = &x->tr[k];
    pp->global_batch = sp->global_batch ? sp->global_batch : global_batch;
    int rc = split_batch(sc, t, sp->micro_batch ? sp->micro_batch : sc->micro_batch, ranks, &pp->global_batch,
                         &pp->micro_batch, &pp->accumulation, err);
    if (rc)
        return rc;
    step_options *o = &pp->o;
    o->micro_batch = pp->micro_batch;
    o->accumulation = pp->accumulation;
    tt_dtype dt, grad_dt;
    if ((rc = dtype_parse(x->precision, &dt, err)) ||
        (rc = dtype_parse(sc->gradient_precision ? sc->gradient_precision : x->precision, &grad_dt, err)))
        return rc;
    o->dtype_bytes = dtype_bytes(dt);
    o->grad_dtype_bytes = dtype_bytes(grad_dt);
    o->fp8_gemm_inputs = dt == DTYPE_FP8;
    o->context = lay->degree[LAYOUT_CONTEXT];
    o->overlap = sc->overlap;
    o->concurrent_ops = sc->concurrent_ops;
    o->zero = sc->zero;
    o->overlap_param_gather = sc->overlap_param_gather;
    o->grouped = sc->grouped;
    o->overlap_ar_a2a = sc->overlap_ar_a2a;
    o->ranks = ranks;
    o->node_ranks = platform_ranks_per_node(c->p);
    o->optimizer_state_words = x->optimizer->state_words;
    o->embeddings = plan == SHARD_HOST ? EMB_HOST : EMB_ACCELERATORS;
    if ((rc = plan_tables(x, k, plan, mix, c->p, d, pp, err)))
        return rc;
    o->recompute = sc->recompute;
    o->fused_attention = sc->fused_attention;
    o->autograd_activations = sc->autograd_activations;
    o->framework = sc->framework;
    o->async_wgrad = sc->async_wgrad;
    if (model_parallel(lay) || sc->zero >= 3) { /* ZeRO-3 gathers block by block: the transformer's step */
        /* Megatron-Core's default bucket: max(40M, 1M x data-parallel size) gradients */
        pp->tf = (tf_options){.layout = lay, .sequence_parallel = sc->sequence_parallel,
                              .chunks = sc->virtual_stages > 0 ? sc->virtual_stages : 1,
                              .micro_batches = pp->accumulation,
                              .bucket_bytes = fmax(4e7, 1e6 * ranks) * o->grad_dtype_bytes,
                              .first_blocks = sc->first_stage_layers, .last_blocks = sc->last_stage_layers,
                              .dedup_tokens = sc->expert_dispatcher == 1, .overlap_experts = sc->expert_overlap};
        if ((rc = tf_check(t, &pp->tf, err)))
            return tt_error_prefix(err, "%s: ", sc->path);
        pp->first_coll = pc->n;
        pp->n_coll = TF_COLLS;
        tf_collectives(t, o, &pp->tf, pc->c + pc->n);
        for (size_t i = pc->n; i < pc->n + TF_COLLS; i++)
            pc->per_step[i] = sp->fraction * tf_runs_per_step(t, o, &pp->tf, (tf_coll)(i - pc->n));
        pc->n += TF_COLLS;
        return TT_OK;
    }
    if (!sp->micro_batch && !sc->micro_batch && pp->global_batch) {
        fit_micro_batch(t, d, o, step_collectives_max(t));
        pp->micro_batch = o->micro_batch;
        pp->accumulation = o->accumulation;
        if ((rc = plan_tables(x, k, plan, mix, c->p, d, pp, err))) /* at the fitted micro-batch */
            return rc;
    }
    step_memory m;
    step_memory_of(t, o, &m);
    *fits &= m.total_bytes <= d->mem_bytes;
    pp->first_coll = pc->n;
    pp->n_coll = step_collectives(t, o, pc->c + pc->n);
    for (size_t i = pc->n; i < pc->n + pp->n_coll; i++) /* alltoalls run every micro-step */
        pc->per_step[i] = sp->fraction * (pc->c[i].op == STEP_ALLTOALL ? pp->accumulation : 1);
    pc->n += pp->n_coll;
    return TT_OK;
}

/* The step replayed from the scenario's Chakra trace instead of the model's
 * graph: its collectives without a recorded duration timed by `timer` on the
 * platform; memory and model FLOPs stay the model's (r as the model's replay left it). */
static int chakra_step(const run_ctx *x, const layout *lay, const platform *p, const device_model *d,
                       point_timer timer, step_result *r, tt_error *err)
{
    size_t n = chakra_collectives(x->chakra, NULL);
    step_coll *c = calloc(n + 1, sizeof *c);
    double *per_step = calloc(n + 1, sizeof *per_step);
    coll_times t = {.coll_s = calloc(n + 1, sizeof *t.coll_s), .wire_s = calloc(n + 1, sizeof *t.wire_s)};
    int rc = !c || !per_step || !t.coll_s || !t.wire_s ? tt_error_set(err, TT_EINTERNAL, "out of memory") : TT_OK;
    if (rc == TT_OK && n) {
        chakra_collectives(x->chakra, c);
        for (size_t i = 0; i < n; i++)
            per_step[i] = 1;
        rc = timer(x->sc, lay, p, c, n, per_step, &t, NULL, err);
    }
    step_result cr = {0};
    if (rc == TT_OK && (rc = chakra_replay(x->chakra, d, t.coll_s, &cr, err)) != TT_OK)
        rc = tt_error_prefix(err, "%s: $.workload.chakra %s: ", x->sc->path, x->sc->chakra_path);
    if (rc == TT_OK) {
        r->time_s = cr.time_s;
        r->compute_s = cr.compute_s;
        r->optimizer_s = cr.optimizer_s;
        r->comm_s = cr.comm_s;
        r->exposed_comm_s = cr.exposed_comm_s;
        r->host_embedding_s = cr.host_embedding_s;
        r->idle_s = cr.idle_s;
        r->tp_comm_s = r->cp_comm_s = r->ep_comm_s = r->bubble_s = 0; /* folded into the trace's nodes */
        r->mfu = r->model_flops / (r->time_s * d->peak_flops);
    }
    free(c);
    free(per_step);
    free(t.coll_s);
    free(t.wire_s);
    return rc;
}

/* point_run with the collectives timed by `timer`; screen: a phase that
 * fails keeps its memory in pt (the busiest rank's, when it does not fit). */
static int point_eval(const run_ctx *x, const cluster *c, long global_batch, sharding_kind plan,
                      const sharding_mix *mix, int probe, link_usage *links, point_timer timer, int screen,
                      run_point *pt, tt_error *err)
{
    const scenario *sc = x->sc;
    const platform *p = c->p;
    memset(pt, 0, sizeof *pt);
    pt->plan = plan;
    device_model d;
    int rc = device_model_of(platform_device(p, 0), x->precision, &d, err);
    if (rc == TT_OK)
        rc = check_cpu_ranks(sc, p, x->precision, plan, err);
    if (sc->fusion >= 0)
        d.fusion = sc->fusion;
    pt->nodes = platform_nodes(p);
    pt->ranks = platform_ranks(p);
    pt->cpu_ranks = platform_rank_kind(p) == DEVICE_CPU;
    phase_plan ph[SCENARIO_MAX_PHASES];
    memset(ph, 0, sizeof ph);
    point_colls pc;
    if (rc == TT_OK)
        rc = colls_alloc(x, pt->cpu_ranks, &pc, err);
    else
        memset(&pc, 0, sizeof pc);
    layout lay;
    if (rc == TT_OK && (rc = layout_make_experts(sc->degree, sc->expert_tensor, sc->layout_order, pt->ranks, "$.parallel", &lay,
                                                  err)))
        rc = tt_error_prefix(err, "%s: ", sc->path);
    int fits = 1;
    for (size_t k = 0; rc == TT_OK && k < sc->n_phases; k++)
        rc = plan_phase(x, c, &d, k, global_batch, &lay, plan, mix, &ph[k], &pc, &fits, err);
    if (rc == TT_OK && probe && !fits) {
        pt->step.time_s = INFINITY;
        colls_free(&pc);
        return TT_OK;
    }
    if (links) /* the point's own step only, however often it is planned */
        memset(links, 0, sizeof *links);
    if (rc == TT_OK)
        rc = timer(sc, &lay, p, pc.c, pc.n, pc.per_step, &pc.t, links, err);
    if (rc == TT_OK && plan == SHARD_HOST)
        rc = time_host_embeddings(sc, p, x->tr, ph, links, err);
    for (size_t k = 0; rc == TT_OK && k < sc->n_phases; k++) {
        ph[k].o.coll_wire_s = pc.t.wire_s + ph[k].first_coll;
        if (k == 0) {
            ph[k].o.sink = x->sink;
            ph[k].o.colls = pc.c + ph[k].first_coll;
            ph[k].o.n_colls = ph[k].n_coll;
        }
        rc = ph[k].tf.layout ? tf_replay(&x->tr[k], &d, &ph[k].o, &ph[k].tf, pc.t.coll_s + ph[k].first_coll,
                                         send_s(p, &x->tr[k], &ph[k]), &ph[k].r, err)
                             : step_replay(&x->tr[k], &d, &ph[k].o, pc.t.coll_s + ph[k].first_coll, &ph[k].r, err);
        if (rc && screen)
            pt->step.memory = ph[k].r.memory;
        if (rc == TT_OK && x->chakra)
            rc = chakra_step(x, &lay, p, &d, timer, &ph[k].r, err);
    }
    if (rc == TT_OK)
        rc = wait_for_input(sc, c, ph, err);
    if (rc == TT_OK) {
        snprintf(pt->platform, sizeof pt->platform, "%s", platform_name(p));
        memcpy(pt->allreduce, pc.t.allreduce, sizeof pt->allreduce);
        memcpy(pt->alltoall, pc.t.alltoall, sizeof pt->alltoall);
        pt->peak_flops = d.peak_flops;
        combine_phases(sc, ph, d.peak_flops, pt);
        pt->res.straggler_s = wait_for_stragglers(sc, pt);
        for (size_t k = 0; pc.t.upi_bytes && k < sc->n_phases; k++)
            pt->upi_bytes += sc->phases[k].fraction * phase_upi_bytes(&x->tr[k], &ph[k], pc.t.upi_bytes);
        pt->tables = ph[0].tables;
        pt->n_tables = x->tr[0].emb.n_tables;
        if (mix) {
            pt->mix = *mix;
            memcpy(pt->groups, ph[0].groups, sizeof pt->groups);
            memcpy(pt->group_tables, ph[0].group_tables, sizeof pt->group_tables);
        }
        pt->bill = c->bill;
        if (ph[0].tf.layout || states_layout(sc)) {
            memcpy(pt->parallel, lay.degree, sizeof pt->parallel); /* as given: expert and dense data sizes */
            pt->parallel[LAYOUT_EXPERT] = layout_group_size(&lay, lay.expert_dims);
            pt->parallel[LAYOUT_DATA] *= lay.degree[LAYOUT_EXPERT];
            pt->chunks = ph[0].tf.layout ? ph[0].tf.chunks : 1;
            pt->sequence_parallel = ph[0].tf.sequence_parallel;
            for (size_t i = 0; i < x->tr[0].n_layers && !pt->tokens_per_sample; i++)
                pt->tokens_per_sample = x->tr[0].layers[i].cls == OPCLASS_ATTENTION ? x->tr[0].layers[i].seq_len : 0;
        }
        time_to_target(x, platform_device(p, 0), &d, ph, pt);
    }
    colls_free(&pc);
    return rc;
}

int point_run(const run_ctx *x, const cluster *c, long global_batch, sharding_kind plan, const sharding_mix *mix,
              int probe, link_usage *links, run_point *pt, tt_error *err)
{
    return point_eval(x, c, global_batch, plan, mix, probe, links, coll_timing_run, 0, pt, err);
}

int point_screen(const run_ctx *x, const cluster *c, long global_batch, point_timer timer, run_point *pt,
                 tt_error *err)
{
    return point_eval(x, c, global_batch, x->sc->sharding, NULL, 0, NULL, timer, 1, pt, err);
}

int point_failed(int rc, run_point *pt, tt_error *err)
{
    if (rc != TT_EINPUT)
        return rc;
    snprintf(pt->error, sizeof pt->error, "%s", err->msg);
    err->code = TT_OK;
    err->msg[0] = '\0';
    return TT_OK;
}
