/* platform.h: hardware as data, turned into a SimGrid platform file.
 * Ranks are the accelerators, numbered node-major; each is a SimGrid host. */
#ifndef TT_PLATFORM_H
#define TT_PLATFORM_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

typedef struct platform platform;

/* Network models: ideal = CM02 without cross-traffic (the alpha-beta closed
 * form); calibrated = the documented default for predictions. */
typedef enum { NETWORK_IDEAL = 0, NETWORK_CALIBRATED = 1 } network_model;

/* A switched cluster: nodes x accelerators_per_node accelerators, each on a
 * link to its node's switch, each node switch on an uplink to one top switch. */
typedef struct switched_spec {
    int nodes;
    int accelerators_per_node;
    double intra_bw_Bps, intra_latency_s;  /* accelerator <-> node switch, per direction */
    double inter_bw_Bps, inter_latency_s;  /* node switch <-> top switch, per direction */
    double accelerator_flops;              /* host speed in SimGrid */
} switched_spec;

platform *platform_new_switched(const switched_spec *spec, tt_error *err);
void platform_free(platform *p);

int platform_ranks(const platform *p);
/* The SimGrid host name of rank i. */
const char *platform_rank_host(const platform *p, int rank, char *buf, size_t buf_bytes);

/* Route from rank a to rank b: summed latency and bottleneck bandwidth. */
void platform_path(const platform *p, int a, int b, double *latency_s, double *bw_Bps);

/* Writes a SimGrid 4.1 platform XML document. */
int platform_write_xml(const platform *p, FILE *out, tt_error *err);

#endif
