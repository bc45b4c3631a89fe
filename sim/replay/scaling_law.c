#include "sim/replay/scaling_law.h"

#include <math.h>

const char *const SCALING_LAW_NAMES[] = {"chinchilla", "kaplan", NULL};

int scaling_law_at(scaling_law_kind kind, double total_params, double non_embedding_params, double target_loss,
                   const char *where, scaling_law_point *out, tt_error *err)
{
    *out = (scaling_law_point){.kind = kind};
    double n = kind == SCALING_CHINCHILLA ? total_params : non_embedding_params;
    const char *counted = kind == SCALING_CHINCHILLA ? "parameters" : "non-embedding parameters";
    if (!(n > 0))
        return tt_error_set(err, TT_EINPUT, "%s: the workload's model has no count of %s (the %s law needs N); "
                            "use a zoo model or a trace that records its parameters and embedding layers",
                            where, counted, SCALING_LAW_NAMES[kind]);
    double dlnd_dl; /* d ln D / d L at the target: how the loss's error moves the tokens */
    if (kind == SCALING_CHINCHILLA) {
        /* Hoffmann et al. 2022 (approach 3): L = E + A / N^alpha + B / D^beta */
        if (target_loss <= CHINCHILLA_E)
            return tt_error_set(err, TT_EINPUT, "%s: the target loss %g is at or below the chinchilla fit's "
                                "irreducible loss E = %g nats/token: no model or data reaches it; give a "
                                "target_loss above %g", where, target_loss, CHINCHILLA_E, CHINCHILLA_E);
        out->loss_floor = CHINCHILLA_E + CHINCHILLA_A / pow(n, CHINCHILLA_ALPHA);
        double gap = target_loss - out->loss_floor;
        if (gap <= 0)
            return tt_error_set(err, TT_EINPUT, "%s: the target loss %g is at or below %.4g, what %.4g parameters "
                                "reach with unlimited data in the chinchilla fit (E + A / N^alpha); give a higher "
                                "target_loss or a larger model", where, target_loss, out->loss_floor, n);
        out->e_min_tokens = pow(CHINCHILLA_B / gap, 1 / CHINCHILLA_BETA);
        dlnd_dl = 1 / (CHINCHILLA_BETA * gap);
    } else {
        /* Kaplan et al. 2020, eq. (1.5): L = [(N_c / N)^(alpha_N / alpha_D) + D_c / D]^alpha_D */
        double x = pow(KAPLAN_NC / n, KAPLAN_ALPHA_N / KAPLAN_ALPHA_D);
        double lp = pow(target_loss, 1 / KAPLAN_ALPHA_D);
        out->loss_floor = pow(x, KAPLAN_ALPHA_D);
        if (lp <= x)
            return tt_error_set(err, TT_EINPUT, "%s: the target loss %g is at or below %.4g, what %.4g non-embedding "
                                "parameters reach with unlimited data in the kaplan fit ((N_c / N)^alpha_N); give "
                                "a higher target_loss or a larger model", where, target_loss, out->loss_floor, n);
        out->e_min_tokens = KAPLAN_DC / (lp - x);
        dlnd_dl = lp / (KAPLAN_ALPHA_D * target_loss * (lp - x));
    }
    out->params = n;
    out->b_crit_tokens = KAPLAN_B_STAR / pow(target_loss, 1 / KAPLAN_ALPHA_B);
    out->s_min = out->e_min_tokens / out->b_crit_tokens;
    out->ln_e_sd = SCALING_LOSS_SD * dlnd_dl;
    return TT_OK;
}

double scaling_law_steps(const scaling_law_point *p, double batch_tokens)
{
    return p->s_min * (1 + p->b_crit_tokens / batch_tokens);
}

double scaling_law_tokens(const scaling_law_point *p, double batch_tokens)
{
    return p->e_min_tokens * (1 + batch_tokens / p->b_crit_tokens);
}

double scaling_law_ln_sd(const scaling_law_point *p, double batch_tokens)
{
    double w = batch_tokens / (batch_tokens + p->b_crit_tokens);
    return sqrt(p->ln_e_sd * p->ln_e_sd + w * w * SCALING_LN_BCRIT_SD * SCALING_LN_BCRIT_SD);
}
