/* markov.h: a synthetic language with an exactly known entropy rate, an
 * order-k Markov source over V tokens. Each context (the last k tokens) has a
 * few likely successors with Dirichlet(1) weights and a small floor on every
 * token (so the chain is ergodic). Sequences start from the stationary law of
 * the contexts, so every position has the same law; sequence i of a stream
 * depends only on (source seed, stream, i), like the other synthetic streams. */
#ifndef TT_MARKOV_H
#define TT_MARKOV_H

#include <stdint.h>

#include "common/error.h"

#define MARKOV_MAX_CONTEXTS (1L << 20)

typedef struct markov {
    int vocab, order;        /* V tokens; contexts are the last k = order tokens */
    long contexts;           /* V^k, indexed x_{t-k+1} V^(k-1) + ... + x_t */
    uint64_t seed;
    double *prob;            /* (contexts, V) next-token probabilities */
    double *cdf;             /* (contexts, V) their running sums, for sampling */
    double *stationary;      /* (contexts) the stationary law of the contexts */
    double *stationary_cdf;  /* (contexts) */
    double entropy_rate;     /* nats/token: sum_c pi(c) H(P(.|c)) */
    double head_entropy;     /* nats: H(first k tokens) - H(first token) (the first positions' excess) */
} markov;

/* A seeded source: `successors` likely next tokens per context sharing 1 -
 * floor of the mass (Dirichlet(1) weights), floor spread over all V tokens. */
int markov_init(markov *m, int vocab, int order, int successors, double floor, uint64_t seed,
                tt_error *err);
/* A source from explicit probabilities prob (V^order, V) (rows summing to 1):
 * the stationary law by power iteration, then the entropy rate. */
int markov_init_probs(markov *m, int vocab, int order, const double *prob, uint64_t seed,
                      tt_error *err);
void markov_free(markov *m);

/* Sequences first..first+B-1 of `stream`: T + 1 tokens each, tokens (B, T) the
 * first T and labels (B, T) the last T (the next tokens). */
void markov_fill(const markov *m, uint64_t stream, uint64_t first, int B, int T, int *tokens,
                 int *labels);

/* The least expected cross-entropy per label of a T-token sequence, in
 * nats/token: the label at position t < k sees only t tokens of context, so
 * ((T - k + 1) H + head_entropy) / T. */
double markov_optimal_loss(const markov *m, int T);

#endif
