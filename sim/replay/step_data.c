/* step_data.c: the data-parallel step (DLRM's model-parallel tables
 * included) as a task graph on one rank, and its replay (step.h). */
#include "sim/replay/step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay/taskgraph.h"

/* The step as a task graph on one rank (a data-parallel group's ranks are
 * alike): the generator adds the compute, communication and host tasks of
 * the step in program order, with what each waits for. */
typedef struct step_gen {
    taskgraph *g;
    const double *coll_s, *wire_s;
    long last;    /* the compute stream's last task (-1: none yet) */
    long lookup;  /* this micro-step's host lookup of embedding rows */
    long host;    /* the host stream's last task */
    long *comms;  /* every collective added, for the optimizer to wait on */
    size_t n_comms;
    step_result *r;
    int oom;
} step_gen;

/* A compute task after the stream's last and, if >= 0, after `after`. */
static void gen_compute(step_gen *sg, tg_kind kind, double dur_s, long after)
{
    long i = tg_add(sg->g, 0, TG_COMPUTE, kind, dur_s, 0, -1);
    sg->oom |= i < 0 || tg_after(sg->g, i, after);
    sg->last = i;
}

/* Collective i once task `after` is done. */
static long coll_after(step_gen *sg, size_t i, long after)
{
    long c = tg_add(sg->g, 0, TG_COMM, TG_COLLECTIVE, sg->coll_s[i], sg->wire_s ? sg->wire_s[i] : 0, -1);
    tg_tag(sg->g, c, (int)i);
    long *grown = c < 0 ? NULL : realloc(sg->comms, sizeof *grown * (sg->n_comms + 1));
    sg->oom |= !grown || tg_after(sg->g, c, after);
    if (grown) {
        sg->comms = grown;
        sg->comms[sg->n_comms++] = c;
    }
    return c;
}

/* Collective i once the compute stream's work so far is done; the compute
 * stream goes on (it waits when a later task depends on it). */
static long background_coll(step_gen *sg, size_t i)
{
    return coll_after(sg, i, sg->last);
}

/* Kernels on the side stream (TG_SIDE) after tasks `a` and `b` (-1: none). */
static long side_kernels(step_gen *sg, tg_kind kind, double dur_s, long a, long b)
{
    long i = tg_add(sg->g, 0, TG_SIDE, kind, dur_s, 0, -1);
    sg->oom |= i < 0 || tg_after(sg->g, i, a) || tg_after(sg->g, i, b);
    return i;
}

/* Collective i, which the compute stream needs before it can go on. */
static void blocking_coll(step_gen *sg, size_t i)
{
    gen_compute(sg, TG_KERNEL, 0, background_coll(sg, i));
}

/* Host work (embedding rows in host memory) once the compute stream's work so far is done. */
static long host_work(step_gen *sg, double dur_s)
{
    long h = tg_add(sg->g, 0, TG_HOST, TG_HOST_WORK, dur_s, 0, -1);
    sg->oom |= h < 0 || tg_after(sg->g, h, sg->last);
    sg->host = h;
    return h;
}

/* What one layer's pass charges the device: its time and busy part
 * (step_layer_busy_s), recomputation included, and its bytes (into
 * compute_bytes). */
typedef struct kernels_run {
    double s, busy_s;
} kernels_run;

static kernels_run pass_run(step_gen *sg, const workload *t, size_t layer, const device_model *d,
                            const step_options *o, int backward)
{
    kernels_run k = {step_layer_s(t, layer, d, o, backward), step_layer_busy_s(t, layer, d, o, backward)};
    double bytes = step_layer_bytes(t, layer, d, o, backward);
    /* recomputation runs a segment's forward again before its backward */
    if (backward && o->recompute && t->layers[layer].cls != OPCLASS_NORM) {
        k.s += step_layer_s(t, layer, d, o, 0);
        k.busy_s += step_layer_busy_s(t, layer, d, o, 0);
        bytes += step_layer_bytes(t, layer, d, o, 0);
    }
    sg->r->compute_bytes += bytes;
    return k;
}

/* One layer, one direction: on the accelerator, or, for embedding tables in
 * host memory, waiting for the rows (forward) or handing the gradient rows to
 * the host (backward: after the first table's, in backward order the last). */
static void layer_pass(step_gen *sg, const workload *t, size_t layer, const device_model *d, const step_options *o,
                       int backward, int first_table)
{
    if (t->layers[layer].cls == OPCLASS_EMBEDDING && o->embeddings == EMB_HOST) {
        if (!backward)
            gen_compute(sg, TG_KERNEL, 0, sg->lookup);
        else if (first_table)
            host_work(sg, o->host_backward_s);
        return;
    }
    gen_compute(sg, TG_KERNEL, pass_run(sg, t, layer, d, o, backward).s, -1);
}

/* Two streams' kernels side by side on one device, each stream's one after
 * another: together they take as long as the longer stream, and no less than
 * their busy parts back to back (the partial waves and launches of one leave
 * units idle that the other's kernels fill). */
static double side_by_side_s(kernels_run a, kernels_run b)
{
    return fmax(fmax(a.s, b.s), a.busy_s + b.busy_s);
}

/* The bottom MLP (the layers before the tables) in one direction, as one
 * stream's kernels. */
static kernels_run bottom_run(step_gen *sg, const workload *t, const device_model *d, const step_options *o,
                              size_t first_table, int backward)
{
    kernels_run sum = {0, 0};
    for (size_t i = 0; i < first_table; i++) {
        kernels_run k = pass_run(sg, t, i, d, o, backward);
        sum.s += k.s;
        sum.busy_s += k.busy_s;
    }
    return sum;
}

static void comms_after(step_gen *sg, const workload *t, const step_options *o, size_t layer, comm_phase phase)
{
    if (o->embeddings != EMB_ACCELERATORS)
        return;
    for (size_t c = 0; c < t->n_comm; c++)
        if (t->comm[c].phase == phase && (size_t)t->comm[c].after_layer == layer)
            blocking_coll(sg, t->n_buckets + c);
}

/* The embedding's collectives at `layer` on the communication stream once
 * task `after` is done, the compute stream going on; a task later joins them
 * (join_colls). */
static size_t async_comms_after(step_gen *sg, const workload *t, size_t layer, comm_phase phase, long after,
                                long *out)
{
    size_t n = 0;
    for (size_t c = 0; c < t->n_comm; c++)
        if (t->comm[c].phase == phase && (size_t)t->comm[c].after_layer == layer)
            out[n++] = coll_after(sg, t->n_buckets + c, after);
    return n;
}

/* The compute stream waits for collectives it started asynchronously. */
static void join_colls(step_gen *sg, const long *c, size_t n)
{
    if (n == 0)
        return;
    gen_compute(sg, TG_KERNEL, 0, c[0]);
    for (size_t k = 1; k < n; k++)
        sg->oom |= tg_after(sg->g, sg->last, c[k]);
}

/* The layer of the model-parallel tables (n_layers: none). */
static size_t first_table_of(const workload *t)
{
    size_t first_table = 0;
    while (first_table < t->n_layers && t->layers[first_table].cls != OPCLASS_EMBEDDING)
        first_table++;
    return t->emb.n_tables > 0 ? (size_t)t->emb.layer : first_table;
}

/* HugeCTR's overlapped pipeline (framework.h): forward, the lookups run on
 * their own stream and their alltoall goes on while the bottom MLP (the
 * layers before the tables) computes beside them; the interaction waits for
 * both. Backward, the pooled gradients' alltoall (after the interaction) and
 * then the sparse update run beside the bottom MLP's backward. The two
 * streams share the device (side_by_side_s). */
static int overlapped_embedding(const workload *t, const step_options *o, size_t first_table)
{
    return framework_overlaps_embedding(o->framework) && o->embeddings == EMB_ACCELERATORS && t->n_comm > 0 &&
           first_table + 1 < t->n_layers;
}

/* HugeCTR's overlapped forward: the lookups, their alltoall in the background
 * while the bottom MLP computes beside the lookups, the interaction waiting
 * for both. The compute stream carries the two streams' shared time. */
static void forward_overlapped(step_gen *sg, const workload *t, const device_model *d, const step_options *o,
                               size_t first_table, long *a2a)
{
    kernels_run lookups = pass_run(sg, t, first_table, d, o, 0);
    gen_compute(sg, TG_KERNEL, lookups.s, -1);
    size_t n = async_comms_after(sg, t, first_table, COMM_FORWARD, sg->last, a2a);
    gen_compute(sg, TG_KERNEL, side_by_side_s(lookups, bottom_run(sg, t, d, o, first_table, 0)) - lookups.s, -1);
    join_colls(sg, a2a, n);
    for (size_t i = first_table + 1; i < t->n_layers; i++) {
        layer_pass(sg, t, i, d, o, 0, 0);
        comms_after(sg, t, o, i, COMM_FORWARD);
    }
}

/* Backward from the interaction's input down: the alltoall of the pooled
 * gradients, then the sparse update on the embedding's stream (TG_SIDE),
 * beside the bottom MLP's backward, whose gradient buckets start as it ends;
 * the compute stream carries the two streams' shared time and then waits for
 * the update. */
static void backward_overlapped(step_gen *sg, const workload *t, const device_model *d, const step_options *o,
                                size_t first_table, int last, size_t *bucket, long *a2a)
{
    long before = sg->last;
    size_t n = async_comms_after(sg, t, first_table + 1, COMM_BACKWARD, before, a2a);
    kernels_run bottom = bottom_run(sg, t, d, o, first_table, 1);
    kernels_run update = pass_run(sg, t, first_table, d, o, 1);
    long side = side_kernels(sg, TG_SHARED, update.s, before, -1);
    for (size_t k = 0; k < n; k++)
        sg->oom |= tg_after(sg->g, side, a2a[k]);
    gen_compute(sg, TG_KERNEL, bottom.s, -1);
    for (; o->overlap && last && *bucket < t->n_buckets; (*bucket)++) /* the bottom MLP's buckets */
        background_coll(sg, *bucket);
    gen_compute(sg, TG_KERNEL, side_by_side_s(bottom, update) - bottom.s, -1);
    gen_compute(sg, TG_KERNEL, 0, side);
}

/* HugeCTR's network path: its hybrid embedding's tables across nodes. */
static int hugectr_network(const step_options *o)
{
    return o->tables && o->tables->kind == SHARD_HYBRID && o->node_ranks > 0 && o->ranks > o->node_ranks;
}

/* HugeCTR's hybrid embedding across nodes (IB_NVLink_Hier), as its pipeline
 * runs a micro-step (hybrid_sparse_embedding.cu train(); HugeCTR 4's
 * Model::create_train_pipeline): the lookups, for which the bottom MLP waits
 * (on the compute stream here, the same order); the bottom MLP computes while
 * their alltoall runs; the top MLP waits for the alltoall. Backward, the network's weight
 * gradients (grouped: the frequent rows' too) are one allreduce after the
 * bottom MLP (exchange_wgrad). The pooled gradients' alltoall, before it the
 * frequent rows' allreduce when not grouped, and the sparse update follow on
 * the embedding's stream: after the top MLP's backward, beside the bottom MLP
 * and the allreduce (overlap_ar_a2a), or after the allreduce. The alltoall
 * runs on the embedding's communication stream, the allreduce on the
 * network's: both in flight at once (step_replay). Returns the sparse
 * update's task; *dense the dense allreduce's (-1: none). */
static long hugectr_network_step(step_gen *sg, const workload *t, const device_model *d, const step_options *o,
                                 size_t first_table, int last, long *a2a, long *dense)
{
    size_t n_b = t->n_buckets, freq = n_b + t->n_comm;
    gen_compute(sg, TG_KERNEL, pass_run(sg, t, first_table, d, o, 0).s, -1); /* the bottom MLP waits for them */
    size_t n = async_comms_after(sg, t, first_table, COMM_FORWARD, sg->last, a2a);
    for (size_t i = 0; i < first_table; i++)
        layer_pass(sg, t, i, d, o, 0, 0);
    join_colls(sg, a2a, n);
    for (size_t i = first_table + 1; i < t->n_layers; i++)
        layer_pass(sg, t, i, d, o, 0, 0);
    for (size_t i = t->n_layers; i-- > first_table + 1;)
        layer_pass(sg, t, i, d, o, 1, 0);
    double update_s = pass_run(sg, t, first_table, d, o, 1).s;
    int frequent_apart = last && !o->grouped && sg->coll_s[freq] > 0;
    long emb = sg->last; /* what the embedding's backward waits for */
    *dense = -1;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == o->overlap_ar_a2a) { /* the bottom MLP, then the dense allreduce */
            for (size_t i = first_table; i-- > 0;)
                layer_pass(sg, t, i, d, o, 1, 0);
            for (size_t b = 0; last && b < n_b; b++)
                *dense = background_coll(sg, b);
            if (last && o->grouped)
                *dense = background_coll(sg, freq);
            emb = o->overlap_ar_a2a ? emb : *dense >= 0 ? *dense : sg->last;
        } else { /* the embedding's stream */
            long after = frequent_apart ? coll_after(sg, freq, emb) : emb;
            n = async_comms_after(sg, t, first_table + 1, COMM_BACKWARD, after, a2a);
            emb = side_kernels(sg, TG_KERNEL, update_s, emb, after);
            for (size_t k = 0; k < n; k++)
                sg->oom |= tg_after(sg->g, emb, a2a[k]);
        }
    }
    return emb;
}

/* The gradient bucket that holds layer i's parameters: buckets fill in
 * backward order, bucket b with the layers from its ready layer up to the
 * previous bucket's. */
static size_t bucket_of_layer(const workload *t, size_t i)
{
    size_t b = 0;
    while (b + 1 < t->n_buckets && (size_t)t->buckets[b].ready_after_layer > i)
        b++;
    return b;
}

/* Fused attention needs the score matrices' shape and autograd activations
 * the kept bytes, which traces written before ttasim recorded them lack:
 * refused rather than costed as the default. */
static int check_trace_fields(const workload *t, const step_options *o, tt_error *err)
{
    for (size_t i = 0; i < t->n_layers; i++) {
        const workload_layer *l = &t->layers[i];
        int no_shapes = o->fused_attention && l->cls == OPCLASS_ATTENTION &&
                        (l->heads <= 0 || l->seq_len <= 0 || l->head_dim <= 0);
        if (no_shapes || (o->autograd_activations && l->kept_bytes < 0))
            return tt_error_set(err, TT_EINPUT,
                                "%s: layers[%zu] (%s) has no %s, which $.workload.%s needs; remake the trace with "
                                "`ttasim trace --model %s` or leave $.workload.%s at its default",
                                t->path ? t->path : t->model, i, l->name,
                                no_shapes ? "seq_len, heads and head_dim" : "kept_bytes and kept_aux_bytes",
                                no_shapes ? "attention \"fused\"" : "activations \"autograd\"", t->model,
                                no_shapes ? "attention" : "activations");
    }
    return TT_OK;
}

/* The data-parallel step's graph: per micro-step the host's lookups, the
 * forward, the backward with its collectives (buckets once, after the last
 * micro-step, overlapping the backward), then the optimizer once every
 * collective is done, and the host's last update. */
static void generate_step(step_gen *sg, const workload *t, const device_model *d, const step_options *o,
                          double optimizer_s)
{
    size_t replicated_rows = t->n_buckets + t->n_comm; /* the plan's replicated rows' allreduce, if any */
    /* after the tables' backward; grouped with the buckets, after the whole backward */
    int replicates = o->tables && o->embeddings == EMB_ACCELERATORS && !o->grouped && sg->coll_s[replicated_rows] > 0;
    size_t first_table = first_table_of(t);
    int overlapped = first_table < t->n_layers && overlapped_embedding(t, o, first_table);
    int network = overlapped && hugectr_network(o);
    long dense = -1, emb = -1;
    size_t gathers = replicated_rows + 1; /* the distributed optimizer's all-gathers, per bucket */
    int prefetch = o->zero && o->overlap_param_gather && t->n_buckets > 0;
    long *gathered = prefetch ? malloc(sizeof *gathered * t->n_buckets) : NULL;
    long *a2a = malloc(sizeof *a2a * (t->n_comm + 1));
    sg->oom |= !a2a || (prefetch && !gathered);
    /* overlapped: the previous step's all-gathers run as this forward begins, the first layers'
     * bucket (the last in backward order) first */
    for (size_t b = t->n_buckets; !sg->oom && prefetch && b-- > 0;)
        gathered[b] = background_coll(sg, gathers + b);
    for (int micro = 0; !sg->oom && micro < o->accumulation; micro++) {
        int last = micro == o->accumulation - 1;
        /* The batch's indices are known when the micro-step starts: the host
         * looks the rows up while the layers before the tables run, once the
         * previous sparse update is done (the tables must be current). */
        sg->lookup = host_work(sg, o->host_forward_s);
        if (network) {
            emb = hugectr_network_step(sg, t, d, o, first_table, last, a2a, &dense);
            continue;
        }
        if (overlapped)
            forward_overlapped(sg, t, d, o, first_table, a2a);
        else
            for (size_t i = 0; i < t->n_layers; i++) {
                if (prefetch && micro == 0)
                    join_colls(sg, &gathered[bucket_of_layer(t, i)], 1);
                layer_pass(sg, t, i, d, o, 0, i == first_table);
                comms_after(sg, t, o, i, COMM_FORWARD);
            }
        size_t b = 0;
        for (size_t i = t->n_layers; i-- > 0;) {
            if (overlapped && i == first_table) { /* below the interaction: bottom MLP beside the tables */
                backward_overlapped(sg, t, d, o, first_table, last, &b, a2a);
                if (last && replicates)
                    background_coll(sg, replicated_rows);
                break;
            }
            layer_pass(sg, t, i, d, o, 1, i == first_table);
            if (!overlapped || i != first_table + 1) /* overlapped: backward_overlapped's */
                comms_after(sg, t, o, i, COMM_BACKWARD);
            if (last && i == first_table && replicates)
                background_coll(sg, replicated_rows);
            /* Gradients are reduced once per optimizer step, after the last micro-batch. */
            for (; o->overlap && last && b < t->n_buckets && (size_t)t->buckets[b].ready_after_layer == i; b++)
                background_coll(sg, b);
        }
        for (; last && b < t->n_buckets; b++) /* without overlap: all after the backward */
            background_coll(sg, b);
        if (last && o->grouped && sg->coll_s[replicated_rows] > 0)
            background_coll(sg, replicated_rows);
    }
    /* the optimizer once every collective is done (HugeCTR across nodes: the dense allreduce, then
     * the step ends with the embedding's stream) */
    gen_compute(sg, TG_OPTIMIZER, optimizer_s, network ? dense : -1);
    if (network)
        gen_compute(sg, TG_KERNEL, 0, emb);
    for (size_t k = 0; k < sg->n_comms; k++)
        sg->oom |= tg_after(sg->g, sg->last, sg->comms[k]);
    for (size_t b = 0; o->zero && !prefetch && b < t->n_buckets; b++) /* the updated shards, gathered */
        blocking_coll(sg, gathers + b);
    gen_compute(sg, TG_KERNEL, 0, sg->host); /* the next step looks rows up in updated tables */
    free(gathered);
    free(a2a);
}

int step_replay(const workload *t, const device_model *d, const step_options *o,
                const double *coll_s, step_result *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_trace_fields(t, o, err);
    if (rc)
        return rc;
    step_memory_of(t, o, &out->memory);
    const step_memory *m = &out->memory;
    if (m->total_bytes > d->mem_bytes)
        return tt_error_set(err, TT_EINPUT,
                            "%s at micro-batch %d does not fit in the %.3g GB of a %s: parameters %.3g GB, "
                            "gradients %.3g GB, optimizer state %.3g GB, activations %.3g GB (total %.3g GB); "
                            "use a smaller micro-batch (more accumulation or more ranks)%s",
                            t->model, o->micro_batch, d->mem_bytes / 1e9, d->name, m->params_bytes / 1e9,
                            m->gradients_bytes / 1e9, m->optimizer_bytes / 1e9, m->activations_bytes / 1e9,
                            m->total_bytes / 1e9,
                            o->tables ? ", or, for the embedding tables (parameters include the busiest rank's), "
                                        "another $.workload.embedding: sharding row_wise or column_wise (every table "
                                        "split over the ranks) or auto, precision fp16, no master_weights"
                                      : "");
    double shard = o->zero && o->ranks > 1 ? 1.0 / o->ranks : 1.0; /* each rank updates its shard */
    double optimizer_s = step_kernel_s(t->optimizer_flops * shard, t->optimizer_bytes * shard, d->peak_fp32_flops,
                                       d->efficiency[OPCLASS_ELEMENTWISE], d->mem_Bps);
    /* HugeCTR across nodes: its alltoalls on the embedding's communication stream, its allreduce on the
     * network's, in flight together */
    size_t first = first_table_of(t);
    int network = first < t->n_layers && overlapped_embedding(t, o, first) && hugectr_network(o);
    step_gen sg = {.g = tg_create(1, network && o->concurrent_ops < 2 ? 2 : o->concurrent_ops), .coll_s = coll_s,
                   .wire_s = o->coll_wire_s, .last = -1, .lookup = -1, .host = -1, .r = out};
    sg.oom = !sg.g;
    if (!sg.oom)
        generate_step(&sg, t, d, o, optimizer_s);
    rc = sg.oom ? tt_error_set(err, TT_EINTERNAL, "out of memory replaying a step of %s", t->model)
                : tg_schedule(sg.g, err);
    if (rc == TT_OK && o->sink)
        rc = o->sink->take(o->sink->ctx, sg.g, o->colls, o->n_colls, NULL, o->ranks, err);
    tg_breakdown br = {0};
    if (rc == TT_OK) {
        tg_rank_breakdown(sg.g, 0, &br);
        out->time_s = tg_rank_end_s(sg.g, 0);
    }
    tg_free(sg.g);
    free(sg.comms);
    if (rc)
        return rc;
    out->compute_s = br.kernel_s;
    out->optimizer_s = br.optimizer_s;
    out->comm_s = br.collective_s;
    out->exposed_comm_s = br.exposed_comm_s;
    out->host_embedding_s = br.host_wait_s;
    out->idle_s = fmax(0.0, out->time_s - out->compute_s - out->optimizer_s);
    out->model_flops = step_model_flops(t, o);
    out->mfu = out->model_flops / (out->time_s * d->peak_flops);
    return TT_OK;
}
