#include "trainer/lr_schedule.h"

#include <math.h>
#include <string.h>

const char *const LR_SCALING_NAMES[] = {"none", "linear", "sqrt", NULL};
const char *const LR_DECAY_NAMES[] = {"constant", "poly", "cosine", "step", NULL};

int lr_name_index(const char *const *names, const char *name)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

double lr_schedule_peak(const lr_schedule *s)
{
    double k = s->ref_batch > 0 ? s->batch / s->ref_batch : 1.0;
    double peak = s->scaling == LR_SCALE_LINEAR ? s->base_lr * k
                  : s->scaling == LR_SCALE_SQRT ? s->base_lr * sqrt(k)
                                                : s->base_lr;
    return s->max_lr > 0 && peak > s->max_lr ? s->max_lr : peak;
}

/* The decayed rate at step (warm-up over), before any cool-down. */
static double decayed(const lr_schedule *s, double peak, long step)
{
    long w = s->warmup_steps;
    long span = s->total_steps - s->cooldown_steps - w;
    double p = span > 0 ? (double)(step - w) / (double)span : 1.0;
    if (p > 1)
        p = 1;
    if (p < 0)
        p = 0;
    switch (s->decay) {
    case LR_DECAY_POLY: return s->end_lr + (peak - s->end_lr) * pow(1 - p, s->poly_power);
    case LR_DECAY_COSINE: return s->end_lr + (peak - s->end_lr) * 0.5 * (1 + cos(M_PI * p));
    case LR_DECAY_STEP:
        return s->step_every > 0 ? peak * pow(s->step_gamma, (double)((step - w) / s->step_every))
                                 : peak;
    default: return peak;
    }
}

double lr_schedule_at(const lr_schedule *s, long step)
{
    double peak = lr_schedule_peak(s);
    if (step < s->warmup_steps)
        return peak * (s->warmup_start +
                       (1 - s->warmup_start) * (double)(step + 1) / (double)s->warmup_steps);
    long cool_from = s->total_steps - s->cooldown_steps;
    if (s->cooldown_steps > 0 && step >= cool_from) {
        double at = decayed(s, peak, cool_from);
        double left = (double)(s->total_steps - step) / (double)s->cooldown_steps;
        return left > 0 ? at * left : 0;
    }
    return decayed(s, peak, step);
}
