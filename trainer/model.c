/* model.c: running a planned model: parameter initialisation, the
 * activation arena (model_alloc), and forward/backward over the layers.
 * A tensor with several consumers (a residual stream) gets its gradient from
 * the first consumer in backward order directly; later consumers write into
 * an accumulation buffer that is then added, so kernels only ever overwrite. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/model_internal.h"
#include "trainer/rng.h"

static void init_params(model *m)
{
    for (int v = 0; v < m->ps.nviews; v++) {
        float *p = m->ps.params + m->ps.views[v].offset;
        size_t n = m->ps.views[v].numel;
        rng r = rng_at(m->seed, (uint64_t)v);
        float val = m->init_val[v];
        for (size_t i = 0; i < n; i++)
            switch (m->init_kind[v]) {
            case IK_ZERO: p[i] = 0.0f; break;
            case IK_ONE: p[i] = 1.0f; break;
            case IK_UNIFORM: p[i] = (2.0f * rng_uniform(&r) - 1.0f) * val; break;
            default: p[i] = rng_normal(&r) * val; break;
            }
    }
}

int model_alloc(model *m, int batch, tt_error *err)
{
    if (batch < 1)
        return tt_error_set(err, TT_EINPUT, "batch size must be at least 1 (got %d)", batch);
    free(m->arena);
    free(m->iarena);
    m->arena = NULL;
    m->iarena = NULL;
    if (param_set_alloc(&m->ps) != 0)
        return tt_error_set(err, TT_EINTERNAL, "model %s: cannot allocate %zu parameters",
                            m->name, m->ps.numel);
    init_params(m);
    size_t B = (size_t)batch, nf = 0, ni = 0, scratch = 0, acc = 0;
    for (int i = 0; i < m->nt; i++)
        nf += B * (size_t)m->t[i].numel * (m->t[i].needs_grad ? 2 : 1);
    for (int i = 0; i < m->nops; i++) {
        op *o = &m->ops[i];
        nf += B * (size_t)o->saved_ps + (size_t)o->saved_fixed;
        ni += B * (size_t)o->isaved_ps + (size_t)o->isaved_fixed;
        size_t s = (size_t)o->scratch + B * (size_t)o->scratch_ps;
        scratch = s > scratch ? s : scratch;
        for (int k = 0; k < o->nin; k++)
            if (o->acc[k] && B * (size_t)m->t[o->in[k]].numel > acc)
                acc = B * (size_t)m->t[o->in[k]].numel;
    }
    model_inputs *in = &m->in;
    size_t T = (size_t)in->seq_len;
    nf += scratch + 2 * acc + B; /* + click targets */
    ni += B * (2 * T + 1 + (size_t)in->npred + (size_t)in->ids_per_sample +
               (size_t)in->labels_per_sample);
    m->arena = calloc(nf, sizeof(float));
    m->iarena = calloc(ni ? ni : 1, sizeof(int));
    if (!m->arena || !m->iarena)
        return tt_error_set(err, TT_EINTERNAL,
                            "model %s: cannot allocate %.1f MB of activations for batch %d",
                            m->name, (double)(nf * 4 + ni * 4) / 1e6, batch);
    float *f = m->arena;
    int *ip = m->iarena;
    for (int i = 0; i < m->nt; i++) {
        tensor *t = &m->t[i];
        t->data = f;
        f += B * t->numel;
        if (t->needs_grad) {
            t->grad = f;
            f += B * t->numel;
        }
    }
    for (int i = 0; i < m->nops; i++) {
        op *o = &m->ops[i];
        o->saved = f;
        f += B * o->saved_ps + o->saved_fixed;
        o->isaved = ip;
        ip += B * o->isaved_ps + o->isaved_fixed;
        if (o->type == OP_BN)
            for (int c = 0; c < o->C; c++)
                o->saved[3 * o->C + c] = 1.0f; /* running variance starts at one */
    }
    m->scratch = f;
    f += scratch;
    m->accbuf[0] = f;
    f += acc;
    m->accbuf[1] = f;
    f += acc;
    in->targets = f;
    in->batch = batch;
    in->x = m->x_tensor >= 0 ? m->t[m->x_tensor].data : NULL;
    in->tokens = in->seq_len ? ip : NULL;
    ip += B * T;
    in->segments = in->seq_len ? ip : NULL;
    ip += B * T;
    in->lengths = in->seq_len ? ip : NULL;
    ip += B;
    in->positions = in->npred ? ip : NULL;
    ip += B * in->npred;
    in->sparse = in->ntables ? ip : NULL;
    ip += B * in->ids_per_sample;
    in->labels = in->labels_per_sample ? ip : NULL;
    if (!in->labels_per_sample)
        in->classes = 0;
    for (size_t b = 0; in->lengths && b < B; b++)
        in->lengths[b] = (int)T;
    m->batch = batch;
    return TT_OK;
}

param_set *model_params(model *m)
{
    return &m->ps;
}

model_inputs *model_get_inputs(model *m)
{
    return &m->in;
}

void model_set_training(model *m, int training)
{
    m->training = training;
}


/* ---------- forward and backward ---------- */

static float *P(model *m, int v)
{
    return m->ps.params + m->ps.views[v].offset;
}

static float *G(model *m, int v)
{
    return m->ps.grads + m->ps.views[v].offset;
}

/* A MoE layer's shape at batch B, its saved state and its weights (or their
 * gradients: at = G). */
static void moe_bind(model *m, op *o, int B, moe_shape *s, moe_saved *sv, moe_weights *w,
                     float *(*at)(model *, int))
{
    *s = (moe_shape){B * o->T, o->C, o->E, o->topk, o->FF, o->p};
    moe_saved_bind(sv, o->saved, o->isaved, s);
    *w = (moe_weights){at(m, o->pv), at(m, o->pv + 1), at(m, o->pv + 2), at(m, o->pv + 3)};
}

float model_forward(model *m)
{
    int B = m->in.batch;
    if (B < 1 || B > m->batch)
        return NAN; /* inputs.batch must stay within what model_alloc sized */
    if (m->training)
        m->step++;
    m->aux_loss = 0.0f;
    for (int i = 0; i < m->nops; i++) {
        op *o = &m->ops[i];
        float *x = o->nin > 0 ? m->t[o->in[0]].data : NULL;
        float *x1 = o->nin > 1 ? m->t[o->in[1]].data : NULL;
        float *y = o->out >= 0 ? m->t[o->out].data : NULL;
        long n = o->out >= 0 ? (long)B * m->t[o->out].numel : 0;
        switch (o->type) {
        case OP_LINEAR:
            (o->relu ? linear_relu_forward : linear_forward)(
                y, x, P(m, o->wv), o->npv > 1 ? P(m, o->pv + 1) : NULL, B * o->rows, o->C, o->OC);
            break;
        case OP_CONV:
            conv2d_forward(y, x, P(m, o->wv), o->npv > 1 ? P(m, o->pv + 1) : NULL, m->scratch,
                           &o->cs, B);
            break;
        case OP_BN:
            batchnorm_forward(y, o->saved, o->saved + o->C, o->saved + 2 * o->C,
                              o->saved + 3 * o->C, x, P(m, o->pv), P(m, o->pv + 1), B, o->C,
                              o->rows, m->training, o->p, o->eps, o->relu);
            break;
        case OP_LN:
            layernorm_forward(y, o->saved, o->saved + (long)B * o->rows, x, P(m, o->pv),
                              P(m, o->pv + 1), B * o->rows, o->C, o->eps);
            break;
        case OP_RELU: relu_forward(y, x, n); break;
        case OP_GELU: gelu_forward(y, x, n); break;
        case OP_TANH: tanh_forward(y, x, n); break;
        case OP_DROPOUT:
            if (m->training)
                dropout_forward(y, o->saved, x, n, o->p,
                                rng_mix(m->seed ^ rng_mix(m->step * 1000003ULL + (uint64_t)i)));
            else
                memcpy(y, x, (size_t)n * sizeof(float));
            break;
        case OP_MAXPOOL: maxpool_forward(y, o->isaved, x, &o->pl, B); break;
        case OP_GAP: gap_forward(y, x, B, o->C, o->rows); break;
        case OP_ADD: (o->relu ? add_relu_forward : add_forward)(y, x, x1, n); break;
        case OP_FLATTEN: memcpy(y, x, (size_t)n * sizeof(float)); break;
        case OP_EMBED:
            embed_forward(y, m->in.tokens, o->ntypes ? m->in.segments : NULL, P(m, o->pv),
                          o->haspos ? P(m, o->pv + 1) : NULL,
                          o->ntypes ? P(m, o->pv + 1 + o->haspos) : NULL, B, o->T, o->C);
            break;
        case OP_ATTN:
            attention_forward(y, o->saved, x, m->in.lengths, B, o->T, o->C, o->NH);
            break;
        case OP_EMBBAG:
            for (int f = 0, at = 0; f < o->F; at += m->table_bags[f++])
                embbag_forward(y + (long)f * o->D, (long)o->F * o->D, P(m, o->pv + f),
                               m->in.sparse + at, o->L, B, m->table_bags[f], o->D, o->mode);
            break;
        case OP_INTERACT: interaction_forward(y, x, x1, B, o->F, o->D); break;
        case OP_CONCAT: concat_forward(y, x, x1, B, o->C, o->OC); break;
        case OP_CROSS:
            cross_forward(y, o->saved, o->saved + (long)B * o->R, x, x1, P(m, o->pv),
                          P(m, o->pv + 1), P(m, o->pv + 2), B, o->C, o->R);
            break;
        case OP_SLICE0: slice0_forward(y, x, B, o->T, o->C); break;
        case OP_GATHER: gather_forward(y, x, m->in.positions, B, o->T, o->P, o->C); break;
        case OP_VITEMBED:
            vitembed_forward(y, x, P(m, o->pv), P(m, o->pv + 1), B, o->T, o->C);
            break;
        case OP_RMSNORM:
            rmsnorm_forward(y, o->saved, x, P(m, o->pv), B * o->rows, o->C, o->eps);
            break;
        case OP_ROPE: rope_forward(y, x, B, o->T, o->C, o->NH, o->HS, o->theta); break;
        case OP_CATTN:
            causal_attention_forward(y, o->saved, x, B, o->T, o->NH, o->KV, o->HS);
            break;
        case OP_SWIGLU: swiglu_forward(y, x, x1, n); break;
        case OP_MOE: {
            moe_shape s;
            moe_saved sv;
            moe_weights w;
            moe_bind(m, o, B, &s, &sv, &w, P);
            m->aux_loss += moe_forward(y, &sv, x, &w, &s);
            break;
        }
        case OP_SOFTMAX_CE:
            m->loss = softmax_ce_forward(o->saved, x, m->in.labels, B * o->rows, o->V, o->p) +
                      m->aux_loss;
            break;
        case OP_BCE: m->loss = bce_forward(x, m->in.targets, B); break;
        default: break;
        }
        if (m->observe)
            m->observe(m->observe_ctx, i, 0);
    }
    return m->loss;
}

void model_backward(model *m)
{
    int B = m->in.batch;
    for (int i = m->nops - 1; i >= 0; i--) {
        op *o = &m->ops[i];
        if (!o->info.backward)
            continue;
        float *x = o->nin > 0 ? m->t[o->in[0]].data : NULL;
        float *x1 = o->nin > 1 ? m->t[o->in[1]].data : NULL;
        float *d[2] = {NULL, NULL};
        for (int k = 0; k < o->nin; k++) {
            tensor *t = &m->t[o->in[k]];
            if (t->needs_grad)
                d[k] = o->acc[k] ? m->accbuf[k] : t->grad;
        }
        float *y = o->out >= 0 ? m->t[o->out].data : NULL;
        float *dy = o->out >= 0 ? m->t[o->out].grad : NULL;
        long n = o->out >= 0 ? (long)B * m->t[o->out].numel : 0;
        switch (o->type) {
        case OP_LINEAR:
            if (o->relu)
                linear_relu_backward(d[0], G(m, o->wv), o->npv > 1 ? G(m, o->pv + 1) : NULL, dy,
                                     y, x, P(m, o->wv), B * o->rows, o->C, o->OC);
            else
                linear_backward(d[0], G(m, o->wv), o->npv > 1 ? G(m, o->pv + 1) : NULL, dy, x,
                                P(m, o->wv), B * o->rows, o->C, o->OC);
            break;
        case OP_CONV:
            conv2d_backward(d[0], G(m, o->wv), o->npv > 1 ? G(m, o->pv + 1) : NULL, dy, x,
                            P(m, o->wv), m->scratch, &o->cs, B);
            break;
        case OP_BN:
            batchnorm_backward(d[0], G(m, o->pv), G(m, o->pv + 1), dy, o->relu ? y : NULL, x,
                               P(m, o->pv), o->saved, o->saved + o->C, B, o->C, o->rows,
                               m->training);
            break;
        case OP_LN:
            layernorm_backward(d[0], G(m, o->pv), G(m, o->pv + 1), dy, x, P(m, o->pv), o->saved,
                               o->saved + (long)B * o->rows, B * o->rows, o->C);
            break;
        case OP_RELU: relu_backward(d[0], dy, y, n); break;
        case OP_GELU: gelu_backward(d[0], dy, x, n); break;
        case OP_TANH: tanh_backward(d[0], dy, y, n); break;
        case OP_DROPOUT:
            if (m->training)
                dropout_backward(d[0], dy, o->saved, n);
            else
                memcpy(d[0], dy, (size_t)n * sizeof(float));
            break;
        case OP_MAXPOOL: maxpool_backward(d[0], dy, o->isaved, &o->pl, B); break;
        case OP_GAP: gap_backward(d[0], dy, B, o->C, o->rows); break;
        case OP_ADD:
        case OP_FLATTEN: {
            const float *g = dy;
            if (o->relu) { /* mask once, into the first input's gradient buffer */
                float *mask = d[0] ? d[0] : d[1];
                relu_backward(mask, dy, y, n);
                g = mask;
            }
            for (int k = 0; k < o->nin; k++)
                if (d[k] && d[k] != g)
                    memcpy(d[k], g, (size_t)n * sizeof(float));
            break;
        }
        case OP_EMBED:
            embed_backward(G(m, o->pv), o->haspos ? G(m, o->pv + 1) : NULL,
                           o->ntypes ? G(m, o->pv + 1 + o->haspos) : NULL, dy, m->in.tokens,
                           o->ntypes ? m->in.segments : NULL, B, o->T, o->C);
            break;
        case OP_ATTN:
            attention_backward(d[0], m->scratch, dy, x, o->saved, B, o->T, o->C, o->NH);
            break;
        case OP_EMBBAG:
            for (int f = 0, at = 0; f < o->F; at += m->table_bags[f++])
                embbag_backward(G(m, o->pv + f), dy + (long)f * o->D, (long)o->F * o->D,
                                m->in.sparse + at, o->L, B, m->table_bags[f], o->D, o->mode);
            break;
        case OP_INTERACT:
            interaction_backward(d[0], d[1], dy, x, x1, B, o->F, o->D);
            break;
        case OP_CONCAT: concat_backward(d[0], d[1], dy, B, o->C, o->OC); break;
        case OP_CROSS:
            cross_backward(d[0], d[1], G(m, o->pv), G(m, o->pv + 1), G(m, o->pv + 2), m->scratch,
                           dy, x, x1, o->saved, o->saved + (long)B * o->R, P(m, o->pv),
                           P(m, o->pv + 1), B, o->C, o->R);
            break;
        case OP_SLICE0: slice0_backward(d[0], dy, B, o->T, o->C); break;
        case OP_GATHER: gather_backward(d[0], dy, m->in.positions, B, o->T, o->P, o->C); break;
        case OP_VITEMBED:
            vitembed_backward(d[0], G(m, o->pv), G(m, o->pv + 1), dy, B, o->T, o->C);
            break;
        case OP_RMSNORM:
            rmsnorm_backward(d[0], G(m, o->pv), dy, x, P(m, o->pv), o->saved, B * o->rows, o->C);
            break;
        case OP_ROPE: rope_backward(d[0], dy, B, o->T, o->C, o->NH, o->HS, o->theta); break;
        case OP_CATTN:
            causal_attention_backward(d[0], m->scratch, dy, x, o->saved, B, o->T, o->NH, o->KV,
                                      o->HS);
            break;
        case OP_SWIGLU: swiglu_backward(d[0], d[1], dy, x, x1, n); break;
        case OP_MOE: {
            moe_shape s;
            moe_saved sv;
            moe_weights w, dw;
            moe_bind(m, o, B, &s, &sv, &w, P);
            moe_bind(m, o, B, &s, &sv, &dw, G);
            moe_backward(d[0], &dw, m->scratch, dy, x, &sv, &w, &s);
            break;
        }
        case OP_SOFTMAX_CE:
            softmax_ce_backward(d[0], o->saved, m->in.labels, B * o->rows, o->V, o->p, 1.0f);
            break;
        case OP_BCE: bce_backward(d[0], x, m->in.targets, B, 1.0f); break;
        default: break;
        }
        for (int k = 0; k < o->nin; k++)
            if (d[k] && o->acc[k]) {
                float *g = m->t[o->in[k]].grad;
                long cnt = (long)B * m->t[o->in[k]].numel;
                for (long j = 0; j < cnt; j++)
                    g[j] += d[k][j];
            }
        if (m->observe)
            m->observe(m->observe_ctx, i, 1);
    }
}

void model_zero_grad(model *m)
{
    memset(m->ps.grads, 0, m->ps.numel * sizeof(float));
}

const float *model_logits(const model *m, int *cols)
{
    const op *o = &m->ops[m->loss_op];
    const tensor *t = &m->t[o->in[0]];
    if (cols)
        *cols = last_dim(m, o->in[0]);
    return t->data;
}

void model_set_observer(model *m, void (*fn)(void *ctx, int layer, int backward), void *ctx)
{
    m->observe = fn;
    m->observe_ctx = ctx;
}

void model_sgd_step(model *m, float lr)
{
    cblas_saxpy((int)m->ps.numel, -lr, m->ps.grads, 1, m->ps.params, 1);
}
