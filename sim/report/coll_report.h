/* coll_report.h: a collective measurement scenario's result as JSON (the
 * document `expect` reads: collective.busbw_Bps, collective.time_s,
 * reference.busbw_ratio) and as text. */
#ifndef TT_COLL_REPORT_H
#define TT_COLL_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "sim/replay/coll_scenario.h"
#include "sim/replay/scenario.h"

json_t *coll_report_json(const scenario *sc, const coll_scenario_result *r);
void coll_report_text(FILE *out, const scenario *sc, const coll_scenario_result *r);

#endif
