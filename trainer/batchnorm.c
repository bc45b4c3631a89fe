/* batchnorm.c: 2-D batch normalisation over (batch, height, width) per channel. */
#include <math.h>

#include "trainer/layers.h"

/* inp (B,C,HW) -> out (B,C,HW); mean, rstd (C) saved (the batch's in train mode, the running ones in eval) */
void batchnorm_forward(float *out, float *mean, float *rstd, float *run_mean, float *run_var,
                       const float *inp, const float *gamma, const float *beta,
                       int B, int C, int HW, int train, float momentum, float eps)
{
    long n = (long)B * HW;
    for (int c = 0; c < C; c++) {
        float m, r;
        if (train) {
            double s = 0, ss = 0;
            for (int b = 0; b < B; b++) {
                const float *x = inp + ((long)b * C + c) * HW;
                for (int i = 0; i < HW; i++)
                    s += x[i];
            }
            double mu = s / n;
            for (int b = 0; b < B; b++) {
                const float *x = inp + ((long)b * C + c) * HW;
                for (int i = 0; i < HW; i++) {
                    double d = x[i] - mu;
                    ss += d * d;
                }
            }
            double var = ss / n;
            m = (float)mu;
            r = (float)(1.0 / sqrt(var + eps));
            run_mean[c] = (1 - momentum) * run_mean[c] + momentum * m;
            run_var[c] = (1 - momentum) * run_var[c] +
                         momentum * (float)(n > 1 ? ss / (n - 1) : var);
        } else {
            m = run_mean[c];
            r = 1.0f / sqrtf(run_var[c] + eps);
        }
        mean[c] = m; /* what backward uses, in either mode */
        rstd[c] = r;
        float g = gamma[c] * r, sh = beta[c] - m * g;
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((long)b * C + c) * HW;
            float *y = out + ((long)b * C + c) * HW;
            for (int i = 0; i < HW; i++)
                y[i] = x[i] * g + sh;
        }
    }
}

/* dout (B,C,HW) -> dinp (B,C,HW); dgamma, dbeta (C) += */
void batchnorm_backward(float *dinp, float *dgamma, float *dbeta, const float *dout,
                        const float *inp, const float *gamma, const float *mean,
                        const float *rstd, int B, int C, int HW, int train)
{
    long n = (long)B * HW;
    for (int c = 0; c < C; c++) {
        float m = mean[c], r = rstd[c];
        double sd = 0, sdx = 0; /* sum dout, sum dout * xhat */
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((long)b * C + c) * HW;
            const float *dy = dout + ((long)b * C + c) * HW;
            for (int i = 0; i < HW; i++) {
                sd += dy[i];
                sdx += dy[i] * ((x[i] - m) * r);
            }
        }
        dgamma[c] += (float)sdx;
        dbeta[c] += (float)sd;
        if (!dinp)
            continue;
        float g = gamma[c] * r;
        float a = train ? (float)(sd / n) : 0.0f, k = train ? (float)(sdx / n) : 0.0f;
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((long)b * C + c) * HW;
            const float *dy = dout + ((long)b * C + c) * HW;
            float *dx = dinp + ((long)b * C + c) * HW;
            for (int i = 0; i < HW; i++)
                dx[i] = g * (dy[i] - a - (x[i] - m) * r * k);
        }
    }
}
