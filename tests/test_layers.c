/* Finite-difference gradient checks of every layer's backward kernel.
 * Each check perturbs inputs and parameters by +-h (h = 1e-2 or 1e-3), takes
 * the central difference of L = sum(out * R) (R fixed random weights,
 * accumulated in double) and requires the analytic gradient g and the
 * numeric one n to agree: ||g - n|| / max(||g||, ||n||) < 2e-2 per tensor
 * (float32 forward passes bound what is achievable; a wrong term gives O(1)). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"
#include "trainer/layers.h"
#include "trainer/rng.h"

#define TOL 2e-2

typedef struct gc gc;
struct gc {
    float *out;
    long nout;
    float *r;  /* weights of the outputs in L */
    struct {
        const char *name;
        float *x, *dx;
        long n;
    } v[6];
    int nv;
    void (*fwd)(gc *);
    void (*bwd)(gc *); /* reads g->r as dout */
    float h;
    int scalar;        /* out is the loss itself */
    /* layer state, used by the callbacks */
    int B, C, H, W, T, NH, F, D, L, mode, P, OC, train;
    conv_shape cs;
    pool_shape ps;
    float *s1, *s2, *s3, *s4;
    int *ids, *ids2, *lens;
};

static float *rnd(long n, uint64_t key, float scale)
{
    float *p = malloc((size_t)n * sizeof(float));
    rng r = rng_at(42, key);
    for (long i = 0; i < n; i++)
        p[i] = scale * (2.0f * rng_uniform(&r) - 1.0f);
    return p;
}

static float *zeros(long n)
{
    return calloc((size_t)n, sizeof(float));
}

static double objective(gc *g)
{
    g->fwd(g);
    if (g->scalar)
        return g->out[0];
    double s = 0;
    for (long i = 0; i < g->nout; i++)
        s += (double)g->out[i] * g->r[i];
    return s;
}

static void add_var(gc *g, const char *name, float *x, long n)
{
    g->v[g->nv].name = name;
    g->v[g->nv].x = x;
    g->v[g->nv].dx = zeros(n);
    g->v[g->nv].n = n;
    g->nv++;
}

/* Runs the check on every variable (at most 300 elements each, spread evenly). */
static void run_check(gc *g, const char *layer)
{
    if (!g->h)
        g->h = 1e-2f;
    g->r = rnd(g->nout, 7, 1.0f);
    g->fwd(g);
    for (int k = 0; k < g->nv; k++)
        memset(g->v[k].dx, 0, (size_t)g->v[k].n * sizeof(float));
    g->bwd(g);
    for (int k = 0; k < g->nv; k++) {
        long n = g->v[k].n, step = n > 300 ? n / 300 : 1;
        double diff = 0, na = 0, nn = 0;
        for (long i = 0; i < n; i += step) {
            float *x = &g->v[k].x[i], keep = *x;
            *x = keep + g->h;
            double lp = objective(g);
            *x = keep - g->h;
            double lm = objective(g);
            *x = keep;
            double num = (lp - lm) / (2.0 * g->h), an = g->v[k].dx[i];
            diff += (num - an) * (num - an);
            na += an * an;
            nn += num * num;
        }
        double rel = sqrt(diff) / fmax(fmax(sqrt(na), sqrt(nn)), 1e-12);
        ck_assert_msg(na > 0 || nn == 0, "%s: %s gradient is all zero", layer, g->v[k].name);
        ck_assert_msg(rel < TOL, "%s: d%s relative error %.3g (|g| %.3g, |num| %.3g)", layer,
                      g->v[k].name, rel, sqrt(na), sqrt(nn));
    }
    for (int k = 0; k < g->nv; k++)
        free(g->v[k].dx);
    free(g->r);
}

/* ---- linear ---- */
static void lin_f(gc *g)
{
    linear_forward(g->out, g->v[0].x, g->v[1].x, g->v[2].x, g->B, g->C, g->OC);
}
static void lin_b(gc *g)
{
    linear_backward(g->v[0].dx, g->v[1].dx, g->v[2].dx, g->r, g->v[0].x, g->v[1].x, g->B, g->C,
                    g->OC);
}
START_TEST(grad_linear)
{
    gc g = {.B = 5, .C = 7, .OC = 4, .fwd = lin_f, .bwd = lin_b};
    add_var(&g, "inp", rnd(35, 1, 1), 35);
    add_var(&g, "weight", rnd(28, 2, 0.5f), 28);
    add_var(&g, "bias", rnd(4, 3, 0.5f), 4);
    g.nout = 20;
    g.out = zeros(20);
    run_check(&g, "linear");
    for (int k = 0; k < 3; k++)
        free(g.v[k].x);
    free(g.out);
}
END_TEST

static void linrelu_f(gc *g)
{
    linear_relu_forward(g->out, g->v[0].x, g->v[1].x, g->v[2].x, g->B, g->C, g->OC);
}
static void linrelu_b(gc *g)
{
    float *d = malloc((size_t)g->nout * sizeof(float)); /* the kernel overwrites dout */
    memcpy(d, g->r, (size_t)g->nout * sizeof(float));
    linear_relu_backward(g->v[0].dx, g->v[1].dx, g->v[2].dx, d, g->out, g->v[0].x, g->v[1].x,
                         g->B, g->C, g->OC);
    free(d);
}
START_TEST(grad_linear_relu)
{
    gc g = {.B = 6, .C = 5, .OC = 7, .fwd = linrelu_f, .bwd = linrelu_b, .h = 1e-3f};
    add_var(&g, "inp", rnd(30, 1, 1), 30);
    add_var(&g, "weight", rnd(35, 2, 0.5f), 35);
    add_var(&g, "bias", rnd(7, 3, 0.5f), 7);
    g.nout = 42;
    g.out = zeros(42);
    run_check(&g, "linear+relu");
    linrelu_f(&g);
    int zeros_seen = 0;
    for (int i = 0; i < 42; i++)
        zeros_seen += g.out[i] == 0.0f;
    ck_assert_int_gt(zeros_seen, 0); /* the relu is exercised */
    for (int k = 0; k < 3; k++)
        free(g.v[k].x);
    free(g.out);
}
END_TEST

/* ---- conv2d ---- */
static void conv_f(gc *g)
{
    conv2d_forward(g->out, g->v[0].x, g->v[1].x, g->nv > 2 ? g->v[2].x : NULL, g->s1, &g->cs,
                   g->B);
}
static void conv_b(gc *g)
{
    conv2d_backward(g->v[0].dx, g->v[1].dx, g->nv > 2 ? g->v[2].dx : NULL, g->r, g->v[0].x,
                    g->v[1].x, g->s1, &g->cs, g->B);
}
static void check_conv(int C, int HW, int OC, int K, int stride, int pad, int bias)
{
    gc g = {.B = 2, .fwd = conv_f, .bwd = conv_b};
    conv_shape_init(&g.cs, C, HW, HW, OC, K, stride, pad);
    long nin = 2L * C * HW * HW, nw = (long)OC * C * K * K;
    add_var(&g, "inp", rnd(nin, 1, 1), nin);
    add_var(&g, "weight", rnd(nw, 2, 0.5f), nw);
    if (bias)
        add_var(&g, "bias", rnd(OC, 3, 0.5f), OC);
    g.nout = 2L * OC * g.cs.OH * g.cs.OW;
    g.out = zeros(g.nout);
    g.s1 = zeros(conv2d_scratch_floats(&g.cs) + 1);
    run_check(&g, "conv2d");
    for (int k = 0; k < g.nv; k++)
        free(g.v[k].x);
    free(g.out);
    free(g.s1);
}
START_TEST(grad_conv2d)
{
    check_conv(3, 7, 4, 3, 2, 1, 1); /* stride 2, padding 1 */
    check_conv(2, 6, 3, 3, 1, 0, 0); /* no padding */
    check_conv(4, 5, 3, 1, 1, 0, 0); /* pointwise: the im2col-free path */
    check_conv(3, 8, 2, 1, 2, 0, 0); /* strided 1x1 (ResNet downsample) */
    /* the shapes above batch images into one GEMM; these run one image per GEMM */
    check_conv(2, 34, 3, 3, 1, 1, 1);
    check_conv(3, 33, 2, 1, 1, 0, 1);
}
END_TEST

/* ---- batchnorm ---- */
static void bn_f(gc *g)
{
    batchnorm_forward(g->out, g->s1, g->s2, g->s3, g->s4, g->v[0].x, g->v[1].x, g->v[2].x,
                      g->B, g->C, g->H, g->train, 0.1f, 1e-5f, g->mode);
}
static void bn_b(gc *g)
{
    batchnorm_backward(g->v[0].dx, g->v[1].dx, g->v[2].dx, g->r, g->mode ? g->out : NULL,
                       g->v[0].x, g->v[1].x, g->s1,
                       g->s2, g->B, g->C, g->H, g->train);
}
static void check_bn(int train, int relu)
{
    gc g = {.B = 3, .C = 4, .H = 5, .train = train, .mode = relu, .fwd = bn_f, .bwd = bn_b};
    long n = 60;
    add_var(&g, "inp", rnd(n, 1, 2), n);
    add_var(&g, "gamma", rnd(4, 2, 1), 4);
    add_var(&g, "beta", rnd(4, 3, 1), 4);
    g.s1 = zeros(4);
    g.s2 = zeros(4);
    g.s3 = rnd(4, 4, 0.3f);
    g.s4 = zeros(4);
    for (int i = 0; i < 4; i++)
        g.s4[i] = 0.5f + i;
    g.nout = n;
    g.out = zeros(n);
    g.h = 1e-3f;
    if (train) { /* the running statistics must move toward the batch's */
        float before = g.s3[0];
        bn_f(&g);
        ck_assert(fabsf(g.s3[0] - (0.9f * before + 0.1f * g.s1[0])) < 1e-6f);
    } else {
        g.train = 0;
    }
    run_check(&g, relu ? (train ? "batchnorm+relu(train)" : "batchnorm+relu(eval)")
                       : (train ? "batchnorm(train)" : "batchnorm(eval)"));
    for (int k = 0; k < 3; k++)
        free(g.v[k].x);
    free(g.out);
    free(g.s1);
    free(g.s2);
    free(g.s3);
    free(g.s4);
}
START_TEST(grad_batchnorm)
{
    check_bn(1, 0);
    check_bn(0, 0);
    check_bn(1, 1);
    check_bn(0, 1);
}
END_TEST

/* ---- elementwise ---- */
static void relu_f(gc *g)
{
    relu_forward(g->out, g->v[0].x, g->nout);
}
static void relu_b(gc *g)
{
    relu_backward(g->v[0].dx, g->r, g->out, g->nout);
}
static void gelu_f(gc *g)
{
    gelu_forward(g->out, g->v[0].x, g->nout);
}
static void gelu_b(gc *g)
{
    gelu_backward(g->v[0].dx, g->r, g->v[0].x, g->nout);
}
static void tanh_f(gc *g)
{
    tanh_forward(g->out, g->v[0].x, g->nout);
}
static void tanh_b(gc *g)
{
    tanh_backward(g->v[0].dx, g->r, g->out, g->nout);
}
static void drop_f(gc *g)
{
    dropout_forward(g->out, g->s1, g->v[0].x, g->nout, 0.3f, 99);
}
static void drop_b(gc *g)
{
    dropout_backward(g->v[0].dx, g->r, g->s1, g->nout);
}
static void check_elementwise(const char *name, void (*f)(gc *), void (*b)(gc *))
{
    gc g = {.fwd = f, .bwd = b, .nout = 50, .h = 1e-3f};
    float *x = rnd(50, 1, 2);
    for (int i = 0; i < 50; i++) /* keep away from relu's kink */
        if (fabsf(x[i]) < 0.05f)
            x[i] = 0.1f;
    add_var(&g, "inp", x, 50);
    g.out = zeros(50);
    g.s1 = zeros(50);
    run_check(&g, name);
    free(x);
    free(g.out);
    free(g.s1);
}
START_TEST(grad_elementwise)
{
    check_elementwise("relu", relu_f, relu_b);
    check_elementwise("gelu", gelu_f, gelu_b);
    check_elementwise("tanh", tanh_f, tanh_b);
    check_elementwise("dropout", drop_f, drop_b);
}
END_TEST

/* ---- pooling ---- */
static void maxp_f(gc *g)
{
    maxpool_forward(g->out, g->ids, g->v[0].x, &g->ps, g->B);
}
static void maxp_b(gc *g)
{
    maxpool_backward(g->v[0].dx, g->r, g->ids, &g->ps, g->B);
}
static void gap_f(gc *g)
{
    gap_forward(g->out, g->v[0].x, g->B, g->C, g->H);
}
static void gap_b(gc *g)
{
    gap_backward(g->v[0].dx, g->r, g->B, g->C, g->H);
}
START_TEST(grad_pooling)
{
    for (int kind = 0; kind < 2; kind++) {
        gc g = {.B = 2, .C = 3, .H = 36, .h = 1e-3f};
        pool_shape_init(&g.ps, 3, 6, 6, 3, 2, 1);
        add_var(&g, "inp", rnd(216, 1, 1), 216);
        g.nout = kind == 1 ? 6 : 2L * 3 * g.ps.OH * g.ps.OW;
        g.fwd = kind == 0 ? maxp_f : gap_f;
        g.bwd = kind == 0 ? maxp_b : gap_b;
        g.out = zeros(g.nout);
        g.ids = calloc((size_t)g.nout, sizeof(int));
        run_check(&g, kind == 0 ? "maxpool" : "global avgpool");
        free(g.v[0].x);
        free(g.out);
        free(g.ids);
    }
}
END_TEST

/* ---- layernorm ---- */
static void ln_f(gc *g)
{
    layernorm_forward(g->out, g->s1, g->s2, g->v[0].x, g->v[1].x, g->v[2].x, g->B, g->C, 1e-5f);
}
static void ln_b(gc *g)
{
    layernorm_backward(g->v[0].dx, g->v[1].dx, g->v[2].dx, g->r, g->v[0].x, g->v[1].x, g->s1,
                       g->s2, g->B, g->C);
}
START_TEST(grad_layernorm)
{
    gc g = {.B = 4, .C = 6, .fwd = ln_f, .bwd = ln_b, .nout = 24, .h = 1e-3f};
    add_var(&g, "inp", rnd(24, 1, 2), 24);
    add_var(&g, "gamma", rnd(6, 2, 1), 6);
    add_var(&g, "beta", rnd(6, 3, 1), 6);
    g.out = zeros(24);
    g.s1 = zeros(4);
    g.s2 = zeros(4);
    run_check(&g, "layernorm");
    for (int k = 0; k < 3; k++)
        free(g.v[k].x);
    free(g.out);
    free(g.s1);
    free(g.s2);
}
END_TEST

/* ---- embeddings ---- */
static void emb_f(gc *g)
{
    embed_forward(g->out, g->ids, g->ids2, g->v[0].x, g->v[1].x, g->v[2].x, g->B, g->T, g->C);
}
static void emb_b(gc *g)
{
    embed_backward(g->v[0].dx, g->v[1].dx, g->v[2].dx, g->r, g->ids, g->ids2, g->B, g->T, g->C);
}
START_TEST(grad_embedding)
{
    int tok[6] = {3, 1, 3, 0, 4, 2}, typ[6] = {0, 0, 1, 0, 1, 1};
    gc g = {.B = 2, .T = 3, .C = 4, .fwd = emb_f, .bwd = emb_b, .ids = tok, .ids2 = typ};
    add_var(&g, "wte", rnd(20, 1, 1), 20);
    add_var(&g, "wpe", rnd(16, 2, 1), 16);
    add_var(&g, "wtt", rnd(8, 3, 1), 8);
    g.nout = 24;
    g.out = zeros(24);
    run_check(&g, "token+position embedding");
    for (int k = 0; k < 3; k++)
        free(g.v[k].x);
    free(g.out);
}
END_TEST

static void bag_f(gc *g)
{
    embbag_forward(g->out, g->D, g->v[0].x, g->ids, g->L, g->B, g->L, g->D, g->mode);
}
static void bag_b(gc *g)
{
    embbag_backward(g->v[0].dx, g->r, g->D, g->ids, g->L, g->B, g->L, g->D, g->mode);
}
START_TEST(grad_embbag)
{
    int ids[9] = {0, 4, 4, 2, 5, 1, 3, 3, 3}; /* repeated ids must add up */
    for (int mode = 0; mode < 2; mode++) {
        gc g = {.B = 3, .L = 3, .D = 4, .mode = mode, .ids = ids, .fwd = bag_f, .bwd = bag_b};
        add_var(&g, "table", rnd(32, 1, 1), 32); /* 8 rows, 6 used */
        g.nout = 12;
        g.out = zeros(12);
        run_check(&g, mode ? "embedding bag (mean)" : "embedding bag (sum)");
        /* sparse: backward leaves the unused rows 6 and 7 alone */
        float *dt = zeros(32), *dy = rnd(12, 5, 1);
        for (int i = 0; i < 32; i++)
            dt[i] = 7.0f;
        embbag_backward(dt, dy, 4, ids, 3, 3, 3, 4, mode);
        for (int i = 24; i < 32; i++)
            ck_assert_float_eq(dt[i], 7.0f);
        ck_assert(dt[0] != 7.0f);
        free(dt);
        free(dy);
        free(g.v[0].x);
        free(g.out);
    }
}
END_TEST

/* ---- attention ---- */
static void att_f(gc *g)
{
    attention_forward(g->out, g->s1, g->v[0].x, g->lens, g->B, g->T, g->C, g->NH);
}
static void att_b(gc *g)
{
    attention_backward(g->v[0].dx, g->s2, g->r, g->v[0].x, g->s1, g->B, g->T, g->C, g->NH);
}
START_TEST(grad_attention)
{
    int lens[2] = {5, 3}; /* the second sequence has two padding tokens */
    gc g = {.B = 2, .T = 5, .C = 6, .NH = 2, .lens = lens, .fwd = att_f, .bwd = att_b};
    long n = 2L * 5 * 18;
    add_var(&g, "qkv", rnd(n, 1, 1), n);
    g.nout = 60;
    g.out = zeros(60);
    g.s1 = zeros(2L * 2 * 25);
    g.s2 = zeros(25);
    g.h = 1e-3f;
    run_check(&g, "attention (masked)");
    /* the mask: keys past the length get no probability and no gradient */
    att_f(&g);
    for (int i = 0; i < 5; i++)
        ck_assert_float_eq(g.s1[2 * 25 + i * 5 + 4], 0.0f);
    free(g.v[0].x);
    free(g.out);
    free(g.s1);
    free(g.s2);
}
END_TEST

/* ---- decoder layers ---- */
static void rms_f(gc *g)
{
    rmsnorm_forward(g->out, g->s1, g->v[0].x, g->v[1].x, g->B, g->C, 1e-5f);
}
static void rms_b(gc *g)
{
    rmsnorm_backward(g->v[0].dx, g->v[1].dx, g->r, g->v[0].x, g->v[1].x, g->s1, g->B, g->C);
}
START_TEST(grad_rmsnorm)
{
    gc g = {.B = 4, .C = 6, .fwd = rms_f, .bwd = rms_b, .nout = 24, .h = 1e-3f};
    add_var(&g, "inp", rnd(24, 1, 2), 24);
    add_var(&g, "weight", rnd(6, 2, 1), 6);
    g.out = zeros(24);
    g.s1 = zeros(4);
    run_check(&g, "rmsnorm");
    free(g.v[0].x), free(g.v[1].x), free(g.out), free(g.s1);
}
END_TEST

static void swiglu_f(gc *g)
{
    swiglu_forward(g->out, g->v[0].x, g->v[1].x, g->nout);
}
static void swiglu_b(gc *g)
{
    swiglu_backward(g->v[0].dx, g->v[1].dx, g->r, g->v[0].x, g->v[1].x, g->nout);
}
START_TEST(grad_swiglu)
{
    gc g = {.fwd = swiglu_f, .bwd = swiglu_b, .nout = 40, .h = 1e-3f};
    add_var(&g, "gate", rnd(40, 1, 3), 40);
    add_var(&g, "up", rnd(40, 2, 1), 40);
    g.out = zeros(40);
    run_check(&g, "swiglu");
    /* dup may be dout itself (the MoE backward writes dh3 over da) */
    float *dout = rnd(40, 7, 1), d[40], dg[40], dg2[40], du[40];
    memcpy(d, dout, sizeof d);
    swiglu_backward(dg, d, d, g.v[0].x, g.v[1].x, 40);
    swiglu_backward(dg2, du, dout, g.v[0].x, g.v[1].x, 40);
    for (int i = 0; i < 40; i++)
        ck_assert(d[i] == du[i] && dg[i] == dg2[i]);
    free(dout), free(g.v[0].x), free(g.v[1].x), free(g.out);
}
END_TEST

/* qkv rows of 3 query heads, 1 key and 1 value head of 4 (W = 20): heads 0-3 rotate */
static void rope_f(gc *g)
{
    rope_forward(g->out, g->v[0].x, g->B, g->T, g->W, g->NH, g->D, 10000.0f);
}
static void rope_b(gc *g)
{
    rope_backward(g->v[0].dx, g->r, g->B, g->T, g->W, g->NH, g->D, 10000.0f);
}
START_TEST(grad_rope)
{
    gc g = {.B = 2, .T = 5, .W = 20, .NH = 4, .D = 4, .fwd = rope_f, .bwd = rope_b, .nout = 200};
    add_var(&g, "qkv", rnd(200, 1, 1), 200);
    g.out = zeros(200);
    run_check(&g, "rope");
    rope_f(&g);
    /* position 0 is not turned; the value head passes through; norms of pairs are kept */
    for (int i = 0; i < 20; i++)
        ck_assert_float_eq(g.out[i], g.v[0].x[i]);
    for (int i = 16; i < 20; i++)
        ck_assert_float_eq(g.out[3 * 20 + i], g.v[0].x[3 * 20 + i]);
    const float *x = g.v[0].x + 3 * 20, *y = g.out + 3 * 20; /* t = 3, head 0, pair (1, 3) */
    ck_assert_float_eq_tol(y[1] * y[1] + y[3] * y[3], x[1] * x[1] + x[3] * x[3], 1e-5f);
    ck_assert(fabsf(y[1] - x[1]) > 1e-3f);
    free(g.v[0].x), free(g.out);
}
END_TEST

static void catt_f(gc *g)
{
    causal_attention_forward(g->out, g->s1, g->v[0].x, g->B, g->T, g->NH, g->F, g->D);
}
static void catt_b(gc *g)
{
    causal_attention_backward(g->v[0].dx, g->s2, g->r, g->v[0].x, g->s1, g->B, g->T, g->NH, g->F,
                              g->D);
}
/* NH query heads sharing KV key/value heads (KV = NH: multi-head) of size hs */
static void check_causal(int NH, int KV)
{
    enum { B = 2, T = 5, hs = 3 };
    gc g = {.B = B, .T = T, .NH = NH, .F = KV, .D = hs, .fwd = catt_f, .bwd = catt_b, .h = 1e-3f};
    long n = (long)B * T * (NH + 2 * KV) * hs;
    add_var(&g, "qkv", rnd(n, 1, 1), n);
    g.nout = (long)B * T * NH * hs;
    g.out = zeros(g.nout);
    g.s1 = zeros((long)B * NH * T * T);
    g.s2 = zeros(T * T);
    run_check(&g, KV < NH ? "causal attention (grouped-query)" : "causal attention");
    /* causal: no probability above the diagonal, and token 0 sees itself only */
    catt_f(&g);
    for (int i = 0; i < T; i++)
        for (int j = i + 1; j < T; j++)
            ck_assert_float_eq(g.s1[i * T + j], 0.0f);
    ck_assert_float_eq(g.s1[0], 1.0f);
    free(g.v[0].x), free(g.out), free(g.s1), free(g.s2);
}
START_TEST(grad_causal_attention)
{
    check_causal(2, 2);
    check_causal(4, 2);
    check_causal(3, 1);
}
END_TEST

/* MoE: the objective is sum(out * R) plus the load-balancing loss */
static moe_shape moe_s;
static void moe_bind(gc *g, moe_saved *sv, moe_weights *w, moe_weights *dw)
{
    moe_saved_bind(sv, g->s1, g->ids, &moe_s);
    *w = (moe_weights){g->v[1].x, g->v[2].x, g->v[3].x, g->v[4].x};
    *dw = (moe_weights){g->v[1].dx, g->v[2].dx, g->v[3].dx, g->v[4].dx};
}
static void moe_f(gc *g)
{
    moe_saved sv;
    moe_weights w, dw;
    moe_bind(g, &sv, &w, &dw);
    float aux = moe_forward(g->s3, &sv, g->v[0].x, &w, &moe_s);
    double sum = aux;
    for (long i = 0; i < (long)moe_s.N * moe_s.C; i++)
        sum += (double)g->s3[i] * g->s4[i];
    g->out[0] = (float)sum;
}
static void moe_b(gc *g)
{
    moe_saved sv;
    moe_weights w, dw;
    moe_bind(g, &sv, &w, &dw);
    moe_backward(g->v[0].dx, &dw, g->s2, g->s4, g->v[0].x, &sv, &w, &moe_s);
}
START_TEST(grad_moe)
{
    enum { N = 7, C = 5, E = 4, K = 2, F = 3 };
    moe_s = (moe_shape){N, C, E, K, F, 0.5f};
    gc g = {.fwd = moe_f, .bwd = moe_b, .nout = 1, .scalar = 1, .h = 1e-3f};
    add_var(&g, "x", rnd(N * C, 1, 1), N * C);
    add_var(&g, "router", rnd(E * C, 2, 1), E * C);
    add_var(&g, "w1", rnd(E * F * C, 3, 0.7f), E * F * C);
    add_var(&g, "w3", rnd(E * F * C, 4, 0.7f), E * F * C);
    add_var(&g, "w2", rnd(E * C * F, 5, 0.7f), E * C * F);
    g.out = zeros(1);
    g.s1 = zeros(moe_saved_floats(&moe_s));
    g.ids = calloc((size_t)moe_saved_ints(&moe_s), sizeof(int));
    g.s2 = zeros(moe_scratch_floats(&moe_s));
    g.s3 = zeros(N * C);
    g.s4 = rnd(N * C, 6, 1);
    run_check(&g, "mixture of experts");
    /* every token went to K distinct experts, whose weights sum to 1 */
    moe_saved sv;
    moe_weights w, dw;
    moe_f(&g);
    moe_bind(&g, &sv, &w, &dw);
    int used = 0;
    for (int e = 0; e < E; e++)
        used += sv.offset[e + 1] > sv.offset[e];
    ck_assert_int_ge(used, 3);
    ck_assert_int_eq(sv.offset[E], N * K);
    for (int n = 0; n < N; n++) {
        ck_assert_int_ne(sv.idx[n * K], sv.idx[n * K + 1]);
        ck_assert_float_eq_tol(sv.weight[n * K] + sv.weight[n * K + 1], 1.0f, 1e-6f);
        ck_assert(sv.probs[n * E + sv.idx[n * K]] >= sv.probs[n * E + sv.idx[n * K + 1]]);
    }
    for (int k = 0; k < 5; k++)
        free(g.v[k].x);
    free(g.out), free(g.s1), free(g.ids), free(g.s2), free(g.s3), free(g.s4);
}
END_TEST

/* ---- DLRM interaction ---- */
static void int_f(gc *g)
{
    interaction_forward(g->out, g->v[0].x, g->v[1].x, g->B, g->F, g->D);
}
static void int_b(gc *g)
{
    interaction_backward(g->v[0].dx, g->v[1].dx, g->r, g->v[0].x, g->v[1].x, g->B, g->F, g->D);
}
START_TEST(grad_interaction)
{
    gc g = {.B = 2, .F = 3, .D = 4, .fwd = int_f, .bwd = int_b};
    add_var(&g, "dense", rnd(8, 1, 1), 8);
    add_var(&g, "emb", rnd(24, 2, 1), 24);
    g.nout = 2 * (4 + 6);
    g.out = zeros(g.nout);
    run_check(&g, "dot interaction");
    free(g.v[0].x);
    free(g.v[1].x);
    free(g.out);
}
END_TEST

/* ---- DCN-v2 cross layer: x0, xl, V, W, bias; N = C, rank R = OC ---- */
static void cross_f(gc *g)
{
    cross_forward(g->out, g->s1, g->s2, g->v[0].x, g->v[1].x, g->v[2].x, g->v[3].x, g->v[4].x,
                  g->B, g->C, g->OC);
}
static void cross_b(gc *g)
{
    cross_backward(g->v[0].dx, g->v[1].dx, g->v[2].dx, g->v[3].dx, g->v[4].dx, g->s3, g->r,
                   g->v[0].x, g->v[1].x, g->s1, g->s2, g->v[2].x, g->v[3].x, g->B, g->C, g->OC);
}
/* the first layer of a cross net reads one tensor as x0 and xl: both gradients add up */
static void cross0_f(gc *g)
{
    cross_forward(g->out, g->s1, g->s2, g->v[0].x, g->v[0].x, g->v[1].x, g->v[2].x, g->v[3].x,
                  g->B, g->C, g->OC);
}
static void cross0_b(gc *g)
{
    long n = (long)g->B * g->C;
    cross_backward(g->v[0].dx, g->s4, g->v[1].dx, g->v[2].dx, g->v[3].dx, g->s3, g->r,
                   g->v[0].x, g->v[0].x, g->s1, g->s2, g->v[1].x, g->v[2].x, g->B, g->C, g->OC);
    for (long i = 0; i < n; i++)
        g->v[0].dx[i] += g->s4[i];
}
START_TEST(grad_cross)
{
    enum { B = 3, N = 6, R = 2 };
    gc g = {.B = B, .C = N, .OC = R, .fwd = cross_f, .bwd = cross_b, .nout = B * N};
    add_var(&g, "x0", rnd(B * N, 1, 1), B * N);
    add_var(&g, "xl", rnd(B * N, 2, 1), B * N);
    add_var(&g, "V", rnd(R * N, 3, 0.5f), R * N);
    add_var(&g, "W", rnd(N * R, 4, 0.5f), N * R);
    add_var(&g, "bias", rnd(N, 5, 0.5f), N);
    g.out = zeros(B * N);
    g.s1 = zeros(B * R);
    g.s2 = zeros(B * N);
    g.s3 = zeros(B * (N + R));
    g.s4 = zeros(B * N);
    run_check(&g, "low-rank cross");
    /* parameter gradients accumulate (micro-batches): a second backward doubles them */
    g.r = rnd(B * N, 7, 1.0f);
    cross_f(&g);
    for (int k = 0; k < 5; k++)
        g.v[k].dx = zeros(g.v[k].n);
    cross_b(&g);
    float once[3][R * N];
    for (int k = 2; k < 5; k++)
        memcpy(once[k - 2], g.v[k].dx, (size_t)g.v[k].n * sizeof(float));
    cross_b(&g);
    for (int k = 2; k < 5; k++)
        for (long i = 0; i < g.v[k].n; i++)
            ck_assert_float_eq_tol(g.v[k].dx[i], 2 * once[k - 2][i],
                                   1e-5f * (1 + fabsf(once[k - 2][i])));
    for (int k = 0; k < 5; k++)
        free(g.v[k].dx);
    free(g.r);
    /* zero V: the layer is x0 * bias + xl exactly */
    float *v0 = zeros(R * N), y[B * N];
    cross_forward(y, g.s1, g.s2, g.v[0].x, g.v[1].x, v0, g.v[3].x, g.v[4].x, B, N, R);
    for (int i = 0; i < B * N; i++)
        ck_assert_float_eq_tol(y[i], g.v[0].x[i] * g.v[4].x[i % N] + g.v[1].x[i], 1e-6f);
    gc h = {.B = B, .C = N, .OC = R, .fwd = cross0_f, .bwd = cross0_b, .nout = B * N,
            .s1 = g.s1, .s2 = g.s2, .s3 = g.s3, .s4 = g.s4};
    add_var(&h, "x0 = xl", g.v[0].x, B * N);
    for (int k = 2; k < 5; k++)
        add_var(&h, g.v[k].name, g.v[k].x, g.v[k].n);
    h.out = g.out;
    run_check(&h, "first cross layer (x0 = xl)");
    for (int k = 0; k < 5; k++)
        free(g.v[k].x);
    free(v0), free(g.out), free(g.s1), free(g.s2), free(g.s3), free(g.s4);
}
END_TEST

static void cat_f(gc *g)
{
    concat_forward(g->out, g->v[0].x, g->v[1].x, g->B, g->C, g->OC);
}
static void cat_b(gc *g)
{
    concat_backward(g->v[0].dx, g->v[1].dx, g->r, g->B, g->C, g->OC);
}
START_TEST(grad_concat)
{
    gc g = {.B = 2, .C = 3, .OC = 5, .fwd = cat_f, .bwd = cat_b, .nout = 16};
    add_var(&g, "a", rnd(6, 1, 1), 6);
    add_var(&g, "b", rnd(10, 2, 1), 10);
    g.out = zeros(16);
    run_check(&g, "concat");
    cat_f(&g); /* sample 1 is a's second row, then b's */
    ck_assert_float_eq(g.out[8], g.v[0].x[3]);
    ck_assert_float_eq(g.out[11], g.v[1].x[5]);
    free(g.v[0].x), free(g.v[1].x), free(g.out);
}
END_TEST

/* ---- sequence plumbing ---- */
static void sl_f(gc *g)
{
    slice0_forward(g->out, g->v[0].x, g->B, g->T, g->C);
}
static void sl_b(gc *g)
{
    slice0_backward(g->v[0].dx, g->r, g->B, g->T, g->C);
}
static void ga_f(gc *g)
{
    gather_forward(g->out, g->v[0].x, g->ids, g->B, g->T, g->P, g->C);
}
static void ga_b(gc *g)
{
    gather_backward(g->v[0].dx, g->r, g->ids, g->B, g->T, g->P, g->C);
}
static void ve_f(gc *g)
{
    vitembed_forward(g->out, g->v[0].x, g->v[1].x, g->v[2].x, g->B, g->T, g->C);
}
static void ve_b(gc *g)
{
    vitembed_backward(g->v[0].dx, g->v[1].dx, g->v[2].dx, g->r, g->B, g->T, g->C);
}
START_TEST(grad_sequence)
{
    int pos[4] = {2, 0, 1, 2};
    gc a = {.B = 2, .T = 3, .C = 4, .fwd = sl_f, .bwd = sl_b, .nout = 8};
    add_var(&a, "inp", rnd(24, 1, 1), 24);
    a.out = zeros(8);
    run_check(&a, "slice token 0");
    gc b = {.B = 2, .T = 3, .C = 4, .P = 2, .ids = pos, .fwd = ga_f, .bwd = ga_b, .nout = 16};
    add_var(&b, "inp", a.v[0].x, 24);
    b.out = zeros(16);
    run_check(&b, "gather positions");
    gc c = {.B = 2, .T = 3, .C = 4, .fwd = ve_f, .bwd = ve_b, .nout = 32};
    add_var(&c, "patches", a.v[0].x, 24);
    add_var(&c, "cls", rnd(4, 2, 1), 4);
    add_var(&c, "pos", rnd(16, 3, 1), 16);
    c.out = zeros(32);
    run_check(&c, "vit patch embedding");
    free(a.v[0].x);
    free(c.v[1].x);
    free(c.v[2].x);
    free(a.out);
    free(b.out);
    free(c.out);
}
END_TEST

/* ---- losses ---- */
static int ce_labels[4] = {2, 0, 4, 4};
static void ce_f(gc *g)
{
    g->out[0] = softmax_ce_forward(g->s1, g->v[0].x, ce_labels, 4, 5, g->s2[0]);
}
static void ce_b(gc *g)
{
    softmax_ce_backward(g->v[0].dx, g->s1, ce_labels, 4, 5, g->s2[0], 1.0f);
}
static void bce_f(gc *g)
{
    g->out[0] = bce_forward(g->v[0].x, g->s1, 6);
}
static void bce_b(gc *g)
{
    bce_backward(g->v[0].dx, g->v[0].x, g->s1, 6, 1.0f);
}
START_TEST(grad_losses)
{
    float smooth[2] = {0.0f, 0.1f};
    for (int k = 0; k < 2; k++) {
        gc g = {.fwd = ce_f, .bwd = ce_b, .nout = 1, .scalar = 1, .s2 = &smooth[k]};
        add_var(&g, "logits", rnd(20, 1, 3), 20);
        g.out = zeros(1);
        g.s1 = zeros(20);
        run_check(&g, k ? "softmax cross-entropy (smoothing 0.1)" : "softmax cross-entropy");
        free(g.v[0].x);
        free(g.out);
        free(g.s1);
    }
    /* uniform logits: loss is log(V) whatever the smoothing */
    float z[5] = {0}, p[5];
    int y = 1;
    ck_assert(fabsf(softmax_ce_forward(p, z, &y, 1, 5, 0.1f) - logf(5.0f)) < 1e-6f);
    gc g = {.fwd = bce_f, .bwd = bce_b, .nout = 1, .scalar = 1};
    add_var(&g, "logits", rnd(6, 1, 4), 6);
    g.out = zeros(1);
    float t[6] = {1, 0, 1, 1, 0, 0};
    g.s1 = t;
    run_check(&g, "sigmoid binary cross-entropy");
    free(g.v[0].x);
    free(g.out);
    /* large logits stay finite */
    float big[2] = {80.0f, -80.0f}, tt[2] = {0.0f, 1.0f};
    ck_assert(fabsf(bce_forward(big, tt, 2) - 80.0f) < 1e-3f);
}
END_TEST

static Suite *layers_suite(void)
{
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("gradcheck");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, grad_linear);
    tcase_add_test(tc, grad_linear_relu);
    tcase_add_test(tc, grad_conv2d);
    tcase_add_test(tc, grad_batchnorm);
    tcase_add_test(tc, grad_elementwise);
    tcase_add_test(tc, grad_pooling);
    tcase_add_test(tc, grad_layernorm);
    tcase_add_test(tc, grad_embedding);
    tcase_add_test(tc, grad_embbag);
    tcase_add_test(tc, grad_attention);
    tcase_add_test(tc, grad_rmsnorm);
    tcase_add_test(tc, grad_swiglu);
    tcase_add_test(tc, grad_rope);
    tcase_add_test(tc, grad_causal_attention);
    tcase_add_test(tc, grad_moe);
    tcase_add_test(tc, grad_interaction);
    tcase_add_test(tc, grad_cross);
    tcase_add_test(tc, grad_concat);
    tcase_add_test(tc, grad_sequence);
    tcase_add_test(tc, grad_losses);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(layers_suite()) ? 1 : 0;
}
