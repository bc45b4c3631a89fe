/* crossnet.c: the low-rank cross layer of DCN-v2 (Wang et al. 2020,
 * arXiv 2008.13535, eq. 2 with W = U V^T; torchrec's LowRankCrossNet):
 * x_{l+1} = x_0 * (W (V x_l) + b) + x_l, on cblas_sgemm. */
#include <cblas.h>
#include <string.h>

#include "trainer/layers.h"

/* x0, xl (B,N), V (R,N), W (N,R), bias (N) -> out (B,N); saves v (B,R) and u (B,N) */
void cross_forward(float *out, float *v, float *u, const float *x0, const float *xl,
                   const float *V, const float *W, const float *bias, int B, int N, int R)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, R, N, 1.0f, xl, N, V, N, 0.0f, v,
                R);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, N, R, 1.0f, v, R, W, R, 0.0f, u, N);
    for (long b = 0; b < B; b++) {
        float *restrict ub = u + b * N, *restrict y = out + b * N;
        const float *a = x0 + b * N, *l = xl + b * N;
        for (int i = 0; i < N; i++) {
            ub[i] += bias[i];
            y[i] = a[i] * ub[i] + l[i];
        }
    }
}

/* du = dout * x0 feeds dbias, dW = du^T v and dv = du W; then dV = dv^T xl
 * and dxl = dout + dv V. The two temporaries live in scratch. */
void cross_backward(float *dx0, float *dxl, float *dV, float *dW, float *dbias, float *scratch,
                    const float *dout, const float *x0, const float *xl, const float *v,
                    const float *u, const float *V, const float *W, int B, int N, int R)
{
    float *du = scratch, *dv = scratch + (long)B * N;
    for (long b = 0; b < B; b++) {
        const float *dy = dout + b * N, *a = x0 + b * N, *ub = u + b * N;
        float *restrict d = du + b * N;
        for (int i = 0; i < N; i++) {
            d[i] = dy[i] * a[i];
            dbias[i] += d[i];
        }
        if (dx0)
            for (int i = 0; i < N; i++)
                dx0[b * N + i] = dy[i] * ub[i];
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, N, R, B, 1.0f, du, N, v, R, 1.0f, dW, R);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, R, N, 1.0f, du, N, W, R, 0.0f, dv,
                R);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, R, N, B, 1.0f, dv, R, xl, N, 1.0f, dV, N);
    if (dxl) {
        memcpy(dxl, dout, (size_t)B * N * sizeof(float));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, N, R, 1.0f, dv, R, V, N, 1.0f,
                    dxl, N);
    }
}
