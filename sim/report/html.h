/* html.h: a run's report as one self-contained HTML page (ttasim run --html):
 * what ran, the per-step, to-target, cost and energy, resilience and owning
 * tables, the sweep's points, the plots of svg.h inline, the validation status
 * of the model and accelerator used (validation.h), the notes and the
 * assumptions folded. No external resources, no script; every text escaped.
 * Each number is the report's JSON value (report_json): its cell carries the
 * JSON path (data-key="step.time_s", "sweep[2].cost_usd") and the value at 12
 * significant digits (data-value), beside it in %.6g and as a person reads it. */
#ifndef TT_HTML_H
#define TT_HTML_H

#include <jansson.h>

#include "common/error.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"

/* Writes the page to path through common/outfile.h; doc is report_json(sc, r). */
int html_write(const char *path, const scenario *sc, const run_result *r, json_t *doc, tt_error *err);

#endif
