/* run.h: the main job's pipeline:
 * scenario -> platform + workload -> replay -> step cost -> report. */
#ifndef TT_RUN_H
#define TT_RUN_H

#include "common/error.h"
#include "sim/scenario.h"

typedef struct step_cost {
    double time_s;
    double compute_s;
    double comm_s;
    double exposed_comm_s;
    double optimizer_s;
} step_cost;

typedef struct run_result {
    int ranks;
    double gradient_bytes;
    step_cost step;
    double closed_form_comm_s; /* alpha-beta time of the same allreduce */
} run_result;

int run_scenario(const scenario *sc, run_result *out, tt_error *err);

#endif
