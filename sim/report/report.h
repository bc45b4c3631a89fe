/* report.h: a run's results as a JSON document (the contract's keys), a text
 * table, and CSV (one row per point). */
#ifndef TT_REPORT_H
#define TT_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "common/error.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"

/* The document 'ttasim run --json' prints: the base point's keys at the top
 * (step.*, steps_to_target, time_to_accuracy_s, cost_usd, energy_j),
 * "reference" when the scenario has one, "sweep" with the other points. */
json_t *report_json(const scenario *sc, const run_result *r);

/* The text report: one screen for a point; the assumptions behind it listed
 * with all_assumptions, else counted on one line (ttasim run --assumptions). */
void report_text(FILE *out, const scenario *sc, const run_result *r, int all_assumptions);

/* The points table of a sweep (and of 'ttasim compare', with a scenario
 * column): durations in their unit, renting and owning cost, a point that
 * does not run with its reason, extrapolated steps starred. */
void report_table_header(FILE *out, int with_name);
/* Whether a point counts a language model's tokens to the target (tokens_to_target in JSON). */
int report_has_tokens(const run_point *p);
void report_table_row(FILE *out, const char *name, const run_point *p);
#define REPORT_TABLE_NOTE                                                                                  \
    "rent: the accelerators at their price per hour; own: the cluster's capital cost over its lifetime " \
    "plus energy at the PUE\n"
#define REPORT_EXTRAPOLATED_NOTE "* steps to target extrapolated beyond the profile's measured batches\n"

/* One CSV file of several runs (compare): a row per point, the run's name first. */
int report_csv_runs(const char *path, const char *const *names, const run_result *const *rs, size_t n,
                    tt_error *err);

int report_csv(const char *path, const scenario *sc, const run_result *r, tt_error *err);

/* A value by dotted path ("step.time_s", "sweep[2].cost_usd"); 0 if absent or not a number. */
int report_lookup(json_t *doc, const char *path, double *out);

#endif
