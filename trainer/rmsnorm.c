/* rmsnorm.c: root-mean-square normalisation over the last dimension (Zhang &
 * Sennrich 2019; Llama): no mean subtracted, no shift, a learned scale. */
#include <math.h>

#include "trainer/layers.h"

/* inp (N,C), weight (C) -> out (N,C) = inp * rstd * weight; rstd (N) saved */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, int N, int C,
                     float eps)
{
    for (long n = 0; n < N; n++) {
        const float *x = inp + n * C;
        float *y = out + n * C, ss = 0.0f;
        for (int i = 0; i < C; i++)
            ss += x[i] * x[i];
        float r = 1.0f / sqrtf(ss / (float)C + eps);
        for (int i = 0; i < C; i++)
            y[i] = x[i] * r * weight[i];
        rstd[n] = r;
    }
}

/* dout (N,C) -> dinp (N,C) = r (g - x r^2 mean(g x)), g = dout * weight; dweight (C) += */
void rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp,
                      const float *weight, const float *rstd, int N, int C)
{
    for (long n = 0; n < N; n++) {
        const float *x = inp + n * C, *dy = dout + n * C;
        float r = rstd[n], gx = 0.0f;
        for (int i = 0; i < C; i++) {
            dweight[i] += dy[i] * x[i] * r;
            gx += dy[i] * weight[i] * x[i];
        }
        if (!dinp)
            continue;
        float *dx = dinp + n * C, k = r * r * gx / (float)C;
        for (int i = 0; i < C; i++)
            dx[i] = r * (dy[i] * weight[i] - x[i] * k);
    }
}
