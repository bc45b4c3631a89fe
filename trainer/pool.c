/* pool.c: max and global-average pooling over NCHW images. */
#include <float.h>
#include <string.h>

#include "trainer/layers.h"

void pool_shape_init(pool_shape *s, int C, int H, int W, int K, int stride, int pad)
{
    s->C = C;
    s->H = H;
    s->W = W;
    s->K = K;
    s->stride = stride;
    s->pad = pad;
    s->OH = window_out(H, K, stride, pad);
    s->OW = window_out(W, K, stride, pad);
}

/* inp (B,C,H,W) -> out (B,C,OH,OW); argmax holds the winning index within the plane */
void maxpool_forward(float *out, int *argmax, const float *inp, const pool_shape *s, int B)
{
    long planes = (long)B * s->C;
    for (long p = 0; p < planes; p++) {
        const float *x = inp + p * s->H * s->W;
        float *y = out + p * s->OH * s->OW;
        int *am = argmax + p * s->OH * s->OW;
        for (int oy = 0; oy < s->OH; oy++)
            for (int ox = 0; ox < s->OW; ox++) {
                float best = -FLT_MAX;
                int where = -1;
                for (int ky = 0; ky < s->K; ky++) {
                    int iy = oy * s->stride - s->pad + ky;
                    if (iy < 0 || iy >= s->H)
                        continue;
                    for (int kx = 0; kx < s->K; kx++) {
                        int ix = ox * s->stride - s->pad + kx;
                        if (ix >= 0 && ix < s->W && (where < 0 || x[iy * s->W + ix] > best)) {
                            best = x[iy * s->W + ix];
                            where = iy * s->W + ix;
                        }
                    }
                }
                y[oy * s->OW + ox] = best;
                am[oy * s->OW + ox] = where;
            }
    }
}

void maxpool_backward(float *dinp, const float *dout, const int *argmax, const pool_shape *s, int B)
{
    long planes = (long)B * s->C;
    memset(dinp, 0, (size_t)planes * s->H * s->W * sizeof(float));
    for (long p = 0; p < planes; p++) {
        float *dx = dinp + p * s->H * s->W;
        const float *dy = dout + p * s->OH * s->OW;
        const int *am = argmax + p * s->OH * s->OW;
        for (int i = 0; i < s->OH * s->OW; i++)
            dx[am[i]] += dy[i];
    }
}

/* inp (B,C,HW) -> out (B,C) */
void gap_forward(float *out, const float *inp, int B, int C, int HW)
{
    for (long p = 0; p < (long)B * C; p++) {
        const float *x = inp + p * HW;
        float acc = 0.0f;
        for (int i = 0; i < HW; i++)
            acc += x[i];
        out[p] = acc / (float)HW;
    }
}

void gap_backward(float *dinp, const float *dout, int B, int C, int HW)
{
    for (long p = 0; p < (long)B * C; p++) {
        float g = dout[p] / (float)HW;
        for (int i = 0; i < HW; i++)
            dinp[p * HW + i] = g;
    }
}
