/* moe.c: a mixture-of-experts feed-forward layer (Shazeer et al. 2017; Switch,
 * Mixtral): a linear router to E experts, softmax, the top k experts per token
 * with their probabilities renormalised over those k (Mixtral), each expert a
 * SwiGLU FFN run as one GEMM over the tokens routed to it (dropless: no
 * capacity limit), and the Switch load-balancing loss
 * coef * E * sum_e f_e P_e, f_e the share of the N*k routed slots that went to
 * expert e and P_e its mean router probability (Megatron-Core's normalisation:
 * 1 when balanced, whatever k). Shared experts are ordinary SwiGLU layers
 * beside this one (graph.c). */
#include <cblas.h>
#include <string.h>

#include "trainer/layers.h"

long moe_saved_floats(const moe_shape *s)
{
    long NK = (long)s->N * s->K;
    return (long)s->N * s->E + NK + NK * (2L * s->C + 3L * s->F);
}

long moe_saved_ints(const moe_shape *s)
{
    return 3L * s->N * s->K + s->E + 1;
}

long moe_scratch_floats(const moe_shape *s)
{
    return (long)s->N * s->K * (2L * s->C + 2L * s->F) + (long)s->N * s->E;
}

void moe_saved_bind(moe_saved *sv, float *f, int *ip, const moe_shape *s)
{
    long NK = (long)s->N * s->K;
    sv->probs = f;
    sv->weight = sv->probs + (long)s->N * s->E;
    sv->xs = sv->weight + NK;
    sv->h1 = sv->xs + NK * s->C;
    sv->h3 = sv->h1 + NK * s->F;
    sv->act = sv->h3 + NK * s->F;
    sv->y = sv->act + NK * s->F;
    sv->idx = ip;
    sv->slot_pos = ip + NK;
    sv->pos_slot = ip + 2 * NK;
    sv->offset = ip + 3 * NK;
}

/* probs (N,E) <- softmax of the router logits; idx, weight (N,K) the top k
 * (ties to the lower expert) and their renormalised probabilities */
static void route(const moe_saved *sv, const float *x, const float *router, const moe_shape *s)
{
    int N = s->N, E = s->E, K = s->K;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, E, s->C, 1.0f, x, s->C, router, s->C,
                0.0f, sv->probs, E);
    for (long n = 0; n < N; n++) {
        float *p = sv->probs + n * E, top = 0.0f;
        softmax_row_forward(p, E);
        int *ix = sv->idx + n * K;
        for (int k = 0; k < K; k++) {
            int best = -1;
            for (int e = 0; e < E; e++) {
                int taken = 0;
                for (int j = 0; j < k; j++)
                    taken |= ix[j] == e;
                if (!taken && (best < 0 || p[e] > p[best]))
                    best = e;
            }
            ix[k] = best;
            top += p[best];
        }
        for (int k = 0; k < K; k++)
            sv->weight[n * K + k] = p[ix[k]] / top;
    }
}

/* Groups the N*K slots (slot n*K+k: token n's k-th expert) by expert, in slot
 * order within an expert: offset (E+1), slot_pos and pos_slot. */
static void group(const moe_saved *sv, const moe_shape *s)
{
    long NK = (long)s->N * s->K;
    memset(sv->offset, 0, (size_t)(s->E + 1) * sizeof(int));
    for (long i = 0; i < NK; i++)
        sv->offset[sv->idx[i] + 1]++;
    for (int e = 0; e < s->E; e++)
        sv->offset[e + 1] += sv->offset[e];
    for (long i = 0; i < NK; i++) { /* offset[e] runs ahead while filling, then is restored */
        int pos = sv->offset[sv->idx[i]]++;
        sv->slot_pos[i] = pos;
        sv->pos_slot[pos] = (int)i;
    }
    for (int e = s->E; e > 0; e--)
        sv->offset[e] = sv->offset[e - 1];
    sv->offset[0] = 0;
}

float moe_forward(float *out, const moe_saved *sv, const float *x, const moe_weights *w,
                  const moe_shape *s)
{
    int C = s->C, F = s->F, K = s->K;
    long NK = (long)s->N * K;
    route(sv, x, w->router, s);
    group(sv, s);
    for (long pos = 0; pos < NK; pos++)
        memcpy(sv->xs + pos * C, x + (long)(sv->pos_slot[pos] / K) * C, (size_t)C * sizeof(float));
    for (int e = 0; e < s->E; e++) {
        int r0 = sv->offset[e], rows = sv->offset[e + 1] - r0;
        if (!rows)
            continue;
        const float *xe = sv->xs + (long)r0 * C;
        float *h1 = sv->h1 + (long)r0 * F, *h3 = sv->h3 + (long)r0 * F, *a = sv->act + (long)r0 * F;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, F, C, 1.0f, xe, C,
                    w->w1 + (long)e * F * C, C, 0.0f, h1, F);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, F, C, 1.0f, xe, C,
                    w->w3 + (long)e * F * C, C, 0.0f, h3, F);
        swiglu_forward(a, h1, h3, (long)rows * F);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, C, F, 1.0f, a, F,
                    w->w2 + (long)e * C * F, F, 0.0f, sv->y + (long)r0 * C, C);
    }
    for (long n = 0; n < s->N; n++) {
        float *o = out + n * C;
        memset(o, 0, (size_t)C * sizeof(float));
        for (int k = 0; k < K; k++) {
            const float *y = sv->y + (long)sv->slot_pos[n * K + k] * C;
            float g = sv->weight[n * K + k];
            for (int i = 0; i < C; i++)
                o[i] += g * y[i];
        }
    }
    double aux = 0;
    for (int e = 0; e < s->E; e++) {
        double P = 0;
        for (long n = 0; n < s->N; n++)
            P += sv->probs[n * s->E + e];
        aux += (double)(sv->offset[e + 1] - sv->offset[e]) / NK * (P / s->N);
    }
    return (float)(s->aux_coef * s->E * aux);
}

/* dout (N,C) and the aux loss's gradient (1) -> dx (N,C) (NULL: not needed);
 * the weight gradients accumulate. scratch: moe_scratch_floats. */
void moe_backward(float *dx, const moe_weights *dw, float *scratch, const float *dout,
                  const float *x, const moe_saved *sv, const moe_weights *w, const moe_shape *s)
{
    int C = s->C, F = s->F, K = s->K, E = s->E, N = s->N;
    long NK = (long)N * K;
    float *dy = scratch, *dxs = dy + NK * C, *da = dxs + NK * C, *dh1 = da + NK * F;
    float *dp = dh1 + NK * F;
    /* the combine: out[n] = sum_k weight[n,k] y[slot]; dgate in dp's top-k entries */
    memset(dp, 0, (size_t)N * E * sizeof(float));
    for (long n = 0; n < N; n++) {
        const float *d = dout + n * C;
        float dg[MOE_MAX_TOP_K], dot = 0.0f, top = 0.0f;
        for (int k = 0; k < K; k++) {
            long pos = sv->slot_pos[n * K + k];
            const float *y = sv->y + pos * C;
            float g = sv->weight[n * K + k], acc = 0.0f, *dyp = dy + pos * C;
            for (int i = 0; i < C; i++) {
                acc += d[i] * y[i];
                dyp[i] = g * d[i];
            }
            dg[k] = acc;
            dot += acc * g;
            top += sv->probs[n * E + sv->idx[n * K + k]];
        }
        /* weight_k = p_k / sum_j p_j over the top k: dp_i = (dg_i - sum_k dg_k weight_k) / top */
        for (int k = 0; k < K; k++)
            dp[n * E + sv->idx[n * K + k]] = (dg[k] - dot) / top;
    }
    for (int e = 0; e < E; e++) {
        int r0 = sv->offset[e], rows = sv->offset[e + 1] - r0;
        if (!rows)
            continue;
        const float *xe = sv->xs + (long)r0 * C, *h1 = sv->h1 + (long)r0 * F;
        const float *h3 = sv->h3 + (long)r0 * F, *a = sv->act + (long)r0 * F;
        const float *dye = dy + (long)r0 * C;
        float *dae = da + (long)r0 * F, *dh1e = dh1 + (long)r0 * F;
        const float *w1 = w->w1 + (long)e * F * C, *w3 = w->w3 + (long)e * F * C;
        const float *w2 = w->w2 + (long)e * C * F;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C, F, rows, 1.0f, dye, C, a, F, 1.0f,
                    dw->w2 + (long)e * C * F, F);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, F, C, 1.0f, dye, C, w2, F,
                    0.0f, dae, F);
        swiglu_backward(dh1e, dae, dae, h1, h3, (long)rows * F); /* dae becomes dh3 */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, F, C, rows, 1.0f, dh1e, F, xe, C, 1.0f,
                    dw->w1 + (long)e * F * C, C);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, F, C, rows, 1.0f, dae, F, xe, C, 1.0f,
                    dw->w3 + (long)e * F * C, C);
        if (!dx)
            continue;
        float *dxe = dxs + (long)r0 * C;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, C, F, 1.0f, dh1e, F, w1, C,
                    0.0f, dxe, C);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, C, F, 1.0f, dae, F, w3, C,
                    1.0f, dxe, C);
    }
    /* the load-balancing loss: d/dp[n,e] = coef E f_e / N (f_e is not differentiable) */
    for (int e = 0; e < E; e++) {
        float f = (float)(sv->offset[e + 1] - sv->offset[e]) / (float)NK;
        float g = s->aux_coef * (float)E * f / (float)N;
        for (long n = 0; n < N; n++)
            dp[n * E + e] += g;
    }
    for (long n = 0; n < N; n++) /* through the softmax, in place */
        softmax_row_backward(dp + n * E, sv->probs + n * E, E);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, E, C, N, 1.0f, dp, E, x, C, 1.0f,
                dw->router, C);
    if (!dx)
        return;
    for (long n = 0; n < N; n++) {
        float *o = dx + n * C;
        memcpy(o, dxs + (long)sv->slot_pos[n * K] * C, (size_t)C * sizeof(float));
        for (int k = 1; k < K; k++) {
            const float *g = dxs + (long)sv->slot_pos[n * K + k] * C;
            for (int i = 0; i < C; i++)
                o[i] += g[i];
        }
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, E, 1.0f, dp, E, w->router, C, 1.0f,
                dx, C);
}
