/* conv2d.c: 2-D convolution as im2col + cblas_sgemm, one image at a time so
 * the column scratch stays small (C*K*K x OH*OW floats). */
#include <cblas.h>
#include <string.h>

#include "trainer/layers.h"

void conv_shape_init(conv_shape *s, int C, int H, int W, int OC, int K, int stride, int pad)
{
    s->C = C;
    s->H = H;
    s->W = W;
    s->OC = OC;
    s->K = K;
    s->stride = stride;
    s->pad = pad;
    /* 0 when the window does not fit (C division would round -1/2 up to 0) */
    s->OH = H + 2 * pad >= K ? (H + 2 * pad - K) / stride + 1 : 0;
    s->OW = W + 2 * pad >= K ? (W + 2 * pad - K) / stride + 1 : 0;
}

static int is_pointwise(const conv_shape *s)
{
    return s->K == 1 && s->stride == 1 && s->pad == 0;
}

long conv2d_scratch_floats(const conv_shape *s)
{
    return is_pointwise(s) ? 0 : (long)s->C * s->K * s->K * s->OH * s->OW;
}

/* img (C,H,W) -> col (C*K*K, OH*OW), zeros where the window is in the padding */
static void im2col(float *col, const float *img, const conv_shape *s)
{
    int ohw = s->OH * s->OW;
    for (int c = 0; c < s->C; c++)
        for (int ky = 0; ky < s->K; ky++)
            for (int kx = 0; kx < s->K; kx++) {
                float *row = col + ((long)(c * s->K + ky) * s->K + kx) * ohw;
                const float *plane = img + (long)c * s->H * s->W;
                for (int oy = 0; oy < s->OH; oy++) {
                    int iy = oy * s->stride - s->pad + ky;
                    float *r = row + oy * s->OW;
                    if (iy < 0 || iy >= s->H) {
                        memset(r, 0, (size_t)s->OW * sizeof(float));
                        continue;
                    }
                    const float *line = plane + (long)iy * s->W;
                    for (int ox = 0; ox < s->OW; ox++) {
                        int ix = ox * s->stride - s->pad + kx;
                        r[ox] = ix >= 0 && ix < s->W ? line[ix] : 0.0f;
                    }
                }
            }
}

/* col (C*K*K, OH*OW) -> img (C,H,W) accumulated (img zeroed by the caller) */
static void col2im(float *img, const float *col, const conv_shape *s)
{
    int ohw = s->OH * s->OW;
    for (int c = 0; c < s->C; c++)
        for (int ky = 0; ky < s->K; ky++)
            for (int kx = 0; kx < s->K; kx++) {
                const float *row = col + ((long)(c * s->K + ky) * s->K + kx) * ohw;
                float *plane = img + (long)c * s->H * s->W;
                for (int oy = 0; oy < s->OH; oy++) {
                    int iy = oy * s->stride - s->pad + ky;
                    if (iy < 0 || iy >= s->H)
                        continue;
                    const float *r = row + oy * s->OW;
                    float *line = plane + (long)iy * s->W;
                    for (int ox = 0; ox < s->OW; ox++) {
                        int ix = ox * s->stride - s->pad + kx;
                        if (ix >= 0 && ix < s->W)
                            line[ix] += r[ox];
                    }
                }
            }
}

/* inp (B,C,H,W), w (OC,C,K,K), bias (OC) or NULL -> out (B,OC,OH,OW) */
void conv2d_forward(float *out, const float *inp, const float *w, const float *bias,
                    float *col, const conv_shape *s, int B)
{
    int ohw = s->OH * s->OW, ckk = s->C * s->K * s->K;
    long in_n = (long)s->C * s->H * s->W, out_n = (long)s->OC * ohw;
    for (int b = 0; b < B; b++) {
        const float *x = inp + b * in_n;
        float *y = out + b * out_n;
        const float *cols = x;
        if (!is_pointwise(s)) {
            im2col(col, x, s);
            cols = col;
        }
        float beta = 0.0f;
        if (bias) {
            for (int o = 0; o < s->OC; o++)
                for (int i = 0; i < ohw; i++)
                    y[(long)o * ohw + i] = bias[o];
            beta = 1.0f;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->OC, ohw, ckk, 1.0f, w, ckk,
                    cols, ohw, beta, y, ohw);
    }
}

/* dout (B,OC,OH,OW) -> dinp (B,C,H,W); dw (OC,C,K,K) += dout col^T; dbias += */
void conv2d_backward(float *dinp, float *dw, float *dbias, const float *dout,
                     const float *inp, const float *w, float *col, const conv_shape *s, int B)
{
    int ohw = s->OH * s->OW, ckk = s->C * s->K * s->K;
    long in_n = (long)s->C * s->H * s->W, out_n = (long)s->OC * ohw;
    for (int b = 0; b < B; b++) {
        const float *x = inp + b * in_n;
        const float *dy = dout + b * out_n;
        const float *cols = x;
        if (!is_pointwise(s)) {
            im2col(col, x, s);
            cols = col;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->OC, ckk, ohw, 1.0f, dy, ohw,
                    cols, ohw, 1.0f, dw, ckk);
        if (dbias)
            for (int o = 0; o < s->OC; o++) {
                float acc = 0.0f;
                for (int i = 0; i < ohw; i++)
                    acc += dy[(long)o * ohw + i];
                dbias[o] += acc;
            }
        if (!dinp)
            continue;
        float *dx = dinp + b * in_n;
        if (is_pointwise(s)) {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, ohw, s->OC, 1.0f, w, ckk,
                        dy, ohw, 0.0f, dx, ohw);
        } else {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, ohw, s->OC, 1.0f, w, ckk,
                        dy, ohw, 0.0f, col, ohw);
            memset(dx, 0, (size_t)in_n * sizeof(float));
            col2im(dx, col, s);
        }
    }
}
