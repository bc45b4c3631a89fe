/* svg.h: the plots of one run or of several compared, as one SVG figure a
 * planner can put on a slide: the step-time breakdown per point (stacked
 * bars, one per series side by side), time to accuracy, cost to accuracy and
 * MFU (scaling efficiency for a node sweep) against the swept quantity.
 * A series is a run's points with one label (one combination of swept paths).
 * Several runs (compare) add cost against time to accuracy for every point,
 * the Pareto front joined, and lim's deadline and budget (NULL: none). */
#ifndef TT_SVG_H
#define TT_SVG_H

#include "common/error.h"
#include "sim/report/pareto.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"

typedef struct svg_run {
    const char *name;
    const run_result *r;
} svg_run;

int svg_write_runs(const char *path, const char *title, const svg_run *runs, size_t n, const pareto_limits *lim,
                   tt_error *err);
/* The same figure written on f (a page that inlines it). */
int svg_print_runs(FILE *f, const char *title, const svg_run *runs, size_t n, const pareto_limits *lim,
                   tt_error *err);

/* One run: the scenario's name and its platform and model in the title. */
int svg_write(const char *path, const scenario *sc, const run_result *r, tt_error *err);
int svg_print(FILE *f, const scenario *sc, const run_result *r, tt_error *err);

#endif
