/* scaling_law.h: tokens and steps to a target loss for a language model from
 * published scaling laws, with the critical batch size of Kaplan et al. 2020.
 *
 * The loss fit L(N, D) gives the tokens D a model of N parameters needs to
 * reach the target loss; they are taken as E_min, the tokens at a batch far
 * below the critical one. Kaplan's B_crit(L) = B_* / L^(1/alpha_B) at the
 * target gives S_min = E_min / B_crit, and McCandlish et al. 2018's trade-off
 * the steps and tokens at batch B: S = S_min (1 + B_crit / B), E = E_min (1 +
 * B / B_crit). Constants and sources in sim/replay/README.md. */
#ifndef TT_SCALING_LAW_H
#define TT_SCALING_LAW_H

#include "common/error.h"

typedef enum { SCALING_CHINCHILLA, SCALING_KAPLAN } scaling_law_kind;

/* The names a scenario uses ("chinchilla", "kaplan"), NULL-terminated. */
extern const char *const SCALING_LAW_NAMES[];

/* Published fits (U where a constant was not read from a retrieved copy:
 * sim/replay/README.md says which). */
#define CHINCHILLA_E 1.69
#define CHINCHILLA_A 406.4
#define CHINCHILLA_B 410.7
#define CHINCHILLA_ALPHA 0.34
#define CHINCHILLA_BETA 0.28
#define KAPLAN_NC 6.4e13 /* non-embedding parameters */
#define KAPLAN_DC 1.8e13 /* tokens */
#define KAPLAN_ALPHA_N 0.076
#define KAPLAN_ALPHA_D 0.103
#define KAPLAN_B_STAR 2.1e8 /* tokens */
#define KAPLAN_ALPHA_B 0.21

/* The band's parts (U, named in every run that uses a law): the fit's loss
 * at given (N, D) is known to this sd in nats, propagated to ln D; B_crit(L)
 * is known to a factor of 2 at the 10th and 90th percentiles. */
#define SCALING_LOSS_SD 0.02
#define SCALING_LN_BCRIT_SD 0.5409 /* ln 2 / 1.2816 */

typedef struct scaling_law_point {
    scaling_law_kind kind;
    double params;        /* N as the law counts it: total (Chinchilla), non-embedding (Kaplan) */
    double loss_floor;    /* the loss N parameters reach with unlimited data */
    double e_min_tokens;  /* D(N, L) */
    double b_crit_tokens; /* B_crit(L) */
    double s_min;         /* E_min / B_crit */
    double ln_e_sd;       /* sd of ln E_min from SCALING_LOSS_SD */
} scaling_law_point;

/* For a model of total_params, non_embedding_params and a target loss in
 * nats per token; an input error (TT_EINPUT, message prefixed by where)
 * when the law cannot reach the target: no parameter count, a loss at or
 * below the irreducible loss or the model's floor. */
int scaling_law_at(scaling_law_kind kind, double total_params, double non_embedding_params, double target_loss,
                   const char *where, scaling_law_point *out, tt_error *err);

/* Steps and tokens at batch_tokens: S_min (1 + B_crit / B) and E_min (1 + B / B_crit). */
double scaling_law_steps(const scaling_law_point *p, double batch_tokens);
double scaling_law_tokens(const scaling_law_point *p, double batch_tokens);

/* sd of ln(steps) at a batch from the fits (without run-to-run spread):
 * ln E_min's and ln B_crit's, the latter weighted by d ln S / d ln B_crit = B / (B + B_crit). */
double scaling_law_ln_sd(const scaling_law_point *p, double batch_tokens);

#endif
