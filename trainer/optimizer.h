/* optimizer.h: parameter updates on a param_set (SGD, momentum, AdamW, LARS, LAMB).
 * The optimizer owns its state (moments) in flat buffers with the param_set's
 * layout; per-tensor norms ||w|| and ||g|| are computed once per step from the
 * views and handed to the per-tensor update of the chosen algorithm. */
#ifndef TT_OPTIMIZER_H
#define TT_OPTIMIZER_H

#include <stddef.h>

#include "common/error.h"
#include "trainer/params.h"

typedef enum {
    OPT_SGD,      /* w -= lr (g + wd w) */
    OPT_MOMENTUM, /* heavy-ball or Nesterov (PyTorch form) */
    OPT_ADAMW,    /* Adam with bias correction, decoupled weight decay */
    OPT_LARS,     /* You et al. 2017 */
    OPT_LAMB,     /* You et al. 2019 */
    OPT_COUNT
} optim_kind;

typedef struct optim_config {
    optim_kind kind;
    double momentum;      /* SGD momentum and LARS beta_1 (0.9) */
    int nesterov;         /* momentum only */
    double beta1, beta2;  /* AdamW, LAMB (0.9, 0.999) */
    double eps;           /* AdamW, LAMB (1e-6) */
    double weight_decay;  /* lambda; L2 in the gradient for SGD/momentum/LARS, decoupled for AdamW/LAMB */
    double trust_coef;    /* LARS eta multiplying ||w|| / (||g|| + lambda ||w||) (0.001) */
    double phi_min, phi_max; /* LAMB: clamp of phi(||w||); phi_max 0 means no clamp (identity) */
    int exclude_bias_norm;   /* biases and norm params get no weight decay and trust ratio 1 */
} optim_config;

/* Norms and flags of one tensor for one step, as the per-algorithm updates see them. */
typedef struct optim_tensor {
    float *w;
    const float *g;
    float *m, *v;    /* state (NULL when the algorithm has none) */
    size_t n;
    double w_norm, g_norm;
    int excluded;    /* no weight decay, trust ratio 1 */
} optim_tensor;

typedef struct optimizer optimizer;

/* Defaults for a kind (the values in the comments above). */
void optim_config_default(optim_config *c, optim_kind kind);

/* An optimizer as every part of ttasim sees it, one row each: the trainer's
 * update and state, the trace's cost of an update, replay's state in memory.
 * Per parameter, in fp32 (master weights and state stay fp32 whatever the
 * precision); the update's words are those it reads and writes. */
typedef struct optim_info {
    const char *name;    /* as scenarios, traces, ttasim train and trace spell it */
    optim_kind kind;
    int nesterov;
    int state_words;     /* moments kept per parameter */
    double update_flops;
    double update_words;
} optim_info;

/* "sgd", "momentum", "nesterov", "adamw", "lars", "lamb": the table's rows,
 * OPTIM_NAMES's order; NULL if unknown. */
const optim_info *optim_find(const char *name);
/* A config's row (nesterov momentum is its own). */
const optim_info *optim_info_of(const optim_config *c);
/* The names, NULL-terminated (for parsers and suggestions). */
extern const char *const OPTIM_NAMES[];

/* Defaults of name's kind (nesterov: OPT_MOMENTUM with nesterov 1); -1 if unknown. */
int optim_parse(const char *name, optim_config *c);
const char *optim_name(const optim_config *c);

/* Allocates the state for ps's layout (zeroed moments). */
int optimizer_create(const optim_config *c, const param_set *ps, optimizer **out, tt_error *err);
void optimizer_free(optimizer *o);

/* One update of ps->params from ps->grads at learning rate lr; step count t starts at 1. */
void optimizer_step(optimizer *o, param_set *ps, double lr);
long optimizer_steps(const optimizer *o);

/* Per-tensor norms of the last step (nviews entries each), for reports and tests. */
const double *optimizer_w_norms(const optimizer *o);
const double *optimizer_g_norms(const optimizer *o);

/* Euclidean norm of n floats, accumulated in double. */
double optim_norm(const float *x, size_t n);

/* The per-tensor updates, one file each (sgd.c, momentum.c, adamw.c, lars.c, lamb.c). */
void sgd_update(const optim_config *c, const optim_tensor *t, double lr);
void momentum_update(const optim_config *c, const optim_tensor *t, double lr);
void adamw_update(const optim_config *c, const optim_tensor *t, double lr, long step);
void lars_update(const optim_config *c, const optim_tensor *t, double lr);
void lamb_update(const optim_config *c, const optim_tensor *t, double lr, long step);

#endif
