/* scenario_load.h: the loaders of a scenario's sections, called by
 * scenario.c's parse in document order (replay-internal). Each returns
 * TT_OK or the jx error naming the file and JSON path. */
#ifndef TT_SCENARIO_LOAD_H
#define TT_SCENARIO_LOAD_H

#include "common/jsonx.h"
#include "sim/replay/scenario.h"

/* strdup, NULL for NULL: the scenario owns its strings. */
char *scenario_dup(const char *s);

/* "collective": one collective timed like nccl-tests instead of a step. */
int scenario_load_collective(const jx_obj *r, scenario *s);
/* "workload": read unless the scenario is a collective measurement. */
int scenario_load_workload(const jx_obj *r, scenario *s);
/* "parallel": the layout's degrees and order, ZeRO, sequence parallelism,
 * virtual stages, recomputation. */
int scenario_load_parallel(const jx_obj *r, scenario *s);
/* "collectives": algorithms, overlap, hier and NCCL options. */
int scenario_load_collectives(const jx_obj *r, scenario *s);
/* "resilience": failure rates, checkpoints, storage, restart, stragglers. */
int scenario_load_resilience(const jx_obj *r, scenario *s);

#endif
