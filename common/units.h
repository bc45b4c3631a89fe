/* units.h: quantities written by people: "100M", "64Ki", "12.5G", "1us". */
#ifndef TT_UNITS_H
#define TT_UNITS_H

#include "common/error.h"

/* The largest amount accepted: beyond any bytes, rate or FLOPs a platform or a
 * sweep names, and far from overflowing the products computed from it. */
#define UNITS_MAX 1e30

/* The shortest nonzero duration accepted: a femtosecond, far below any latency
 * modelled and far above the subnormal numbers SimGrid's platform parser
 * refuses. A nonzero amount below DBL_MIN (subnormal) is refused as well. */
#define UNITS_MIN_S 1e-15

/* Parses a non-negative amount with an optional K/M/G/T (powers of 10) or
 * Ki/Mi/Gi/Ti (powers of 2) suffix, optionally followed by a unit word the
 * caller allows ("B", "Bps", "FLOPS"...; NULL allows none), at most UNITS_MAX. Returns 0 on
 * success, -1 with *why set to a static explanation otherwise. */
int units_parse_amount(const char *text, const char *const *unit_words,
                       double *out, const char **why);

/* Sizes in bytes: "100M", "64Ki", "1.5GiB", "4096". */
int units_parse_bytes(const char *text, double *out_bytes, const char **why);

/* Durations: a number of seconds, or with s/ms/us/ns suffix. */
int units_parse_seconds(const char *text, double *out_s, const char **why);

/* A whole number from lo to hi, the whole of text (strtol's syntax: base
 * 10, an optional sign). Fails with TT_EINPUT and "NAME: expected a whole
 * number from LO to HI, got 'TEXT'" (name: what the caller calls it, "-j"). */
int units_parse_int(const char *name, const char *text, long lo, long hi, long *out, tt_error *err);

/* Whole numbers from lo to hi, each followed by one of seps but the last
 * ("1,2,3", "16x32"), at most cap of them, into out: how many (0 for ""),
 * or -1 on a bad or empty item, a trailing separator or more than cap. */
int units_parse_int_list(const char *text, const char *seps, long lo, long hi, long *out, int cap);

/* Formats bytes compactly with a power-of-10 suffix ("100M", "1.5G") into buf. */
const char *units_format_bytes(double bytes, char *buf, int buf_bytes);

#endif
