/* step.c: the work of one rank's step: kernels by roofline, the
 * collectives it needs, its memory and host load (step.h). */
#include "sim/replay/step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int n = backward && matmul && l->backward_flops > 1.5 * l->forward_flops ? 2 : 1;
    /* a MoE layer: gate, up and down GEMMs per expert the rank holds, each its own kernel (Transformer
     * Engine's GroupedLinear runs one GEMM per expert), so each fills the device with its own tokens */
    return l->experts > 0 ? n * 3 * l->experts : n;
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
    return bytes > 0 ? kernels * fmax(bytes / kernels / d->mem_Bps, framework_kernel_s(o->framework, d->dispatch_s)) : 0;
}

/* A MoE layer's token shuffles, memory-bound kernels between its GEMMs: per
 * routed row the permutation to expert order and back (hidden read and
 * written each way) and the SwiGLU (2 x ffn read, ffn written); backward
 * their gradients (the SwiGLU's reads 3 x ffn, writes 2 x ffn). Rows and the
 * expert's width come from the layer's own work and weights (3 x hidden x
 * ffn per expert), at bf16 at least. */
static double moe_shuffle_bytes(const workload *t, size_t layer, const step_options *o, int backward)
{
    const workload_layer *l = &t->layers[layer];
    if (l->experts <= 0 || l->hidden <= 0 || l->param_bytes <= 0)
        return 0;
    double C = l->hidden, ffn = l->param_bytes / t->dtype_bytes / l->experts / (3 * C);
    double rows = l->forward_flops * scaling_of(t, o).samples / (6 * C * ffn);
    return rows * (4 * C + (backward ? 5 : 3) * ffn) * fmax(o->dtype_bytes, 2);
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
    double rows = (double)t->micro_batch * l->heads * l->seq_len / (o->context > 1 ? o->context : 1);
    double scores = rows * l->seq_len;
    f->scores_bytes = scores * t->dtype_bytes;
    f->lse_bytes = rows * 4 * t->dtype_bytes / o->dtype_bytes;
    f->recompute_flops = 2 * scores * l->head_dim + 2 * scores;
    return 1;
}

static double depth_share(double depth, double half_depth)
{
    return depth / (depth + half_depth);
}

double step_gemm_depth(const workload *t, size_t layer)
{
    const workload_layer *l = &t->layers[layer];
    double out = l->activation_bytes / t->dtype_bytes;
    if (l->cls != OPCLASS_GEMM || l->experts > 0 || out <= 0)
        return 0;
    double k = l->forward_flops / (2 * out);
    return k >= 1 ? k : 0;
}

/* What a GEMM layer's reduction depth leaves of its class efficiency
 * (gemm_half_depth, device_model.h): its FLOPs over those of the same tiles
 * with the fixed part of each counted as gemm_half_depth more of depth. The
 * forward reduces over K (step_gemm_depth); the backward's input gradient
 * over its output width N (weights over K) and its weight gradient over the
 * tokens (FLOPs over 2 x weights), half the FLOPs each. */
static double gemm_depth_share(const workload *t, size_t layer, const device_model *d, const step_options *o,
                               int backward)
{
    const workload_layer *l = &t->layers[layer];
    double k = step_gemm_depth(t, layer), weights = l->param_bytes / t->dtype_bytes;
    if (k <= 0 || d->gemm_half_depth <= 0)
        return 1;
    if (!backward || weights < k)
        return depth_share(k, d->gemm_half_depth);
    double n = weights / k, tokens = l->forward_flops / (2 * weights) * scaling_of(t, o).samples;
    return 1 / (0.5 / depth_share(n, d->gemm_half_depth) + 0.5 / depth_share(tokens, d->gemm_half_depth));
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

/* Whether a layer's kernels lose a partial wave of tiles (half_work_flops,
 * platforms/README.md). Not the sharding plan's lookups and sparse update,
 * gathers and scatters of rows costed by their bytes (sharding.c), nor
 * HugeCTR's loss, one elementwise pass over the batch's logits that also
 * writes their gradient (loss.cu): no tiles, each at least its launch. */
static int tiled(const workload *t, size_t layer, const step_options *o)
{
    return !plan_layer(t, layer, o) &&
           !(t->layers[layer].cls == OPCLASS_LOSS && framework_loss_in_forward(o->framework));
}

/* TTASIM_DEBUG_OPS set: every layer pass the replay costs, one line on
 * stderr, to see where a step's compute goes (a diagnostic: results and
 * stdout do not change). */
static void debug_op(const workload_layer *l, int backward, int kernels, double flops, double device_s,
                     double launch_s, double epilogue_s, double index_s, double time_s, double busy_s)
{
    static int on = -1;
    if (on < 0)
        on = getenv("TTASIM_DEBUG_OPS") != NULL;
    if (on)
        (void)fprintf(stderr, "op %s %s kernels %d equivalent_flops %.6g device_s %.6g launch_s %.6g epilogue_s %.6g "
                      "index_s %.6g time_s %.6g busy_s %.6g\n", l->name, backward ? "backward" : "forward", kernels,
                      flops, device_s, launch_s, epilogue_s, index_s, time_s, busy_s);
}

/* A layer's pass: its time, and its busy part (the same work at the
 * roofline, without partial waves or launch floors), which is what it takes
 * from kernels running beside it on another stream. */
static void layer_times(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward,
                        double *time_s, double *busy_s)
{
    const workload_layer *l = &t->layers[layer];
    double flops, bytes;
    if (backward && l->cls == OPCLASS_LOSS && framework_loss_in_forward(o->framework)) {
        *time_s = *busy_s = 0; /* the forward kernel wrote the gradient */
        return;
    }
    if (layer_work(t, layer, d, o, backward, &flops, &bytes)) {
        *time_s = *busy_s = bytes / d->mem_Bps;
        return;
    }
    int kernels = kernels_of(l, backward);
    /* a wgrad on its own stream runs beside its layer's dgrad: one partial wave for the two */
    int waves = backward && o->async_wgrad ? 1 : kernels;
    /* a shallow GEMM's tiles as the work of deep ones: their fixed part counts as FLOPs */
    flops /= gemm_depth_share(t, layer, d, o, backward);
    double work = flops / waves;
    double saturation = work > 0 && tiled(t, layer, o) ? work / (work + device_model_half_work(d, l->cls)) : 1;
    /* a backward kernel's own efficiency, never above peak */
    double efficiency = fmin(1.0, d->efficiency[l->cls] * (backward ? d->backward_efficiency[l->cls] : 1));
    double device_s = step_kernel_s(flops, bytes, device_model_peak(d, l->cls), efficiency * saturation, d->mem_Bps);
    double epilogue = epilogue_s(t, layer, d, o, backward);
    /* before the lookups: the ids' input alltoall, the plan's own kernels (hybrid: the batch's ids sorted) */
    int before = plan_layer(t, layer, o) && !backward;
    double index_s = before ? o->tables->id_s + o->tables->index_s : 0;
    double shuffle_s = moe_shuffle_bytes(t, layer, o, backward) / d->mem_Bps;
    double launch_s = kernels * framework_kernel_s(o->framework, d->dispatch_s);
    *time_s = fmax(device_s, launch_s) + epilogue + index_s + shuffle_s;
    *busy_s = step_kernel_s(flops, bytes, device_model_peak(d, l->cls), efficiency, d->mem_Bps) +
              (epilogue_bytes(t, layer, o, backward) + moe_shuffle_bytes(t, layer, o, backward)) / d->mem_Bps +
              (before && o->tables->index_s > 0 ? o->tables->index_bytes / d->mem_Bps : 0);
    debug_op(l, backward, kernels, flops, device_s, launch_s, epilogue, index_s, *time_s, *busy_s);
}

double step_layer_s(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward)
{
    double time_s, busy_s;
    layer_times(t, layer, d, o, backward, &time_s, &busy_s);
    return time_s;
}

double step_layer_busy_s(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward)
{
    double time_s, busy_s;
    layer_times(t, layer, d, o, backward, &time_s, &busy_s);
    return busy_s;
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
/* Every collective of today's step spans the data-parallel ranks: the
 * gradients' and the parameters', and DLRM's model-parallel tables, which
 * shard over the same ranks. */
#define DP LAYOUT_DIM(LAYOUT_DATA)

static step_coll plan_coll(const sharding_cost *p, comm_phase phase)
{
    if (p->reduce_scatter_bytes > 0)
        return phase == COMM_FORWARD ? (step_coll){STEP_REDUCE_SCATTER, DP, p->reduce_scatter_bytes}
                                     : (step_coll){STEP_ALLGATHER, DP, p->allgather_bytes};
    return (step_coll){STEP_ALLTOALL, DP, p->alltoall_bytes};
}

size_t step_collectives(const workload *t, const step_options *o, step_coll *out)
{
    scaling k = scaling_of(t, o);
    size_t n = 0;
    double grad = (double)o->grad_dtype_bytes / t->dtype_bytes, dense = 0;
    /* HugeCTR allreduces the network's whole wgrad buffer once, after the backward (exchange_wgrad):
     * the last bucket's, which is ready after the first layer */
    int one_buffer = framework_one_wgrad_allreduce(o->framework);
    for (size_t b = 0; b < t->n_buckets; b++) {
        dense += t->buckets[b].bytes * grad;
        double bytes = one_buffer ? (b + 1 == t->n_buckets ? dense : 0) : t->buckets[b].bytes * grad;
        out[n++] = (step_coll){o->zero ? STEP_REDUCE_SCATTER : STEP_ALLREDUCE, DP, o->grouped ? 0 : bytes};
    }
    for (size_t c = 0; c < t->n_comm; c++)
        out[n++] = o->embeddings != EMB_ACCELERATORS ? (step_coll){STEP_ALLTOALL, DP, 0}
                   : o->tables ? plan_coll(o->tables, t->comm[c].phase)
                               : (step_coll){STEP_ALLTOALL, DP, t->comm[c].bytes_per_rank * k.samples * k.dtype};
    /* the replicated rows' (grouped: every gradient's) */
    out[n++] = (step_coll){STEP_ALLREDUCE, DP,
                           (o->grouped ? dense : 0) +
                               (o->tables && o->embeddings == EMB_ACCELERATORS ? o->tables->allreduce_bytes : 0)};
    /* the updated parameters, at the precision the model computes in */
    double param = (double)o->dtype_bytes / t->dtype_bytes;
    for (size_t b = 0; o->zero && b < t->n_buckets; b++)
        out[n++] = (step_coll){STEP_ALLGATHER, DP, t->buckets[b].bytes * param};
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
    if (o->autograd_activations && o->fp8_gemm_inputs)
        bytes -= l->kept_gemm_bytes * k.dtype * (o->dtype_bytes - 1) / o->dtype_bytes;
    return bytes * k.samples;
}

double step_activation_bytes(const workload *t, const step_options *o, double *rebuild)
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
    *rebuild = o->recompute ? fmax(widest, segment) : 0;
    return o->recompute ? kept : all;
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
    double rebuild, act = step_activation_bytes(t, o, &rebuild);
    act += rebuild;
    if (o->embeddings == EMB_HOST)
        emb = emb_rows = 0;
    else if (o->tables)
        emb = emb_rows = 0; /* the plan's, below */
    else if (model_parallel_embeddings(t, o))
        emb /= o->ranks;
    else
        emb_rows = emb;
    double count = dense + emb;
    /* the distributed optimizer shards the state and the fp32 master weights (ZeRO-1), the
     * gradients (ZeRO-2), and the parameters, kept only as the fp32 shard (ZeRO-3, FSDP's
     * mixed precision: a block's low-precision copy exists while it runs, tf_replay's), over
     * the data-parallel ranks */
    double shard = o->zero && o->ranks > 1 ? 1.0 / o->ranks : 1.0;
    m->params_bytes = o->zero >= 3 ? count * 4 * shard
                    : o->dtype_bytes < 4 ? count * 4 * shard + count * o->dtype_bytes : count * 4;
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

double step_layer_bytes(const workload *t, size_t layer, const device_model *d, const step_options *o, int backward)
{
    double flops, bytes;
    layer_work(t, layer, d, o, backward, &flops, &bytes);
    return bytes + epilogue_bytes(t, layer, o, backward);
}

double step_model_flops(const workload *t, const step_options *o)
{
    return (t->forward_flops + t->backward_flops) * scaling_of(t, o).samples * o->accumulation;
}
