/* compare.h: several runs side by side ('ttasim compare'): one table of
 * every point, and per value of the swept quantity (global batch, else
 * nodes) the fastest and the cheapest series and what makes the others
 * slower (the part of the step that grows most: exposed communication,
 * compute, ...). A series is a run's points with one label. */
#ifndef TT_COMPARE_H
#define TT_COMPARE_H

#include <jansson.h>
#include <stdio.h>

#include "common/error.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"

typedef struct compare_run {
    const scenario *sc;
    const run_result *r;
} compare_run;

void compare_text(FILE *out, const compare_run *runs, size_t n);
json_t *compare_json(const compare_run *runs, size_t n);

#endif
