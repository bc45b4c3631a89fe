/* AdamW (Loshchilov and Hutter): Adam moments with bias correction; weight decay
 * applied to w directly (decoupled), not through the moments. */
#include <math.h>

#include "trainer/optimizer.h"

void adamw_update(const optim_config *c, const optim_tensor *t, double lr, long step)
{
    float b1 = (float)c->beta1, b2 = (float)c->beta2, eps = (float)c->eps;
    float bc1 = (float)(1.0 - pow(c->beta1, (double)step));
    float bc2 = (float)(1.0 - pow(c->beta2, (double)step));
    float wd = t->excluded ? 0.0f : (float)c->weight_decay;
    float a = (float)lr;
    for (size_t i = 0; i < t->n; i++) {
        float g = t->g[i];
        t->m[i] = b1 * t->m[i] + (1 - b1) * g;
        t->v[i] = b2 * t->v[i] + (1 - b2) * g * g;
        float mhat = t->m[i] / bc1, vhat = t->v[i] / bc2;
        t->w[i] -= a * (mhat / (sqrtf(vhat) + eps) + wd * t->w[i]);
    }
}
