/* synth.h: seeded synthetic data. Sample i of a stream depends only on
 * (seed, i), so streams are unbounded, reproducible, and data-parallel
 * workers can take disjoint index ranges. */
#ifndef TT_SYNTH_H
#define TT_SYNTH_H

#include <stdint.h>

#include "trainer/model.h"

/* A fixed random teacher network, x ~ N(0, I) -> label = argmax W2 tanh(W1 x):
 * an unbounded, learnable classification stream. */
typedef struct teacher {
    int in_dim, hidden, classes;
    uint64_t seed;
    float *w1;             /* (hidden, in_dim) */
    float *w2;             /* (classes, hidden) */
} teacher;

int teacher_init(teacher *t, int in_dim, int hidden, int classes, uint64_t seed);
void teacher_free(teacher *t);
/* samples first..first+B-1 into x (B, in_dim) and labels (B) */
void teacher_fill(const teacher *t, uint64_t first, int B, float *x, int *labels);

/* Images (B, C, H, W) whose class (of `classes`) sets a smooth per-channel
 * pattern, plus noise. */
void synth_images(uint64_t seed, uint64_t first, int B, int C, int H, int W, int classes,
                  float *x, int *labels);

/* A Zipf(s) rank in [0, n) from a uniform u in [0, 1) (continuous inverse CDF). */
long synth_zipf(double u, long n, double s);

/* The Zipf exponent of the synthetic click logs' categorical ids (every table). */
#define SYNTH_CLICK_ZIPF_S 1.05

/* The share of synth_zipf(., n, s) draws below rank h (the h hottest rows). */
double synth_zipf_cdf(double h, long n, double s);

/* Expected distinct ranks below `below` among `draws` independent
 * synth_zipf(., n, s) draws (below = n: the rows a batch's lookups touch in
 * an n-row table). */
double synth_zipf_unique(long n, double s, double draws, long below);

/* Fills every input of the model for samples first..first+B-1 (B = in->batch):
 * images or teacher-free random features with labels, BERT token sequences
 * (Zipf tokens, random lengths, 15% masked positions with their labels),
 * decoder sequences (a random half repeated; labels the next tokens), or
 * DLRM click logs (13 dense features, Zipf ids per table, learnable clicks). */
void synth_fill(model_inputs *in, uint64_t seed, uint64_t first);

#endif
