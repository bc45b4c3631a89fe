/* model.c: the layer sequence, its memory plan, and forward/backward over it.
 * A tensor with several consumers (a residual stream) gets its gradient from
 * the first consumer in backward order directly; later consumers write into
 * an accumulation buffer that is then added, so kernels only ever overwrite. */
#include <cblas.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/graph.h"
#include "trainer/layers.h"
#include "trainer/model.h"
#include "trainer/rng.h"

enum {
    OP_LINEAR, OP_CONV, OP_BN, OP_LN, OP_RELU, OP_GELU, OP_TANH, OP_DROPOUT, OP_MAXPOOL,
    OP_AVGPOOL, OP_GAP, OP_ADD, OP_FLATTEN, OP_EMBED, OP_ATTN, OP_EMBBAG, OP_INTERACT,
    OP_SLICE0, OP_GATHER, OP_VITEMBED, OP_SOFTMAX_CE, OP_BCE, OP_COUNT
};

static const char *const OP_CLASS[OP_COUNT] = {
    "gemm", "conv", "norm", "norm", "elementwise", "elementwise", "elementwise",
    "elementwise", "pool", "pool", "pool", "elementwise", "elementwise", "embedding",
    "attention", "embedding", "gemm", "elementwise", "elementwise", "embedding", "loss", "loss",
};

typedef struct tensor {
    int ndim, dims[3];
    long numel;      /* per sample */
    int depends;     /* computed from parameters: a gradient can flow into it */
    int needs_grad;  /* some layer's backward writes its gradient */
    float *data, *grad;
} tensor;

typedef struct op {
    int type;
    char name[64];
    int in[2], nin, out; /* out is -1 for the loss */
    int pv, npv;         /* parameter views this layer owns */
    int wv;              /* weight view it reads (own or tied), -1 when none */
    int acc[2];          /* input i's gradient is added to another consumer's */
    conv_shape cs;
    pool_shape pl;
    int rows, C, OC, T, NH, F, D, L, mode, P, V, ntypes;
    int relu;            /* linear, batchnorm: relu fused into the output pass */
    float eps, p;
    long saved_ps, isaved_ps, saved_fixed, scratch;
    float *saved;
    int *isaved;
    model_layer info;
} op;

struct model {
    char name[32];
    param_set ps;
    int *init_kind;  /* per view */
    float *init_val;
    int cap_init;
    int style;
    tensor *t;
    int nt, cap_t;
    op *ops;
    int nops, cap_ops;
    int loss_op, x_tensor, finalised;
    model_inputs in;
    long table_rows[MODEL_MAX_TABLES];
    int batch, training;
    uint64_t seed, step;
    float loss;
    float *arena, *scratch, *accbuf[2];
    int *iarena;
    int bad;
    char err[512];
};

enum { IK_ZERO, IK_ONE, IK_UNIFORM, IK_NORMAL };

/* ---------- building ---------- */

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

static int last_dim(const model *m, int t)
{
    return m->t[t].dims[m->t[t].ndim - 1];
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

int g_layernorm(model *m, const char *name, int x, float eps)
{
    op *o = new_op(m, OP_LN, name, x, -1);
    if (!o)
        return 0;
    o->C = last_dim(m, x);
    o->rows = (int)(m->t[x].numel / o->C);
    o->eps = eps;
    add_norm(m, o, o->C);
    o->saved_ps = 2L * o->rows;
    o->out = like(m, x);
    return o->out;
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

static int pool(model *m, int type, const char *name, int x, int K, int stride, int pad)
{
    op *o = new_op(m, type, name, x, -1);
    if (!o)
        return 0;
    tensor *t = &m->t[x];
    if (t->ndim != 3)
        return g_fail(m, "%s: pooling needs a (C,H,W) input", name);
    pool_shape_init(&o->pl, t->dims[0], t->dims[1], t->dims[2], K, stride, pad);
    o->out = new_tensor(m, 3, o->pl.C, o->pl.OH, o->pl.OW);
    if (type == OP_MAXPOOL)
        o->isaved_ps = m->t[o->out].numel;
    return o->out;
}

int g_maxpool(model *m, const char *name, int x, int K, int stride, int pad)
{
    return pool(m, OP_MAXPOOL, name, x, K, stride, pad);
}

int g_avgpool(model *m, const char *name, int x, int K, int stride, int pad)
{
    return pool(m, OP_AVGPOOL, name, x, K, stride, pad);
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

int g_add(model *m, const char *name, int a, int b)
{
    if (m->t[a].numel != m->t[b].numel)
        return g_fail(m, "%s: adding tensors of %ld and %ld elements", name, m->t[a].numel,
                      m->t[b].numel);
    op *o = new_op(m, OP_ADD, name, a, b);
    if (!o)
        return 0;
    o->out = like(m, a);
    return o->out;
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

int g_embed(model *m, const char *name, int T, int vocab, int maxpos, int ntypes, int C)
{
    op *o = new_op(m, OP_EMBED, name, -1, -1);
    if (!o)
        return 0;
    if (T > maxpos)
        return g_fail(m, "%s: %d tokens per sequence, but only %d positions", name, T, maxpos);
    o->T = T;
    o->V = vocab;
    o->C = C;
    o->ntypes = ntypes;
    int s1[2] = {vocab, C}, s2[2] = {maxpos, C}, s3[2] = {ntypes, C};
    int ik = m->style == INIT_NORMAL_002 ? IK_NORMAL : IK_UNIFORM;
    float iv = m->style == INIT_NORMAL_002 ? 0.02f : 1.0f;
    o->wv = add_param(m, o, "word_embeddings.weight", 2, s1, 0, ik, iv);
    m->ps.views[o->wv].is_embedding_table = 1;
    add_param(m, o, "position_embeddings.weight", 2, s2, 0, ik, iv);
    if (ntypes > 0)
        add_param(m, o, "token_type_embeddings.weight", 2, s3, 0, ik, iv);
    m->in.seq_len = T;
    m->in.vocab = vocab;
    o->out = new_tensor(m, 2, T, C, 0);
    return o->out;
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

int g_embbag(model *m, const char *name, int F, const long *rows, int D, int bag, int mode)
{
    op *o = new_op(m, OP_EMBBAG, name, -1, -1);
    if (!o)
        return 0;
    if (F > MODEL_MAX_TABLES)
        return g_fail(m, "%s: %d tables (at most %d)", name, F, MODEL_MAX_TABLES);
    o->F = F;
    o->D = D;
    o->L = bag;
    o->mode = mode;
    for (int f = 0; f < F; f++) {
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
    m->in.bag = bag;
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

/* ---------- costs and the backward plan ---------- */

static double view_numel(const model *m, int v)
{
    return v < 0 ? 0 : (double)m->ps.views[v].numel;
}

/* FLOPs (a multiply-add is 2) and elements moved, per sample; elementwise
 * FLOPs per element: relu 1, gelu 8 (backward 12), tanh 4, dropout 1, add 1,
 * batchnorm/layernorm 5 forward and 8 backward, softmax 4 forward, 2 backward. */
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
    case OP_MAXPOOL: case OP_AVGPOOL: f = out * o->pl.K * o->pl.K; b = out * o->pl.K * o->pl.K; break;
    case OP_GAP: f = in; b = in; break;
    case OP_EMBED: f = 2.0 * o->T * o->C; b = 3.0 * o->T * o->C; break;
    case OP_ATTN: {
        double tt = (double)o->T * o->T;
        f = 4.0 * tt * o->C + 5.0 * o->NH * tt;
        b = 8.0 * tt * o->C + 4.0 * o->NH * tt;
        break;
    }
    case OP_EMBBAG: f = (double)o->F * o->L * o->D; b = f; break;
    case OP_INTERACT: {
        double pairs = (o->F + 1.0) * o->F / 2;
        f = 2 * pairs * o->D;
        b = 4 * pairs * o->D;
        break;
    }
    case OP_SOFTMAX_CE: f = 4 * in; b = 2 * in; break;
    case OP_BCE: f = 4 * in; b = 4 * in; break;
    default: break; /* flatten, slice, gather, vitembed: data movement only */
    }
    L->fwd_flops = f;
    L->bwd_flops = L->backward ? b : 0;
    L->fwd_elems = in + out + (double)o->saved_ps;
    L->fwd_elems_fixed = w;
    if (o->type == OP_EMBED || o->type == OP_EMBBAG) {
        /* only the rows looked up move: per sample, not the whole table */
        double rows = o->type == OP_EMBED ? (o->ntypes ? 3.0 : 2.0) * o->T : (double)o->F * o->L;
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
    L->lookups = o->type == OP_EMBBAG ? (double)o->F * o->L : o->type == OP_EMBED ? o->T : 0;
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
        o->info.cls = OP_CLASS[o->type];
        o->info.first_view = o->pv;
        o->info.nviews = o->npv;
    }
    m->finalised = 1;
}

/* ---------- the zoo entry points ---------- */

void model_opts_default(model_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
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
        ni += B * (size_t)o->isaved_ps;
        scratch = (size_t)o->scratch > scratch ? (size_t)o->scratch : scratch;
        for (int k = 0; k < o->nin; k++)
            if (o->acc[k] && B * (size_t)m->t[o->in[k]].numel > acc)
                acc = B * (size_t)m->t[o->in[k]].numel;
    }
    model_inputs *in = &m->in;
    size_t T = (size_t)in->seq_len;
    nf += scratch + 2 * acc + B; /* + click targets */
    ni += B * (2 * T + 1 + (size_t)in->npred + (size_t)in->ntables * in->bag +
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
        ip += B * o->isaved_ps;
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
    ip += B * in->ntables * in->bag;
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

float model_forward(model *m)
{
    int B = m->in.batch;
    if (B < 1 || B > m->batch)
        return NAN; /* inputs.batch must stay within what model_alloc sized */
    if (m->training)
        m->step++;
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
        case OP_AVGPOOL: avgpool_forward(y, x, &o->pl, B); break;
        case OP_GAP: gap_forward(y, x, B, o->C, o->rows); break;
        case OP_ADD: (o->relu ? add_relu_forward : add_forward)(y, x, x1, n); break;
        case OP_FLATTEN: memcpy(y, x, (size_t)n * sizeof(float)); break;
        case OP_EMBED:
            embed_forward(y, m->in.tokens, o->ntypes ? m->in.segments : NULL, P(m, o->pv),
                          P(m, o->pv + 1), o->ntypes ? P(m, o->pv + 2) : NULL, B, o->T, o->C);
            break;
        case OP_ATTN:
            attention_forward(y, o->saved, x, m->in.lengths, B, o->T, o->C, o->NH);
            break;
        case OP_EMBBAG:
            for (int f = 0; f < o->F; f++)
                embbag_forward(y + (long)f * o->D, (long)o->F * o->D, P(m, o->pv + f),
                               m->in.sparse + (long)f * o->L, (long)o->F * o->L, B, o->L, o->D,
                               o->mode);
            break;
        case OP_INTERACT: interaction_forward(y, x, x1, B, o->F, o->D); break;
        case OP_SLICE0: slice0_forward(y, x, B, o->T, o->C); break;
        case OP_GATHER: gather_forward(y, x, m->in.positions, B, o->T, o->P, o->C); break;
        case OP_VITEMBED:
            vitembed_forward(y, x, P(m, o->pv), P(m, o->pv + 1), B, o->T, o->C);
            break;
        case OP_SOFTMAX_CE:
            m->loss = softmax_ce_forward(o->saved, x, m->in.labels, B * o->rows, o->V, o->p);
            break;
        case OP_BCE: m->loss = bce_forward(x, m->in.targets, B); break;
        default: break;
        }
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
        case OP_AVGPOOL: avgpool_backward(d[0], dy, &o->pl, B); break;
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
            embed_backward(G(m, o->pv), G(m, o->pv + 1), o->ntypes ? G(m, o->pv + 2) : NULL, dy,
                           m->in.tokens, o->ntypes ? m->in.segments : NULL, B, o->T, o->C);
            break;
        case OP_ATTN:
            attention_backward(d[0], m->scratch, dy, x, o->saved, B, o->T, o->C, o->NH);
            break;
        case OP_EMBBAG:
            for (int f = 0; f < o->F; f++)
                embbag_backward(G(m, o->pv + f), dy + (long)f * o->D, (long)o->F * o->D,
                                m->in.sparse + (long)f * o->L, (long)o->F * o->L, B, o->L,
                                o->D, o->mode);
            break;
        case OP_INTERACT:
            interaction_backward(d[0], d[1], dy, x, x1, B, o->F, o->D);
            break;
        case OP_SLICE0: slice0_backward(d[0], dy, B, o->T, o->C); break;
        case OP_GATHER: gather_backward(d[0], dy, m->in.positions, B, o->T, o->P, o->C); break;
        case OP_VITEMBED:
            vitembed_backward(d[0], G(m, o->pv), G(m, o->pv + 1), dy, B, o->T, o->C);
            break;
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

void model_sgd_step(model *m, float lr)
{
    cblas_saxpy((int)m->ps.numel, -lr, m->ps.grads, 1, m->ps.params, 1);
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
