/* human.h: numbers as a person reads them in tables and plots: durations in
 * the unit that suits them (us, ms, s, min, h, days), dollars with k/M. */
#ifndef TT_HUMAN_H
#define TT_HUMAN_H

#include <stddef.h>

/* The unit for durations up to max_s: its name and seconds per unit. */
void human_time_unit(double max_s, const char **unit, double *unit_s);

/* "850 us", "12.3 ms", "4.56 s", "38.2 min", "5.12 h", "3.2 days" (4 significant digits). */
const char *human_duration(double s, char *buf, size_t n);

/* s in the unit human_duration picks for like_s: a band "88.08-100.1 min"
 * reads in its centre's unit. */
const char *human_duration_as(double s, double like_s, char *buf, size_t n);

/* A count or a rate: "7.5", "950", then 4 significant digits grouped by
 * thousands: "28,150", "1,234,000". */
const char *human_count(double v, char *buf, size_t n);

/* "$0.00265", "$74.6", "$12.3k", "$4.56M" (3 significant digits). */
const char *human_usd(double usd, char *buf, size_t n);

#endif
