/* sequence.c: moving tokens around in transformers (the class token, the
 * masked-LM positions, ViT patches to tokens) and features side by side
 * (DCN-v2's concatenated input). */
#include <string.h>

#include "trainer/layers.h"

/* inp (B,T,C) -> out (B,C) */
void slice0_forward(float *out, const float *inp, int B, int T, int C)
{
    for (int b = 0; b < B; b++)
        memcpy(out + (long)b * C, inp + (long)b * T * C, (size_t)C * sizeof(float));
}

void slice0_backward(float *dinp, const float *dout, int B, int T, int C)
{
    memset(dinp, 0, (size_t)B * T * C * sizeof(float));
    for (int b = 0; b < B; b++)
        memcpy(dinp + (long)b * T * C, dout + (long)b * C, (size_t)C * sizeof(float));
}

/* inp (B,T,C), pos (B,P) -> out (B,P,C) */
void gather_forward(float *out, const float *inp, const int *pos, int B, int T, int P, int C)
{
    for (int b = 0; b < B; b++)
        for (int p = 0; p < P; p++)
            memcpy(out + ((long)b * P + p) * C, inp + ((long)b * T + pos[b * P + p]) * C,
                   (size_t)C * sizeof(float));
}

void gather_backward(float *dinp, const float *dout, const int *pos, int B, int T, int P, int C)
{
    memset(dinp, 0, (size_t)B * T * C * sizeof(float));
    for (int b = 0; b < B; b++)
        for (int p = 0; p < P; p++) {
            float *dx = dinp + ((long)b * T + pos[b * P + p]) * C;
            const float *dy = dout + ((long)b * P + p) * C;
            for (int i = 0; i < C; i++)
                dx[i] += dy[i];
        }
}

/* patches (B,C,N) -> out (B,N+1,C) = [cls; patches^T] + pos */
void vitembed_forward(float *out, const float *patches, const float *cls, const float *pos,
                      int B, int N, int C)
{
    for (int b = 0; b < B; b++) {
        float *y = out + (long)b * (N + 1) * C;
        const float *x = patches + (long)b * C * N;
        for (int i = 0; i < C; i++)
            y[i] = cls[i] + pos[i];
        for (int n = 0; n < N; n++)
            for (int i = 0; i < C; i++)
                y[(long)(n + 1) * C + i] = x[(long)i * N + n] + pos[(long)(n + 1) * C + i];
    }
}

void vitembed_backward(float *dpatches, float *dcls, float *dpos, const float *dout,
                       int B, int N, int C)
{
    for (int b = 0; b < B; b++) {
        const float *dy = dout + (long)b * (N + 1) * C;
        for (int i = 0; i < C; i++)
            dcls[i] += dy[i];
        for (long j = 0; j < (long)(N + 1) * C; j++)
            dpos[j] += dy[j];
        if (!dpatches)
            continue;
        float *dx = dpatches + (long)b * C * N;
        for (int n = 0; n < N; n++)
            for (int i = 0; i < C; i++)
                dx[(long)i * N + n] = dy[(long)(n + 1) * C + i];
    }
}

/* a (B,NA), b (B,NB) -> out (B,NA+NB) */
void concat_forward(float *out, const float *a, const float *b, int B, int NA, int NB)
{
    for (long i = 0; i < B; i++) {
        memcpy(out + i * (NA + NB), a + i * NA, (size_t)NA * sizeof(float));
        memcpy(out + i * (NA + NB) + NA, b + i * NB, (size_t)NB * sizeof(float));
    }
}

void concat_backward(float *da, float *db, const float *dout, int B, int NA, int NB)
{
    for (long i = 0; i < B; i++) {
        if (da)
            memcpy(da + i * NA, dout + i * (NA + NB), (size_t)NA * sizeof(float));
        if (db)
            memcpy(db + i * NB, dout + i * (NA + NB) + NA, (size_t)NB * sizeof(float));
    }
}
