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

/* Loads a profile. A profile without "fit" gets one from its reached points. */
int convergence_load(const char *path, convergence **out, tt_error *err);

/* The McCandlish model with given S_min and noise scale (B_noise = B_crit). */
convergence *convergence_mccandlish(double s_min, double noise_scale);

void convergence_free(convergence *c);

/* Steps to the target at global batch B. Inside the batch range of the
 * profile's reached points: log-log interpolation between the two nearest
 * points (the measurements themselves); outside it, the fit, and
 * *extrapolated is set. */
double convergence_steps(const convergence *c, double batch, int *extrapolated);

/* What the steps come from, for reports ("profile scenarios/profiles/x.json:
 * top-1 >= 0.75"); the fit's parameters (b_crit 0 when steps fall as 1/B over
 * the whole range, i.e. no critical batch seen). */
const char *convergence_source(const convergence *c);
const char *convergence_target(const convergence *c);
void convergence_fit_params(const convergence *c, double *s_min, double *e_min, double *b_crit,
                            double *residual);

/* Weighted least squares of S = S_min + E_min / B on relative errors, with
 * S_min >= 0; residual is the RMS relative error. Needs n >= 1. */
void convergence_fit(const double *batch, const double *steps, size_t n, double *s_min,
                     double *e_min, double *residual);

#endif
