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
    int weight_decay;          /* 1 when weight decay applies (= !is_bias_or_norm) */
    int is_embedding_table;    /* rows looked up by id: backward touches only the rows used */
} param_view;

typedef struct param_set {
    float *params;             /* numel floats */
    float *grads;              /* numel floats, same layout */
    size_t numel;
    param_view *views;         /* nviews, in creation (forward) order */
    int nviews;
    int cap_views;             /* allocated length of views */
} param_set;

/* Appends a view of the given shape after the existing ones (planning: no
 * parameter memory yet). Returns its index, or -1 when out of memory. */
int param_set_add(param_set *ps, const char *name, int ndim, const int *shape,
                  int is_bias_or_norm);

/* Allocates params and grads (zeroed) for the views added so far; 0 or -1. */
int param_set_alloc(param_set *ps);

/* Index of the view with that name, or -1. */
int param_set_find(const param_set *ps, const char *name);

/* Frees buffers and views; the set is empty afterwards. */
void param_set_free(param_set *ps);

#endif
