/* SGD with momentum, PyTorch form: buf = mu buf + (g + wd w); heavy-ball steps
 * along buf, Nesterov along g + mu buf (the look-ahead gradient). */
#include "trainer/optimizer.h"

void momentum_update(const optim_config *c, const optim_tensor *t, double lr)
{
    float wd = t->excluded ? 0.0f : (float)c->weight_decay;
    float mu = (float)c->momentum, a = (float)lr;
    for (size_t i = 0; i < t->n; i++) {
        float d = t->g[i] + wd * t->w[i];
        t->m[i] = mu * t->m[i] + d;
        t->w[i] -= a * (c->nesterov ? d + mu * t->m[i] : t->m[i]);
    }
}
