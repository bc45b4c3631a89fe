#include "common/units.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const BYTE_WORDS[] = {"B", NULL};

int units_parse_amount(const char *text, const char *const *unit_words,
                       double *out, const char **why)
{
    const char *p = text;
    while (*p == ' ')
        p++;
    if (*p == '\0') {
        *why = "empty string";
        return -1;
    }
    char *end = NULL;
    double v = strtod(p, &end);
    if (end == p || !isfinite(v)) {
        *why = "does not start with a number";
        return -1;
    }
    if (v < 0) {
        *why = "negative";
        return -1;
    }
    double mult = 1.0;
    switch (*end) {
    case 'K': case 'k': mult = 1e3; break;
    case 'M': mult = 1e6; break;
    case 'G': mult = 1e9; break;
    case 'T': mult = 1e12; break;
    case 'P': mult = 1e15; break;
    default: mult = 0; break;
    }
    if (mult != 0) {
        end++;
        if (*end == 'i') {
            mult = pow(1024.0, round(log10(mult) / 3.0));
            end++;
        }
    } else {
        mult = 1.0;
    }
    if (*end != '\0') {
        int ok = 0;
        for (int i = 0; unit_words && unit_words[i]; i++)
            if (strcmp(end, unit_words[i]) == 0)
                ok = 1;
        if (!ok) {
            *why = "unknown suffix (use K, M, G, T for powers of 10 or Ki, Mi, Gi, Ti for powers of 2)";
            return -1;
        }
    }
    /* "1e308K" overflows to inf, and past UNITS_MAX no modelled quantity is meant */
    if (!(v * mult <= UNITS_MAX)) {
        *why = "too large (at most 1e30)";
        return -1;
    }
    if (v * mult > 0 && v * mult < DBL_MIN) {
        *why = "too small (0, or at least 2.2e-308)";
        return -1;
    }
    *out = v * mult;
    return 0;
}

int units_parse_bytes(const char *text, double *out_bytes, const char **why)
{
    return units_parse_amount(text, BYTE_WORDS, out_bytes, why);
}

int units_parse_seconds(const char *text, double *out_s, const char **why)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0) {
        *why = "expected a non-negative number of seconds";
        return -1;
    }
    static const struct { const char *suffix; double mult; } S[] = {
        {"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9},
    };
    if (v > UNITS_MAX) {
        *why = "too large (at most 1e30 seconds)";
        return -1;
    }
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++)
        if (strcmp(end, S[i].suffix) == 0) {
            if (v * S[i].mult > 0 && v * S[i].mult < UNITS_MIN_S) {
                *why = "too small (0, or at least 1e-15 seconds)";
                return -1;
            }
            *out_s = v * S[i].mult;
            return 0;
        }
    *why = "unknown time suffix (use s, ms, us or ns)";
    return -1;
}

const char *units_format_bytes(double bytes, char *buf, int buf_bytes)
{
    static const char *const suf[] = {"", "K", "M", "G", "T"};
    int i = 0;
    while (bytes >= 1000.0 && i < 4) {
        bytes /= 1000.0;
        i++;
    }
    snprintf(buf, (size_t)buf_bytes, "%.4g%s", bytes, suf[i]);
    return buf;
}

int units_parse_int(const char *name, const char *text, long lo, long hi, long *out, tt_error *err)
{
    char *end;
    errno = 0;
    long x = strtol(text, &end, 10);
    if (errno || end == text || *end || x < lo || x > hi)
        return tt_error_set(err, TT_EINPUT, "%s: expected a whole number from %ld to %ld, got '%s'", name, lo, hi,
                            text);
    *out = x;
    return TT_OK;
}

int units_parse_int_list(const char *text, const char *seps, long lo, long hi, long *out, int cap)
{
    int n = 0;
    for (const char *p = text; *p;) {
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (errno || end == p || x < lo || x > hi || n == cap || (*end && (!strchr(seps, *end) || !end[1])))
            return -1;
        out[n++] = x;
        p = *end ? end + 1 : end;
    }
    return n;
}
