/* linear.c: fully connected layer, y = x W^T + b, on cblas_sgemm. */
#include <cblas.h>
#include <string.h>

#include "trainer/layers.h"

/* inp (B,C), w (OC,C), bias (OC) or NULL -> out (B,OC) */
void linear_forward(float *out, const float *inp, const float *w, const float *bias,
                    int B, int C, int OC)
{
    float beta = 0.0f;
    if (bias) {
        for (int b = 0; b < B; b++)
            memcpy(out + (long)b * OC, bias, (size_t)OC * sizeof(float));
        beta = 1.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, OC, C, 1.0f, inp, C, w, C, beta,
                out, OC);
}

/* dout (B,OC) -> dinp (B,C) = dout W; dw (OC,C) += dout^T inp; dbias += sum_b dout */
void linear_backward(float *dinp, float *dw, float *dbias, const float *dout,
                     const float *inp, const float *w, int B, int C, int OC)
{
    if (dinp)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, C, OC, 1.0f, dout, OC, w, C,
                    0.0f, dinp, C);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, B, 1.0f, dout, OC, inp, C, 1.0f,
                dw, C);
    if (dbias)
        for (int b = 0; b < B; b++) {
            const float *d = dout + (long)b * OC;
            for (int o = 0; o < OC; o++)
                dbias[o] += d[o];
        }
}
