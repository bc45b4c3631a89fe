/* profile.h: a convergence profile, the steps a workload needs to reach a target
 * at each batch size (from `ttasim train --sweep-batch`), with the fit of
 * McCandlish et al. 2018, S = S_min (1 + B_noise / B). Format in trainer/README.md. */
#ifndef TT_PROFILE_H
#define TT_PROFILE_H

#include "common/error.h"

#define PROFILE_FORMAT "ttasim-convergence-profile"
#define PROFILE_VERSION 1
#define PROFILE_MAX_SOURCES 8

typedef struct profile_point {
    long batch;
    int reached;
    long steps;          /* to the target, or the budget's steps when not reached */
    double epochs, examples;
    double lr;           /* peak learning rate used at this batch */
    long warmup_steps;
    double noise_scale;  /* B_simple measured during the run (NAN: none) */
    char data[64];       /* "fashion-mnist", "fashion-mnist+augment", "teacher" */
} profile_point;

typedef struct profile_fit {
    int ok;              /* needs two reached points with different batches */
    double s_min, e_min, b_crit;
    double residual;     /* RMS relative error of the fitted steps over reached points */
} profile_fit;

typedef struct conv_profile {
    char workload[64];   /* "fashion-mnist-mlp" */
    char optimizer[32];
    char metric[32];     /* "test_accuracy" */
    double target;
    profile_point *points; /* sorted by batch */
    int npoints;
    profile_fit fit;
    double noise_scale;  /* B_simple over the sweep (median of the points'), NAN if none */
    char sources[PROFILE_MAX_SOURCES][1024];
    int nsources;
} conv_profile;

void profile_init(conv_profile *p, const char *workload, const char *optimizer,
                  const char *metric, double target);
void profile_free(conv_profile *p);

/* Inserts or replaces the point with pt->batch, keeping batch order. */
int profile_put(conv_profile *p, const profile_point *pt, tt_error *err);
const profile_point *profile_find(const conv_profile *p, long batch);
int profile_add_source(conv_profile *p, const char *source);

/* Weighted least squares of S = a + b / B over reached points (weights 1/S^2, so
 * each point counts by its relative error): S_min = a, E_min = b, B_crit = b / a.
 * Also refreshes p->noise_scale from the points. */
void profile_refit(conv_profile *p);
/* Steps the fit predicts at this batch, S_min (1 + B_crit / B); NAN without a fit. */
double profile_fit_steps(const profile_fit *f, long batch);

/* Strict reader (unknown keys rejected, JSON paths in errors) and writer. */
int profile_load(const char *path, conv_profile *p, tt_error *err);
int profile_save(const conv_profile *p, const char *path, tt_error *err);

#endif
