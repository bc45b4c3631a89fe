/* embedding.c: token + position (+ segment) embedding, and the embedding bag
 * of DLRM; both backward passes scatter-add into the rows that were used. */
#include <string.h>

#include "trainer/layers.h"

/* tokens, types (B,T) -> out (B,T,C) = wte[token] (+ wpe[t]) (+ wtt[type]) */
void embed_forward(float *out, const int *tokens, const int *types, const float *wte,
                   const float *wpe, const float *wtt, int B, int T, int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            long bt = (long)b * T + t;
            float *y = out + bt * C;
            const float *e = wte + (long)tokens[bt] * C, *p = wpe ? wpe + (long)t * C : NULL;
            const float *s = wtt && types ? wtt + (long)types[bt] * C : NULL;
            for (int i = 0; i < C; i++)
                y[i] = e[i] + (p ? p[i] : 0.0f) + (s ? s[i] : 0.0f);
        }
}

void embed_backward(float *dwte, float *dwpe, float *dwtt, const float *dout,
                    const int *tokens, const int *types, int B, int T, int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            long bt = (long)b * T + t;
            const float *dy = dout + bt * C;
            float *de = dwte + (long)tokens[bt] * C, *dp = dwpe ? dwpe + (long)t * C : NULL;
            float *ds = dwtt && types ? dwtt + (long)types[bt] * C : NULL;
            for (int i = 0; i < C; i++) {
                de[i] += dy[i];
                if (dp)
                    dp[i] += dy[i];
                if (ds)
                    ds[i] += dy[i];
            }
        }
}

/* ids of sample b at ids + b*id_stride (L of them) -> out row b (D) */
void embbag_forward(float *out, long out_stride, const float *table, const int *ids,
                    long id_stride, int B, int L, int D, int mode)
{
    float scale = mode == BAG_MEAN ? 1.0f / (float)L : 1.0f;
    for (int b = 0; b < B; b++) {
        float *y = out + b * out_stride;
        memset(y, 0, (size_t)D * sizeof(float));
        for (int l = 0; l < L; l++) {
            const float *row = table + (long)ids[b * id_stride + l] * D;
            for (int i = 0; i < D; i++)
                y[i] += row[i];
        }
        for (int i = 0; i < D; i++)
            y[i] *= scale;
    }
}

void embbag_backward(float *dtable, const float *dout, long out_stride, const int *ids,
                     long id_stride, int B, int L, int D, int mode)
{
    float scale = mode == BAG_MEAN ? 1.0f / (float)L : 1.0f;
    for (int b = 0; b < B; b++) {
        const float *dy = dout + b * out_stride;
        for (int l = 0; l < L; l++) {
            float *row = dtable + (long)ids[b * id_stride + l] * D;
            for (int i = 0; i < D; i++)
                row[i] += scale * dy[i];
        }
    }
}
