/* dataparallel.h: synchronous data-parallel training in one process. K workers
 * (one model instance each, so batch-norm statistics stay per worker) compute
 * gradients on their shard of the global batch, in equal micro-batches with
 * gradient accumulation; the shard means are averaged into worker 0's gradient
 * buffer (allreduce semantics), one optimizer step updates worker 0's
 * parameters and the others copy them (the broadcast). dp_train drives this to
 * a target test accuracy, or for a language stream to target test losses,
 * evaluating on held-out data. */
#ifndef TT_DATAPARALLEL_H
#define TT_DATAPARALLEL_H

#include <stdint.h>

#include "common/error.h"
#include "trainer/fmnist.h"
#include "trainer/lr_schedule.h"
#include "trainer/markov.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"
#include "trainer/synth.h"

typedef struct dp_trainer dp_trainer;

/* Fills in (in->batch samples, already set) with the examples at positions
 * first.. of the training stream. */
typedef void (*dp_fill_fn)(void *ctx, uint64_t first, model_inputs *in);

typedef struct dp_grad_stats {
    double loss;            /* mean training loss over the global batch */
    double worker_sq;       /* mean over workers of |g_worker|^2 (shard batch) */
    double global_sq;       /* |g_global|^2 (global batch) */
} dp_grad_stats;

/* K workers of the named model (identical initialisation from mo->seed) for a
 * global batch B split into K equal shards of equal micro-batches of at most
 * micro_max samples. B must be a multiple of K. */
int dp_create(dp_trainer **out, const char *model_name, const model_opts *mo, int workers,
              long global_batch, long micro_max, tt_error *err);
void dp_free(dp_trainer *dp);

model *dp_master(dp_trainer *dp);
long dp_micro_batch(const dp_trainer *dp);  /* samples per forward */
int dp_micro_steps(const dp_trainer *dp);   /* micro-batches per worker and step */

/* Gradients of the global batch at stream positions first..first+B-1 into the
 * master's gradient buffer. Worker k takes first + k*B/K.. */
void dp_gradients(dp_trainer *dp, dp_fill_fn fill, void *ctx, uint64_t first,
                  dp_grad_stats *st);

/* One optimizer step on the master's parameters, then the broadcast. */
void dp_apply(dp_trainer *dp, optimizer *opt, double lr);

/* ---- training to a target ---- */

typedef enum { DP_DATA_FMNIST, DP_DATA_TEACHER, DP_DATA_MARKOV } dp_data_kind;

#define DP_MAX_TARGETS 4

/* The data a run reads (loaded once, shared by the runs of a sweep). */
typedef struct dp_data {
    dp_data_kind kind;
    const fmnist *train, *test;   /* DP_DATA_FMNIST */
    const teacher *teacher;       /* DP_DATA_TEACHER: train stream from 0, test from TEST_BASE */
    const markov *markov;         /* DP_DATA_MARKOV: the run's seed keys the training stream,
                                     DP_MARKOV_HELDOUT the test sequences */
    long stream_epoch;            /* synthetic streams: examples counted as one epoch (60000) */
    long stream_test;             /* synthetic streams: test examples (teacher 10000) */
} dp_data;

/* The Markov test stream's key; run seeds are below 2^62, so never this. */
#define DP_MARKOV_HELDOUT UINT64_MAX

typedef struct dp_options {
    const char *model;
    model_opts mo;
    int workers;
    long batch, micro_max;
    optim_config opt;
    lr_schedule lr;               /* batch and total_steps are set by dp_train */
    double warmup_epochs;         /* when lr.warmup_steps < 0; with both, the shorter applies */
    double cooldown_epochs;       /* used when lr.cooldown_steps < 0 */
    int augment;                  /* Fashion-MNIST: -1 auto (when batch > train set), 0 off, 1 on */
    double target;                /* test accuracy in (0, 1] (not for a Markov stream) */
    double target_loss[DP_MAX_TARGETS]; /* Markov stream: test loss <= optimal + x nats/token;
                                           the run goes on until every one is met */
    int ntarget_loss;
    long eval_every;              /* steps; 0: auto (about every 6000 examples; Markov 512) */
    double max_epochs;            /* budget; the smaller of the two applies (0: none) */
    long max_steps;
    uint64_t seed;                /* data order, augmentation (init: mo.seed) */
    double noise_alpha;           /* EMA weight of the noise-scale estimator */
    /* called after each evaluation (may be NULL) */
    void (*progress)(void *ctx, long step, long max_steps, double epoch, double accuracy,
                     double loss);
    void *progress_ctx;
} dp_options;

typedef struct dp_eval {
    long step;
    double epoch;
    double train_loss;            /* of the last step */
    double test_loss, test_accuracy;
    double lr;
    double noise_scale;           /* smoothed B_simple so far (NAN with one worker) */
} dp_eval;

typedef struct dp_result {
    int reached, diverged;
    long steps_to_target;         /* -1 if not reached (loss targets: the last one met) */
    long target_steps[DP_MAX_TARGETS]; /* loss targets: step each was met at, -1 if not */
    double optimal_loss;          /* Markov stream: least expected test loss, nats/token */
    double epochs_to_target, examples_to_target;
    long steps_run;
    double epochs_run;
    double final_test_accuracy;
    double peak_lr;
    long warmup_steps, eval_every;
    long micro_batch;
    double noise_scale;           /* smoothed B_simple at the end, NAN if unmeasured */
    char data[64];                /* "fashion-mnist", "fashion-mnist+augment", "teacher", "markov" */
    char data_note[256];          /* what that means, for reports */
    dp_eval *curve;
    int ncurve;
    double wall_s;
} dp_result;

/* Trains from fresh parameters until the test accuracy reaches the target (a
 * Markov stream: the test loss every target loss) or the budget runs out. A non-finite loss ends the run with diverged = 1 (TT_OK:
 * it is a result). Errors are input errors (bad options, model, memory). */
int dp_train(const dp_options *o, const dp_data *data, dp_result *r, tt_error *err);
void dp_result_free(dp_result *r);

#endif
