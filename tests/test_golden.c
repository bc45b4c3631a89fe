/* Layer kernels against golden values from an independent implementation
 * (tests/golden/make_golden.py, NumPy in float64): forward and backward agree
 * to 1e-5 relative, where the 2e-2 gradient checks of test_layers cannot tell
 * convention errors (biased variance, a missing 1/N, a transposed mask) apart. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/golden/golden.h"
#include "tests/testutil.h"
#include "trainer/layers.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* 1e-5 of the larger magnitude, with a floor for values that cancel to ~0. */
static void assert_close(const char *what, const float *got, const double *want, int n)
{
    double scale = 0;
    for (int i = 0; i < n; i++)
        scale = fmax(scale, fabs(want[i]));
    for (int i = 0; i < n; i++) {
        double tol = 1e-5 * fmax(fabs(want[i]), 1e-2 * scale);
        ck_assert_msg(fabs(got[i] - want[i]) <= tol, "%s[%d]: %.9g, NumPy %.9g", what, i,
                      (double)got[i], want[i]);
    }
}

static float *to_float(const double *v, int n)
{
    float *f = malloc((size_t)n * sizeof *f);
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < n; i++)
        f[i] = (float)v[i];
    return f;
}

START_TEST(golden_batchnorm)
{
    enum { B = 3, C = 2, HW = 4, N = B * C * HW };
    float *x = to_float(BN_X, N), *g = to_float(BN_GAMMA, C), *b = to_float(BN_BETA, C);
    float *dout = to_float(BN_DOUT, N), out[N], dinp[N], mean[C], rstd[C];
    float run_mean[C] = {0, 0}, run_var[C] = {1, 1}, dg[C] = {0, 0}, db[C] = {0, 0};
    batchnorm_forward(out, mean, rstd, run_mean, run_var, x, g, b, B, C, HW, 1, 0.1f, 1e-5f, 0);
    assert_close("bn out", out, BN_OUT, N);
    assert_close("bn running mean", run_mean, BN_RUN_MEAN, C);
    assert_close("bn running var (unbiased)", run_var, BN_RUN_VAR, C);
    batchnorm_backward(dinp, dg, db, dout, NULL, x, g, mean, rstd, B, C, HW, 1);
    assert_close("bn dinp", dinp, BN_DINP, N);
    assert_close("bn dgamma", dg, BN_DGAMMA, C);
    assert_close("bn dbeta", db, BN_DBETA, C);
    free(x), free(g), free(b), free(dout);
}
END_TEST

START_TEST(golden_layernorm)
{
    enum { N = 4, C = 6 };
    float *x = to_float(LN_X, N * C), *g = to_float(LN_GAMMA, C), *b = to_float(LN_BETA, C);
    float *dout = to_float(LN_DOUT, N * C), out[N * C], dinp[N * C], mean[N], rstd[N];
    float dg[C] = {0}, db[C] = {0};
    layernorm_forward(out, mean, rstd, x, g, b, N, C, 1e-5f);
    assert_close("ln out", out, LN_OUT, N * C);
    layernorm_backward(dinp, dg, db, dout, x, g, mean, rstd, N, C);
    assert_close("ln dinp", dinp, LN_DINP, N * C);
    assert_close("ln dgamma", dg, LN_DGAMMA, C);
    assert_close("ln dbeta", db, LN_DBETA, C);
    free(x), free(g), free(b), free(dout);
}
END_TEST

START_TEST(golden_attention)
{
    enum { B = 2, T = 4, C = 8, NH = 2 };
    float *qkv = to_float(ATT_QKV, B * T * 3 * C), *dout = to_float(ATT_DOUT, B * T * C);
    float out[B * T * C], att[B * NH * T * T], dqkv[B * T * 3 * C], scratch[T * T];
    attention_forward(out, att, qkv, ATT_LENGTHS, B, T, C, NH);
    assert_close("attention out", out, ATT_OUT, B * T * C);
    attention_backward(dqkv, scratch, dout, qkv, att, B, T, C, NH);
    assert_close("attention dqkv", dqkv, ATT_DQKV, B * T * 3 * C);
    free(qkv), free(dout);
}
END_TEST

START_TEST(golden_gelu)
{
    enum { N = N_OF(GELU_X) };
    float *x = to_float(GELU_X, N), *dout = to_float(GELU_DOUT, N), out[N], dinp[N];
    gelu_forward(out, x, N);
    assert_close("gelu out", out, GELU_OUT, N);
    gelu_backward(dinp, dout, x, N);
    assert_close("gelu dinp", dinp, GELU_DINP, N);
    free(x), free(dout);
}
END_TEST

START_TEST(golden_softmax_ce)
{
    enum { N = 3, V = 5 };
    float *logits = to_float(CE_LOGITS, N * V), probs[N * V], dlogits[N * V];
    float loss = softmax_ce_forward(probs, logits, CE_LABELS, N, V, 0.1f);
    assert_close("ce loss", &loss, CE_LOSS, 1);
    softmax_ce_backward(dlogits, probs, CE_LABELS, N, V, 0.1f, 1.0f);
    assert_close("ce dlogits", dlogits, CE_DLOGITS, N * V);
    free(logits);
}
END_TEST

/* the backward's parameter gradients accumulate, so they start at zero here */
START_TEST(golden_cross)
{
    enum { B = 3, N = 8, R = 3 };
    float *x0 = to_float(CROSS_X0, B * N), *xl = to_float(CROSS_XL, B * N);
    float *V = to_float(CROSS_V, R * N), *W = to_float(CROSS_W, N * R);
    float *b = to_float(CROSS_B, N), *dout = to_float(CROSS_DOUT, B * N);
    float out[B * N], v[B * R], u[B * N], scratch[B * (N + R)], dx0[B * N], dxl[B * N];
    float dV[R * N] = {0}, dW[N * R] = {0}, db[N] = {0};
    cross_forward(out, v, u, x0, xl, V, W, b, B, N, R);
    assert_close("cross out", out, CROSS_OUT, B * N);
    cross_backward(dx0, dxl, dV, dW, db, scratch, dout, x0, xl, v, u, V, W, B, N, R);
    assert_close("cross dx0", dx0, CROSS_DX0, B * N);
    assert_close("cross dxl", dxl, CROSS_DXL, B * N);
    assert_close("cross dV", dV, CROSS_DV, R * N);
    assert_close("cross dW", dW, CROSS_DW, N * R);
    assert_close("cross dbias", db, CROSS_DB, N);
    free(x0), free(xl), free(V), free(W), free(b), free(dout);
}
END_TEST

START_TEST(golden_rmsnorm)
{
    enum { N = 4, C = 6 };
    float *x = to_float(RMS_X, N * C), *w = to_float(RMS_W, C), *dout = to_float(RMS_DOUT, N * C);
    float out[N * C], dinp[N * C], rstd[N], dw[C] = {0};
    rmsnorm_forward(out, rstd, x, w, N, C, 1e-5f);
    assert_close("rmsnorm out", out, RMS_OUT, N * C);
    rmsnorm_backward(dinp, dw, dout, x, w, rstd, N, C);
    assert_close("rmsnorm dinp", dinp, RMS_DINP, N * C);
    assert_close("rmsnorm dweight", dw, RMS_DW, C);
    free(x), free(w), free(dout);
}
END_TEST

START_TEST(golden_swiglu)
{
    enum { N = N_OF(SWIGLU_GATE) };
    float *g = to_float(SWIGLU_GATE, N), *u = to_float(SWIGLU_UP, N);
    float *dout = to_float(SWIGLU_DOUT, N), out[N], dg[N], du[N];
    swiglu_forward(out, g, u, N);
    assert_close("swiglu out", out, SWIGLU_OUT, N);
    swiglu_backward(dg, du, dout, g, u, N);
    assert_close("swiglu dgate", dg, SWIGLU_DGATE, N);
    assert_close("swiglu dup", du, SWIGLU_DUP, N);
    free(g), free(u), free(dout);
}
END_TEST

/* Llama 3's theta 500000 on 3 rotated heads of 8 and a copied value head */
START_TEST(golden_rope)
{
    enum { B = 2, T = 5, W = 32, N = B * T * W };
    float *x = to_float(ROPE_X, N), *dout = to_float(ROPE_DOUT, N), out[N], dinp[N];
    rope_forward(out, x, B, T, W, 3, 8, 500000.0f);
    assert_close("rope out", out, ROPE_OUT, N);
    rope_backward(dinp, dout, B, T, W, 3, 8, 500000.0f);
    assert_close("rope dinp", dinp, ROPE_DINP, N);
    free(x), free(dout);
}
END_TEST

START_TEST(golden_causal_attention)
{
    enum { B = 2, T = 5, NH = 4, KV = 2, hs = 3, W = (NH + 2 * KV) * hs, A = NH * hs };
    float *qkv = to_float(CATT_QKV, B * T * W), *dout = to_float(CATT_DOUT, B * T * A);
    float out[B * T * A], att[B * NH * T * T], dqkv[B * T * W], scratch[T * T];
    causal_attention_forward(out, att, qkv, B, T, NH, KV, hs);
    assert_close("causal attention out", out, CATT_OUT, B * T * A);
    causal_attention_backward(dqkv, scratch, dout, qkv, att, B, T, NH, KV, hs);
    assert_close("causal attention dqkv", dqkv, CATT_DQKV, B * T * W);
    free(qkv), free(dout);
}
END_TEST

/* top-2 of 4 SwiGLU experts, load-balancing coefficient 0.1 */
START_TEST(golden_moe)
{
    enum { N = 6, C = 8, E = 4, K = 2, F = 5 };
    moe_shape s = {N, C, E, K, F, 0.1f};
    float *x = to_float(MOE_X, N * C), *dout = to_float(MOE_DOUT, N * C);
    moe_weights w = {to_float(MOE_ROUTER, E * C), to_float(MOE_W1, E * F * C),
                     to_float(MOE_W3, E * F * C), to_float(MOE_W2, E * C * F)};
    float dr[E * C] = {0}, d1[E * F * C] = {0}, d3[E * F * C] = {0}, d2[E * C * F] = {0};
    moe_weights dw = {dr, d1, d3, d2};
    float *saved = malloc((size_t)moe_saved_floats(&s) * sizeof(float));
    float *scratch = malloc((size_t)moe_scratch_floats(&s) * sizeof(float));
    int *isaved = malloc((size_t)moe_saved_ints(&s) * sizeof(int));
    float out[N * C], dx[N * C];
    moe_saved sv;
    moe_saved_bind(&sv, saved, isaved, &s);
    float aux = moe_forward(out, &sv, x, &w, &s);
    assert_close("moe out", out, MOE_OUT, N * C);
    assert_close("moe load-balancing loss", &aux, MOE_AUX, 1);
    moe_backward(dx, &dw, scratch, dout, x, &sv, &w, &s);
    assert_close("moe dx", dx, MOE_DX, N * C);
    assert_close("moe drouter", dr, MOE_DROUTER, E * C);
    assert_close("moe dw1", d1, MOE_DW1, E * F * C);
    assert_close("moe dw3", d3, MOE_DW3, E * F * C);
    assert_close("moe dw2", d2, MOE_DW2, E * C * F);
    free(x), free(dout), free(w.router), free(w.w1), free(w.w3), free(w.w2);
    free(saved), free(scratch), free(isaved);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("golden");
    TCase *t = tcase_create("golden");
    tcase_add_test(t, golden_batchnorm);
    tcase_add_test(t, golden_layernorm);
    tcase_add_test(t, golden_attention);
    tcase_add_test(t, golden_gelu);
    tcase_add_test(t, golden_softmax_ce);
    tcase_add_test(t, golden_cross);
    tcase_add_test(t, golden_rmsnorm);
    tcase_add_test(t, golden_swiglu);
    tcase_add_test(t, golden_rope);
    tcase_add_test(t, golden_causal_attention);
    tcase_add_test(t, golden_moe);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
