/* pareto.c: the purchase search's verdicts (pareto.h). */
#include "sim/report/pareto.h"

#include <math.h>

static int valid(double v)
{
    return isfinite(v) && v > 0;
}

size_t pareto_front(const double *time_s, const double *cost_usd, size_t n, size_t *order)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        int on = valid(time_s[i]) && valid(cost_usd[i]);
        for (size_t j = 0; on && j < n; j++)
            on = !(valid(time_s[j]) && valid(cost_usd[j]) && time_s[j] <= time_s[i] && cost_usd[j] <= cost_usd[i] &&
                   (time_s[j] < time_s[i] || cost_usd[j] < cost_usd[i]));
        if (!on)
            continue;
        size_t k = count++; /* insertion by time: the front is short */
        for (; k > 0 && time_s[order[k - 1]] > time_s[i]; k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    return count;
}

/* The best of the points whose `limited` is at most limit: least `goal`,
 * ties by least `limited`. */
static long best_within(const double *goal, const double *limited, size_t n, double limit)
{
    long best = -1;
    for (size_t i = 0; i < n; i++) {
        if (!valid(goal[i]) || !valid(limited[i]) || limited[i] > limit)
            continue;
        if (best < 0 || goal[i] < goal[best] || (goal[i] == goal[best] && limited[i] < limited[best]))
            best = (long)i;
    }
    return best;
}

long pareto_cheapest_within(const double *time_s, const double *cost_usd, size_t n, double deadline_s)
{
    return best_within(cost_usd, time_s, n, deadline_s);
}

long pareto_fastest_within(const double *time_s, const double *cost_usd, size_t n, double budget_usd)
{
    return best_within(time_s, cost_usd, n, budget_usd);
}
