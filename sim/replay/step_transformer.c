/* step_transformer.c: Megatron-LM's step as a task graph (step_transformer.h). */
#include "sim/replay/step_transformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay/pipeline.h"
#include "sim/replay/taskgraph.h"

#define TP_DIMS LAYOUT_DIM(LAYOUT_TENSOR)
#define CP_DIMS LAYOUT_DIM(LAYOUT_CONTEXT)
/* the context- and expert-parallel ranks hold the same dense weights: their gradients are reduced over all */
#define DP_DIMS (LAYOUT_DIM(LAYOUT_DATA) | LAYOUT_DIM(LAYOUT_CONTEXT) | LAYOUT_DIM(LAYOUT_EXPERT))

static int degree(const tf_options *x, layout_dim d)
{
    return x->layout->degree[d];
}

/* The ranks that hold a stage's same dense weights: data times context times expert. */
static int replicas(const tf_options *x)
{
    return layout_group_size(x->layout, DP_DIMS);
}

/* The ranks that hold the same experts: the dense replicas outside the expert group. */
static unsigned edp_dims(const tf_options *x)
{
    return DP_DIMS & ~x->layout->expert_dims;
}

static int expert_replicas(const tf_options *x)
{
    return layout_group_size(x->layout, edp_dims(x));
}

static int expert_ranks(const tf_options *x)
{
    return layout_group_size(x->layout, x->layout->expert_dims);
}

/* A rank's share of a MoE layer's experts: its expert group's, and the
 * tensor group's unless the experts are whole on each rank (expert_tensor 1). */
static double expert_share(const tf_options *x)
{
    int split = x->layout->expert_dims & TP_DIMS ? 1 : degree(x, LAYOUT_TENSOR);
    return 1.0 / ((double)expert_ranks(x) * split);
}

static int is_moe(const workload_layer *l)
{
    return l->experts > 0;
}

/* A view's expert parameters (its MoE layers', router included). */
static double expert_params(const workload *view)
{
    double n = 0;
    for (size_t i = 0; i < view->n_layers; i++)
        n += is_moe(&view->layers[i]) ? view->layers[i].param_bytes / view->dtype_bytes : 0;
    return n;
}

static int in_block(const workload_layer *l)
{
    return l->block >= 0;
}

static int outside_blocks(const workload_layer *l)
{
    return l->block < 0;
}

static int moe_layers(const workload *view)
{
    int n = 0;
    for (size_t i = 0; i < view->n_layers; i++)
        n += is_moe(&view->layers[i]);
    return n;
}

static int virtual_stages(const tf_options *x)
{
    return degree(x, LAYOUT_PIPELINE) * x->chunks;
}

static int blocks_of(const workload *t)
{
    int n = 0;
    for (size_t i = 0; i < t->n_layers; i++)
        n = t->layers[i].block >= n ? t->layers[i].block + 1 : n;
    return n;
}

/* Blocks on virtual stage v of a model of `blocks`: the first and last may
 * hold fewer (Megatron's --decoder-first/last-pipeline-num-layers, as Llama
 * 3 405B ran 126 layers on 16 stages), the others share the rest evenly. */
static int middle_share(int blocks, const tf_options *x)
{
    int middle = virtual_stages(x) - (x->first_blocks > 0) - (x->last_blocks > 0);
    return middle > 0 ? (blocks - x->first_blocks - x->last_blocks) / middle : 0;
}

static int blocks_in(int blocks, const tf_options *x, int v)
{
    if (v == 0 && x->first_blocks > 0)
        return x->first_blocks;
    if (v == virtual_stages(x) - 1 && x->last_blocks > 0)
        return x->last_blocks;
    return middle_share(blocks, x);
}

/* The virtual stage that runs block b. */
static int stage_of_block(int blocks, const tf_options *x, int b)
{
    int first = x->first_blocks > 0, per = middle_share(blocks, x), vs = virtual_stages(x);
    if (first && b < x->first_blocks)
        return 0;
    b -= x->first_blocks;
    int v = per > 0 ? first + b / per : vs - 1;
    return v < vs ? v : vs - 1;
}

/* The tensor group splits the GEMMs (column and row parallel), attention by
 * heads, the vocabulary's embedding and loss; with sequence parallelism the
 * norms and elementwise ops by the sequence. */
static double tp_share(const workload_layer *l, const tf_options *x)
{
    int tp = degree(x, LAYOUT_TENSOR);
    int split = l->cls == OPCLASS_GEMM || l->cls == OPCLASS_ATTENTION || l->cls == OPCLASS_EMBEDDING ||
                l->cls == OPCLASS_LOSS || (x->sequence_parallel && l->cls != OPCLASS_CONV && l->cls != OPCLASS_POOL);
    return split ? 1.0 / tp : 1.0;
}

/* Virtual stage v's layers (its blocks; the layers before the first block on
 * the first, after the last on the last), as one rank of its tensor group
 * runs them; stages < 0: every chunk of pipeline stage -stages - 1. The
 * view shares the trace's names; free its layers only. */
static int stage_view(const workload *t, const tf_options *x, int v, workload *out)
{
    int vs = virtual_stages(x), pp = degree(x, LAYOUT_PIPELINE), blocks = blocks_of(t);
    size_t first = 0;
    while (first < t->n_layers && t->layers[first].block < 0)
        first++;
    *out = *t;
    out->n_buckets = out->n_comm = 0;
    out->buckets = NULL;
    out->comm = NULL;
    memset(&out->emb, 0, sizeof out->emb);
    out->layers = malloc(sizeof *out->layers * (t->n_layers + 1));
    if (!out->layers)
        return -1;
    out->n_layers = 0;
    out->params = out->param_bytes = out->forward_flops = out->backward_flops = 0;
    for (size_t i = 0; i < t->n_layers; i++) {
        const workload_layer *l = &t->layers[i];
        int at = l->block >= 0 ? stage_of_block(blocks, x, l->block) : i < first ? 0 : vs - 1; /* its virtual stage */
        if (v >= 0 ? at != v : at % pp != -v - 1)
            continue;
        workload_layer *c = &out->layers[out->n_layers++];
        /* the context group splits every layer's tokens (attention: its queries) */
        double kt = tp_share(l, x), k = kt / degree(x, LAYOUT_CONTEXT);
        /* norms' weights are replicated; experts are split over the expert group (the router's
         * few weights with them) */
        double kp = l->cls == OPCLASS_NORM ? 1.0 : is_moe(l) ? expert_share(x) : kt;
        *c = *l;
        c->forward_flops *= k;
        c->forward_bytes *= k;
        c->backward_flops *= k;
        c->backward_bytes *= k;
        c->activation_bytes *= k;
        c->kept_bytes = c->kept_bytes < 0 ? -1 : c->kept_bytes * k;
        c->kept_aux_bytes = c->kept_aux_bytes < 0 ? -1 : c->kept_aux_bytes * k;
        c->kept_gemm_bytes *= k;
        c->param_bytes *= kp;
        c->experts = is_moe(l) ? (int)(l->experts / (double)expert_ranks(x) + 0.5) : 0; /* the rank's own */
        c->heads = l->cls == OPCLASS_ATTENTION ? (int)(l->heads * kt + 0.5) : l->heads;
        c->kv_heads = l->cls == OPCLASS_ATTENTION ? (int)ceil(l->kv_heads * kt) : l->kv_heads;
        out->param_bytes += c->param_bytes;
        out->forward_flops += c->forward_flops;
        out->backward_flops += c->backward_flops;
    }
    out->params = out->param_bytes / t->dtype_bytes;
    double share = t->params > 0 ? out->params / t->params : 0;
    out->gradient_bytes = t->gradient_bytes * share;
    out->optimizer_flops = t->optimizer_flops * share;
    out->optimizer_bytes = t->optimizer_bytes * share;
    return 0;
}

int tf_check(const workload *t, const tf_options *x, tt_error *err)
{
    int blocks = blocks_of(t), vs = virtual_stages(x), tp = degree(x, LAYOUT_TENSOR);
    if (blocks == 0)
        return tt_error_set(err, TT_EINPUT, "%s: the trace has no transformer blocks (layers named layer.N. or with a "
                            "\"block\"), which tensor and pipeline parallelism and ZeRO-3 split; use data "
                            "parallelism only, with $.parallel.zero 0 to 2",
                            t->model);
    int ends = (x->first_blocks > 0) + (x->last_blocks > 0), given = x->first_blocks + x->last_blocks;
    if (ends && (vs <= ends ? given != blocks : given >= blocks || (blocks - given) % (vs - ends)))
        return tt_error_set(err, TT_EINPUT, "%s: %d blocks less the first and last stages' %d and %d do not split "
                            "evenly over the other %d virtual stages; change $.parallel.first_stage_layers or "
                            "last_stage_layers", t->model, blocks, x->first_blocks, x->last_blocks, vs - ends);
    if (!ends && blocks % vs)
        return tt_error_set(err, TT_EINPUT, "%s: %d blocks do not split evenly over %d pipeline stages x %d chunks; "
                            "choose $.parallel.pipeline and $.parallel.virtual_stages whose product divides %d, or "
                            "give the first and last stages fewer ($.parallel.first_stage_layers, last_stage_layers)",
                            t->model, blocks, vs / x->chunks, x->chunks, blocks);
    for (size_t i = 0; i < t->n_layers; i++)
        if (t->layers[i].experts % expert_ranks(x))
            return tt_error_set(err, TT_EINPUT, "%s: layer %s has %d experts, which %d expert-parallel ranks cannot "
                                "split; choose $.parallel.expert dividing %d", t->model, t->layers[i].name,
                                t->layers[i].experts, expert_ranks(x), t->layers[i].experts);
    for (size_t i = 0; i < t->n_layers; i++)
        if (t->layers[i].cls == OPCLASS_ATTENTION && t->layers[i].heads % tp)
            return tt_error_set(err, TT_EINPUT, "%s: layer %s has %d heads, which %d tensor-parallel ranks cannot "
                                "split; choose $.parallel.tensor dividing %d", t->model, t->layers[i].name,
                                t->layers[i].heads, tp, t->layers[i].heads);
    return TT_OK;
}

/* The trace's first attention layer (NULL: none). */
static const workload_layer *first_attention(const workload *t)
{
    for (size_t i = 0; i < t->n_layers; i++)
        if (t->layers[i].cls == OPCLASS_ATTENTION && t->layers[i].seq_len > 0)
            return &t->layers[i];
    return NULL;
}

/* A micro-batch's hidden activations on one rank of the context group. */
static double activation_elems(const workload *t, const step_options *o, const tf_options *x)
{
    const workload_layer *l = first_attention(t);
    return l ? (double)o->micro_batch * l->seq_len / degree(x, LAYOUT_CONTEXT) * l->hidden : 0;
}

/* Of `units` holding `experts` evenly, how many a token's top k reach on
 * average when routing is uniform: units x (1 - C(E - E/units, k) / C(E, k)). */
static double units_reached(int experts, int top_k, int units)
{
    double miss = 1, other = experts - (double)experts / units;
    for (int i = 0; i < top_k; i++)
        miss *= fmax(0.0, other - i) / (experts - i);
    return units * (1 - miss);
}

/* What one rank sends in a MoE layer's dispatch (or combine): its tokens
 * (the tensor group's share of the sequence, which MoE's sequence
 * parallelism gives each), at bf16 at least (Megatron-Core dispatches bf16
 * tokens under an fp8 recipe), each once per expert it goes to; DeepEP
 * sends it once per node (then over NVLink), or per rank within a node:
 * the alltoall of that many copies moves the same bytes across nodes. */
static double dispatch_bytes(const workload *t, const step_options *o, const tf_options *x)
{
    const workload_layer *l = first_attention(t);
    for (size_t i = 0; l && i < t->n_layers; i++) {
        const workload_layer *e = &t->layers[i];
        if (e->experts == 0)
            continue;
        int group = expert_ranks(x), nodes = o->node_ranks > 0 && group > o->node_ranks ? group / o->node_ranks : 1;
        double copies = x->dedup_tokens ? fmin(e->top_k, units_reached(e->experts, e->top_k, nodes > 1 ? nodes : group))
                                        : e->top_k;
        return (double)o->micro_batch * l->seq_len / (degree(x, LAYOUT_CONTEXT) * degree(x, LAYOUT_TENSOR)) * copies *
               e->hidden * fmax(o->dtype_bytes, 2);
    }
    return 0;
}

/* Ring attention (Megatron's context parallelism, p2p): each rank's keys and
 * values of a micro-batch, its share of the sequence and of the tensor
 * group's KV heads, pass round the context group, one block per step. */
static double kv_bytes(const workload *t, const step_options *o, const tf_options *x)
{
    const workload_layer *l = first_attention(t);
    if (!l || degree(x, LAYOUT_CONTEXT) == 1)
        return 0;
    double kv = ceil((double)l->kv_heads / degree(x, LAYOUT_TENSOR));
    return 2.0 * o->micro_batch * l->seq_len / degree(x, LAYOUT_CONTEXT) * kv * l->head_dim * o->dtype_bytes;
}

double tf_runs_per_step(const workload *t, const step_options *o, const tf_options *x, tf_coll i)
{
    double mbs = x->micro_batches;
    if (i < TF_DP_GRADS) /* the tensor-, context- and expert-parallel ones */
        return 4.0 * mbs;
    if (o->zero < 3)
        return 1;
    /* ZeRO-3: each block gathered forward and backward and reduced, each micro-batch */
    return i == TF_DP_PARAMS ? 2.0 * blocks_of(t) * mbs : i == TF_DP_GRADS ? blocks_of(t) * mbs : mbs;
}

double tf_send_bytes(const workload *t, const step_options *o, const tf_options *x)
{
    /* with sequence parallelism each tensor rank sends its part of the sequence */
    return activation_elems(t, o, x) * o->dtype_bytes / (x->sequence_parallel ? degree(x, LAYOUT_TENSOR) : 1);
}

/* ZeRO-3's units as FSDP wraps a transformer: each block, and the root (the
 * layers outside the blocks: embedding, final norm, head); a rank's share of
 * one block's parameters and of the root's (no pipeline: one stage). */
static int fsdp_units(const workload *t, const tf_options *x, double *block_params, double *root_params)
{
    workload view;
    if (stage_view(t, x, 0, &view))
        return -1;
    double blocks = 0;
    for (size_t i = 0; i < view.n_layers; i++)
        blocks += in_block(&view.layers[i]) ? view.layers[i].param_bytes / view.dtype_bytes : 0;
    *block_params = blocks / blocks_of(t);
    *root_params = view.params - blocks;
    free(view.layers);
    return 0;
}

/* A virtual stage's gradient buckets of `params` (its dense or its expert
 * ones): their count and bytes each. */
static int buckets_of(double params, const step_options *o, const tf_options *x, double *bytes)
{
    double grads = params * o->grad_dtype_bytes;
    int n = x->bucket_bytes > 0 ? (int)ceil(grads / x->bucket_bytes) : 1;
    n = n < 1 ? 1 : n > 256 ? 256 : n;
    *bytes = grads / n;
    return n;
}

void tf_collectives(const workload *t, const step_options *o, const tf_options *x, step_coll out[TF_COLLS])
{
    double act = activation_elems(t, o, x) * o->dtype_bytes, kv = kv_bytes(t, o, x);
    int tp = degree(x, LAYOUT_TENSOR), dp = replicas(x), vs = virtual_stages(x);
    memset(out, 0, sizeof *out * TF_COLLS);
    out[TF_TP_ALLREDUCE] = (step_coll){STEP_ALLREDUCE, TP_DIMS, tp > 1 && !x->sequence_parallel ? act : 0};
    out[TF_TP_ALLGATHER] = (step_coll){STEP_ALLGATHER, TP_DIMS, tp > 1 && x->sequence_parallel ? act : 0};
    out[TF_TP_REDUCE_SCATTER] = (step_coll){STEP_REDUCE_SCATTER, TP_DIMS, tp > 1 && x->sequence_parallel ? act : 0};
    /* a ring allgather moves what the ring attention's cp - 1 steps pass, forward; the
     * backward passes the keys and values again and returns their gradients (a reduce-scatter) */
    out[TF_CP_ALLGATHER] = (step_coll){STEP_ALLGATHER, CP_DIMS, kv * degree(x, LAYOUT_CONTEXT)};
    out[TF_CP_REDUCE_SCATTER] = (step_coll){STEP_REDUCE_SCATTER, CP_DIMS, kv * degree(x, LAYOUT_CONTEXT)};
    out[TF_EP_ALLTOALL] = (step_coll){STEP_ALLTOALL, x->layout->expert_dims,
                                      expert_ranks(x) > 1 ? dispatch_bytes(t, o, x) : 0};
    /* the largest virtual stage's buckets (the first and last hold the vocabulary) */
    double bucket = 0, expert_bucket = 0;
    for (int v = 0; v < vs; v++) {
        workload view;
        double b, e = 0;
        if (stage_view(t, x, v, &view) == 0) {
            double experts = expert_params(&view);
            buckets_of(view.params - experts, o, x, &b);
            if (experts > 0)
                buckets_of(experts, o, x, &e);
            bucket = fmax(bucket, b);
            expert_bucket = fmax(expert_bucket, e);
            free(view.layers);
        }
    }
    /* the updated parameters, at the parameters' precision */
    double params = o->zero ? (double)o->dtype_bytes / o->grad_dtype_bytes : 0;
    step_coll_op grads = o->zero ? STEP_REDUCE_SCATTER : STEP_ALLREDUCE;
    double block, root;
    if (dp > 1 && o->zero >= 3 && fsdp_units(t, x, &block, &root) == 0) {
        /* gathered at the compute precision (FSDP's param_dtype), reduced at the gradients' */
        out[TF_DP_GRADS] = (step_coll){STEP_REDUCE_SCATTER, DP_DIMS, block * o->grad_dtype_bytes};
        out[TF_DP_PARAMS] = (step_coll){STEP_ALLGATHER, DP_DIMS, block * o->dtype_bytes};
        out[TF_DP_ROOT_GRADS] = (step_coll){STEP_REDUCE_SCATTER, DP_DIMS, root * o->grad_dtype_bytes};
        out[TF_DP_ROOT_PARAMS] = (step_coll){STEP_ALLGATHER, DP_DIMS, root * o->dtype_bytes};
    } else if (dp > 1) {
        out[TF_DP_GRADS] = (step_coll){grads, DP_DIMS, bucket};
        out[TF_DP_PARAMS] = (step_coll){STEP_ALLGATHER, DP_DIMS, bucket * params};
    }
    if (expert_replicas(x) > 1) {
        out[TF_EP_GRADS] = (step_coll){grads, edp_dims(x), expert_bucket};
        out[TF_EP_PARAMS] = (step_coll){STEP_ALLGATHER, edp_dims(x), expert_bucket * params};
    }
}

/* Tensor-parallel seconds of a virtual stage's forward (or backward) for one
 * micro-batch: two collectives per block, and the vocabulary's at the ends
 * (the embedding's reduction forward on the first stage; with sequence
 * parallelism the gather before the head forward, and the mirrors backward). */
static double tp_comm_s(const workload *t, const tf_options *x, int v, const double *coll_s, int backward)
{
    if (degree(x, LAYOUT_TENSOR) == 1)
        return 0;
    int per = blocks_in(blocks_of(t), x, v), vs = virtual_stages(x);
    double one = x->sequence_parallel ? coll_s[TF_TP_ALLGATHER] + coll_s[TF_TP_REDUCE_SCATTER]
                                      : 2 * coll_s[TF_TP_ALLREDUCE];
    double ends = 0;
    if (v == 0 && !backward)
        ends += x->sequence_parallel ? coll_s[TF_TP_REDUCE_SCATTER] : coll_s[TF_TP_ALLREDUCE];
    if (v == 0 && backward && x->sequence_parallel)
        ends += coll_s[TF_TP_ALLGATHER];
    if (v == vs - 1 && x->sequence_parallel)
        ends += backward ? coll_s[TF_TP_REDUCE_SCATTER] : coll_s[TF_TP_ALLGATHER];
    return per * one + ends;
}

/* A view's compute for one micro-batch: forward, or backward (with
 * recomputation, each layer's forward again but the norms'). */
static double compute_s(const workload *view, const device_model *d, const step_options *o, int backward)
{
    double s = 0;
    for (size_t i = 0; i < view->n_layers; i++) {
        s += step_layer_s(view, i, d, o, backward);
        if (backward && o->recompute && view->layers[i].cls != OPCLASS_NORM)
            s += step_layer_s(view, i, d, o, 0);
    }
    return s;
}

/* In-flight micro-batches of one chunk on stage s: its warmup plus one. */
static int in_flight(const tf_options *x, int s)
{
    int p = degree(x, LAYOUT_PIPELINE), total = x->micro_batches * x->chunks;
    int warm = x->chunks == 1 ? p - s - 1 : (p - s - 1) * 2 + (x->chunks - 1) * p;
    return warm + 1 < total ? warm + 1 : total;
}

/* The distributed optimizer shards a view's expert state over the ranks
 * holding those experts, not over the dense replicas: ms moved to that. */
static int expert_shards(const workload *view, const step_options *o, const tf_options *x, step_memory *ms)
{
    workload experts = *view;
    experts.layers = malloc(sizeof *experts.layers * (view->n_layers + 1));
    if (!experts.layers)
        return -1;
    experts.n_layers = 0;
    for (size_t i = 0; i < view->n_layers; i++)
        if (is_moe(&view->layers[i]))
            experts.layers[experts.n_layers++] = view->layers[i];
    step_options by_experts = *o;
    by_experts.ranks = expert_replicas(x);
    step_memory dense, own;
    step_memory_of(&experts, o, &dense);
    step_memory_of(&experts, &by_experts, &own);
    ms->params_bytes += own.params_bytes - dense.params_bytes;
    ms->gradients_bytes += own.gradients_bytes - dense.gradients_bytes;
    ms->optimizer_bytes += own.optimizer_bytes - dense.optimizer_bytes;
    free(experts.layers);
    return 0;
}

/* The busiest stage's memory: its chunks' parameters, gradients and
 * optimizer state, activations of its micro-batches in flight. */
static int memory_of(const workload *t, const step_options *o, const tf_options *x, step_memory *m, int *stage)
{
    step_options shards = *o; /* the distributed optimizer shards over the data and context ranks */
    shards.ranks = replicas(x);
    o = &shards;
    memset(m, 0, sizeof *m);
    for (int s = 0; s < degree(x, LAYOUT_PIPELINE); s++) {
        workload view;
        if (stage_view(t, x, -s - 1, &view))
            return -1;
        step_memory ms;
        step_memory_of(&view, o, &ms);
        if (o->zero && expert_params(&view) > 0 && expert_shards(&view, o, x, &ms)) {
            free(view.layers);
            return -1;
        }
        double block, root;
        if (o->zero >= 3 && o->ranks > 1 && fsdp_units(t, x, &block, &root) == 0) {
            /* ZeRO-3's gathered copies: the root's while the step runs, the running block's and the
             * next one's (prefetched); the running block's unsharded gradients */
            ms.params_bytes += (root + 2 * block) * o->dtype_bytes;
            ms.gradients_bytes += block * o->grad_dtype_bytes;
        }
        /* each micro-batch in flight keeps its tensors; one segment is rebuilt at a time */
        double rebuild, kept = step_activation_bytes(&view, o, &rebuild);
        ms.activations_bytes = kept * in_flight(x, s) / x->chunks + rebuild;
        ms.total_bytes = ms.params_bytes + ms.gradients_bytes + ms.optimizer_bytes + ms.activations_bytes;
        if (ms.total_bytes > m->total_bytes) {
            *m = ms;
            *stage = s;
        }
        free(view.layers);
    }
    return 0;
}

typedef struct tf_gen {
    taskgraph *g;
    pipeline *pl;
    long *end, *optimizer; /* per stage: its last compute task, its optimizer */
    double optimizer_s;    /* the last stage's added */
} tf_gen;

/* Per virtual stage: a micro-batch's compute forward and backward, its
 * tensor-parallel seconds both ways, its optimizer's work, its gradient buckets. */
typedef struct tf_stage {
    double forward_s, backward_s, tp_forward_s, tp_backward_s, cp_forward_s, cp_backward_s;
    double ep_forward_s, ep_backward_s;
    double fsdp_forward_s, fsdp_backward_s;  /* ZeRO-3's gathers and reduce-scatters beyond the compute beside them */
    double optimizer_flops, optimizer_bytes; /* its parameters' update */
    double expert_fraction;                  /* of its parameters, the experts' */
    int buckets, expert_buckets;             /* its gradient buckets, the last expert_buckets of them the experts' */
} tf_stage;

/* Stage s's buckets after the pieces of each chunk's last backward (the
 * last chunk's come first), the dense ones over the data-parallel group and
 * the experts' over the ranks holding the same experts; its optimizer after
 * them all, then its parameters gathered. */
static int add_data_parallel(tf_gen *gen, const device_model *d, const step_options *o, const tf_options *x,
                             const double *coll_s, int s, const tf_stage *st)
{
    int p = degree(x, LAYOUT_PIPELINE), dp = replicas(x), edp = expert_replicas(x);
    double opt_flops = 0, opt_bytes = 0, dense_flops = 0;
    long opt = -1, *grads = NULL;
    int *gathers = NULL; /* per bucket reduced: the collective that gathers it back */
    size_t n = 0;
    for (int c = x->chunks - 1; c >= 0; c--) {
        const tf_stage *v = &st[c * p + s];
        opt_flops += v->optimizer_flops;
        opt_bytes += v->optimizer_bytes;
        dense_flops += v->optimizer_flops * (1 - v->expert_fraction);
        for (int k = 0; k < v->buckets; k++) {
            int expert = k >= v->buckets - v->expert_buckets;
            if ((expert ? edp : dp) == 1)
                continue;
            long b = tg_add(gen->g, s, TG_COMM, TG_COLLECTIVE, coll_s[expert ? TF_EP_GRADS : TF_DP_GRADS], 0, -1);
            tg_tag(gen->g, b, expert ? TF_EP_GRADS : TF_DP_GRADS);
            long *grown = b < 0 ? NULL : realloc(grads, sizeof *grads * (n + 1));
            int *kinds = grown ? realloc(gathers, sizeof *gathers * (n + 1)) : NULL;
            if (grown)
                grads = grown;
            if (!kinds)
                goto oom;
            gathers = kinds;
            gathers[n] = expert ? TF_EP_PARAMS : TF_DP_PARAMS;
            grads[n++] = b;
            if (tg_after(gen->g, b, pipeline_piece(gen->pl, s, c, k)))
                goto oom;
        }
    }
    /* the distributed optimizer: each rank its share, the dense state's over the data-parallel
     * group, the experts' over the ranks holding them */
    double shard = !o->zero ? 1.0
                 : opt_flops > 0 ? (dense_flops / dp + (opt_flops - dense_flops) / edp) / opt_flops : 1.0 / dp;
    gen->optimizer_s = step_kernel_s(opt_flops * shard, opt_bytes * shard, d->peak_fp32_flops,
                                     d->efficiency[OPCLASS_ELEMENTWISE], d->mem_Bps);
    if ((opt = tg_add(gen->g, s, TG_COMPUTE, TG_OPTIMIZER, gen->optimizer_s, 0, -1)) < 0)
        goto oom;
    for (size_t k = 0; k < n; k++)
        if (tg_after(gen->g, opt, grads[k]))
            goto oom;
    free(grads);
    gen->optimizer[s] = gen->end[s] = opt;
    for (size_t k = 0; o->zero && k < n; k++) {
        long a = tg_add(gen->g, s, TG_COMM, TG_COLLECTIVE, coll_s[gathers[k]], 0, -1);
        tg_tag(gen->g, a, gathers[k]);
        long w = a < 0 ? -1 : tg_add(gen->g, s, TG_COMPUTE, TG_KERNEL, 0, 0, -1);
        if (w < 0 || tg_after(gen->g, a, gen->end[s]) || tg_after(gen->g, w, a)) {
            free(gathers);
            return -1;
        }
        gen->end[s] = w;
    }
    free(gathers);
    return 0;
oom:
    free(grads);
    free(gathers);
    return -1;
}

static int is_attention(const workload_layer *l)
{
    return l->cls == OPCLASS_ATTENTION;
}

/* A view's compute of the layers `match` picks for one micro-batch, one way. */
static double layers_s(const workload *view, const device_model *d, const step_options *o, int backward,
                       int (*match)(const workload_layer *))
{
    double s = 0;
    for (size_t i = 0; i < view->n_layers; i++)
        if (match(&view->layers[i]))
            s += step_layer_s(view, i, d, o, backward);
    return s;
}

/* ZeRO-3 (FSDP's FULL_SHARD, its defaults: backward prefetch, the root not
 * resharded after the forward) over one micro-batch of n blocks, c a block's
 * gather, r its reduce-scatter, one after another on the network: the root's
 * gather and the first block's are exposed, each next block's gather runs
 * beside this block's forward (f); backward, the last block's gather beside
 * the head's backward, each next gather and this block's reduce-scatter
 * beside its backward (b), the last reduce-scatters (the first block's, the
 * root's) exposed. A two-stage flow shop of identical jobs: c + (n - 1)
 * max(0, c - f) forward. */
static void fsdp_exposed(const workload *view, const device_model *d, const step_options *o, int n,
                         const double *coll_s, tf_stage *st)
{
    double c = coll_s[TF_DP_PARAMS], r = coll_s[TF_DP_GRADS];
    double root_f = layers_s(view, d, o, 0, outside_blocks), root_b = layers_s(view, d, o, 1, outside_blocks);
    double f = (st->forward_s - root_f) / n, b = (st->backward_s - root_b) / n;
    st->fsdp_forward_s = coll_s[TF_DP_ROOT_PARAMS] + c + (n - 1) * fmax(0.0, c - f);
    st->fsdp_backward_s = fmax(0.0, c - root_b) + (n - 1) * fmax(0.0, c + r - b) + r + coll_s[TF_DP_ROOT_GRADS];
}

static int stage_costs(const workload *t, const device_model *d, const step_options *o, const tf_options *x,
                       const double *coll_s, tf_stage *st)
{
    for (int v = 0; v < virtual_stages(x); v++) {
        workload view;
        double bucket;
        if (stage_view(t, x, v, &view))
            return -1;
        st[v].forward_s = compute_s(&view, d, o, 0);
        st[v].backward_s = compute_s(&view, d, o, 1);
        st[v].tp_forward_s = tp_comm_s(t, x, v, coll_s, 0);
        /* recomputing the forward gathers and reduces again */
        st[v].tp_backward_s = tp_comm_s(t, x, v, coll_s, 1) + (o->recompute ? st[v].tp_forward_s : 0);
        /* each block's ring runs beside its attention (Megatron overlaps each step's transfer with
         * the previous block's compute): only what the stage's attention does not cover is exposed */
        if (degree(x, LAYOUT_CONTEXT) > 1) {
            int blocks = blocks_in(blocks_of(t), x, v);
            double ring = coll_s[TF_CP_ALLGATHER], ring_back = ring + coll_s[TF_CP_REDUCE_SCATTER];
            st[v].cp_forward_s = fmax(0.0, blocks * ring - layers_s(&view, d, o, 0, is_attention));
            st[v].cp_backward_s = fmax(0.0, blocks * ring_back - layers_s(&view, d, o, 1, is_attention)) +
                                  (o->recompute ? st[v].cp_forward_s : 0);
        }
        /* each MoE layer's dispatch and combine, blocking, both ways (and again when recomputed) */
        int moe = moe_layers(&view);
        double a2a = coll_s[TF_EP_ALLTOALL];
        st[v].ep_forward_s = 2.0 * moe * a2a;
        st[v].ep_backward_s = st[v].ep_forward_s * (o->recompute ? 2 : 1);
        if (x->overlap_experts && moe > 0) {
            /* a forward and another micro-batch's backward run merged, layer by layer: each
             * alltoall beside one part of the other's layer (dispatch beside its experts, combine
             * beside the rest), only what that part does not cover exposed */
            double experts_f = layers_s(&view, d, o, 0, is_moe) / moe, rest_f = st[v].forward_s / moe - experts_f;
            double experts_b = layers_s(&view, d, o, 1, is_moe) / moe, rest_b = st[v].backward_s / moe - experts_b;
            st[v].ep_forward_s = moe * (fmax(0.0, a2a - experts_b) + fmax(0.0, a2a - rest_b));
            st[v].ep_backward_s = moe * (fmax(0.0, a2a - experts_f) + fmax(0.0, a2a - rest_f));
        }
        if (o->zero >= 3)
            fsdp_exposed(&view, d, o, blocks_in(blocks_of(t), x, v), coll_s, &st[v]);
        double experts = expert_params(&view);
        st[v].optimizer_flops = view.optimizer_flops;
        st[v].optimizer_bytes = view.optimizer_bytes;
        st[v].expert_fraction = view.params > 0 ? experts / view.params : 0;
        st[v].expert_buckets = experts > 0 ? buckets_of(experts, o, x, &bucket) : 0;
        /* ZeRO-3 reduced each block's gradients as its backward ended: no buckets after it */
        st[v].buckets = o->zero >= 3 ? 0 : buckets_of(view.params - experts, o, x, &bucket) + st[v].expert_buckets;
        free(view.layers);
    }
    return 0;
}

int tf_replay(const workload *t, const device_model *d, const step_options *o, const tf_options *x,
              const double coll_s[TF_COLLS], double send_s, step_result *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = tf_check(t, x, err), p = degree(x, LAYOUT_PIPELINE), vs = virtual_stages(x), busiest = 0;
    if (rc)
        return rc;
    if (memory_of(t, o, x, &out->memory, &busiest))
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    const step_memory *m = &out->memory;
    if (m->total_bytes > d->mem_bytes)
        return tt_error_set(err, TT_EINPUT,
                            "%s does not fit in the %.3g GB of a %s: pipeline stage %d's rank holds parameters "
                            "%.3g GB, gradients %.3g GB, optimizer state %.3g GB, activations %.3g GB of %d "
                            "micro-batches in flight (total %.3g GB); raise $.parallel.tensor or "
                            "$.parallel.pipeline, use $.parallel.zero 1, $.parallel.recompute \"selective\" or "
                            "\"full\", or a smaller $.workload.micro_batch", t->model, d->mem_bytes / 1e9, d->name, busiest,
                            m->params_bytes / 1e9, m->gradients_bytes / 1e9, m->optimizer_bytes / 1e9,
                            m->activations_bytes / 1e9, in_flight(x, busiest), m->total_bytes / 1e9);
    tf_stage *st = calloc((size_t)vs, sizeof *st);
    double *fw = calloc((size_t)vs, sizeof *fw), *bw = calloc((size_t)vs, sizeof *bw);
    int *pieces = calloc((size_t)vs, sizeof *pieces);
    tf_gen gen = {.g = tg_create(p, 1), .end = calloc((size_t)p, sizeof *gen.end),
                  .optimizer = calloc((size_t)p, sizeof *gen.optimizer)};
    rc = !st || !fw || !bw || !pieces || !gen.g || !gen.end || !gen.optimizer || stage_costs(t, d, o, x, coll_s, st)
             ? tt_error_set(err, TT_EINTERNAL, "out of memory")
             : TT_OK;
    for (int v = 0; rc == TT_OK && v < vs; v++) {
        fw[v] = st[v].forward_s + st[v].tp_forward_s + st[v].cp_forward_s + st[v].ep_forward_s + st[v].fsdp_forward_s;
        bw[v] = st[v].backward_s + st[v].tp_backward_s + st[v].cp_backward_s + st[v].ep_backward_s +
                st[v].fsdp_backward_s;
        pieces[v] = st[v].buckets > 0 ? st[v].buckets : 1; /* ZeRO-3's: none, the backward whole */
    }
    /* forward only, as an evaluation runs it: one micro-batch through every virtual stage, the
     * rest at the pace of the stage whose chunks take longest */
    for (int v = 0; rc == TT_OK && v < vs; v++)
        out->forward_fill_s += fw[v] + (v > 0 ? send_s : 0);
    for (int s = 0; rc == TT_OK && s < p; s++) {
        double stage_s = 0;
        for (int v = s; v < vs; v += p)
            stage_s += fw[v];
        out->forward_beat_s = fmax(out->forward_beat_s, stage_s);
    }
    pipeline_shape sh = {p, x->chunks, x->micro_batches, fw, bw, send_s, pieces};
    if (rc == TT_OK && !(gen.pl = pipeline_build(gen.g, &sh, err)))
        rc = err->code;
    for (int s = 0; rc == TT_OK && s < p; s++)
        if (add_data_parallel(&gen, d, o, x, coll_s, s, st))
            rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
    if (rc == TT_OK)
        rc = tg_schedule(gen.g, err);
    if (rc == TT_OK && o->sink)
        rc = o->sink->take(o->sink->ctx, gen.g, o->colls, o->n_colls, x->layout, x->layout->ranks, err);
    if (rc == TT_OK) {
        int last = 0; /* the stage that ends the step reports its breakdown */
        for (int s = 0; s < p; s++) {
            double end = tg_end_s(gen.g, gen.end[s]);
            if (end > out->time_s + 1e-15) {
                out->time_s = end;
                last = s;
            }
        }
        double mbs = x->micro_batches, fsdp_s = 0;
        for (int v = last; v < vs; v += p) {
            fsdp_s += mbs * (st[v].fsdp_forward_s + st[v].fsdp_backward_s);
            out->compute_s += mbs * (st[v].forward_s + st[v].backward_s);
            out->tp_comm_s += mbs * (st[v].tp_forward_s + st[v].tp_backward_s);
            out->cp_comm_s += mbs * (st[v].cp_forward_s + st[v].cp_backward_s);
            out->ep_comm_s += mbs * (st[v].ep_forward_s + st[v].ep_backward_s);
        }
        /* after its last backward: the buckets not yet reduced, the optimizer, the parameters' gathering */
        double backward_end = tg_end_s(gen.g, pipeline_task(gen.pl, last, 0, x->micro_batches - 1, 1));
        out->optimizer_s = gen.optimizer_s;
        out->exposed_comm_s = fmax(0.0, out->time_s - backward_end - out->optimizer_s) + fsdp_s;
        out->bubble_s = fmax(0.0, out->time_s - out->compute_s - out->tp_comm_s - out->cp_comm_s - out->ep_comm_s -
                                      out->optimizer_s - out->exposed_comm_s);
        out->comm_s = out->tp_comm_s + out->cp_comm_s + out->ep_comm_s;
        for (int v = last; v < vs; v += p) {
            int dense = st[v].buckets - st[v].expert_buckets;
            out->comm_s += dense * (coll_s[TF_DP_GRADS] + (o->zero ? coll_s[TF_DP_PARAMS] : 0)) +
                           st[v].expert_buckets * (coll_s[TF_EP_GRADS] + (o->zero ? coll_s[TF_EP_PARAMS] : 0));
        }
        if (o->zero >= 3) /* each block gathered twice and reduced, the root once each, per micro-batch */
            out->comm_s += mbs * (blocks_of(t) * (2 * coll_s[TF_DP_PARAMS] + coll_s[TF_DP_GRADS]) +
                                  coll_s[TF_DP_ROOT_PARAMS] + coll_s[TF_DP_ROOT_GRADS]);
        out->idle_s = fmax(0.0, out->time_s - out->compute_s - out->optimizer_s);
        out->model_flops = step_model_flops(t, o) / (degree(x, LAYOUT_TENSOR) * degree(x, LAYOUT_CONTEXT) * p);
        out->mfu = out->model_flops / (out->time_s * d->peak_flops);
    }
    pipeline_free(gen.pl);
    tg_free(gen.g);
    free(gen.end);
    free(gen.optimizer);
    free(st);
    free(fw);
    free(bw);
    free(pieces);
    return rc;
}
