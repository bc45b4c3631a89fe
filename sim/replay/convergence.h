/* convergence.h: steps to the target accuracy as a function of the global batch.
 * Sources: a convergence profile ("ttasim-convergence-profile", version 1,
 * written by 'ttasim train --sweep-batch' or shipped in scenarios/profiles/
 * from published runs), or the McCandlish et al. model
 * S(B) = S_min (1 + B_noise / B) with a given noise scale. */
#ifndef TT_CONVERGENCE_H
#define TT_CONVERGENCE_H

#include <stddef.h>

#include "common/error.h"

typedef struct convergence convergence;

#define CONVERGENCE_VERSION 1

/* Loads a profile (trainer/profile.h's reader; its fit is recomputed). */
int convergence_load(const char *path, convergence **out, tt_error *err);

/* The McCandlish model with given S_min and noise scale (B_noise = B_crit). */
convergence *convergence_mccandlish(double s_min, double noise_scale);

void convergence_free(convergence *c);

/* Steps to the target at global batch B. Inside the batch range of the
 * profile's reached points: log-log interpolation between the two nearest
 * points (the measurements themselves). Outside it *extrapolated is set and
 * the McCandlish fit is used, or, when the points show no critical batch
 * (steps fall as 1/B: no positive S_min), the nearest point's number of
 * examples (perfect scaling). */
double convergence_steps(const convergence *c, double batch, int *extrapolated);

/* What the steps come from, for reports ("profile scenarios/profiles/x.json:
 * top1_accuracy 0.749"); the fit's parameters (all 0 when there is no fit). */
const char *convergence_source(const convergence *c);
const char *convergence_target(const convergence *c);
void convergence_fit_params(const convergence *c, double *s_min, double *e_min, double *b_crit,
                            double *residual);

#endif
