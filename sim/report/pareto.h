/* pareto.h: the purchase search's verdicts ('ttasim compare --deadline,
 * --budget'): the points no other beats on both time to accuracy and cost,
 * the cheapest within a deadline and the fastest within a budget. Pure
 * arithmetic over arrays of the points' times and costs. */
#ifndef TT_PARETO_H
#define TT_PARETO_H

#include <stddef.h>

typedef struct pareto_limits {
    double deadline_s; /* time to accuracy at most this (0: none) */
    double budget_usd; /* cost at most this (0: none) */
} pareto_limits;

/* The points (time_s[i], cost_usd[i]) that no other point matches on both
 * and beats on one, their indexes into order (n of room) fastest first, so
 * each next one slower and cheaper; a point with a value that is not a
 * positive finite number is never on it. Returns how many are. */
size_t pareto_front(const double *time_s, const double *cost_usd, size_t n, size_t *order);

/* The cheapest point whose time is at most deadline_s (ties: the faster,
 * then the first), -1 when none is. */
long pareto_cheapest_within(const double *time_s, const double *cost_usd, size_t n, double deadline_s);

/* The fastest point whose cost is at most budget_usd (ties: the cheaper,
 * then the first), -1 when none is. */
long pareto_fastest_within(const double *time_s, const double *cost_usd, size_t n, double budget_usd);

#endif
