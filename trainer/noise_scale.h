/* noise_scale.h: the simple gradient noise scale B_simple = tr(Sigma) / |G|^2
 * (McCandlish et al. 2018, Appendix A). From the squared norm of gradients at a
 * small batch (a worker's shard) and a big batch (the global batch):
 *   |G|^2   ~ (B_big |G_big|^2 - B_small |G_small|^2) / (B_big - B_small)
 *   tr(S)   ~ (|G_small|^2 - |G_big|^2) / (1/B_small - 1/B_big)
 * both unbiased; each is averaged (running mean for the first 1/alpha samples,
 * then an exponential moving average) and the ratio of the averages is the
 * estimate (a ratio of noisy values is biased). */
#ifndef TT_NOISE_SCALE_H
#define TT_NOISE_SCALE_H

typedef struct noise_scale {
    double alpha;      /* EMA weight of a new sample */
    double g2_ema, tr_ema;
    long samples;
} noise_scale;

void noise_scale_init(noise_scale *ns, double alpha);

/* One step's sample: small_sq = mean over workers of |g_worker|^2 at b_small
 * examples each; big_sq = |g_global|^2 at b_big examples. Ignored unless b_big > b_small. */
void noise_scale_add(noise_scale *ns, double small_sq, double b_small, double big_sq,
                     double b_big);

/* tr(Sigma) / |G|^2 from the averages; NAN before any sample or when |G|^2 <= 0. */
double noise_scale_value(const noise_scale *ns);
double noise_scale_trace(const noise_scale *ns);
double noise_scale_grad_sq(const noise_scale *ns);

#endif
