/* synth.c: the synthetic data generators. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/rng.h"
#include "trainer/synth.h"

int teacher_init(teacher *t, int in_dim, int hidden, int classes, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    t->w1 = malloc((size_t)hidden * in_dim * sizeof(float));
    t->w2 = malloc((size_t)classes * hidden * sizeof(float));
    if (!t->w1 || !t->w2) {
        teacher_free(t);
        return -1;
    }
    t->in_dim = in_dim;
    t->hidden = hidden;
    t->classes = classes;
    t->seed = seed;
    rng r = rng_at(seed, 0x7eac4e7ULL);
    float s1 = 2.0f / sqrtf((float)in_dim), s2 = 1.0f / sqrtf((float)hidden);
    for (long i = 0; i < (long)hidden * in_dim; i++)
        t->w1[i] = s1 * rng_normal(&r);
    for (long i = 0; i < (long)classes * hidden; i++)
        t->w2[i] = s2 * rng_normal(&r);
    return 0;
}

void teacher_free(teacher *t)
{
    free(t->w1);
    free(t->w2);
    memset(t, 0, sizeof *t);
}

void teacher_fill(const teacher *t, uint64_t first, int B, float *x, int *labels)
{
    float h[1024];
    int H = t->hidden < 1024 ? t->hidden : 1024;
    for (int b = 0; b < B; b++) {
        rng r = rng_at(t->seed, first + (uint64_t)b);
        float *xb = x + (long)b * t->in_dim;
        for (int i = 0; i < t->in_dim; i++)
            xb[i] = rng_normal(&r);
        for (int j = 0; j < H; j++) {
            const float *w = t->w1 + (long)j * t->in_dim;
            float a = 0.0f;
            for (int i = 0; i < t->in_dim; i++)
                a += w[i] * xb[i];
            h[j] = tanhf(a);
        }
        int best = 0;
        float best_z = -INFINITY;
        for (int k = 0; k < t->classes; k++) {
            const float *w = t->w2 + (long)k * t->hidden;
            float z = 0.0f;
            for (int j = 0; j < H; j++)
                z += w[j] * h[j];
            if (z > best_z) {
                best_z = z;
                best = k;
            }
        }
        labels[b] = best;
    }
}

void synth_images(uint64_t seed, uint64_t first, int B, int C, int H, int W, int classes,
                  float *x, int *labels)
{
    for (int b = 0; b < B; b++) {
        rng r = rng_at(seed, first + (uint64_t)b);
        int k = (int)rng_below(&r, (uint64_t)classes);
        labels[b] = k;
        for (int c = 0; c < C; c++) {
            rng pr = rng_at(seed ^ 0x5eedULL, (uint64_t)k * C + c); /* the class's pattern */
            float fx = 0.5f * rng_uniform(&pr), fy = 0.5f * rng_uniform(&pr);
            float ph = 6.2831853f * rng_uniform(&pr);
            float *p = x + (((long)b * C + c) * H) * W;
            for (int y = 0; y < H; y++)
                for (int xx = 0; xx < W; xx++)
                    p[y * W + xx] = sinf(fx * xx + fy * y + ph) + 0.5f * (2 * rng_uniform(&r) - 1);
        }
    }
}

long synth_zipf(double u, long n, double s)
{
    if (n <= 1)
        return 0;
    double v;
    if (fabs(s - 1.0) < 1e-9)
        v = exp(u * log((double)n + 1.0)); /* in [1, n+1) */
    else
        v = pow(u * (pow((double)n + 1.0, 1.0 - s) - 1.0) + 1.0, 1.0 / (1.0 - s));
    long k = (long)v - 1;
    return k < 0 ? 0 : k >= n ? n - 1 : k;
}

double synth_zipf_cdf(double h, long n, double s)
{
    if (h <= 0)
        return 0;
    if (h >= n)
        return 1;
    /* synth_zipf draws v with density ~ v^-s on [1, n+1) and returns floor(v) - 1 */
    if (fabs(s - 1.0) < 1e-9)
        return log(h + 1.0) / log((double)n + 1.0);
    return (pow(h + 1.0, 1.0 - s) - 1.0) / (pow((double)n + 1.0, 1.0 - s) - 1.0);
}

/* Sum over ranks of P(drawn at least once) = 1 - (1 - p)^draws: exact for the
 * hot head, then over geometric blocks of ranks whose probabilities differ by
 * under 1 % (the cold tail, where 1 - (1-p)^N is nearly linear in p). */
double synth_zipf_unique(long n, double s, double draws, long below)
{
    if (n <= 0 || draws <= 0)
        return 0;
    long last = below < n ? below : n;
    double u = 0;
    long k = 0;
    for (; k < last && k < 4096; k++) {
        double p = synth_zipf_cdf((double)k + 1, n, s) - synth_zipf_cdf((double)k, n, s);
        u += -expm1(draws * log1p(-p));
    }
    while (k < last) {
        long end = k + (long)ceil((double)k * 0.004);
        end = end > last ? last : end;
        double w = (double)(end - k);
        double p = (synth_zipf_cdf((double)end, n, s) - synth_zipf_cdf((double)k, n, s)) / w;
        u += w * -expm1(draws * log1p(-p));
        k = end;
    }
    return u;
}

/* BERT: Zipf tokens above the special ids, [CLS] first, two segments, a
 * random length in [T/2, T], npred distinct masked positions in [1, length). */
static void fill_tokens(model_inputs *in, uint64_t seed, uint64_t first)
{
    int T = in->seq_len, P = in->npred, V = in->vocab;
    for (int b = 0; b < in->batch; b++) {
        rng r = rng_at(seed, first + (uint64_t)b);
        int *tok = in->tokens + (long)b * T, *seg = in->segments + (long)b * T;
        int len = T / 2 + (int)rng_below(&r, (uint64_t)(T - T / 2 + 1));
        if (len < P + 1)
            len = P + 1 < T ? P + 1 : T;
        in->lengths[b] = len;
        for (int t = 0; t < T; t++) {
            tok[t] = t == 0 ? 101 : t < len ? 1000 + (int)synth_zipf(rng_uniform(&r), V - 1000, 1.0)
                                             : 0;
            seg[t] = t >= len / 2 && t < len;
        }
        int *pos = in->positions + (long)b * P, *lab = in->labels + (long)b * P;
        for (int p = 0; p < P; p++) {
            int q, dup;
            do { /* distinct positions; len - 1 >= P candidates exist */
                q = 1 + (int)rng_below(&r, (uint64_t)(len - 1));
                dup = 0;
                for (int j = 0; j < p; j++)
                    dup |= pos[j] == q;
            } while (dup);
            pos[p] = q;
            lab[p] = tok[q];
        }
        for (int p = 0; p < P; p++)
            tok[pos[p]] = 103; /* [MASK] */
    }
}

/* Decoders: a sequence of T + 1 tokens whose first half is uniform over the
 * vocabulary and whose second half repeats it; tokens are its first T, labels
 * its last T. Past the middle the next token is the one half a sequence back:
 * learnable by attention only (a bigram model stays at ln V). */
static void fill_next_tokens(model_inputs *in, uint64_t seed, uint64_t first)
{
    int T = in->seq_len, half = (T + 1) / 2;
    for (int b = 0; b < in->batch; b++) {
        rng r = rng_at(seed, first + (uint64_t)b);
        int *tok = in->tokens + (long)b * T, *lab = in->labels + (long)b * T;
        for (int t = 0; t <= T; t++) {
            int v = t < half ? (int)rng_below(&r, (uint64_t)in->vocab) : tok[t - half];
            if (t < T)
                tok[t] = v;
            if (t > 0)
                lab[t - 1] = v;
        }
    }
}

/* DLRM: 13 dense features log(1 + exponential), Zipf(1.05) ids (bags[f] per
 * table), and a click drawn from a fixed logistic model of both, so it is
 * learnable. */
static void fill_clicks(model_inputs *in, uint64_t seed, uint64_t first)
{
    int F = in->ntables;
    for (int b = 0; b < in->batch; b++) {
        rng r = rng_at(seed, first + (uint64_t)b);
        float *x = in->x + (long)b * in->x_per_sample;
        double z = -1.0;
        for (int i = 0; i < in->x_per_sample; i++) {
            x[i] = logf(1.0f - logf(1.0f - rng_uniform(&r)));
            z += (i % 2 ? 0.3 : -0.2) * x[i];
        }
        int *ids = in->sparse + (long)b * in->ids_per_sample;
        for (int f = 0; f < F; ids += in->bags[f++])
            for (int l = 0; l < in->bags[f]; l++) {
                long id = synth_zipf(rng_uniform(&r), in->table_rows[f], SYNTH_CLICK_ZIPF_S);
                ids[l] = (int)id;
                z += (double)((rng_mix(seed ^ ((uint64_t)f << 40) ^ (uint64_t)id) >> 40) /
                              16777216.0 - 0.5);
            }
        in->targets[b] = rng_uniform(&r) < 1.0 / (1.0 + exp(-z)) ? 1.0f : 0.0f;
    }
}

void synth_fill(model_inputs *in, uint64_t seed, uint64_t first)
{
    if (in->tokens && in->next_token) {
        fill_next_tokens(in, seed, first);
    } else if (in->tokens) {
        fill_tokens(in, seed, first);
    } else if (in->sparse) {
        fill_clicks(in, seed, first);
    } else if (in->height > 0) {
        synth_images(seed, first, in->batch, in->channels, in->height, in->width, in->classes,
                     in->x, in->labels);
    } else {
        /* vectors: random features, labels from a hash (for shapes and speed, not learning:
         * use a teacher for a learnable vector stream) */
        for (int b = 0; b < in->batch; b++) {
            rng r = rng_at(seed, first + (uint64_t)b);
            for (long i = 0; i < in->x_per_sample; i++)
                in->x[(long)b * in->x_per_sample + i] = rng_normal(&r);
            for (int k = 0; k < in->labels_per_sample; k++)
                in->labels[(long)b * in->labels_per_sample + k] =
                    (int)rng_below(&r, (uint64_t)in->classes);
        }
    }
}
