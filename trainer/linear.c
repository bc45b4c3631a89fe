/* linear.c: fully connected layer, y = x W^T + b, on cblas_sgemm. The bias
 * (and the fused relu) is applied in one pass after a beta = 0 product. */
#include <cblas.h>
#include <string.h>

#include "trainer/layers.h"

/* inp (B,C), w (OC,C) -> out (B,OC) = inp W^T */
static void matmul_nt(float *out, const float *inp, const float *w, int B, int C, int OC)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, OC, C, 1.0f, inp, C, w, C, 0.0f,
                out, OC);
}

/* inp (B,C), w (OC,C), bias (OC) or NULL -> out (B,OC) */
void linear_forward(float *out, const float *inp, const float *w, const float *bias,
                    int B, int C, int OC)
{
    matmul_nt(out, inp, w, B, C, OC);
    if (bias)
        for (long b = 0; b < B; b++) {
            float *y = out + b * OC;
            for (int o = 0; o < OC; o++)
                y[o] += bias[o];
        }
}

void linear_relu_forward(float *out, const float *inp, const float *w, const float *bias,
                         int B, int C, int OC)
{
    matmul_nt(out, inp, w, B, C, OC);
    for (long b = 0; b < B; b++) {
        float *restrict y = out + b * OC;
        if (bias)
            for (int o = 0; o < OC; o++) {
                float v = y[o] + bias[o];
                y[o] = v > 0.0f ? v : 0.0f;
            }
        else
            for (int o = 0; o < OC; o++)
                y[o] = y[o] > 0.0f ? y[o] : 0.0f;
    }
}

/* dout (B,OC) -> dinp (B,C) = dout W; dw (OC,C) += dout^T inp */
static void matmul_backward(float *dinp, float *dw, const float *dout, const float *inp,
                            const float *w, int B, int C, int OC)
{
    if (dinp)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, C, OC, 1.0f, dout, OC, w, C,
                    0.0f, dinp, C);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, B, 1.0f, dout, OC, inp, C, 1.0f,
                dw, C);
}

/* dout (B,OC) -> dinp (B,C); dw (OC,C) +=; dbias (OC) += sum_b dout (may be NULL) */
void linear_backward(float *dinp, float *dw, float *dbias, const float *dout,
                     const float *inp, const float *w, int B, int C, int OC)
{
    matmul_backward(dinp, dw, dout, inp, w, B, C, OC);
    if (dbias)
        for (long b = 0; b < B; b++) {
            const float *d = dout + b * OC;
            for (int o = 0; o < OC; o++)
                dbias[o] += d[o];
        }
}

void linear_relu_backward(float *dinp, float *dw, float *dbias, float *dout, const float *out,
                          const float *inp, const float *w, int B, int C, int OC)
{
    for (long b = 0; b < B; b++) {
        float *d = dout + b * OC;
        const float *y = out + b * OC;
        for (int o = 0; o < OC; o++) {
            float g = d[o]; /* loaded unconditionally, so the select vectorises */
            d[o] = y[o] > 0.0f ? g : 0.0f;
        }
        for (int o = 0; dbias && o < OC; o++)
            dbias[o] += d[o];
    }
    matmul_backward(dinp, dw, dout, inp, w, B, C, OC);
}
