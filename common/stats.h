/* stats.h: order statistics of samples of doubles. */
#ifndef TT_STATS_H
#define TT_STATS_H

#include <stddef.h>

/* qsort's comparison for doubles, ascending. */
int stats_cmp_double(const void *a, const void *b);

/* The median of v[0..n-1], which it sorts (the mean of the middle two for an
 * even n); NAN when n is 0. */
double stats_median(double *v, size_t n);

#endif
