/* link_usage.h: what a simulation moved over each link, as plain data that
 * travels from the simulation process up to the report (`--links N`).
 * Bytes are per direction (a SPLITDUPLEX link's two directions are two
 * links); busy_s is bytes over the link's line rate, the time it would be
 * busy at full speed, so busy_s / interval is its utilisation. */
#ifndef TT_LINK_USAGE_H
#define TT_LINK_USAGE_H

#include "platforms/platform.h"

/* The busiest links kept: enough for a report's N and for merging a step's
 * collectives (a link below this rank in every part stays below in the sum). */
#define LINK_USAGE_MAX 48

typedef struct link_use {
    platform_link_info link; /* name, class, ends */
    double bytes, busy_s;
} link_use;

typedef struct link_usage {
    int n;            /* links kept, busiest first (ties by name) */
    long links_used;  /* links that carried any byte */
    link_use top[LINK_USAGE_MAX];
} link_usage;

/* Adds scale x every link of from into into (by name), keeping the busiest. */
void link_usage_add(link_usage *into, const link_usage *from, double scale);

/* Sorts busiest first and keeps at most LINK_USAGE_MAX (after appending). */
void link_usage_sort(link_use *links, int *n);

#endif
