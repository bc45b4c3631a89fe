#include "sim/report/human.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void human_time_unit(double max_s, const char **unit, double *unit_s)
{
    static const char *const names[] = {"us", "ms", "s", "min", "h", "days"};
    static const double secs[] = {1e-6, 1e-3, 1, 60, 3600, 86400};
    /* the largest unit in which max_s is at least 1 (minutes from 2 min up, hours from 2 h, days from 3) */
    static const double from[] = {0, 1e-3, 1, 120, 7200, 3 * 86400};
    int k = 0;
    for (int i = 1; i < 6; i++)
        if (max_s >= from[i])
            k = i;
    *unit = names[k];
    *unit_s = secs[k];
}

const char *human_duration(double s, char *buf, size_t n)
{
    return human_duration_as(s, s, buf, n);
}

const char *human_duration_as(double s, double like_s, char *buf, size_t n)
{
    const char *unit = "s";
    double unit_s = 1;
    if (fabs(s) < 1e-12) /* rounding noise of a difference, not a duration */
        s = 0;
    if (fabs(like_s) >= 1e-12)
        human_time_unit(fabs(like_s), &unit, &unit_s);
    snprintf(buf, n, "%.4g %s", s / unit_s, unit);
    return buf;
}

const char *human_count(double v, char *buf, size_t n)
{
    if (!isfinite(v) || fabs(v) < 1000) {
        snprintf(buf, n, "%.4g", v);
        return buf;
    }
    double scale = pow(10, floor(log10(fabs(v))) - 3); /* keep 4 significant digits */
    char digits[48];
    snprintf(digits, sizeof digits, "%.0f", fabs(round(v / scale) * scale));
    size_t len = strlen(digits), k = 0;
    if (v < 0 && k + 1 < n)
        buf[k++] = '-';
    for (size_t i = 0; i < len && k + 2 < n; i++) {
        buf[k++] = digits[i];
        if ((len - i - 1) % 3 == 0 && i + 1 < len)
            buf[k++] = ',';
    }
    buf[k] = '\0';
    return buf;
}

const char *human_usd(double usd, char *buf, size_t n)
{
    double a = fabs(usd);
    if (a >= 1e6)
        snprintf(buf, n, "$%.3gM", usd / 1e6);
    else if (a >= 1e3)
        snprintf(buf, n, "$%.3gk", usd / 1e3);
    else
        snprintf(buf, n, "$%.3g", usd);
    return buf;
}
