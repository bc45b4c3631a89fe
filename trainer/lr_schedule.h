/* lr_schedule.h: learning rate per step. A base rate set at a reference batch is
 * scaled to the global batch (linear, Goyal et al. 2017; square root; none), warmed
 * up linearly, decayed (polynomial, cosine, step, constant) and optionally cooled
 * down linearly to zero at the end. */
#ifndef TT_LR_SCHEDULE_H
#define TT_LR_SCHEDULE_H

typedef enum { LR_SCALE_NONE, LR_SCALE_LINEAR, LR_SCALE_SQRT } lr_scaling;
typedef enum { LR_DECAY_CONSTANT, LR_DECAY_POLY, LR_DECAY_COSINE, LR_DECAY_STEP } lr_decay;

typedef struct lr_schedule {
    double base_lr;        /* at ref_batch */
    double ref_batch;
    double batch;          /* global batch */
    lr_scaling scaling;
    double max_lr;         /* > 0: the scaled peak is capped here (sqrt scaling overshoots past B_crit) */
    long warmup_steps;     /* 0: none */
    double warmup_start;   /* fraction of the peak at step 0 of warm-up (0: from zero) */
    lr_decay decay;
    double poly_power;     /* LARS used 2 */
    long step_every;       /* LR_DECAY_STEP: multiply by step_gamma every step_every steps */
    double step_gamma;
    double end_lr;         /* floor of poly/cosine decay */
    long total_steps;      /* decay horizon (the training budget) */
    long cooldown_steps;   /* last steps: linear from the decayed value to 0 */
} lr_schedule;

extern const char *const LR_SCALING_NAMES[]; /* "none", "linear", "sqrt" */
extern const char *const LR_DECAY_NAMES[];   /* "constant", "poly", "cosine", "step" */

/* base_lr scaled by the rule to batch: base * (batch/ref) or base * sqrt(batch/ref),
 * at most max_lr when it is set. */
double lr_schedule_peak(const lr_schedule *s);

/* The rate at step (0-based). Warm-up: peak * (f + (1 - f) (step+1)/W) for step < W,
 * so the first step is not wasted at zero and step W-1 reaches the peak. Decay runs
 * over [W, total - cooldown); cool-down goes linearly to 0 at step total. */
double lr_schedule_at(const lr_schedule *s, long step);

/* A name's index in a NULL-terminated list, or -1. */
int lr_name_index(const char *const *names, const char *name);

#endif
