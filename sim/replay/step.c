#include "sim/replay/step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay/taskgraph.h"

double step_kernel_s(double flops, double bytes, double peak_flops, double efficiency,
                     double mem_Bps)
{
    double t_flops = flops > 0 ? flops / (peak_flops * efficiency) : 0;
    double t_bytes = bytes > 0 ? bytes / mem_Bps : 0;
    return t_flops > t_bytes ? t_flops : t_bytes;
}

/* A trace is recorded at one micro-batch and precision: activation traffic
 * scales with the samples, weight traffic does not, and every byte scales
 * with the element size. Embedding lookups read only the rows the batch
 * touches, so all their traffic scales with the samples. */
typedef struct scaling {
    double samples; /* scenario micro-batch / trace micro-batch */
    double dtype;   /* scenario element bytes / trace element bytes */
} scaling;

static scaling scaling_of(const workload *t, const step_options *o)
{
    return (scaling){(double)o->micro_batch / t->micro_batch, (double)o->dtype_bytes / t->dtype_bytes};
}

static double scaled_bytes(const scaling *k, const workload_layer *l, double bytes, double weight_reads)
{
    double w = l->cls == OPCLASS_EMBEDDING ? 0 : fmin(weight_reads * l->param_bytes, bytes);
    return (w + (bytes - w) * k->samples) * k->dtype;
}

/* Kernels of one pass: the backward of a convolution or GEMM computes the
 * input gradient and the weight gradient, two kernels, except in the first
 * layer (no input gradient: its backward FLOPs equal the forward ones). */
static int kernels_of(const workload_layer *l, int backward)
{
    int matmul = l->cls == OPCLASS_CONV || l->cls == OPCLASS_GEMM || l->cls == OPCLASS_ATTENTION;
    return backward && matmul && l->backward_flops > 1.5 * l->forward_flops ? 2 : 1;
}

/* A norm or elementwise op after another layer runs inside its producer's
 * kernel when the device fuses: no kernel of its own, and its input comes
 * from registers, so one read of the activation is saved. */
static int fused_into_producer(const workload *t, size_t layer, const device_model *d)
{
    op_class c = t->layers[layer].cls;
    return d->fusion && layer > 0 && (c == OPCLASS_NORM || c == OPCLASS_ELEMENTWISE);
}

/* The layer that holds a trace's described tables, costed by the plan. */
static int plan_layer(const workload *t, size_t layer, const step_options *o)
{
    return o->tables && t->emb.n_tables > 0 && layer == (size_t)t->emb.layer;
}

/* A linear layer's bias and activation as the framework runs them: 0 when
 * fused into the GEMM, else passes over its output in the framework's kernels. */
static double epilogue_bytes(const workload *t, size_t layer, const step_options *o, int backward)
{
    const workload_layer *l = &t->layers[layer];
    if (l->cls != OPCLASS_GEMM || l->param_bytes <= 0)
        return 0;
    scaling k = scaling_of(t, o);
    return framework_epilogue_passes(o->framework, backward) * l->activation_bytes * k.samples * k.dtype;
}

static double epilogue_s(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward)
{
    int kernels = framework_epilogue_kernels(o->framework, backward);
    double bytes = epilogue_bytes(t, layer, o, backward);
    return bytes > 0 ? kernels * fmax(bytes / kernels / d->mem_Bps, d->dispatch_s) : 0;
}

/* Fused attention (FlashAttention, Dao et al. 2022, arXiv:2205.14135, Algorithms 1-2):
 * the heads x S x S probabilities never reach device memory. The forward writes
 * and keeps one fp32 log-sum-exp per row instead; the backward reads it back and
 * recomputes S = QK^T and P = exp(S - lse) (2 FLOPs per score) before dV, dP, dS,
 * dQ and dK. Per trace micro-batch, at the trace's precision, so that the
 * scaling to the scenario's precision leaves the statistics in fp32. */
typedef struct fused_attention {
    double scores_bytes; /* the probabilities the standard path writes, keeps and reads back */
    double lse_bytes;    /* the fp32 row statistics kept instead */
    double recompute_flops;
} fused_attention;

static int fused_attention_of(const workload *t, size_t layer, const step_options *o, fused_attention *f)
{
    const workload_layer *l = &t->layers[layer];
    if (!o->fused_attention || l->cls != OPCLASS_ATTENTION || l->heads <= 0)
        return 0;
    double rows = (double)t->micro_batch * l->heads * l->seq_len, scores = rows * l->seq_len;
    f->scores_bytes = scores * t->dtype_bytes;
    f->lse_bytes = rows * 4 * t->dtype_bytes / o->dtype_bytes;
    f->recompute_flops = 2 * scores * l->head_dim + 2 * scores;
    return 1;
}

/* A pass's FLOPs and bytes as the trace records them (per trace micro-batch),
 * with fused attention's changes. */
static double pass_flops(const workload *t, size_t layer, const step_options *o, int backward)
{
    const workload_layer *l = &t->layers[layer];
    fused_attention f;
    double flops = backward ? l->backward_flops : l->forward_flops;
    return flops + (backward && fused_attention_of(t, layer, o, &f) ? f.recompute_flops : 0);
}

static double pass_bytes(const workload *t, size_t layer, const step_options *o, int backward)
{
    const workload_layer *l = &t->layers[layer];
    fused_attention f;
    double bytes = backward ? l->backward_bytes : l->forward_bytes;
    return bytes - (fused_attention_of(t, layer, o, &f) ? f.scores_bytes - f.lse_bytes : 0);
}

/* The FLOPs and device-memory bytes one pass of a layer charges (a fused op:
 * no kernel, only its traffic beyond the producer's output); returns whether it is fused. */
static int layer_work(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward,
                      double *flops, double *bytes)
{
    scaling k = scaling_of(t, o);
    const workload_layer *l = &t->layers[layer];
    *flops = pass_flops(t, layer, o, backward) * k.samples;
    *bytes = scaled_bytes(&k, l, pass_bytes(t, layer, o, backward), backward ? 2 : 1);
    if (plan_layer(t, layer, o)) { /* the sharding plan's lookups or sparse update, distinct rows */
        *flops = backward ? o->tables->update_flops : o->tables->lookup_flops;
        *bytes = backward ? o->tables->update_bytes : o->tables->lookup_bytes;
    }
    if (!fused_into_producer(t, layer, d))
        return 0;
    *bytes = fmax(0.0, *bytes - l->activation_bytes * k.samples * k.dtype);
    return 1;
}

double step_layer_s(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward)
{
    const workload_layer *l = &t->layers[layer];
    double flops, bytes;
    if (layer_work(t, layer, d, o, backward, &flops, &bytes))
        return bytes / d->mem_Bps;
    int kernels = kernels_of(l, backward);
    double work = flops / kernels;
    double saturation = work > 0 ? work / (work + d->half_work_flops) : 1;
    /* a backward kernel's own efficiency, never above peak */
    double efficiency = fmin(1.0, d->efficiency[l->cls] * (backward ? d->backward_efficiency[l->cls] : 1));
    double device_s = step_kernel_s(flops, bytes, d->peak_flops, efficiency * saturation, d->mem_Bps);
    /* before the lookups: the ids' input alltoall, the plan's own kernels (hybrid: the batch's ids sorted) */
    double index_s = plan_layer(t, layer, o) && !backward ? o->tables->id_s + o->tables->index_s : 0;
    return fmax(device_s, kernels * d->dispatch_s) + epilogue_s(t, layer, d, o, backward) + index_s;
}

double step_forward_s(const workload *t, const device_model *d, const step_options *o)
{
    double s = 0;
    for (size_t i = 0; i < t->n_layers; i++)
        s += step_layer_s(t, i, d, o, 0);
    return s;
}

static int model_parallel_embeddings(const workload *t, const step_options *o)
{
    return o->embeddings == EMB_ACCELERATORS && t->n_comm > 0;
}

/* The plan's collective at a trace comm point: forward alltoall or
 * reduce-scatter, backward alltoall or all-gather. */
static step_coll plan_coll(const sharding_cost *p, comm_phase phase)
{
    if (p->reduce_scatter_bytes > 0)
        return phase == COMM_FORWARD ? (step_coll){STEP_REDUCE_SCATTER, p->reduce_scatter_bytes}
                                     : (step_coll){STEP_ALLGATHER, p->allgather_bytes};
    return (step_coll){STEP_ALLTOALL, p->alltoall_bytes};
}

size_t step_collectives(const workload *t, const step_options *o, step_coll *out)
{
    scaling k = scaling_of(t, o);
    size_t n = 0;
    double grad = (double)o->grad_dtype_bytes / t->dtype_bytes;
    for (size_t b = 0; b < t->n_buckets; b++)
        out[n++] = (step_coll){o->zero ? STEP_REDUCE_SCATTER : STEP_ALLREDUCE, t->buckets[b].bytes * grad};
    for (size_t c = 0; c < t->n_comm; c++)
        out[n++] = o->embeddings != EMB_ACCELERATORS ? (step_coll){STEP_ALLTOALL, 0}
                   : o->tables ? plan_coll(o->tables, t->comm[c].phase)
                               : (step_coll){STEP_ALLTOALL, t->comm[c].bytes_per_rank * k.samples * k.dtype};
    out[n++] = (step_coll){STEP_ALLREDUCE, o->tables && o->embeddings == EMB_ACCELERATORS ? o->tables->allreduce_bytes : 0};
    /* the updated parameters, at the precision the model computes in */
    double param = (double)o->dtype_bytes / t->dtype_bytes;
    for (size_t b = 0; o->zero && b < t->n_buckets; b++)
        out[n++] = (step_coll){STEP_ALLGATHER, t->buckets[b].bytes * param};
    return n;
}

size_t step_collectives_max(const workload *t)
{
    return 2 * t->n_buckets + t->n_comm + 1;
}

/* What a layer keeps for its backward at the step's micro-batch and
 * precision: its output and saved state as the trace holds them, or what an
 * autograd framework keeps (the tensors backward reads, once; 1-byte masks,
 * fp32 statistics); fused attention keeps row statistics, not probabilities. */
double step_layer_kept_bytes(const workload *t, size_t layer, const step_options *o)
{
    scaling k = scaling_of(t, o);
    const workload_layer *l = &t->layers[layer];
    fused_attention f;
    double bytes = o->autograd_activations ? l->kept_bytes * k.dtype + l->kept_aux_bytes
                                           : l->activation_bytes * k.dtype;
    if (fused_attention_of(t, layer, o, &f))
        bytes -= (f.scores_bytes - f.lse_bytes) * k.dtype;
    return bytes * k.samples;
}

/* Activations kept for the backward. With recomputation (activation
 * checkpointing) only the outputs of the normalisation layers, which bound
 * the segments (a transformer sublayer, a convolution block), are kept, plus
 * one segment at a time rebuilt during the backward. */
static double kept_activation_bytes(const workload *t, const step_options *o)
{
    double all = 0, kept = 0, segment = 0, widest = 0;
    for (size_t i = 0; i < t->n_layers; i++) {
        double bytes = step_layer_kept_bytes(t, i, o);
        all += bytes;
        if (t->layers[i].cls == OPCLASS_NORM) {
            kept += bytes;
            widest = fmax(widest, segment);
            segment = 0;
        } else {
            segment += bytes;
        }
    }
    return o->recompute ? kept + fmax(widest, segment) : all;
}

/* Parameters, fp32 master weights plus a low-precision copy, gradients at
 * their precision, optimizer state in fp32, activations of one micro-batch.
 * Model-parallel embedding tables (DLRM) get sparse gradients, the rows a
 * batch looked up; replicated ones (BERT's) keep a dense gradient buffer. */
void step_memory_of(const workload *t, const step_options *o, step_memory *m)
{
    scaling sk = scaling_of(t, o);
    const scaling *k = &sk;
    double dense = 0, emb = 0, emb_rows = 0;
    for (size_t i = 0; i < t->n_layers; i++) {
        const workload_layer *l = &t->layers[i];
        double count = l->param_bytes / t->dtype_bytes;
        if (l->cls == OPCLASS_EMBEDDING) {
            emb += count;
            emb_rows += l->activation_bytes / t->dtype_bytes * k->samples;
        } else {
            dense += count;
        }
    }
    double act = kept_activation_bytes(t, o);
    if (o->embeddings == EMB_HOST)
        emb = emb_rows = 0;
    else if (o->tables)
        emb = emb_rows = 0; /* the plan's, below */
    else if (model_parallel_embeddings(t, o))
        emb /= o->ranks;
    else
        emb_rows = emb;
    double count = dense + emb;
    /* the distributed optimizer shards the state and the fp32 master weights (ZeRO-1), and
     * the gradients (ZeRO-2), over the data-parallel ranks */
    double shard = o->zero && o->ranks > 1 ? 1.0 / o->ranks : 1.0;
    m->params_bytes = o->dtype_bytes < 4 ? count * 4 * shard + count * o->dtype_bytes : count * 4;
    m->gradients_bytes = (dense + (emb_rows < emb ? emb_rows : emb)) * o->grad_dtype_bytes * (o->zero >= 2 ? shard : 1);
    m->optimizer_bytes = count * 4 * o->optimizer_state_words * shard;
    m->activations_bytes = act;
    if (o->tables && o->embeddings == EMB_ACCELERATORS) {
        m->params_bytes += o->tables->params_bytes;
        m->gradients_bytes += o->tables->gradient_bytes;
        m->optimizer_bytes += o->tables->optimizer_bytes;
    }
    m->total_bytes = m->params_bytes + m->gradients_bytes + m->optimizer_bytes + m->activations_bytes;
}

void step_host_load_of(const workload *t, const step_options *o, step_host_load *out)
{
    scaling k = scaling_of(t, o);
    double grad = (double)o->grad_dtype_bytes / o->dtype_bytes;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < t->n_layers; i++) {
        const workload_layer *l = &t->layers[i];
        if (l->cls != OPCLASS_EMBEDDING)
            continue;
        out->rows_bytes += l->activation_bytes * k.samples * k.dtype;
        out->lookup_bytes += scaled_bytes(&k, l, l->forward_bytes, 1);
        out->update_bytes += scaled_bytes(&k, l, l->backward_bytes, 2);
    }
    if (o->tables) { /* the tables' own costs: distinct rows at the node's batch */
        out->lookup_bytes = o->tables->lookup_bytes;
        out->update_bytes = o->tables->update_bytes;
    }
    out->grad_rows_bytes = out->rows_bytes * grad;
}

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

/* Collective i once the compute stream's work so far is done; the compute
 * stream goes on (it waits when a later task depends on it). */
static long background_coll(step_gen *sg, size_t i)
{
    long c = tg_add(sg->g, 0, TG_COMM, TG_COLLECTIVE, sg->coll_s[i], sg->wire_s ? sg->wire_s[i] : 0, -1);
    long *grown = c < 0 ? NULL : realloc(sg->comms, sizeof *grown * (sg->n_comms + 1));
    sg->oom |= !grown || tg_after(sg->g, c, sg->last);
    if (grown) {
        sg->comms = grown;
        sg->comms[sg->n_comms++] = c;
    }
    return c;
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
    double dt = step_layer_s(t, layer, d, o, backward), flops, bytes;
    layer_work(t, layer, d, o, backward, &flops, &bytes);
    bytes += epilogue_bytes(t, layer, o, backward);
    /* recomputation runs a segment's forward again before its backward */
    if (backward && o->recompute && t->layers[layer].cls != OPCLASS_NORM) {
        double f2, b2;
        dt += step_layer_s(t, layer, d, o, 0);
        layer_work(t, layer, d, o, 0, &f2, &b2);
        bytes += b2 + epilogue_bytes(t, layer, o, 0);
    }
    gen_compute(sg, TG_KERNEL, dt, -1);
    sg->r->compute_bytes += bytes;
}

static void comms_after(step_gen *sg, const workload *t, const step_options *o, size_t layer, comm_phase phase)
{
    if (o->embeddings != EMB_ACCELERATORS)
        return;
    for (size_t c = 0; c < t->n_comm; c++)
        if (t->comm[c].phase == phase && (size_t)t->comm[c].after_layer == layer)
            blocking_coll(sg, t->n_buckets + c);
}

/* The embedding's collectives at `layer` on the communication stream, the
 * compute stream going on; a task later joins them (join_colls). */
static size_t async_comms_after(step_gen *sg, const workload *t, size_t layer, comm_phase phase, long *out)
{
    size_t n = 0;
    for (size_t c = 0; c < t->n_comm; c++)
        if (t->comm[c].phase == phase && (size_t)t->comm[c].after_layer == layer)
            out[n++] = background_coll(sg, t->n_buckets + c);
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

/* HugeCTR's overlapped pipeline (framework.h): forward, the lookups run
 * first and their alltoall goes on while the bottom MLP (the layers before
 * the tables) computes; the interaction waits for both. Backward, the pooled
 * gradients' alltoall (after the interaction) goes on while the bottom MLP's
 * backward computes; the sparse update waits for it. Compute kernels still
 * share the device, one after another: only communication is hidden. */
static int overlapped_embedding(const workload *t, const step_options *o, size_t first_table)
{
    return framework_overlaps_embedding(o->framework) && o->embeddings == EMB_ACCELERATORS && t->n_comm > 0 &&
           first_table + 1 < t->n_layers;
}

/* HugeCTR's overlapped forward: the lookups, their alltoall in the background
 * while the bottom MLP computes, the interaction waiting for both. */
static void forward_overlapped(step_gen *sg, const workload *t, const device_model *d, const step_options *o,
                               size_t first_table, long *a2a)
{
    layer_pass(sg, t, first_table, d, o, 0, 1);
    size_t n = async_comms_after(sg, t, first_table, COMM_FORWARD, a2a);
    for (size_t i = 0; i < first_table; i++) {
        layer_pass(sg, t, i, d, o, 0, 0);
        comms_after(sg, t, o, i, COMM_FORWARD);
    }
    join_colls(sg, a2a, n);
    for (size_t i = first_table + 1; i < t->n_layers; i++) {
        layer_pass(sg, t, i, d, o, 0, 0);
        comms_after(sg, t, o, i, COMM_FORWARD);
    }
}

/* Backward layer order of the overlapped pipeline: the top of the network
 * down to the interaction, the bottom MLP, then the tables. */
static size_t backward_layer_at(const workload *t, size_t k, size_t first_table, int overlapped)
{
    size_t top = t->n_layers - 1 - first_table; /* layers after the tables */
    if (!overlapped)
        return t->n_layers - 1 - k;
    if (k < top)
        return t->n_layers - 1 - k;
    return k < t->n_layers - 1 ? first_table - 1 - (k - top) : first_table;
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
    int replicates = o->tables && o->embeddings == EMB_ACCELERATORS && sg->coll_s[replicated_rows] > 0;
    size_t first_table = 0;
    while (first_table < t->n_layers && t->layers[first_table].cls != OPCLASS_EMBEDDING)
        first_table++;
    if (t->emb.n_tables > 0)
        first_table = (size_t)t->emb.layer;
    int overlapped = first_table < t->n_layers && overlapped_embedding(t, o, first_table);
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
        if (overlapped)
            forward_overlapped(sg, t, d, o, first_table, a2a);
        else
            for (size_t i = 0; i < t->n_layers; i++) {
                if (prefetch && micro == 0)
                    join_colls(sg, &gathered[bucket_of_layer(t, i)], 1);
                layer_pass(sg, t, i, d, o, 0, i == first_table);
                comms_after(sg, t, o, i, COMM_FORWARD);
            }
        size_t b = 0, n_a2a = 0;
        for (size_t pos = 0; pos < t->n_layers; pos++) {
            size_t i = backward_layer_at(t, pos, first_table, overlapped);
            if (overlapped && i == first_table)
                join_colls(sg, a2a, n_a2a);
            layer_pass(sg, t, i, d, o, 1, i == first_table);
            if (overlapped && i == first_table + 1)
                n_a2a = async_comms_after(sg, t, i, COMM_BACKWARD, a2a);
            else
                comms_after(sg, t, o, i, COMM_BACKWARD);
            if (last && i == first_table && replicates)
                background_coll(sg, replicated_rows);
            /* Gradients are reduced once per optimizer step, after the last micro-batch. */
            for (; o->overlap && last && b < t->n_buckets && (size_t)t->buckets[b].ready_after_layer == i; b++)
                background_coll(sg, b);
        }
        for (; last && b < t->n_buckets; b++) /* without overlap: all after the backward */
            background_coll(sg, b);
    }
    /* the optimizer once every collective is done */
    gen_compute(sg, TG_OPTIMIZER, optimizer_s, -1);
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
    scaling k = scaling_of(t, o);
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
    step_gen sg = {.g = tg_create(1, o->concurrent_ops), .coll_s = coll_s, .wire_s = o->coll_wire_s, .last = -1,
                   .lookup = -1, .host = -1, .r = out};
    sg.oom = !sg.g;
    if (!sg.oom)
        generate_step(&sg, t, d, o, optimizer_s);
    rc = sg.oom ? tt_error_set(err, TT_EINTERNAL, "out of memory replaying a step of %s", t->model)
                : tg_schedule(sg.g, err);
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
    out->model_flops = (t->forward_flops + t->backward_flops) * k.samples * o->accumulation;
    out->mfu = out->model_flops / (out->time_s * d->peak_flops);
    return TT_OK;
}
