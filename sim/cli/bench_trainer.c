/* bench_trainer.c: OpenBLAS SGEMM against a whole training step of the MLP
 * (the speed goal: step >= 0.75 x sgemm), and ResNet-50 fwd+bwd. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "sim/cli/bench_trainer.h"
#include "trainer/model.h"
#include "trainer/rng.h"
#include "trainer/synth.h"

static double time_sgemm(int n, const float *a, const float *b, float *c)
{
    double t0 = clock_monotonic_s();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    return clock_monotonic_s() - t0;
}

/* one full step: zero grads, forward, backward, SGD update */
static double time_step(model *m)
{
    double t0 = clock_monotonic_s();
    model_zero_grad(m);
    model_forward(m);
    model_backward(m);
    model_sgd_step(m, 1e-3f);
    return clock_monotonic_s() - t0;
}

static double step_flops(model *m, int batch)
{
    return (model_forward_flops_per_sample(m) + model_backward_flops_per_sample(m)) * batch +
           2.0 * (double)model_params(m)->numel; /* the update: a multiply-add per parameter */
}

static int make_model(model **m, const char *name, int batch, tt_error *err)
{
    model_opts o;
    model_opts_default(&o);
    int rc = model_create(m, name, &o, err);
    if (rc)
        return rc;
    rc = model_alloc(*m, batch, err);
    if (rc) {
        model_free(*m);
        return rc;
    }
    synth_fill(model_get_inputs(*m), 1, 0);
    return TT_OK;
}

int bench_trainer_run(int repeats, int resnet50_batch, bench_trainer_result *r, tt_error *err)
{
    memset(r, 0, sizeof *r);
    snprintf(r->corename, sizeof r->corename, "%s", openblas_get_corename());
    r->threads = openblas_get_num_threads();
    r->repeats = repeats;
    r->sgemm_n = 4096;
    r->step_batch = 4096;
    size_t nn = (size_t)r->sgemm_n * r->sgemm_n;
    float *a = malloc(nn * sizeof(float)), *b = malloc(nn * sizeof(float)),
          *c = malloc(nn * sizeof(float));
    if (!a || !b || !c) {
        free(a);
        free(b);
        free(c);
        return tt_error_set(err, TT_EINTERNAL, "out of memory for the sgemm benchmark");
    }
    rng g = rng_at(1, 2);
    for (size_t i = 0; i < nn; i++) {
        a[i] = rng_uniform(&g) - 0.5f;
        b[i] = rng_uniform(&g) - 0.5f;
    }
    model *mlp;
    int rc = make_model(&mlp, "mlp", r->step_batch, err);
    if (rc) {
        free(a);
        free(b);
        free(c);
        return rc;
    }
    r->step_flops = step_flops(mlp, r->step_batch);
    time_sgemm(r->sgemm_n, a, b, c); /* warm-up: threads, pages */
    time_step(mlp);
    double best_gemm = 1e30, best_step = 1e30;
    for (int i = 0; i < repeats; i++) {
        double t = time_sgemm(r->sgemm_n, a, b, c);
        best_gemm = t < best_gemm ? t : best_gemm;
        t = time_step(mlp);
        best_step = t < best_step ? t : best_step;
    }
    r->sgemm_gflops = 2.0 * (double)nn * r->sgemm_n / best_gemm / 1e9;
    r->step_s = best_step;
    r->step_gflops = r->step_flops / best_step / 1e9;
    model_free(mlp);
    free(a);
    free(b);
    free(c);
    if (resnet50_batch > 0) {
        model *rn;
        rc = make_model(&rn, "resnet50", resnet50_batch, err);
        if (rc)
            return rc;
        double flops = (model_forward_flops_per_sample(rn) + model_backward_flops_per_sample(rn)) *
                       resnet50_batch;
        double best = 1e30;
        model_zero_grad(rn); /* warm-up */
        model_forward(rn);
        model_backward(rn);
        for (int i = 0; i < (repeats > 2 ? 2 : repeats); i++) {
            double t1 = clock_monotonic_s();
            model_zero_grad(rn);
            model_forward(rn);
            model_backward(rn);
            double t = clock_monotonic_s() - t1;
            best = t < best ? t : best;
        }
        r->resnet50_batch = resnet50_batch;
        r->resnet50_step_s = best;
        r->resnet50_images_per_s = resnet50_batch / best;
        r->resnet50_gflops = flops / best / 1e9;
        model_free(rn);
    }
    return TT_OK;
}
