/* scenario.h: a scenario file (JSON, documented in scenarios/README.md). */
#ifndef TT_SCENARIO_H
#define TT_SCENARIO_H

#include "common/error.h"
#include "platforms/platform.h"

#define SCENARIO_VERSION 1

typedef struct scenario {
    char *path;
    char *name;
    char *description;
    switched_spec cluster;
    network_model network;
    double gradient_bytes;
    int allreduce_algo; /* index into SCENARIO_ALLREDUCE_ALGOS */
} scenario;

extern const char *const SCENARIO_ALLREDUCE_ALGOS[];

/* Loads and validates; errors name the file and the JSON path or line:column. */
int scenario_load(const char *path, scenario *out, tt_error *err);
void scenario_free(scenario *s);

#endif
