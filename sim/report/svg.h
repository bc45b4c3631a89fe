/* svg.h: plots of a run as one SVG file: the step-time breakdown per point
 * (stacked bars), time to accuracy and cost against the swept quantity
 * (global batch or nodes), and scaling efficiency. */
#ifndef TT_SVG_H
#define TT_SVG_H

#include "common/error.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"

int svg_write(const char *path, const scenario *sc, const run_result *r, tt_error *err);

#endif
