/* convergence.h: steps to the target accuracy as a function of the global batch,
 * with a band. Sources: a convergence profile (trainer/profile.h: a recipe, a
 * target and measured or published points with their runs) or the McCandlish et
 * al. model S(B) = S_min (1 + B_noise / B) with a given noise scale.
 *
 * Beyond the points the median follows the fit's shape from the nearest point (or,
 * without a critical batch, that point's number of examples).
 * The band is log-normal: run-to-run spread (the profile's pooled runs, or an
 * assumed 5 %) combined with the model's error, which is 0 at a measured batch,
 * the profile's own interpolation error between points, and the fit's parameter
 * covariance plus its residual beyond them. */
#ifndef TT_CONVERGENCE_H
#define TT_CONVERGENCE_H

#include <stddef.h>

#include "common/error.h"
#include "sim/replay/scaling_law.h"
#include "trainer/profile.h"

typedef struct convergence convergence;

/* sd of ln(steps) between runs when a profile has no repeated runs (U): MLPerf's
 * reference runs spread 1-3 % (ResNet-50) to 3-8 % (BERT), see scenarios/profiles/. */
#define CONVERGENCE_DEFAULT_RUN_SD 0.05
/* Beyond the points of a profile without a critical batch, perfect scaling is
 * extrapolated; its sd grows by this much per e-fold of batch (U). */
#define CONVERGENCE_SD_PER_EFOLD 0.25

/* Loads a profile (its fit is recomputed). */
int convergence_load(const char *path, convergence **out, tt_error *err);
/* From a profile in memory (leave-one-out validation removes a point first);
 * label names it in reports. */
int convergence_from_profile(const conv_profile *p, const char *label, convergence **out, tt_error *err);

/* The McCandlish model with given S_min and noise scale (B_noise = B_crit). */
convergence *convergence_mccandlish(double s_min, double noise_scale);

/* A scaling law at its target (scaling_law.h), for batches in samples of
 * tokens_per_sample tokens: the band is the run spread with the fits' errors. */
convergence *convergence_scaling_law(const scaling_law_point *law, double tokens_per_sample, double target_loss);

void convergence_free(convergence *c);

/* What a scenario asks of its convergence source: its workload's model, the
 * dataset and target it names (NULL / metric NULL: not named), and which
 * mismatches the user accepts as named assumptions. */
typedef struct convergence_request {
    const char *model, *dataset, *metric;
    double target;
    int accept_model, accept_dataset, accept_target;
} convergence_request;

#define CONVERGENCE_MAX_NOTES 4

/* Compares the profile's model, dataset and target with the request: a mismatch
 * not accepted is an input error naming both sides; an accepted one (or a
 * profile that does not say) becomes a note for the report's assumptions. */
int convergence_match(const convergence *c, const convergence_request *want, const char *where,
                      char notes[CONVERGENCE_MAX_NOTES][512], int *nnotes, tt_error *err);

typedef struct convergence_estimate {
    double steps;     /* median */
    double p10, p90;  /* 10th and 90th percentiles */
    double log_sd;    /* sd of ln(steps) behind the band */
    int extrapolated; /* outside the batch range of the profile's reached points */
    double failed_batch; /* > 0: the profile's runs at this batch, at or below the asked one and above
                          * every reached point, did not reach the target: the steps are contradicted */
} convergence_estimate;

convergence_estimate convergence_at(const convergence *c, double batch);

/* The run-to-run sd used, and whether it was assumed (the profile had no runs). */
double convergence_run_sd(const convergence *c, int *assumed);

/* What the steps come from, for reports ("profile scenarios/profiles/x.json
 * (resnet50, lars)"), the target ("top1_accuracy 0.759 on imagenet"), the recipe. */
const char *convergence_source(const convergence *c);
/* A scaling law's tokens per sample (its batches are in tokens); 0 for other sources. */
double convergence_tokens_per_sample(const convergence *c);
const char *convergence_target(const convergence *c);
const profile_recipe *convergence_recipe(const convergence *c);
void convergence_fit_params(const convergence *c, double *s_min, double *e_min, double *b_crit,
                            double *residual);

#endif
