/* Decoder-only transformers (trainer/decoder.c): exact parameter counts of
 * the zoo against the papers and model cards, gradient checks of whole tiny
 * models, real training of a tiny member of each family, and the plan's
 * FLOPs against the sgemm calls a step makes. */
#include <cblas.h>
#include <check.h>
#include <dlfcn.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"
#include "trainer/synth.h"
#include "trainer/trace.h"

static model *make(const char *name, const model_opts *o)
{
    model_opts def;
    model_opts_default(&def);
    tt_error err = {0};
    model *m = NULL;
    ck_assert_msg(model_create(&m, name, o ? o : &def, &err) == TT_OK, "%s: %s", name, err.msg);
    return m;
}

/* Trains the tiny member of a family on the copy task (vocabulary 32, 32
 * tokens: labels past the middle repeat the first half) with AdamW at batch
 * 8; returns the mean loss of the first and of the last 10 steps. */
static void train(const char *name, int steps, double *first, double *last)
{
    model_opts o;
    model_opts_default(&o);
    o.vocab = 32;
    o.seq_len = 32;
    model *m = make(name, &o);
    tt_error err = {0};
    enum { B = 8 };
    ck_assert(model_alloc(m, B, &err) == TT_OK);
    optim_config c;
    optim_config_default(&c, OPT_ADAMW);
    c.weight_decay = 0.01;
    optimizer *opt;
    ck_assert(optimizer_create(&c, model_params(m), &opt, &err) == TT_OK);
    *first = *last = 0;
    for (int s = 0; s < steps; s++) {
        synth_fill(model_get_inputs(m), 3, (uint64_t)s * B);
        model_zero_grad(m);
        double loss = model_forward(m);
        model_backward(m);
        optimizer_step(opt, model_params(m), 5e-3);
        if (s < 10)
            *first += loss / 10;
        if (s >= steps - 10)
            *last += loss / 10;
    }
    optimizer_free(opt);
    model_free(m);
}

/* The loss starts at ln 32 (uniform guesses). Copying the first half gets the
 * 17 labels past the middle right: a floor of 15/32 ln 32 = 1.62, reached in
 * about 200 steps. Without working attention gradients no model gets under
 * ln 32, with a broken backward elsewhere none learns at all. */
START_TEST(tiny_models_learn)
{
    const char *names[] = {"llama", "gpt", "moe"};
    for (int i = 0; i < 3; i++) {
        double first, last;
        train(names[i], 250, &first, &last);
        ck_assert_msg(fabs(first - log(32)) < 0.1, "%s: first loss %.3f", names[i], first);
        ck_assert_msg(last < 0.75 * log(32), "%s: loss %.3f -> %.3f: the copy task was not learned",
                      names[i], first, last);
    }
}
END_TEST

/* ---- what a step executes: every sgemm call, counted here and attributed to
 * the layer it ran in (model_set_observer). This definition interposes on
 * OpenBLAS's for the trainer linked into this program. */
typedef void (*sgemm_fn)(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE,
                         const enum CBLAS_TRANSPOSE, const blasint, const blasint, const blasint,
                         const float, const float *, const blasint, const float *, const blasint,
                         const float, float *, const blasint);
static double counted_flops, counted_bytes; /* since the last layer ended */

void cblas_sgemm(const enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE ta,
                 const enum CBLAS_TRANSPOSE tb, const blasint M, const blasint N, const blasint K,
                 const float alpha, const float *A, const blasint lda, const float *Bm,
                 const blasint ldb, const float beta, float *C, const blasint ldc)
{
    static sgemm_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "cblas_sgemm");
    ck_assert_ptr_nonnull(real);
    counted_flops += 2.0 * M * N * K;
    /* A and B read, C written (and read first when accumulating), fp32 */
    counted_bytes += 4.0 * ((double)M * K + (double)K * N + (double)M * N * (beta != 0.0f ? 2 : 1));
    real(order, ta, tb, M, N, K, alpha, A, lda, Bm, ldb, beta, C, ldc);
}

typedef struct per_layer {
    double fwd_flops[256], bwd_flops[256], fwd_bytes[256];
} per_layer;

static void observe(void *ctx, int layer, int backward)
{
    per_layer *p = ctx;
    ck_assert_int_lt(layer, 256);
    (backward ? p->bwd_flops : p->fwd_flops)[layer] += counted_flops;
    if (!backward)
        p->fwd_bytes[layer] += counted_bytes;
    counted_flops = counted_bytes = 0;
}

/* One step of a tiny decoder at batch 3: each layer's planned sgemm FLOPs,
 * both ways, equal those its kernels asked OpenBLAS for (the MoE's depend on
 * how many tokens each expert got: they add up to tokens x top_k); a weight
 * GEMM without bias (bias_free of them) moves what the plan says: input,
 * output and weight. */
static void check_executed(const char *name, const model_opts *o, int bias_free)
{
    enum { B = 3 };
    model *m = make(name, o);
    tt_error err = {0};
    ck_assert(model_alloc(m, B, &err) == TT_OK);
    per_layer *p = calloc(1, sizeof *p);
    model_set_observer(m, observe, p);
    synth_fill(model_get_inputs(m), 5, 0);
    model_zero_grad(m);
    counted_flops = counted_bytes = 0;
    model_forward(m);
    model_backward(m);
    double gemm = 0, total = 0, moe_rows = 0;
    int weights = 0;
    for (int i = 0; i < model_nlayers(m); i++) {
        const model_layer *L = model_layer_at(m, i);
        ck_assert_msg(p->fwd_flops[i] == L->gemm_fwd_flops * B, "%s %s: forward %.0f sgemm FLOPs, "
                      "planned %.0f", name, L->name, p->fwd_flops[i], L->gemm_fwd_flops * B);
        ck_assert_msg(p->bwd_flops[i] == L->gemm_bwd_flops * B, "%s %s: backward %.0f sgemm FLOPs, "
                      "planned %.0f", name, L->name, p->bwd_flops[i], L->gemm_bwd_flops * B);
        /* a GEMM layer's FLOPs are its GEMMs' and up to a quarter more (bias, softmax, gates) */
        if (L->gemm_fwd_flops > 0)
            ck_assert(L->fwd_flops >= L->gemm_fwd_flops && L->fwd_flops <= 1.25 * L->gemm_fwd_flops &&
                      L->bwd_flops >= L->gemm_bwd_flops && L->bwd_flops <= 1.25 * L->gemm_bwd_flops);
        if (L->ngemms == 1 && L->params == L->gemms[0].n * L->gemms[0].k) {
            ck_assert_msg(p->fwd_bytes[i] == 4 * (L->fwd_elems * B + L->fwd_elems_fixed),
                          "%s %s: forward %.0f bytes, planned %.0f", name, L->name, p->fwd_bytes[i],
                          4 * (L->fwd_elems * B + L->fwd_elems_fixed));
            weights++;
        }
        gemm += p->fwd_flops[i] + p->bwd_flops[i];
        total += (L->fwd_flops + L->bwd_flops) * B;
        if (L->experts) /* the expert GEMMs ran on tokens x top_k rows */
            moe_rows += (p->fwd_flops[i] - 2.0 * B * L->gemms[0].m * L->gemms[0].n * L->gemms[0].k) /
                        (6.0 * L->gemms[1].n * L->gemms[1].k);
    }
    ck_assert_int_eq(weights, bias_free);
    ck_assert(gemm > 0.8 * total && gemm < total); /* GEMMs dominate; the rest is elementwise */
    if (o->top_k)
        ck_assert_double_eq(moe_rows, 2.0 * B * o->seq_len * o->top_k);
    free(p);
    model_free(m);
}

START_TEST(planned_is_executed)
{
    model_opts o;
    model_opts_default(&o);
    o.seq_len = 12;
    check_executed("gpt", &o, 0); /* biases everywhere, the head tied */
    o.kv_heads = 1; /* 4 query heads on one key/value head */
    check_executed("llama", &o, 2 * 5 + 1);
    o.kv_heads = 2;
    o.top_k = 2;
    check_executed("moe", &o, 2 * 5 + 1); /* 2 layers of 4 experts and a shared one */
}
END_TEST

/* A 405-billion-parameter model's trace comes from its plan: no step runs,
 * nothing is allocated; its layers carry what a tensor-parallel split needs. */
START_TEST(trace_of_a_large_model)
{
    model_opts mo;
    model_opts_default(&mo);
    trace_opts to;
    trace_opts_default(&to);
    to.micro_batch = 2;
    to.precision = "bf16";
    json_t *doc = NULL;
    tt_error err = {0};
    ck_assert_msg(trace_build("llama3.1-405b", &mo, &to, &doc, &err) == TT_OK, "%s", err.msg);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "executed_micro_batch")), 0);
    ck_assert_double_eq(json_number_value(json_object_get(doc, "param_bytes")), 2.0 * 405853388800ULL);
    json_t *layers = json_object_get(doc, "layers");
    /* embeddings, 126 blocks of 12 layers, final norm, head, loss */
    ck_assert_int_eq(json_array_size(layers), 1 + 126 * 12 + 3);
    json_t *qkv = json_array_get(layers, 2), *att = json_array_get(layers, 4);
    json_t *g = json_array_get(json_object_get(qkv, "gemms"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(g, "kind")), "qkv");
    ck_assert_str_eq(json_string_value(json_object_get(g, "split")), "column");
    ck_assert_double_eq(json_number_value(json_object_get(g, "m")), 2 * 8192);
    ck_assert_double_eq(json_number_value(json_object_get(g, "n")), (128 + 2 * 8) * 128);
    ck_assert_int_eq(json_integer_value(json_object_get(att, "kv_heads")), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(att, "seq_len")), 8192);
    g = json_array_get(json_object_get(att, "gemms"), 0);
    ck_assert_double_eq(json_number_value(json_object_get(g, "count")), 2 * 128);
    /* forward about 2 x params x tokens plus the attention's full squares */
    double tokens = 2 * 8192, dense = 2.0 * (405853388800.0 - 128256.0 * 16384) * tokens;
    double attn = 126 * 4.0 * 8192.0 * 8192 * 16384 * 2;
    double fwd = json_number_value(json_object_get(doc, "forward_flops"));
    ck_assert_msg(fabs(fwd / (dense + attn) - 1) < 0.01, "forward %.4g, expected %.4g", fwd, dense + attn);
    json_decref(doc);
    /* Mixtral: a MoE layer routes tokens x 2 rows */
    ck_assert_msg(trace_build("mixtral-8x7b", &mo, &to, &doc, &err) == TT_OK, "%s", err.msg);
    json_t *moe = json_array_get(json_object_get(doc, "layers"), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(moe, "experts")), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(moe, "top_k")), 2);
    ck_assert_double_eq(json_number_value(json_object_get(moe, "tokens_routed")), 2 * 4096 * 2);
    json_decref(doc);
}
END_TEST

int main(void)
{
    openblas_set_num_threads(1); /* tiny GEMMs: threads cost more than they give */
    Suite *s = suite_create("llm");
    TCase *t = tcase_create("llm");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, tiny_models_learn);
    tcase_add_test(t, planned_is_executed);
    tcase_add_test(t, trace_of_a_large_model);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
