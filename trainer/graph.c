/* graph.c: building a model layer by layer (graph.h): tensors with their
 * per-sample shapes, layers with their parameter views and how those are
 * initialised. Shape errors are remembered (g_fail) for model_create. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/model_internal.h"

model *g_new(const char *name)
{
    model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    snprintf(m->name, sizeof m->name, "%s", name);
    m->loss_op = -1;
    m->x_tensor = -1;
    m->training = 1;
    return m;
}

void g_init_style(model *m, int style)
{
    m->style = style;
}

int g_fail(model *m, const char *fmt, ...)
{
    if (!m->bad) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->err, sizeof m->err, fmt, ap);
        va_end(ap);
    }
    m->bad = 1;
    return 0;
}

static int new_tensor(model *m, int ndim, int d0, int d1, int d2)
{
    if (m->nt == m->cap_t) {
        int cap = m->cap_t ? 2 * m->cap_t : 64;
        tensor *t = realloc(m->t, (size_t)cap * sizeof *t);
        if (!t)
            return g_fail(m, "out of memory planning the model");
        m->t = t;
        m->cap_t = cap;
    }
    tensor *t = &m->t[m->nt];
    memset(t, 0, sizeof *t);
    t->ndim = ndim;
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->dims[2] = d2;
    t->numel = (long)d0 * (ndim > 1 ? d1 : 1) * (ndim > 2 ? d2 : 1);
    if (d0 <= 0 || (ndim > 1 && d1 <= 0) || (ndim > 2 && d2 <= 0))
        g_fail(m, "the output of layer %s would be empty: the input is too small for the model",
               m->nops ? m->ops[m->nops - 1].name : "(input)");
    return m->nt++;
}

/* NULL once the plan has failed, so the builders stop (each checks). */
static op *new_op(model *m, int type, const char *name, int in0, int in1)
{
    if (m->bad)
        return NULL;
    if (m->nops == m->cap_ops) {
        int cap = m->cap_ops ? 2 * m->cap_ops : 64;
        op *o = realloc(m->ops, (size_t)cap * sizeof *o);
        if (!o) {
            g_fail(m, "out of memory planning the model");
            return NULL;
        }
        m->ops = o;
        m->cap_ops = cap;
    }
    op *o = &m->ops[m->nops++];
    memset(o, 0, sizeof *o);
    o->type = type;
    snprintf(o->name, sizeof o->name, "%s", name);
    o->in[0] = in0;
    o->in[1] = in1;
    o->nin = in0 < 0 ? 0 : in1 < 0 ? 1 : 2;
    o->out = -1;
    o->pv = m->ps.nviews;
    o->wv = -1;
    return o;
}

/* A parameter view of this layer: "<layer>.<suffix>". */
static int add_param(model *m, op *o, const char *suffix, int ndim, const int *shape,
                     int bias_or_norm, int kind, float val)
{
    char full[64];
    snprintf(full, sizeof full, "%s.%s", o->name, suffix);
    int v = param_set_add(&m->ps, full, ndim, shape, bias_or_norm);
    if (v < 0)
        return g_fail(m, "out of memory planning the model");
    if (v >= m->cap_init) {
        int cap = m->cap_init ? 2 * m->cap_init : 64;
        int *k = realloc(m->init_kind, (size_t)cap * sizeof *k);
        if (k)
            m->init_kind = k;
        float *f = realloc(m->init_val, (size_t)cap * sizeof *f);
        if (f)
            m->init_val = f;
        if (!k || !f)
            return g_fail(m, "out of memory planning the model");
        m->cap_init = cap;
    }
    m->init_kind[v] = kind;
    m->init_val[v] = val;
    o->npv = m->ps.nviews - o->pv;
    return v;
}

/* weight and optional bias of a linear or conv layer with this fan-in/out */
static void add_weight_bias(model *m, op *o, int ndim, const int *shape, int fan_in, int fan_out,
                            int bias)
{
    float bound = 1.0f / sqrtf((float)fan_in);
    int wk = IK_UNIFORM, bk = IK_UNIFORM;
    float wval = bound, bval = bound;
    if (m->style == INIT_KAIMING_FANOUT && o->type == OP_CONV) {
        wk = IK_NORMAL;
        wval = sqrtf(2.0f / (float)fan_out);
        bk = IK_ZERO;
    } else if (m->style == INIT_NORMAL_002) {
        wk = IK_NORMAL;
        wval = 0.02f;
        bk = IK_ZERO;
    }
    o->wv = add_param(m, o, "weight", ndim, shape, 0, wk, wval);
    if (bias)
        add_param(m, o, "bias", 1, &shape[0], 1, bk, bval);
}

static void add_norm(model *m, op *o, int C)
{
    add_param(m, o, "weight", 1, &C, 1, IK_ONE, 0);
    add_param(m, o, "bias", 1, &C, 1, IK_ZERO, 0);
}

int g_input_image(model *m, int C, int H, int W)
{
    m->x_tensor = new_tensor(m, 3, C, H, W);
    m->in.channels = C;
    m->in.height = H;
    m->in.width = W;
    m->in.x_per_sample = (long)C * H * W;
    return m->x_tensor;
}

int g_input_vector(model *m, int n)
{
    m->x_tensor = new_tensor(m, 1, n, 0, 0);
    m->in.x_per_sample = n;
    return m->x_tensor;
}

int g_dims(const model *m, int t, int *dims)
{
    for (int i = 0; i < 3; i++)
        dims[i] = m->t[t].dims[i];
    return m->t[t].ndim;
}

/* output tensor shaped like x with the last dimension replaced */
static int like_with_last(model *m, int x, int last)
{
    tensor *t = &m->t[x];
    int d[3] = {t->dims[0], t->dims[1], t->dims[2]};
    d[t->ndim - 1] = last;
    return new_tensor(m, t->ndim, d[0], d[1], d[2]);
}

static int like(model *m, int x)
{
    return like_with_last(m, x, last_dim(m, x));
}

int g_linear(model *m, const char *name, int x, int OC, int bias)
{
    op *o = new_op(m, OP_LINEAR, name, x, -1);
    if (!o)
        return 0;
    o->C = last_dim(m, x);
    o->OC = OC;
    o->rows = (int)(m->t[x].numel / o->C);
    int shape[2] = {OC, o->C};
    add_weight_bias(m, o, 2, shape, o->C, OC, bias);
    o->out = like_with_last(m, x, OC);
    return o->out;
}

int g_linear_relu(model *m, const char *name, int x, int OC, int bias)
{
    int y = g_linear(m, name, x, OC, bias);
    if (!m->bad)
        m->ops[m->nops - 1].relu = 1;
    return y;
}

int g_linear_tied(model *m, const char *name, int x, const char *weight_view)
{
    int v = param_set_find(&m->ps, weight_view);
    if (v < 0)
        return g_fail(m, "no parameter '%s' to tie %s to", weight_view, name);
    op *o = new_op(m, OP_LINEAR, name, x, -1);
    if (!o)
        return 0;
    o->C = last_dim(m, x);
    o->OC = m->ps.views[v].shape[0];
    o->rows = (int)(m->t[x].numel / o->C);
    o->wv = v;
    if (m->ps.views[v].shape[1] != o->C)
        return g_fail(m, "%s: tied weight %s has %d columns, the input %d", name, weight_view,
                      m->ps.views[v].shape[1], o->C);
    o->out = like_with_last(m, x, o->OC);
    return o->out;
}

int g_conv(model *m, const char *name, int x, int OC, int K, int stride, int pad, int bias)
{
    op *o = new_op(m, OP_CONV, name, x, -1);
    if (!o)
        return 0;
    tensor *t = &m->t[x];
    if (t->ndim != 3)
        return g_fail(m, "%s: a convolution needs a (C,H,W) input", name);
    conv_shape_init(&o->cs, t->dims[0], t->dims[1], t->dims[2], OC, K, stride, pad);
    int shape[4] = {OC, o->cs.C, K, K};
    add_weight_bias(m, o, 4, shape, o->cs.C * K * K, OC * K * K, bias);
    o->scratch = conv2d_scratch_floats(&o->cs);
    o->out = new_tensor(m, 3, OC, o->cs.OH, o->cs.OW);
    return o->out;
}

int g_bn(model *m, const char *name, int x)
{
    op *o = new_op(m, OP_BN, name, x, -1);
    if (!o)
        return 0;
    o->C = m->t[x].dims[0];
    o->rows = (int)(m->t[x].numel / o->C); /* HW */
    o->eps = 1e-5f;
    o->p = 0.1f; /* momentum of the running statistics */
    add_norm(m, o, o->C);
    o->saved_fixed = 4L * o->C; /* mean, rstd, running mean, running var */
    o->out = like(m, x);
    return o->out;
}

int g_bn_relu(model *m, const char *name, int x)
{
    int y = g_bn(m, name, x);
    if (!m->bad)
        m->ops[m->nops - 1].relu = 1;
    return y;
}

/* LayerNorm (scale and shift; mean and rstd kept) or RMSNorm (scale; rstd kept) */
static int norm_op(model *m, int type, const char *name, int x, float eps)
{
    op *o = new_op(m, type, name, x, -1);
    if (!o)
        return 0;
    o->C = last_dim(m, x);
    o->rows = (int)(m->t[x].numel / o->C);
    o->eps = eps;
    if (type == OP_LN)
        add_norm(m, o, o->C);
    else
        add_param(m, o, "weight", 1, &o->C, 1, IK_ONE, 0);
    o->saved_ps = (type == OP_LN ? 2L : 1L) * o->rows;
    o->out = like(m, x);
    return o->out;
}

int g_layernorm(model *m, const char *name, int x, float eps)
{
    return norm_op(m, OP_LN, name, x, eps);
}

int g_rmsnorm(model *m, const char *name, int x, float eps)
{
    return norm_op(m, OP_RMSNORM, name, x, eps);
}

static int elementwise(model *m, int type, const char *name, int x)
{
    op *o = new_op(m, type, name, x, -1);
    if (!o)
        return 0;
    o->out = like(m, x);
    return o->out;
}

int g_relu(model *m, const char *name, int x)
{
    return elementwise(m, OP_RELU, name, x);
}

int g_gelu(model *m, const char *name, int x)
{
    return elementwise(m, OP_GELU, name, x);
}

int g_tanh(model *m, const char *name, int x)
{
    return elementwise(m, OP_TANH, name, x);
}

int g_dropout(model *m, const char *name, int x, float p)
{
    if (p <= 0.0f)
        return x;
    int y = elementwise(m, OP_DROPOUT, name, x);
    if (m->bad)
        return 0;
    op *o = &m->ops[m->nops - 1];
    o->p = p;
    o->saved_ps = m->t[x].numel;
    return y;
}

int g_maxpool(model *m, const char *name, int x, int K, int stride, int pad)
{
    op *o = new_op(m, OP_MAXPOOL, name, x, -1);
    if (!o)
        return 0;
    tensor *t = &m->t[x];
    if (t->ndim != 3)
        return g_fail(m, "%s: pooling needs a (C,H,W) input", name);
    pool_shape_init(&o->pl, t->dims[0], t->dims[1], t->dims[2], K, stride, pad);
    o->out = new_tensor(m, 3, o->pl.C, o->pl.OH, o->pl.OW);
    o->isaved_ps = m->t[o->out].numel; /* the argmax of every output */
    return o->out;
}

int g_gap(model *m, const char *name, int x)
{
    op *o = new_op(m, OP_GAP, name, x, -1);
    if (!o)
        return 0;
    o->C = m->t[x].dims[0];
    o->rows = (int)(m->t[x].numel / o->C);
    o->out = new_tensor(m, 1, o->C, 0, 0);
    return o->out;
}

/* an elementwise layer of two inputs of one size (residual add, SwiGLU's gate) */
static int binary(model *m, int type, const char *name, int a, int b)
{
    if (m->bad)
        return 0;
    if (m->t[a].numel != m->t[b].numel)
        return g_fail(m, "%s: inputs of %ld and %ld elements (they must match)", name,
                      m->t[a].numel, m->t[b].numel);
    op *o = new_op(m, type, name, a, b);
    if (!o)
        return 0;
    o->out = like(m, a);
    return o->out;
}

int g_add(model *m, const char *name, int a, int b)
{
    return binary(m, OP_ADD, name, a, b);
}

int g_add_relu(model *m, const char *name, int a, int b)
{
    int y = g_add(m, name, a, b);
    if (!m->bad)
        m->ops[m->nops - 1].relu = 1;
    return y;
}

int g_flatten(model *m, const char *name, int x)
{
    op *o = new_op(m, OP_FLATTEN, name, x, -1);
    if (!o)
        return 0;
    o->out = new_tensor(m, 1, (int)m->t[x].numel, 0, 0);
    return o->out;
}

/* token, position (maxpos rows, unless pos is NULL) and segment embeddings */
static int embed_op(model *m, const char *name, int T, int vocab, int maxpos, int ntypes, int C,
                    const char *tok, const char *pos, const char *types)
{
    op *o = new_op(m, OP_EMBED, name, -1, -1);
    if (!o)
        return 0;
    if (pos && T > maxpos)
        return g_fail(m, "%s: %d tokens per sequence, but only %d positions", name, T, maxpos);
    o->T = T;
    o->V = vocab;
    o->C = C;
    o->ntypes = ntypes;
    o->haspos = pos != NULL;
    int s1[2] = {vocab, C}, s2[2] = {maxpos, C}, s3[2] = {ntypes, C};
    int ik = m->style == INIT_NORMAL_002 ? IK_NORMAL : IK_UNIFORM;
    float iv = m->style == INIT_NORMAL_002 ? 0.02f : 1.0f;
    o->wv = add_param(m, o, tok, 2, s1, 0, ik, iv);
    m->ps.views[o->wv].is_embedding_table = 1;
    if (pos)
        add_param(m, o, pos, 2, s2, 0, ik, iv);
    if (ntypes > 0)
        add_param(m, o, types, 2, s3, 0, ik, iv);
    m->in.seq_len = T;
    m->in.vocab = vocab;
    o->out = new_tensor(m, 2, T, C, 0);
    return o->out;
}

int g_embed(model *m, const char *name, int T, int vocab, int maxpos, int ntypes, int C)
{
    return embed_op(m, name, T, vocab, maxpos, ntypes, C, "word_embeddings.weight",
                    "position_embeddings.weight", "token_type_embeddings.weight");
}

int g_embed_tokens(model *m, const char *name, int T, int vocab, int C, const char *tok,
                   const char *pos)
{
    int x = embed_op(m, name, T, vocab, T, 0, C, tok, pos, NULL);
    m->in.next_token = 1;
    return x;
}

int g_rope(model *m, const char *name, int x, int nrot, int hs, float theta)
{
    if (m->bad)
        return 0;
    if (hs % 2 || hs > ROPE_MAX_HEAD_DIM || (long)nrot * hs > last_dim(m, x))
        return g_fail(m, "%s: rotary embeddings need an even head size up to %d and %d heads "
                         "of %d within the row of %d", name, ROPE_MAX_HEAD_DIM, nrot, hs,
                      last_dim(m, x));
    op *o = new_op(m, OP_ROPE, name, x, -1);
    if (!o)
        return 0;
    o->T = m->t[x].dims[0];
    o->C = last_dim(m, x);
    o->NH = nrot;
    o->HS = hs;
    o->theta = theta;
    o->out = like(m, x);
    return o->out;
}

int g_causal_attention(model *m, const char *name, int qkv, int NH, int KV, int hs)
{
    if (m->bad)
        return 0;
    tensor *t = &m->t[qkv];
    if (t->ndim != 2 || KV < 1 || NH % KV || t->dims[1] != (NH + 2 * KV) * hs)
        return g_fail(m, "%s: causal attention needs a (T, (heads + 2 kv_heads) head_dim) input "
                         "with kv_heads dividing heads (%d heads, %d kv heads of %d)",
                      name, NH, KV, hs);
    op *o = new_op(m, OP_CATTN, name, qkv, -1);
    if (!o)
        return 0;
    o->T = t->dims[0];
    o->NH = NH;
    o->KV = KV;
    o->HS = hs;
    o->C = NH * hs;
    o->saved_ps = (long)NH * o->T * o->T;
    o->scratch = (long)o->T * o->T;
    o->out = new_tensor(m, 2, o->T, o->C, 0);
    return o->out;
}

int g_swiglu(model *m, const char *name, int gate, int up)
{
    return binary(m, OP_SWIGLU, name, gate, up);
}

int g_moe(model *m, const char *name, int x, int E, int K, int F, float aux_coef)
{
    if (K < 1 || K > E || K > MOE_MAX_TOP_K)
        return g_fail(m, "%s: top-k %d of %d experts (k from 1 to min(experts, %d))", name, K, E,
                      MOE_MAX_TOP_K);
    op *o = new_op(m, OP_MOE, name, x, -1);
    if (!o)
        return 0;
    int C = last_dim(m, x), T = (int)(m->t[x].numel / C);
    o->T = T;
    o->C = C;
    o->E = E;
    o->topk = K;
    o->FF = F;
    o->p = aux_coef;
    int sr[2] = {E, C}, s1[3] = {E, F, C}, s2[3] = {E, C, F};
    float bound = 1.0f / sqrtf((float)C);
    int ik = m->style == INIT_NORMAL_002 ? IK_NORMAL : IK_UNIFORM;
    float iv = m->style == INIT_NORMAL_002 ? 0.02f : bound;
    o->wv = add_param(m, o, "gate.weight", 2, sr, 0, ik, iv);
    add_param(m, o, "experts.w1", 3, s1, 0, ik, iv);
    add_param(m, o, "experts.w3", 3, s1, 0, ik, iv);
    add_param(m, o, "experts.w2", 3, s2, 0, ik, iv);
    moe_shape s = {T, C, E, K, F, aux_coef};
    o->saved_ps = moe_saved_floats(&s);
    o->isaved_ps = moe_saved_ints(&s) - (E + 1);
    o->isaved_fixed = E + 1;
    o->scratch_ps = moe_scratch_floats(&s);
    o->out = like(m, x);
    return o->out;
}

void g_tag(model *m, const char *kind, const char *split)
{
    if (m->bad)
        return;
    m->ops[m->nops - 1].kind = kind;
    m->ops[m->nops - 1].split = split;
}

int g_attention(model *m, const char *name, int qkv, int NH)
{
    op *o = new_op(m, OP_ATTN, name, qkv, -1);
    if (!o)
        return 0;
    tensor *t = &m->t[qkv];
    o->T = t->dims[0];
    o->C = t->dims[1] / 3;
    o->NH = NH;
    if (t->ndim != 2 || o->C * 3 != t->dims[1] || o->C % NH)
        return g_fail(m, "%s: attention needs a (T, 3C) input with C divisible by %d heads",
                      name, NH);
    o->saved_ps = (long)NH * o->T * o->T;
    o->scratch = (long)o->T * o->T;
    o->out = new_tensor(m, 2, o->T, o->C, 0);
    return o->out;
}

int g_embbag(model *m, const char *name, int F, const long *rows, const int *bags, int D,
             int mode)
{
    op *o = new_op(m, OP_EMBBAG, name, -1, -1);
    if (!o)
        return 0;
    if (F > MODEL_MAX_TABLES)
        return g_fail(m, "%s: %d tables (at most %d)", name, F, MODEL_MAX_TABLES);
    o->F = F;
    o->D = D;
    o->mode = mode;
    for (int f = 0; f < F; f++) {
        m->table_bags[f] = bags[f];
        o->L += bags[f]; /* ids per sample, all tables */
        char suffix[48];
        snprintf(suffix, sizeof suffix, "%d.weight", f);
        int shape[2] = {(int)rows[f], D};
        /* the DLRM reference initialises tables uniform(+-1/sqrt(rows)) */
        int v = add_param(m, o, suffix, 2, shape, 0, IK_UNIFORM, 1.0f / sqrtf((float)rows[f]));
        if (v >= 0)
            m->ps.views[v].is_embedding_table = 1;
        m->table_rows[f] = rows[f];
    }
    m->in.ntables = F;
    m->in.ids_per_sample = o->L;
    m->in.bags = m->table_bags;
    m->in.table_rows = m->table_rows;
    o->out = new_tensor(m, 2, F, D, 0);
    return o->out;
}

int g_interaction(model *m, const char *name, int dense, int emb)
{
    op *o = new_op(m, OP_INTERACT, name, dense, emb);
    if (!o)
        return 0;
    o->D = (int)m->t[dense].numel;
    o->F = m->t[emb].dims[0];
    if (m->t[emb].ndim != 2 || m->t[emb].dims[1] != o->D)
        return g_fail(m, "%s: embeddings must be (F, %d)", name, o->D);
    o->out = new_tensor(m, 1, o->D + (o->F + 1) * o->F / 2, 0, 0);
    return o->out;
}

int g_concat(model *m, const char *name, int a, int b)
{
    op *o = new_op(m, OP_CONCAT, name, a, b);
    if (!o)
        return 0;
    o->C = (int)m->t[a].numel;
    o->OC = (int)m->t[b].numel;
    o->out = new_tensor(m, 1, o->C + o->OC, 0, 0);
    return o->out;
}

int g_cross(model *m, const char *name, int x0, int xl, int R)
{
    if (m->t[x0].ndim != 1 || m->t[x0].numel != m->t[xl].numel)
        return g_fail(m, "%s: a cross layer needs two vectors of one width (got %ld and %ld)",
                      name, m->t[x0].numel, m->t[xl].numel);
    op *o = new_op(m, OP_CROSS, name, x0, xl);
    if (!o)
        return 0;
    int N = (int)m->t[x0].numel;
    o->C = N;
    o->R = R;
    /* torchrec: V (R,N) and W (N,R) xavier_normal, i.e. normal(0, sqrt(2 / (N + R))); bias 0 */
    float std = sqrtf(2.0f / (float)(N + R));
    int sv[2] = {R, N}, sw[2] = {N, R};
    add_param(m, o, "V_kernel", 2, sv, 0, IK_NORMAL, std);
    add_param(m, o, "W_kernel", 2, sw, 0, IK_NORMAL, std);
    add_param(m, o, "bias", 1, &N, 1, IK_ZERO, 0);
    o->saved_ps = (long)R + N; /* v = V xl and u = W v + b */
    o->scratch_ps = (long)N + R; /* their gradients, during backward only */
    o->out = new_tensor(m, 1, N, 0, 0);
    return o->out;
}

int g_slice0(model *m, const char *name, int x)
{
    op *o = new_op(m, OP_SLICE0, name, x, -1);
    if (!o)
        return 0;
    o->T = m->t[x].dims[0];
    o->C = m->t[x].dims[1];
    o->out = new_tensor(m, 1, o->C, 0, 0);
    return o->out;
}

int g_gather(model *m, const char *name, int x, int P)
{
    op *o = new_op(m, OP_GATHER, name, x, -1);
    if (!o)
        return 0;
    o->T = m->t[x].dims[0];
    o->C = m->t[x].dims[1];
    o->P = P;
    m->in.npred = P;
    o->out = new_tensor(m, 2, P, o->C, 0);
    return o->out;
}

int g_vitembed(model *m, const char *name, int x)
{
    op *o = new_op(m, OP_VITEMBED, name, x, -1);
    if (!o)
        return 0;
    o->C = m->t[x].dims[0];
    o->T = (int)(m->t[x].numel / o->C); /* patches */
    int s1[3] = {1, 1, o->C}, s2[3] = {1, o->T + 1, o->C};
    add_param(m, o, "class_token", 3, s1, 0, IK_ZERO, 0);
    add_param(m, o, "pos_embedding", 3, s2, 0, IK_NORMAL, 0.02f);
    o->out = new_tensor(m, 2, o->T + 1, o->C, 0);
    return o->out;
}

void g_softmax_ce(model *m, const char *name, int logits, float smoothing)
{
    op *o = new_op(m, OP_SOFTMAX_CE, name, logits, -1);
    if (!o)
        return;
    o->V = last_dim(m, logits);
    o->rows = (int)(m->t[logits].numel / o->V);
    o->p = smoothing;
    o->saved_ps = m->t[logits].numel;
    m->in.labels_per_sample = o->rows;
    m->in.classes = o->V;
    m->loss_op = m->nops - 1;
}

void g_bce(model *m, const char *name, int logits)
{
    op *o = new_op(m, OP_BCE, name, logits, -1);
    if (!o)
        return;
    if (m->t[logits].numel != 1)
        g_fail(m, "%s: binary cross-entropy needs one logit per sample", name);
    m->loss_op = m->nops - 1;
}
