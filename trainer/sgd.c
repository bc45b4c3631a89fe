/* Plain SGD with L2 weight decay folded into the gradient. */
#include "trainer/optimizer.h"

void sgd_update(const optim_config *c, const optim_tensor *t, double lr)
{
    float wd = t->excluded ? 0.0f : (float)c->weight_decay;
    float a = (float)lr;
    for (size_t i = 0; i < t->n; i++)
        t->w[i] -= a * (t->g[i] + wd * t->w[i]);
}
