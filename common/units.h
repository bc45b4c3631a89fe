/* units.h: quantities written by people: "100M", "64Ki", "12.5G", "1us". */
#ifndef TT_UNITS_H
#define TT_UNITS_H

/* The largest amount accepted: beyond any bytes, rate or FLOPs a platform or a
 * sweep names, and far from overflowing the products computed from it. */
#define UNITS_MAX 1e30

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

/* Formats bytes compactly with a power-of-10 suffix ("100M", "1.5G") into buf. */
const char *units_format_bytes(double bytes, char *buf, int buf_bytes);

#endif
