/* clock.h: wall-clock intervals for benchmarks and progress, never for results. */
#ifndef TT_CLOCK_H
#define TT_CLOCK_H

/* Seconds on a monotonic clock: only differences mean anything. */
double clock_monotonic_s(void);

#endif
