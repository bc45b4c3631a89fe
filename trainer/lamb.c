/* LAMB (You et al. 2019): Adam direction u = m_hat / (sqrt(v_hat) + eps) + lambda w,
 * scaled per tensor by phi(||w||) / ||u||. ||u|| needs the whole tensor, so the
 * first pass updates the moments and sums u^2, the second recomputes u and steps. */
#include <math.h>

#include "trainer/optimizer.h"

void lamb_update(const optim_config *c, const optim_tensor *t, double lr, long step)
{
    float b1 = (float)c->beta1, b2 = (float)c->beta2, eps = (float)c->eps;
    float bc1 = (float)(1.0 - pow(c->beta1, (double)step));
    float bc2 = (float)(1.0 - pow(c->beta2, (double)step));
    float wd = t->excluded ? 0.0f : (float)c->weight_decay;
    double u2 = 0;
    for (size_t i = 0; i < t->n; i++) {
        float g = t->g[i];
        t->m[i] = b1 * t->m[i] + (1 - b1) * g;
        t->v[i] = b2 * t->v[i] + (1 - b2) * g * g;
        float u = (t->m[i] / bc1) / (sqrtf(t->v[i] / bc2) + eps) + wd * t->w[i];
        u2 += (double)u * u;
    }
    double phi = t->w_norm;
    if (c->phi_max > 0)
        phi = phi < c->phi_min ? c->phi_min : phi > c->phi_max ? c->phi_max : phi;
    double u_norm = sqrt(u2);
    double ratio = !t->excluded && t->w_norm > 0 && u_norm > 0 ? phi / u_norm : 1.0;
    float s = (float)(lr * ratio);
    for (size_t i = 0; i < t->n; i++) {
        float u = (t->m[i] / bc1) / (sqrtf(t->v[i] / bc2) + eps) + wd * t->w[i];
        t->w[i] -= s * u;
    }
}
