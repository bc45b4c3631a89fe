/* LARS (You, Gitman, Ginsburg 2017): a per-tensor trust ratio
 * eta ||w|| / (||g|| + lambda ||w||) scales the step; momentum accumulates the
 * scaled update, weight decay inside it. Excluded tensors: ratio 1, no decay. */
#include "trainer/optimizer.h"

void lars_update(const optim_config *c, const optim_tensor *t, double lr)
{
    double wd = t->excluded ? 0.0 : c->weight_decay;
    double ratio = 1.0;
    if (!t->excluded && t->w_norm > 0 && t->g_norm > 0)
        ratio = c->trust_coef * t->w_norm / (t->g_norm + wd * t->w_norm);
    float s = (float)(lr * ratio), mu = (float)c->momentum, fwd = (float)wd;
    for (size_t i = 0; i < t->n; i++) {
        t->m[i] = mu * t->m[i] + s * (t->g[i] + fwd * t->w[i]);
        t->w[i] -= t->m[i];
    }
}
