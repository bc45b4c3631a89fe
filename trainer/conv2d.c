/* conv2d.c: 2-D convolution as im2col + cblas_sgemm. Images go through the
 * GEMM in groups of g, g chosen so a group has at least CONV_MIN_COLS output
 * pixels: small feature maps (ResNet's 14x14, 7x7) then still make wide GEMMs,
 * while the scratch stays bounded (C*K*K x g*OH*OW columns, plus the output). */
#include <cblas.h>
#include <string.h>

#include "trainer/layers.h"

#define CONV_MIN_COLS 1024

void conv_shape_init(conv_shape *s, int C, int H, int W, int OC, int K, int stride, int pad)
{
    s->C = C;
    s->H = H;
    s->W = W;
    s->OC = OC;
    s->K = K;
    s->stride = stride;
    s->pad = pad;
    s->OH = window_out(H, K, stride, pad);
    s->OW = window_out(W, K, stride, pad);
}

static int is_pointwise(const conv_shape *s)
{
    return s->K == 1 && s->stride == 1 && s->pad == 0;
}

/* images per GEMM */
static int group_size(const conv_shape *s)
{
    int ohw = s->OH * s->OW;
    return ohw >= CONV_MIN_COLS ? 1 : (CONV_MIN_COLS + ohw - 1) / ohw;
}

long conv2d_scratch_floats(const conv_shape *s)
{
    long ohw = (long)s->OH * s->OW, g = group_size(s);
    if (g == 1)
        return is_pointwise(s) ? 0 : (long)s->C * s->K * s->K * ohw;
    return ((long)s->C * s->K * s->K + s->OC) * g * ohw; /* columns, then grouped output */
}

/* img (C,H,W) -> columns [0, OH*OW) of col (C*K*K rows of ld floats); zeros
 * where the window lies in the padding */
static void im2col(float *col, long ld, const float *img, const conv_shape *s)
{
    for (int c = 0; c < s->C; c++)
        for (int ky = 0; ky < s->K; ky++)
            for (int kx = 0; kx < s->K; kx++) {
                float *row = col + ((long)(c * s->K + ky) * s->K + kx) * ld;
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

/* columns of col (C*K*K rows of ld floats) -> img (C,H,W), accumulated */
static void col2im(float *img, const float *col, long ld, const conv_shape *s)
{
    for (int c = 0; c < s->C; c++)
        for (int ky = 0; ky < s->K; ky++)
            for (int kx = 0; kx < s->K; kx++) {
                const float *row = col + ((long)(c * s->K + ky) * s->K + kx) * ld;
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

/* (n images of rows x hw) <-> (rows, n*hw): the grouped GEMM layout */
static void to_grouped(float *dst, const float *src, int n, int rows, long hw)
{
    for (int j = 0; j < n; j++)
        for (int r = 0; r < rows; r++)
            memcpy(dst + (long)r * n * hw + j * hw, src + ((long)j * rows + r) * hw,
                   (size_t)hw * sizeof(float));
}

static void from_grouped(float *dst, const float *src, int n, int rows, long hw)
{
    for (int j = 0; j < n; j++)
        for (int r = 0; r < rows; r++)
            memcpy(dst + ((long)j * rows + r) * hw, src + (long)r * n * hw + j * hw,
                   (size_t)hw * sizeof(float));
}

/* columns of images [b, b+n) of inp into col (ld = n*OH*OW) */
static const float *columns(float *col, const float *inp, int b, int n, const conv_shape *s)
{
    long ohw = (long)s->OH * s->OW, in_n = (long)s->C * s->H * s->W;
    if (is_pointwise(s)) {
        if (n == 1)
            return inp + b * in_n;
        to_grouped(col, inp + b * in_n, n, s->C, ohw);
        return col;
    }
    for (int j = 0; j < n; j++)
        im2col(col + j * ohw, n * ohw, inp + (b + j) * in_n, s);
    return col;
}

/* inp (B,C,H,W), w (OC,C,K,K), bias (OC) or NULL -> out (B,OC,OH,OW) */
void conv2d_forward(float *out, const float *inp, const float *w, const float *bias,
                    float *col, const conv_shape *s, int B)
{
    int ckk = s->C * s->K * s->K, g = group_size(s);
    long ohw = (long)s->OH * s->OW, out_n = (long)s->OC * ohw;
    for (int b = 0; b < B; b += g) {
        int n = B - b < g ? B - b : g;
        const float *cols = columns(col, inp, b, n, s);
        float *y = g == 1 ? out + b * out_n : col + (long)ckk * n * ohw;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->OC, (int)(n * ohw), ckk, 1.0f,
                    w, ckk, cols, (int)(n * ohw), 0.0f, y, (int)(n * ohw));
        if (g > 1)
            from_grouped(out + b * out_n, y, n, s->OC, ohw);
        for (int j = 0; bias && j < n; j++)
            for (int o = 0; o < s->OC; o++) {
                float *p = out + (b + j) * out_n + o * ohw;
                for (long i = 0; i < ohw; i++)
                    p[i] += bias[o];
            }
    }
}

/* dout (B,OC,OH,OW) -> dinp (B,C,H,W); dw (OC,C,K,K) += dout col^T; dbias += */
void conv2d_backward(float *dinp, float *dw, float *dbias, const float *dout,
                     const float *inp, const float *w, float *col, const conv_shape *s, int B)
{
    int ckk = s->C * s->K * s->K, g = group_size(s);
    long ohw = (long)s->OH * s->OW, in_n = (long)s->C * s->H * s->W, out_n = (long)s->OC * ohw;
    for (int b = 0; b < B; b += g) {
        int n = B - b < g ? B - b : g, ld = (int)(n * ohw);
        const float *cols = columns(col, inp, b, n, s);
        const float *dy = dout + b * out_n;
        if (g > 1) {
            float *gy = col + (long)ckk * n * ohw;
            to_grouped(gy, dy, n, s->OC, ohw);
            dy = gy;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->OC, ckk, ld, 1.0f, dy, ld, cols,
                    ld, 1.0f, dw, ckk);
        for (int o = 0; dbias && o < s->OC; o++) {
            const float *p = dy + (long)o * ld;
            float acc = 0.0f;
            for (int i = 0; i < ld; i++)
                acc += p[i];
            dbias[o] += acc;
        }
        if (!dinp)
            continue;
        float *dx = dinp + b * in_n;
        if (is_pointwise(s) && n == 1) {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, ld, s->OC, 1.0f, w, ckk,
                        dy, ld, 0.0f, dx, ld);
            continue;
        }
        /* the columns are no longer needed: their gradient overwrites them */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, ld, s->OC, 1.0f, w, ckk, dy, ld,
                    0.0f, col, ld);
        if (is_pointwise(s)) {
            from_grouped(dx, col, n, s->C, ohw);
            continue;
        }
        memset(dx, 0, (size_t)(n * in_n) * sizeof(float));
        for (int j = 0; j < n; j++)
            col2im(dx + j * in_n, col + j * ohw, ld, s);
    }
}
