/* layernorm.c: layer normalisation over the last dimension. */
#include <math.h>

#include "trainer/layers.h"

/* inp (N,C) -> out (N,C); mean, rstd (N) saved */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       const float *gamma, const float *beta, int N, int C, float eps)
{
    for (long n = 0; n < N; n++) {
        const float *x = inp + n * C;
        float *y = out + n * C;
        float m = 0.0f, v = 0.0f;
        for (int i = 0; i < C; i++)
            m += x[i];
        m /= (float)C;
        for (int i = 0; i < C; i++)
            v += (x[i] - m) * (x[i] - m);
        float r = 1.0f / sqrtf(v / (float)C + eps);
        for (int i = 0; i < C; i++)
            y[i] = (x[i] - m) * r * gamma[i] + beta[i];
        mean[n] = m;
        rstd[n] = r;
    }
}

/* dout (N,C) -> dinp (N,C); dgamma, dbeta (C) += */
void layernorm_backward(float *dinp, float *dgamma, float *dbeta, const float *dout,
                        const float *inp, const float *gamma, const float *mean,
                        const float *rstd, int N, int C)
{
    for (long n = 0; n < N; n++) {
        const float *x = inp + n * C, *dy = dout + n * C;
        float m = mean[n], r = rstd[n];
        float sum_g = 0.0f, sum_gx = 0.0f; /* of dxhat and dxhat * xhat */
        for (int i = 0; i < C; i++) {
            float xh = (x[i] - m) * r, g = dy[i] * gamma[i];
            dgamma[i] += dy[i] * xh;
            dbeta[i] += dy[i];
            sum_g += g;
            sum_gx += g * xh;
        }
        if (!dinp)
            continue;
        float *dx = dinp + n * C;
        sum_g /= (float)C;
        sum_gx /= (float)C;
        for (int i = 0; i < C; i++) {
            float xh = (x[i] - m) * r;
            dx[i] = r * (dy[i] * gamma[i] - sum_g - xh * sum_gx);
        }
    }
}
