/* compare.h: several runs side by side ('ttasim compare'): one table of
 * every point, and per value of the swept quantity (global batch, else
 * nodes) the fastest and the cheapest series and what makes the others
 * slower (the part of the step that grows most: exposed communication,
 * compute, ...). A series is a run's points with one label. The purchase
 * search over every point (pareto.h): the Pareto front of time to accuracy
 * against cost, the cheapest within lim->deadline_s, the fastest within
 * lim->budget_usd. */
#ifndef TT_COMPARE_H
#define TT_COMPARE_H

#include <jansson.h>
#include <stdio.h>

#include "common/error.h"
#include "sim/report/pareto.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"

typedef struct compare_run {
    const scenario *sc;
    const run_result *r;
} compare_run;

/* The scenario's file name without its directory and ".json": a series' name
 * in the table, and in the plot's legend when --set changed the scenario. */
void compare_file_name(const scenario *sc, char *out, size_t n);

void compare_text(FILE *out, const compare_run *runs, size_t n, const pareto_limits *lim);
json_t *compare_json(const compare_run *runs, size_t n, const pareto_limits *lim);

/* 1 when a limit of lim is set and no point meets it (the search's
 * expectation failed), with what was missed in msg. */
int compare_limits_missed(const compare_run *runs, size_t n, const pareto_limits *lim, char *msg, size_t msg_bytes);

#endif
