/* attention.c: the core of multi-head self-attention, softmax(Q K^T / sqrt(hs)) V:
 * bidirectional with a key padding mask (BERT, ViT), or causal with grouped-query
 * heads (decoders: query head h reads key/value head h / (NH / KV)). The
 * products are strided sgemms on the packed qkv tensor, one (sequence, head) at
 * a time; a causal head computes the full T x T scores and masks the upper
 * triangle, so its FLOPs are the full square (as Megatron and Narayanan et al.
 * count them). */
#include <cblas.h>
#include <math.h>

#include "trainer/layers.h"

/* qkv rows of (NH + 2 KV) hs: [q heads | k heads | v heads] */
typedef struct attn_shape {
    int B, T, NH, KV, hs, causal;
    const int *lengths;
} attn_shape;

/* Row i of the scores: softmax over the keys it may see (j < len, and j <= i
 * when causal); the others get probability 0. */
static void softmax_row(float *row, int i, int T, int len, int causal)
{
    int n = causal && i + 1 < len ? i + 1 : len;
    softmax_row_forward(row, n);
    for (int j = n; j < T; j++)
        row[j] = 0.0f;
}

static void core_forward(float *out, float *att, const float *qkv, const attn_shape *s)
{
    int T = s->T, hs = s->hs, W = (s->NH + 2 * s->KV) * hs, A = s->NH * hs, group = s->NH / s->KV;
    float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < s->B; b++) {
        int len = s->lengths ? s->lengths[b] : T;
        const float *base = qkv + (long)b * T * W;
        for (int h = 0; h < s->NH; h++) {
            int g = h / group;
            const float *q = base + h * hs, *k = base + A + g * hs, *v = base + A + (s->KV + g) * hs;
            float *p = att + ((long)b * s->NH + h) * T * T;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, W, k, W, 0.0f,
                        p, T);
            for (int i = 0; i < T; i++)
                softmax_row(p + (long)i * T, i, T, len, s->causal);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, p, T, v, W, 0.0f,
                        out + (long)b * T * A + h * hs, A);
        }
    }
}

/* A key/value head's gradient sums over the query heads of its group: the
 * first head of a group writes it (beta 0), the others add (beta 1). */
static void core_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                          const float *att, const attn_shape *s)
{
    int T = s->T, hs = s->hs, W = (s->NH + 2 * s->KV) * hs, A = s->NH * hs, group = s->NH / s->KV;
    float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < s->B; b++) {
        const float *base = qkv + (long)b * T * W;
        float *dbase = dqkv + (long)b * T * W;
        for (int h = 0; h < s->NH; h++) {
            int g = h / group;
            float beta = h % group ? 1.0f : 0.0f;
            const float *q = base + h * hs, *k = base + A + g * hs, *v = base + A + (s->KV + g) * hs;
            const float *p = att + ((long)b * s->NH + h) * T * T;
            const float *dy = dout + (long)b * T * A + h * hs;
            float *ds = scratch;
            /* dP = dO V^T, dV = P^T dO */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, dy, A, v, W, 0.0f,
                        ds, T);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, p, T, dy, A, beta,
                        dbase + A + (s->KV + g) * hs, W);
            /* through the softmax: dS = P (dP - sum_j P dP) */
            for (int i = 0; i < T; i++)
                softmax_row_backward(ds + (long)i * T, p + (long)i * T, T);
            /* dQ = scale dS K, dK = scale dS^T Q */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, scale, ds, T, k, W,
                        0.0f, dbase + h * hs, W);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, scale, ds, T, q, W, beta,
                        dbase + A + g * hs, W);
        }
    }
}

void attention_forward(float *out, float *att, const float *qkv, const int *lengths,
                       int B, int T, int C, int NH)
{
    attn_shape s = {B, T, NH, NH, C / NH, 0, lengths};
    core_forward(out, att, qkv, &s);
}

void attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                        const float *att, int B, int T, int C, int NH)
{
    attn_shape s = {B, T, NH, NH, C / NH, 0, NULL};
    core_backward(dqkv, scratch, dout, qkv, att, &s);
}

void causal_attention_forward(float *out, float *att, const float *qkv, int B, int T, int NH,
                              int KV, int hs)
{
    attn_shape s = {B, T, NH, KV, hs, 1, NULL};
    core_forward(out, att, qkv, &s);
}

void causal_attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                               const float *att, int B, int T, int NH, int KV, int hs)
{
    attn_shape s = {B, T, NH, KV, hs, 1, NULL};
    core_backward(dqkv, scratch, dout, qkv, att, &s);
}
