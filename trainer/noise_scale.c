#include "trainer/noise_scale.h"

#include <math.h>

void noise_scale_init(noise_scale *ns, double alpha)
{
    ns->alpha = alpha;
    ns->g2_ema = ns->tr_ema = 0;
    ns->samples = 0;
}

void noise_scale_add(noise_scale *ns, double small_sq, double b_small, double big_sq,
                     double b_big)
{
    if (!(b_big > b_small) || !(b_small > 0) || !isfinite(small_sq) || !isfinite(big_sq))
        return;
    double g2 = (b_big * big_sq - b_small * small_sq) / (b_big - b_small);
    double tr = (small_sq - big_sq) / (1.0 / b_small - 1.0 / b_big);
    /* a plain running mean until it would weigh samples less than the EMA does,
     * so the first samples are not over- or under-weighted */
    double a = 1.0 / (double)(ns->samples + 1);
    if (a < ns->alpha)
        a = ns->alpha;
    ns->g2_ema += a * (g2 - ns->g2_ema);
    ns->tr_ema += a * (tr - ns->tr_ema);
    ns->samples++;
}

double noise_scale_value(const noise_scale *ns)
{
    if (ns->samples == 0 || !(ns->g2_ema > 0))
        return NAN;
    return ns->tr_ema / ns->g2_ema;
}

double noise_scale_trace(const noise_scale *ns) { return ns->tr_ema; }
double noise_scale_grad_sq(const noise_scale *ns) { return ns->g2_ema; }
