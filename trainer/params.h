/* params.h: a model's parameters as one flat buffer with per-tensor views
 * (llm.c style). The gradient buffer has the same layout, so gradient
 * bucketing and allreduce work on contiguous ranges. */
#ifndef TT_PARAMS_H
#define TT_PARAMS_H

#include <stddef.h>

#define PARAM_MAX_DIMS 4

typedef struct param_view {
    char name[64];             /* "layer1.0.conv1.weight" */
    int ndim;
    int shape[PARAM_MAX_DIMS];
    size_t offset;             /* in floats, into params and grads */
    size_t numel;
    int is_bias_or_norm;       /* biases and normalisation scales/shifts: usually
                                  excluded from weight decay and trust-ratio adaptation */
} param_view;

typedef struct param_set {
    float *params;             /* numel floats */
    float *grads;              /* numel floats, same layout */
    size_t numel;
    param_view *views;         /* nviews, in creation (forward) order */
    int nviews;
} param_set;

#endif
