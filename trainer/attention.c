/* attention.c: the core of multi-head self-attention, softmax(Q K^T / sqrt(hs)) V,
 * bidirectional with a key padding mask; the products are strided sgemms on
 * the packed qkv tensor, one (sequence, head) at a time. */
#include <cblas.h>
#include <math.h>

#include "trainer/layers.h"

/* qkv (B,T,3C), lengths (B) or NULL -> out (B,T,C); att (B,NH,T,T) probabilities */
void attention_forward(float *out, float *att, const float *qkv, const int *lengths,
                       int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < B; b++) {
        int len = lengths ? lengths[b] : T;
        const float *base = qkv + (long)b * T * C3;
        for (int h = 0; h < NH; h++) {
            const float *q = base + h * hs, *k = base + C + h * hs, *v = base + 2 * C + h * hs;
            float *p = att + ((long)b * NH + h) * T * T;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, C3, k, C3,
                        0.0f, p, T);
            for (int i = 0; i < T; i++) {
                float *row = p + (long)i * T, mx = -INFINITY, sum = 0.0f;
                for (int j = 0; j < len; j++)
                    mx = row[j] > mx ? row[j] : mx;
                for (int j = 0; j < len; j++) {
                    row[j] = expf(row[j] - mx);
                    sum += row[j];
                }
                for (int j = 0; j < len; j++)
                    row[j] /= sum;
                for (int j = len; j < T; j++)
                    row[j] = 0.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, p, T, v, C3,
                        0.0f, out + (long)b * T * C + h * hs, C);
        }
    }
}

/* dout (B,T,C) -> dqkv (B,T,3C); scratch T*T */
void attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                        const float *att, int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < B; b++) {
        const float *base = qkv + (long)b * T * C3;
        float *dbase = dqkv + (long)b * T * C3;
        for (int h = 0; h < NH; h++) {
            const float *q = base + h * hs, *k = base + C + h * hs, *v = base + 2 * C + h * hs;
            const float *p = att + ((long)b * NH + h) * T * T;
            const float *dy = dout + (long)b * T * C + h * hs;
            float *ds = scratch;
            /* dP = dO V^T, dV = P^T dO */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, dy, C, v, C3,
                        0.0f, ds, T);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, p, T, dy, C,
                        0.0f, dbase + 2 * C + h * hs, C3);
            /* through the softmax: dS = P (dP - sum_j P dP) */
            for (int i = 0; i < T; i++) {
                const float *pr = p + (long)i * T;
                float *dr = ds + (long)i * T, dot = 0.0f;
                for (int j = 0; j < T; j++)
                    dot += pr[j] * dr[j];
                for (int j = 0; j < T; j++)
                    dr[j] = pr[j] * (dr[j] - dot);
            }
            /* dQ = scale dS K, dK = scale dS^T Q */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, scale, ds, T, k, C3,
                        0.0f, dbase + h * hs, C3);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, scale, ds, T, q, C3,
                        0.0f, dbase + C + h * hs, C3);
        }
    }
}
