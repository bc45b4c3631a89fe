/* plan.c: a planned model: which layers run backward, where tensors with
 * several consumers accumulate their gradient, and each layer's FLOPs and
 * bytes (model_layer); model_create and the per-model totals. */
#include <stdlib.h>
#include <string.h>

#include "trainer/model_internal.h"

/* The device efficiency class each layer type is timed with. */
static const op_class OP_CLASS_OF[OP_COUNT] = {
    [OP_LINEAR] = OPCLASS_GEMM,         [OP_CONV] = OPCLASS_CONV,
    [OP_BN] = OPCLASS_NORM,             [OP_LN] = OPCLASS_NORM,
    [OP_RELU] = OPCLASS_ELEMENTWISE,    [OP_GELU] = OPCLASS_ELEMENTWISE,
    [OP_TANH] = OPCLASS_ELEMENTWISE,    [OP_DROPOUT] = OPCLASS_ELEMENTWISE,
    [OP_MAXPOOL] = OPCLASS_POOL,        [OP_GAP] = OPCLASS_POOL,
    [OP_ADD] = OPCLASS_ELEMENTWISE,     [OP_FLATTEN] = OPCLASS_ELEMENTWISE,
    [OP_EMBED] = OPCLASS_EMBEDDING,     [OP_ATTN] = OPCLASS_ATTENTION,
    [OP_EMBBAG] = OPCLASS_EMBEDDING,    [OP_INTERACT] = OPCLASS_GEMM,
    [OP_SLICE0] = OPCLASS_ELEMENTWISE,  [OP_GATHER] = OPCLASS_ELEMENTWISE,
    [OP_VITEMBED] = OPCLASS_EMBEDDING,  [OP_SOFTMAX_CE] = OPCLASS_LOSS,
    [OP_BCE] = OPCLASS_LOSS,            [OP_CONCAT] = OPCLASS_ELEMENTWISE,
    [OP_CROSS] = OPCLASS_GEMM,          [OP_RMSNORM] = OPCLASS_NORM,
    [OP_ROPE] = OPCLASS_ELEMENTWISE,    [OP_CATTN] = OPCLASS_ATTENTION,
    [OP_SWIGLU] = OPCLASS_ELEMENTWISE,  [OP_MOE] = OPCLASS_GEMM,
};

static double view_numel(const model *m, int v)
{
    return v < 0 ? 0 : (double)m->ps.views[v].numel;
}

static void add_gemm(model_layer *L, const char *kind, const char *split, double mm, double n,
                     double k, double count, int count_scales)
{
    L->gemms[L->ngemms++] = (model_gemm){kind, split, mm, n, k, count, count_scales};
}

/* The sgemm calls of the layers that make them, per sample: their FLOPs each
 * way and, for decoders, the products a tensor-parallel split cuts. Backward
 * runs a weight's GEMM twice (dW, and dX unless no gradient flows to the
 * input), attention's four times (dP, dV, dQ, dK). */
static void gemm_costs(const op *o, model_layer *L, int has_din)
{
    double T = o->T;
    switch (o->type) {
    case OP_LINEAR: {
        double f = 2.0 * o->rows * o->C * o->OC;
        L->gemm_fwd_flops = f;
        L->gemm_bwd_flops = f * (has_din ? 2 : 1);
        if (o->kind)
            add_gemm(L, o->kind, o->split, o->rows, o->OC, o->C, 1, 0);
        break;
    }
    case OP_ATTN: case OP_CATTN: {
        double hs = o->type == OP_ATTN ? o->C / o->NH : o->HS;
        L->gemm_fwd_flops = 4.0 * T * T * hs * o->NH;
        L->gemm_bwd_flops = 2 * L->gemm_fwd_flops;
        if (o->type == OP_CATTN) {
            add_gemm(L, "attn_scores", "heads", T, T, hs, o->NH, 1);
            add_gemm(L, "attn_context", "heads", T, hs, T, o->NH, 1);
        }
        break;
    }
    case OP_MOE: {
        double routed = T * o->topk, router = 2.0 * T * o->C * o->E;
        double experts = 3 * 2.0 * routed * o->C * o->FF;
        L->gemm_fwd_flops = router + experts;
        L->gemm_bwd_flops = (has_din ? 2 : 1) * router + experts * (has_din ? 2 : 4.0 / 3);
        add_gemm(L, "router", "replicated", T, o->E, o->C, 1, 0);
        add_gemm(L, "expert_gate", "column", routed, o->FF, o->C, 1, 0);
        add_gemm(L, "expert_up", "column", routed, o->FF, o->C, 1, 0);
        add_gemm(L, "expert_down", "row", routed, o->C, o->FF, 1, 0);
        L->experts = o->E;
        L->top_k = o->topk;
        L->routed = routed;
        break;
    }
    default:
        break;
    }
}

/* FLOPs (a multiply-add is 2) and elements moved, per sample; elementwise
 * FLOPs per element: relu 1, gelu 8 (backward 12), tanh 4, dropout 1, add 1,
 * batchnorm/layernorm 5 forward and 8 backward, rmsnorm 4 and 10, swiglu 4 and
 * 11, rope 3 each way per rotated element, softmax 4 forward, 2 backward.
 * A cross layer is two rank-R GEMMs forward (+ bias, multiply, add: 3 per
 * element) and four backward (dW, dv, dV, dxl), plus du, dbias and dx0.
 * Causal attention counts the full T x T square, as its kernel computes it
 * (and as Megatron and Narayanan et al. count). A MoE layer: the router GEMM
 * and softmax, its routed rows' three expert GEMMs and SwiGLU, the weighted
 * combine (2 per routed element); backward twice the GEMMs, swiglu 11, combine
 * 3, the softmax 4 per router logit. */
static void op_costs(model *m, op *o)
{
    model_layer *L = &o->info;
    double out = o->out >= 0 ? (double)m->t[o->out].numel : 0, in = 0, din = 0;
    for (int i = 0; i < o->nin; i++) {
        in += (double)m->t[o->in[i]].numel;
        if (m->t[o->in[i]].needs_grad)
            din += (double)m->t[o->in[i]].numel;
    }
    double w = 0;
    for (int v = o->pv; v < o->pv + o->npv; v++)
        w += view_numel(m, v);
    L->params = w;
    if (o->wv >= 0 && o->npv == 0)
        w = view_numel(m, o->wv); /* tied weight: read, not owned */
    double f = 0, b = 0, n = out;
    int has_din = din > 0;
    switch (o->type) {
    case OP_LINEAR: {
        double mm = 2.0 * o->rows * o->C * o->OC, bias = o->npv > 1 ? (double)o->rows * o->OC : 0;
        f = mm + bias + (o->relu ? n : 0);
        b = mm * (has_din ? 2 : 1) + bias + (o->relu ? n : 0);
        break;
    }
    case OP_CONV: {
        double mm = 2.0 * o->cs.OC * o->cs.OH * o->cs.OW * o->cs.C * o->cs.K * o->cs.K;
        double bias = o->npv > 1 ? out : 0;
        f = mm + bias;
        b = mm * (has_din ? 2 : 1) + bias;
        break;
    }
    case OP_BN: case OP_LN:
        f = (o->relu ? 6 : 5) * n;
        b = (o->relu ? 9 : 8) * n;
        break;
    case OP_RELU: f = n; b = n; break;
    case OP_GELU: f = 8 * n; b = 12 * n; break;
    case OP_TANH: f = 4 * n; b = 2 * n; break;
    case OP_DROPOUT: case OP_ADD:
        f = (o->relu ? 2 : 1) * n;
        b = (o->relu ? 2 : 1) * n;
        break;
    case OP_MAXPOOL: f = out * o->pl.K * o->pl.K; b = out * o->pl.K * o->pl.K; break;
    case OP_GAP: f = in; b = in; break;
    case OP_EMBED: { /* terms added: tokens, positions, segments */
        double terms = 1 + o->haspos + (o->ntypes > 0);
        f = (terms - 1) * o->T * o->C;
        b = terms * o->T * o->C;
        break;
    }
    case OP_RMSNORM: f = 4 * n; b = 10 * n; break;
    case OP_ROPE: f = 3.0 * o->T * o->NH * o->HS; b = f; break;
    case OP_SWIGLU: f = 4 * n; b = 11 * n; break;
    case OP_CATTN: {
        double tt = (double)o->T * o->T;
        f = 4.0 * tt * o->C + 5.0 * o->NH * tt;
        b = 8.0 * tt * o->C + 4.0 * o->NH * tt;
        break;
    }
    case OP_MOE: {
        double routed = (double)o->T * o->topk, gemm = 6.0 * routed * o->C * o->FF;
        double router = 2.0 * o->T * o->C * o->E, logits = (double)o->T * o->E;
        f = router + 4 * logits + gemm + 4 * routed * o->FF + 2 * routed * o->C;
        b = router * (has_din ? 2 : 1) + 4 * logits + gemm * (has_din ? 2 : 4.0 / 3) +
            11 * routed * o->FF + 3 * routed * o->C;
        break;
    }
    case OP_ATTN: {
        double tt = (double)o->T * o->T;
        f = 4.0 * tt * o->C + 5.0 * o->NH * tt;
        b = 8.0 * tt * o->C + 4.0 * o->NH * tt;
        break;
    }
    case OP_EMBBAG: f = (double)o->L * o->D; b = f; break; /* L: ids per sample, all tables */
    case OP_CROSS: {
        double N = o->C, nr = 2.0 * o->C * o->R;
        f = 2 * nr + 3 * N;
        b = 3 * nr + 2 * N + (m->t[o->in[0]].needs_grad ? N : 0) +
            (m->t[o->in[1]].needs_grad ? nr : 0);
        break;
    }
    case OP_INTERACT: {
        double pairs = (o->F + 1.0) * o->F / 2;
        f = 2 * pairs * o->D;
        b = 4 * pairs * o->D;
        break;
    }
    case OP_SOFTMAX_CE: f = 4 * in; b = 2 * in; break;
    case OP_BCE: f = 4 * in; b = 4 * in; break;
    default: break; /* flatten, slice, gather, vitembed, concat: data movement only */
    }
    L->fwd_flops = f;
    L->bwd_flops = L->backward ? b : 0;
    L->fwd_elems = in + out + (double)o->saved_ps;
    L->fwd_elems_fixed = w;
    if (o->type == OP_EMBED || o->type == OP_EMBBAG) {
        /* only the rows looked up move: per sample, not the whole table */
        double rows = o->type == OP_EMBED ? (1.0 + o->haspos + (o->ntypes > 0)) * o->T : (double)o->L;
        double d = o->type == OP_EMBED ? o->C : o->D;
        L->fwd_elems = out + rows * d;
        L->fwd_elems_fixed = 0;
        L->bwd_elems = L->backward ? out + 2 * rows * d : 0;
        L->bwd_elems_fixed = 0;
    } else {
        L->bwd_elems = L->backward ? out + in + din + (double)o->saved_ps : 0;
        L->bwd_elems_fixed = L->backward ? 3 * w : 0; /* read w, read-modify-write dw */
    }
    L->act_elems = out + (double)o->saved_ps + (double)o->isaved_ps;
    L->model_parallel = o->type == OP_EMBBAG;
    L->lookups = o->type == OP_EMBBAG ? (double)o->L : o->type == OP_EMBED ? o->T : 0;
    if (o->type == OP_ATTN || o->type == OP_CATTN) {
        L->seq_len = o->T;
        L->heads = o->NH;
        L->head_dim = o->type == OP_ATTN ? o->C / o->NH : o->HS;
        L->kv_heads = o->type == OP_ATTN ? o->NH : o->KV;
    }
    gemm_costs(o, L, has_din);
    if (!L->backward)
        L->gemm_bwd_flops = 0;
}

/* Whether an op's backward reads input k (as PyTorch's autograd saves it):
 * layers with weights read their input for the weight gradient, norms, GELU,
 * pooling by argmax and the feature crosses read theirs; ReLU and tanh read
 * their output instead; dropout only its mask; adds, reshapes and lookups
 * nothing. */
static int backward_reads_input(const model *m, const op *o, int k)
{
    switch (o->type) {
    case OP_LINEAR: case OP_CONV: case OP_VITEMBED:
        return o->npv > 0 || o->wv >= 0;
    case OP_BN: case OP_LN: case OP_GELU: case OP_MAXPOOL: case OP_ATTN: case OP_INTERACT: case OP_CROSS:
    case OP_BCE: case OP_RMSNORM: case OP_CATTN: case OP_SWIGLU: case OP_MOE:
        return m->t[o->in[k]].numel > 0;
    default:
        return 0;
    }
}

static int backward_reads_output(const op *o)
{
    return o->type == OP_RELU || o->type == OP_TANH || (o->relu && (o->type == OP_LINEAR || o->type == OP_BN ||
                                                                     o->type == OP_ADD));
}

/* What an autograd framework keeps (Korthikanti et al. 2022, section 4.1,
 * count the same way): every tensor some backward reads, once, held by its
 * producer (a model input by its first reader); the op's own saved state
 * beside it, masks as 1-byte booleans, statistics in fp32, argmax indices as
 * int64. A tensor only linear layers' weight gradients read is also counted
 * in kept_gemm_elems. */
static void keep(model_layer *L, double numel, int other_readers)
{
    L->kept_elems += numel;
    L->kept_gemm_elems += other_readers ? 0 : numel;
}

static void kept_costs(model *m)
{
    size_t n = (size_t)m->nt + 1;
    char *kept = calloc(n, 3), *produced = kept ? kept + n : NULL, *other = kept ? kept + 2 * n : NULL;
    if (!kept) {
        g_fail(m, "out of memory planning the model");
        return;
    }
    for (int i = 0; i < m->nops; i++) {
        const op *o = &m->ops[i];
        for (int k = 0; o->info.backward && k < o->nin; k++)
            if (backward_reads_input(m, o, k)) {
                kept[o->in[k]] = 1;
                other[o->in[k]] |= o->type != OP_LINEAR;
            }
        if (o->out >= 0)
            produced[o->out] = 1;
        if (o->info.backward && o->out >= 0 && backward_reads_output(o))
            kept[o->out] = other[o->out] = 1;
    }
    for (int i = 0; i < m->nops; i++) {
        op *o = &m->ops[i];
        model_layer *L = &o->info;
        if (o->out >= 0 && kept[o->out])
            keep(L, (double)m->t[o->out].numel, other[o->out]);
        for (int k = 0; k < o->nin; k++)
            if (!produced[o->in[k]] && kept[o->in[k]]) {
                keep(L, (double)m->t[o->in[k]].numel, other[o->in[k]]);
                kept[o->in[k]] = 0;
            }
        if (!L->backward)
            continue;
        if (o->type == OP_DROPOUT)
            L->kept_aux_bytes += (double)o->saved_ps;
        else if (o->type == OP_LN || o->type == OP_RMSNORM)
            L->kept_aux_bytes += 4.0 * o->saved_ps;
        else
            L->kept_elems += (double)o->saved_ps;
        L->kept_aux_bytes += 8.0 * o->isaved_ps;
    }
    free(kept);
}

/* A causal attention's residual stream: the width its output projection
 * (the op that reads it) writes per token. */
static int residual_width(const model *m, int i)
{
    const op *a = &m->ops[i];
    for (int j = i + 1; j < m->nops; j++)
        if (m->ops[j].nin > 0 && m->ops[j].in[0] == a->out && m->ops[j].out >= 0)
            return (int)(m->t[m->ops[j].out].numel / a->T);
    return a->NH * a->HS;
}

/* The layer reads a parameter or an input computed from one. */
static int op_depends(const model *m, const op *o)
{
    int dep = o->npv > 0 || o->wv >= 0;
    for (int k = 0; k < o->nin; k++)
        dep |= m->t[o->in[k]].depends;
    return dep;
}

/* Decides which layers run backward and where tensors with several consumers
 * accumulate their gradient. */
static void finalise(model *m)
{
    for (int i = 0; i < m->nops; i++) {
        op *o = &m->ops[i];
        if (o->out >= 0)
            m->t[o->out].depends = op_depends(m, o);
    }
    int *written = calloc((size_t)m->nt + 1, sizeof(int));
    for (int i = m->nops - 1; i >= 0; i--) {
        op *o = &m->ops[i];
        int reach = i == m->loss_op || (o->out >= 0 && m->t[o->out].needs_grad);
        o->info.backward = reach && op_depends(m, o);
        if (!o->info.backward)
            continue;
        for (int k = 0; k < o->nin; k++) {
            tensor *t = &m->t[o->in[k]];
            if (!t->depends)
                continue;
            t->needs_grad = 1;
            if (written) {
                o->acc[k] = written[o->in[k]];
                written[o->in[k]] = 1;
            }
        }
    }
    if (!written)
        g_fail(m, "out of memory planning the model");
    free(written);
    for (int i = 0; i < m->nops; i++) {
        op *o = &m->ops[i];
        op_costs(m, o);
        o->info.name = o->name;
        o->info.cls = OP_CLASS_OF[o->type];
        o->info.first_view = o->pv;
        o->info.nviews = o->npv;
        o->info.hidden = o->type == OP_MOE ? o->C : o->type == OP_CATTN ? residual_width(m, i) : 0;
    }
    kept_costs(m);
    m->finalised = 1;
}

void model_opts_default(model_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->tied_embeddings = -1;
    o->shared_experts = -1;
    o->moe_aux_loss_coef = -1;
}

int model_create(model **out, const char *name, const model_opts *o, tt_error *err)
{
    *out = NULL;
    model *m = g_new(name);
    if (!m)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    m->seed = o->seed;
    if (zoo_build(m, name, o) != 0 || m->bad || m->loss_op < 0) {
        int code = TT_EINPUT;
        if (!m->bad)
            g_fail(m, "model '%s' has no loss layer", name);
        tt_error_set(err, code, "model %s: %s", name, m->err);
        model_free(m);
        return code;
    }
    finalise(m);
    if (m->bad) {
        tt_error_set(err, TT_EINTERNAL, "model %s: %s", name, m->err);
        model_free(m);
        return TT_EINTERNAL;
    }
    *out = m;
    return TT_OK;
}

void model_free(model *m)
{
    if (!m)
        return;
    param_set_free(&m->ps);
    free(m->init_kind);
    free(m->init_val);
    free(m->t);
    free(m->ops);
    free(m->arena);
    free(m->iarena);
    free(m);
}
int model_nlayers(const model *m)
{
    return m->nops;
}

const model_layer *model_layer_at(const model *m, int i)
{
    return &m->ops[i].info;
}

double model_forward_flops_per_sample(const model *m)
{
    double f = 0;
    for (int i = 0; i < m->nops; i++)
        f += m->ops[i].info.fwd_flops;
    return f;
}

double model_backward_flops_per_sample(const model *m)
{
    double f = 0;
    for (int i = 0; i < m->nops; i++)
        f += m->ops[i].info.bwd_flops;
    return f;
}

double model_activation_bytes_per_sample(const model *m)
{
    double a = 0;
    for (int i = 0; i < m->nops; i++)
        a += m->ops[i].info.act_elems;
    return 4 * a;
}
