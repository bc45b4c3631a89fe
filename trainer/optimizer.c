#include "trainer/optimizer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct optimizer {
    optim_config c;
    size_t numel;
    int nviews;
    float *m, *v;             /* numel each, or NULL */
    double *w_norm, *g_norm;  /* nviews each, refreshed every step */
    long t;
};

/* name, kind, nesterov, state words, update FLOPs, fp32 words read + written.
 * sgd w -= lr g; momentum adds its buffer; nesterov the look-ahead g + mu buf;
 * adamw keeps m, v (sqrt, divide, decay); lars and lamb add a pass for the
 * per-tensor norms of w and of the update. */
#define OPTIMIZER_TABLE(X)                    \
    X("sgd", OPT_SGD, 0, 0, 2, 3)             \
    X("momentum", OPT_MOMENTUM, 0, 1, 4, 5)   \
    X("nesterov", OPT_MOMENTUM, 1, 1, 6, 5)   \
    X("adamw", OPT_ADAMW, 0, 2, 12, 7)        \
    X("lars", OPT_LARS, 0, 1, 8, 7)           \
    X("lamb", OPT_LAMB, 0, 2, 16, 9)

#define OPTIM_ROW(name, kind, nesterov, state, flops, words) {name, kind, nesterov, state, flops, words},
#define OPTIM_NAME(name, kind, nesterov, state, flops, words) name,
static const optim_info OPTIMIZERS[] = {OPTIMIZER_TABLE(OPTIM_ROW)};
const char *const OPTIM_NAMES[] = {OPTIMIZER_TABLE(OPTIM_NAME) NULL};
#define N_OPTIMIZERS (sizeof OPTIMIZERS / sizeof OPTIMIZERS[0])

const optim_info *optim_find(const char *name)
{
    for (size_t i = 0; name && i < N_OPTIMIZERS; i++)
        if (strcmp(name, OPTIMIZERS[i].name) == 0)
            return &OPTIMIZERS[i];
    return NULL;
}

const optim_info *optim_info_of(const optim_config *c)
{
    for (size_t i = 0; i < N_OPTIMIZERS; i++)
        if (OPTIMIZERS[i].kind == c->kind && OPTIMIZERS[i].nesterov == (c->kind == OPT_MOMENTUM && c->nesterov))
            return &OPTIMIZERS[i];
    return NULL;
}

void optim_config_default(optim_config *c, optim_kind kind)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->momentum = kind == OPT_SGD ? 0.0 : 0.9;
    c->beta1 = 0.9;
    c->beta2 = 0.999;
    c->eps = 1e-6;
    c->trust_coef = 0.001;
    c->exclude_bias_norm = 1;
}

int optim_parse(const char *name, optim_config *c)
{
    const optim_info *o = optim_find(name);
    if (!o)
        return -1;
    optim_config_default(c, o->kind);
    c->nesterov = o->nesterov;
    return 0;
}

const char *optim_name(const optim_config *c)
{
    const optim_info *o = optim_info_of(c);
    return o ? o->name : "?";
}

double optim_norm(const float *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)x[i] * x[i];
    return sqrt(s);
}

int optimizer_create(const optim_config *c, const param_set *ps, optimizer **out, tt_error *err)
{
    const optim_info *info = optim_info_of(c);
    if (!info)
        return tt_error_set(err, TT_EINPUT, "optimizer: unknown kind %d", (int)c->kind);
    optimizer *o = calloc(1, sizeof *o);
    if (!o)
        return tt_error_set(err, TT_EINTERNAL, "optimizer: out of memory");
    o->c = *c;
    o->numel = ps->numel;
    o->nviews = ps->nviews;
    int moments = info->state_words;
    int ok = 1;
    if (moments >= 1)
        ok &= (o->m = calloc(ps->numel ? ps->numel : 1, sizeof(float))) != NULL;
    if (moments >= 2)
        ok &= (o->v = calloc(ps->numel ? ps->numel : 1, sizeof(float))) != NULL;
    ok &= (o->w_norm = calloc(ps->nviews + 1, sizeof(double))) != NULL;
    ok &= (o->g_norm = calloc(ps->nviews + 1, sizeof(double))) != NULL;
    if (!ok) {
        optimizer_free(o);
        return tt_error_set(err, TT_EINTERNAL, "optimizer: out of memory for %zu parameters",
                            ps->numel);
    }
    *out = o;
    return TT_OK;
}

void optimizer_free(optimizer *o)
{
    if (!o)
        return;
    free(o->m);
    free(o->v);
    free(o->w_norm);
    free(o->g_norm);
    free(o);
}

void optimizer_step(optimizer *o, param_set *ps, double lr)
{
    o->t++;
    for (int i = 0; i < ps->nviews; i++) {
        const param_view *pv = &ps->views[i];
        /* both norms before any tensor moves: each update sees w_{t-1} */
        o->w_norm[i] = optim_norm(ps->params + pv->offset, pv->numel);
        o->g_norm[i] = optim_norm(ps->grads + pv->offset, pv->numel);
    }
    for (int i = 0; i < ps->nviews; i++) {
        const param_view *pv = &ps->views[i];
        optim_tensor t = {
            .w = ps->params + pv->offset,
            .g = ps->grads + pv->offset,
            .m = o->m ? o->m + pv->offset : NULL,
            .v = o->v ? o->v + pv->offset : NULL,
            .n = pv->numel,
            .w_norm = o->w_norm[i],
            .g_norm = o->g_norm[i],
            .excluded = o->c.exclude_bias_norm && pv->is_bias_or_norm,
        };
        switch (o->c.kind) {
        case OPT_SGD: sgd_update(&o->c, &t, lr); break;
        case OPT_MOMENTUM: momentum_update(&o->c, &t, lr); break;
        case OPT_ADAMW: adamw_update(&o->c, &t, lr, o->t); break;
        case OPT_LARS: lars_update(&o->c, &t, lr); break;
        case OPT_LAMB: lamb_update(&o->c, &t, lr, o->t); break;
        default: break;
        }
    }
}

long optimizer_steps(const optimizer *o) { return o->t; }
const double *optimizer_w_norms(const optimizer *o) { return o->w_norm; }
const double *optimizer_g_norms(const optimizer *o) { return o->g_norm; }
