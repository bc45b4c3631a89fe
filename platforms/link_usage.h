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

#define LINK_CLASSES_MAX 16

/* Every link of a class together (all of them, not only the busiest kept). */
typedef struct link_class_use {
    char cls[24];
    long links;       /* that carried any byte */
    double bytes;     /* summed over them */
    double busiest_s; /* the busiest one's busy_s */
} link_class_use;

typedef struct link_usage {
    int n;            /* links kept, busiest first (ties: fewer bytes, then name) */
    long links_used;  /* links that carried any byte */
    link_use top[LINK_USAGE_MAX];
    int n_classes;
    link_class_use classes[LINK_CLASSES_MAX];
} link_usage;

/* Adds one link's load to its class's total (the first LINK_CLASSES_MAX classes). */
void link_usage_add_class(link_usage *u, const char *cls, double bytes, double busy_s);

/* Adds scale x every link and class of from into into (by name), keeping
 * the busiest links; a class's busiest is that of its busiest kept link (or
 * of the parts' busiest, scaled, when none is kept: then a lower bound). */
void link_usage_add(link_usage *into, const link_usage *from, double scale);

/* Sorts busiest first and keeps at most LINK_USAGE_MAX (after appending). */
void link_usage_sort(link_use *links, int *n);

#endif
