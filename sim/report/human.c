#include "sim/report/human.h"

#include <math.h>
#include <stdio.h>

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
    const char *unit = "s";
    double unit_s = 1;
    if (s != 0)
        human_time_unit(fabs(s), &unit, &unit_s);
    snprintf(buf, n, "%.4g %s", s / unit_s, unit);
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
