/* markov.c: the order-k Markov source (markov.h). */
#include "trainer/markov.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/rng.h"

#define POWER_TOL 1e-15
#define POWER_MAX_ITERS 1000000

void markov_free(markov *m)
{
    free(m->prob);
    free(m->cdf);
    free(m->stationary);
    free(m->stationary_cdf);
    memset(m, 0, sizeof *m);
}

/* Entropy in nats of the law p (n). */
static double entropy(const double *p, long n)
{
    double h = 0;
    for (long i = 0; i < n; i++)
        h -= p[i] > 0 ? p[i] * log(p[i]) : 0;
    return h;
}

/* Entropy of the first j tokens of a context under the stationary law: the
 * marginal over the index's leading digits, into tmp (V^j). */
static double head_marginal_entropy(const markov *m, int j, double *tmp)
{
    long n = 1, div = 1;
    for (int i = 0; i < j; i++)
        n *= m->vocab;
    for (int i = j; i < m->order; i++)
        div *= m->vocab;
    memset(tmp, 0, (size_t)n * sizeof *tmp);
    for (long c = 0; c < m->contexts; c++)
        tmp[c / div] += m->stationary[c];
    return entropy(tmp, n);
}

static void running_sum(const double *p, long n, double *cdf)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        cdf[i] = s += p[i];
}

/* V^k contexts into *contexts, or an input error. */
static int count_contexts(int vocab, int order, long *contexts, tt_error *err)
{
    long C = 1;
    for (int i = 0; i < order && vocab >= 2 && C <= MARKOV_MAX_CONTEXTS; i++)
        C *= vocab;
    if (vocab < 2 || order < 1 || C > MARKOV_MAX_CONTEXTS)
        return tt_error_set(err, TT_EINPUT,
                            "markov source: vocabulary %d and order %d give %ld contexts; need a "
                            "vocabulary of 2 or more, order 1 or more and at most %ld contexts",
                            vocab, order, C, MARKOV_MAX_CONTEXTS);
    *contexts = C;
    return TT_OK;
}

int markov_init_probs(markov *m, int vocab, int order, const double *prob, uint64_t seed,
                      tt_error *err)
{
    memset(m, 0, sizeof *m);
    long C;
    int rc = count_contexts(vocab, order, &C, err);
    if (rc)
        return rc;
    m->vocab = vocab, m->order = order, m->contexts = C, m->seed = seed;
    size_t cv = (size_t)C * vocab;
    m->prob = malloc(cv * sizeof *m->prob);
    m->cdf = malloc(cv * sizeof *m->cdf);
    m->stationary = malloc((size_t)C * sizeof *m->stationary);
    m->stationary_cdf = malloc((size_t)C * sizeof *m->stationary_cdf);
    double *next = malloc((size_t)C * sizeof *next);
    if (!m->prob || !m->cdf || !m->stationary || !m->stationary_cdf || !next) {
        free(next);
        markov_free(m);
        return tt_error_set(err, TT_EINTERNAL, "markov source: out of memory");
    }
    memcpy(m->prob, prob, cv * sizeof *prob);
    for (long c = 0; c < C; c++)
        running_sum(m->prob + c * vocab, vocab, m->cdf + c * vocab);

    /* power iteration from the uniform law: context c and token v lead to (c V + v) mod C */
    for (long c = 0; c < C; c++)
        m->stationary[c] = 1.0 / (double)C;
    double diff = 1;
    for (long it = 0; it < POWER_MAX_ITERS && diff > POWER_TOL; it++) {
        memset(next, 0, (size_t)C * sizeof *next);
        for (long c = 0; c < C; c++) {
            const double *p = m->prob + c * vocab;
            long base = (c * vocab) % C;
            for (int v = 0; v < vocab; v++)
                next[base + v] += m->stationary[c] * p[v];
        }
        diff = 0;
        for (long c = 0; c < C; c++) {
            diff += fabs(next[c] - m->stationary[c]);
            m->stationary[c] = next[c];
        }
    }
    if (diff > POWER_TOL) {
        free(next);
        markov_free(m);
        return tt_error_set(err, TT_EINPUT,
                            "markov source: the stationary law did not converge (a periodic or "
                            "reducible chain); give every token some probability");
    }
    running_sum(m->stationary, C, m->stationary_cdf);
    for (long c = 0; c < C; c++)
        m->entropy_rate += m->stationary[c] * entropy(m->prob + c * vocab, vocab);
    m->head_entropy = head_marginal_entropy(m, order, next) - head_marginal_entropy(m, 1, next);
    free(next);
    return TT_OK;
}

int markov_init(markov *m, int vocab, int order, int successors, double floor, uint64_t seed,
                tt_error *err)
{
    memset(m, 0, sizeof *m);
    if (successors < 1 || successors > vocab || !(floor > 0 && floor < 1))
        return tt_error_set(err, TT_EINPUT,
                            "markov source: %d successors of %d tokens with floor %g; need 1 to "
                            "vocabulary successors and a floor in (0, 1)",
                            successors, vocab, floor);
    long C;
    int rc = count_contexts(vocab, order, &C, err);
    if (rc)
        return rc;
    double *prob = malloc((size_t)C * vocab * sizeof *prob);
    double *w = malloc((size_t)vocab * sizeof *w);
    if (!prob || !w) {
        free(prob);
        free(w);
        return tt_error_set(err, TT_EINTERNAL, "markov source: out of memory");
    }
    for (long c = 0; c < C; c++) {
        rng r = rng_at(seed, (uint64_t)c);
        double *p = prob + c * vocab, sum = 0;
        memset(w, 0, (size_t)vocab * sizeof *w);
        for (int j = 0; j < successors; j++) {
            int v;
            do /* distinct successors */
                v = (int)rng_below(&r, (uint64_t)vocab);
            while (w[v] > 0);
            w[v] = -log(1.0 - rng_open53(&r));
            sum += w[v];
        }
        for (int v = 0; v < vocab; v++)
            p[v] = floor / vocab + (1 - floor) * w[v] / sum;
    }
    rc = markov_init_probs(m, vocab, order, prob, seed, err);
    free(prob);
    free(w);
    return rc;
}

/* The first i with u < cdf[i] (the last when rounding leaves u above them all). */
static long draw(const double *cdf, long n, double u)
{
    long lo = 0, hi = n - 1;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (u < cdf[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void markov_fill(const markov *m, uint64_t stream, uint64_t first, int B, int T, int *tokens,
                 int *labels)
{
    int V = m->vocab, k = m->order;
    uint64_t key = m->seed ^ rng_mix(stream + 0x3a4c0bULL);
    for (int b = 0; b < B; b++) {
        rng r = rng_at(key, first + (uint64_t)b);
        int *tok = tokens + (long)b * T, *lab = labels + (long)b * T;
        long c = draw(m->stationary_cdf, m->contexts, rng_uniform53(&r));
        long div = m->contexts / V;
        for (int t = 0; t <= T; t++) {
            int v;
            if (t < k) { /* the starting context's digits, oldest first */
                v = (int)(c / div % V);
                div /= V;
            } else {
                v = (int)draw(m->cdf + c * V, V, rng_uniform53(&r));
                c = (c * V + v) % m->contexts;
            }
            if (t < T)
                tok[t] = v;
            if (t > 0)
                lab[t - 1] = v;
        }
    }
}

double markov_optimal_loss(const markov *m, int T)
{
    return ((double)(T - m->order + 1) * m->entropy_rate + m->head_entropy) / (double)T;
}
