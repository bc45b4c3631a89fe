/* profile.h: a convergence profile, the steps a recipe needs to reach a target at
 * each batch size, with the runs behind each point (their spread) and the fit of
 * McCandlish et al. 2018, S = S_min (1 + B_noise / B). Written by `ttasim train
 * --sweep-batch` or from published figures. Format (version 2; version 1 still
 * loads) in trainer/README.md. */
#ifndef TT_PROFILE_H
#define TT_PROFILE_H

#include <stdint.h>

#include "common/error.h"

#define PROFILE_FORMAT "ttasim-convergence-profile"
#define PROFILE_VERSION 2
#define PROFILE_MAX_SOURCES 16
#define PROFILE_MAX_RUNS 64

/* What steps to a target depend on besides the batch: free text per part, so a
 * published recipe is stated as its paper states it. */
typedef struct profile_recipe {
    char optimizer[32];
    char hyperparameters[512]; /* base rate and its scaling rule, momentum/betas, ... */
    char schedule[256];        /* decay */
    char warmup[128];
    char regularisation[256];  /* weight decay, label smoothing, augmentation */
    char precision[64];
} profile_recipe;

/* One training run at a point's batch. */
typedef struct profile_run {
    uint64_t seed;        /* 0: not stated */
    int reached;
    long steps;           /* to the target, or the steps run when not reached */
    double final_accuracy; /* at the end of the run (NAN: not stated) */
    double train_loss, test_loss; /* at the end: their difference is the generalisation gap */
} profile_run;

typedef struct profile_point {
    long batch;
    /* derived from runs when there are any: the median run (an unreached run counts
     * as slower than every reached one); reached when the median run reached */
    int reached;
    long steps;           /* to the target, or the budget's steps when not reached */
    double epochs, examples;
    double lr;            /* peak learning rate used at this batch (0: not stated) */
    long warmup_steps;
    double noise_scale;   /* B_simple measured during the run (NAN: none) */
    char data[64];        /* "fashion-mnist", "fashion-mnist+augment", "teacher", "imagenet" */
    char source[512];     /* where this point comes from (a citation, or the runs' command) */
    int nruns;
    profile_run runs[PROFILE_MAX_RUNS];
    double log_sd;        /* run-to-run sd of ln(steps) over reached runs (NAN: under 2 runs
                           * or some did not reach) */
} profile_point;

typedef struct profile_fit {
    int ok;              /* needs two reached points with different batches and S_min > 0 */
    double s_min, e_min, b_crit;
    double residual;     /* RMS relative error of the fitted steps over reached points */
    double inv[3];       /* (X'WX)^-1 as aa, ab, bb: times a point's relative variance, the
                          * covariance of (S_min, E_min) */
    double rel_var;      /* sum of squared relative residuals / (n - 2); NAN with 2 points */
} profile_fit;

typedef struct conv_profile {
    int version;         /* as read (a version 1 file is migrated on load) */
    char model[64];      /* a zoo model ("resnet50"), or "" when a version 1 name did not say */
    char dataset[64];    /* "imagenet", "fashion-mnist" */
    double dataset_examples; /* one epoch (0: not stated) */
    profile_recipe recipe;
    char metric[32];     /* "top1_accuracy", "test_accuracy" */
    double target;
    profile_point *points; /* sorted by batch */
    int npoints;
    profile_fit fit;
    double noise_scale;  /* B_simple over the sweep (median of the points'), NAN if none */
    double run_log_sd;   /* pooled run-to-run sd of ln(steps), NAN when no point has 2 runs */
    char sources[PROFILE_MAX_SOURCES][1024];
    int nsources;
} conv_profile;

void profile_init(conv_profile *p, const char *model_name, const char *dataset, const char *optimizer,
                  const char *metric, double target);
void profile_free(conv_profile *p);

/* Inserts or replaces the point with pt->batch, keeping batch order; a point
 * with runs gets its steps, reached, epochs, examples and log_sd from them. */
int profile_put(conv_profile *p, const profile_point *pt, tt_error *err);
/* Adds a run to the point at pt->batch (created from pt when absent). */
int profile_add_run(conv_profile *p, const profile_point *pt, const profile_run *run, tt_error *err);
const profile_point *profile_find(const conv_profile *p, long batch);
/* The fewest and most steps over a point's runs (its steps when it has none). */
void profile_point_range(const profile_point *pt, long *lo, long *hi);
/* Removes the point at this batch (1 if there was one). */
int profile_remove(conv_profile *p, long batch);
int profile_add_source(conv_profile *p, const char *source);

/* Weighted least squares of S = a + b / B over reached points (weights 1/S^2, so
 * each point counts by its relative error): S_min = a, E_min = b, B_crit = b / a,
 * with the covariance of (a, b). Also refreshes noise_scale and run_log_sd. */
void profile_refit(conv_profile *p);

/* Steps the fit predicts at this batch, S_min (1 + B_crit / B); NAN without a fit. */
double profile_fit_steps(const profile_fit *f, long batch);

/* Strict reader (unknown keys rejected, JSON paths in errors; version 1 and 2)
 * and writer (version 2). */
int profile_load(const char *path, conv_profile *p, tt_error *err);
int profile_save(const conv_profile *p, const char *path, tt_error *err);

#endif
