/* param.c: building and allocating a flat parameter set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/params.h"

int param_set_add(param_set *ps, const char *name, int ndim, const int *shape,
                  int is_bias_or_norm)
{
    if (ps->nviews == ps->cap_views) {
        int cap = ps->cap_views ? 2 * ps->cap_views : 64;
        param_view *v = realloc(ps->views, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        ps->views = v;
        ps->cap_views = cap;
    }
    param_view *v = &ps->views[ps->nviews];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->ndim = ndim;
    v->numel = 1;
    for (int i = 0; i < ndim; i++) {
        v->shape[i] = shape[i];
        v->numel *= (size_t)shape[i];
    }
    v->offset = ps->numel;
    v->is_bias_or_norm = is_bias_or_norm;
    v->weight_decay = !is_bias_or_norm;
    ps->numel += v->numel;
    return ps->nviews++;
}

int param_set_alloc(param_set *ps)
{
    free(ps->params);
    free(ps->grads);
    ps->params = calloc(ps->numel ? ps->numel : 1, sizeof(float));
    ps->grads = calloc(ps->numel ? ps->numel : 1, sizeof(float));
    return ps->params && ps->grads ? 0 : -1;
}

int param_set_find(const param_set *ps, const char *name)
{
    for (int i = 0; i < ps->nviews; i++)
        if (strcmp(ps->views[i].name, name) == 0)
            return i;
    return -1;
}

void param_set_free(param_set *ps)
{
    free(ps->params);
    free(ps->grads);
    free(ps->views);
    memset(ps, 0, sizeof *ps);
}
