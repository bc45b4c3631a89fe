/* coll_scenario.h: a scenario whose "collective" replaces the workload: one
 * collective timed on the platform as nccl-tests would measure it, with its
 * published reference. */
#ifndef TT_COLL_SCENARIO_H
#define TT_COLL_SCENARIO_H

#include "common/error.h"
#include "sim/replay/scenario.h"

typedef struct coll_scenario_result {
    char platform[64], op[24], requested[16], algo[16], nccl[24];
    int ranks;
    double bytes, time_s, algbw_Bps, busbw_Bps;
} coll_scenario_result;

/* Runs sc (sc->is_collective) on its platform and network. */
int coll_scenario_run(const scenario *sc, coll_scenario_result *out, tt_error *err);

#endif
