/* interaction.c: DLRM's dot interaction of the dense feature vector with the
 * embedding vectors (lower triangle without the diagonal, as the MLPerf
 * reference with arch-interaction-itself off). */
#include <string.h>

#include "trainer/layers.h"

/* vector i of sample b: 0 is the dense vector, 1..F the embeddings */
static inline const float *vec(const float *dense, const float *emb, int b, int i, int F, int D)
{
    return i == 0 ? dense + (long)b * D : emb + ((long)b * F + (i - 1)) * D;
}

/* dense (B,D), emb (B,F,D) -> out (B, D + (F+1)F/2) */
void interaction_forward(float *out, const float *dense, const float *emb, int B, int F, int D)
{
    int npairs = (F + 1) * F / 2, O = D + npairs;
    for (int b = 0; b < B; b++) {
        float *y = out + (long)b * O;
        memcpy(y, dense + (long)b * D, (size_t)D * sizeof(float));
        int k = D;
        for (int i = 1; i <= F; i++)
            for (int j = 0; j < i; j++) {
                const float *u = vec(dense, emb, b, i, F, D), *w = vec(dense, emb, b, j, F, D);
                float acc = 0.0f;
                for (int d = 0; d < D; d++)
                    acc += u[d] * w[d];
                y[k++] = acc;
            }
    }
}

/* either gradient may be NULL (not needed) */
void interaction_backward(float *ddense, float *demb, const float *dout, const float *dense,
                          const float *emb, int B, int F, int D)
{
    int npairs = (F + 1) * F / 2, O = D + npairs;
    for (int b = 0; b < B; b++) {
        const float *dy = dout + (long)b * O;
        float *dd = ddense ? ddense + (long)b * D : NULL;
        float *de = demb ? demb + (long)b * F * D : NULL;
        if (dd)
            memcpy(dd, dy, (size_t)D * sizeof(float));
        if (de)
            memset(de, 0, (size_t)F * D * sizeof(float));
        int k = D;
        for (int i = 1; i <= F; i++)
            for (int j = 0; j < i; j++) {
                float g = dy[k++];
                const float *u = vec(dense, emb, b, i, F, D), *w = vec(dense, emb, b, j, F, D);
                float *du = de ? de + (long)(i - 1) * D : NULL;
                float *dw = j == 0 ? dd : de ? de + (long)(j - 1) * D : NULL;
                for (int d = 0; du && d < D; d++)
                    du[d] += g * w[d];
                for (int d = 0; dw && d < D; d++)
                    dw[d] += g * u[d];
            }
    }
}
