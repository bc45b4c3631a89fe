/* batchnorm.c: 2-D batch normalisation over (batch, height, width) per channel. */
#include <math.h>
#include <stddef.h>

#include "trainer/layers.h"

/* sum of x[0..n) and of (x - mu)^2, in 8 float lanes (vectorised) then double:
 * planes are at most a few ten thousand elements */
static double lane_sum(const float *x, long n, float mu, int squares)
{
    float acc[8] = {0};
    long i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            float d = x[i + k] - mu;
            acc[k] += squares ? d * d : d;
        }
    double s = 0;
    for (; i < n; i++) {
        double d = x[i] - mu;
        s += squares ? d * d : d;
    }
    for (int k = 0; k < 8; k++)
        s += acc[k];
    return s;
}

/* dy through the fused relu (y the output; NULL: no relu) */
static inline float masked(const float *dy, const float *y, long i)
{
    float d = dy[i]; /* loaded unconditionally, so the select vectorises */
    return y ? (y[i] > 0.0f ? d : 0.0f) : d;
}

/* sum of dy and of dy * (x - m) over a plane, the same way (dy masked by y) */
static void lane_dot(const float *dy, const float *y, const float *x, long n, float m, double *sd,
                     double *sdx)
{
    float a[8] = {0}, b[8] = {0};
    long i = 0;
    if (y)
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) {
                float d = dy[i + k];
                d = y[i + k] > 0.0f ? d : 0.0f;
                a[k] += d;
                b[k] += d * (x[i + k] - m);
            }
    else
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) {
                a[k] += dy[i + k];
                b[k] += dy[i + k] * (x[i + k] - m);
            }
    for (; i < n; i++) {
        float d = masked(dy, y, i);
        *sd += d;
        *sdx += (double)d * (x[i] - m);
    }
    for (int k = 0; k < 8; k++) {
        *sd += a[k];
        *sdx += b[k];
    }
}

/* inp (B,C,HW) -> out (B,C,HW), then max(0, .) if relu; mean, rstd (C) saved
 * (the batch's in train mode, the running ones in eval) */
void batchnorm_forward(float *out, float *mean, float *rstd, float *run_mean, float *run_var,
                       const float *inp, const float *gamma, const float *beta,
                       int B, int C, int HW, int train, float momentum, float eps, int relu)
{
    long n = (long)B * HW;
    for (int c = 0; c < C; c++) {
        float m, r;
        if (train) {
            double s = 0, ss = 0;
            for (int b = 0; b < B; b++)
                s += lane_sum(inp + ((long)b * C + c) * HW, HW, 0.0f, 0);
            double mu = s / n;
            for (int b = 0; b < B; b++)
                ss += lane_sum(inp + ((long)b * C + c) * HW, HW, (float)mu, 1);
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
            if (relu)
                for (int i = 0; i < HW; i++) {
                    float v = x[i] * g + sh;
                    y[i] = v > 0.0f ? v : 0.0f;
                }
            else
                for (int i = 0; i < HW; i++)
                    y[i] = x[i] * g + sh;
        }
    }
}

/* dout (B,C,HW) -> dinp (B,C,HW); dgamma, dbeta (C) +=; out: the forward
 * output when the relu is fused (its mask applies to dout), else NULL */
void batchnorm_backward(float *dinp, float *dgamma, float *dbeta, const float *dout,
                        const float *out, const float *inp, const float *gamma,
                        const float *mean, const float *rstd, int B, int C, int HW, int train)
{
    long n = (long)B * HW;
    for (int c = 0; c < C; c++) {
        float m = mean[c], r = rstd[c];
        double sd = 0, sdx = 0; /* sum dout, sum dout * xhat */
        for (int b = 0; b < B; b++) {
            long at = ((long)b * C + c) * HW;
            lane_dot(dout + at, out ? out + at : NULL, inp + at, HW, m, &sd, &sdx);
        }
        sdx *= r;
        dgamma[c] += (float)sdx;
        dbeta[c] += (float)sd;
        if (!dinp)
            continue;
        float g = gamma[c] * r;
        float a = train ? (float)(sd / n) : 0.0f, k = train ? (float)(sdx / n) : 0.0f;
        for (int b = 0; b < B; b++) {
            long at = ((long)b * C + c) * HW;
            const float *x = inp + at, *dy = dout + at;
            float *dx = dinp + at;
            if (out)
                for (int i = 0; i < HW; i++) {
                    float d = dy[i];
                    d = out[at + i] > 0.0f ? d : 0.0f;
                    dx[i] = g * (d - a - (x[i] - m) * r * k);
                }
            else
                for (int i = 0; i < HW; i++)
                    dx[i] = g * (dy[i] - a - (x[i] - m) * r * k);
        }
    }
}
