/* expect.h: a scenario's "expect" bounds checked against its run's JSON
 * document; a violated bound is a result (exit 1), a path the run does not
 * write an input error (exit 2), found when the scenario loads. */
#ifndef TT_EXPECT_H
#define TT_EXPECT_H

#include <jansson.h>
#include <stddef.h>

#include "common/error.h"
#include "sim/replay/scenario.h"

/* Every number the run of sc can write, as the document 'ttasim run --json'
 * (or a collective scenario's) prints it with each optional block present,
 * the sweep at sc's points and every value 0. Built by the report's own
 * writer from a blank result, so it follows that writer. */
json_t *expect_outputs(const scenario *sc);

/* Before any simulation: each expect path names a number of expect_outputs(sc);
 * else TT_EINPUT naming the file, $.expect["PATH"] and the closest valid path. */
int expect_validate(const scenario *sc, tt_error *err);

/* Adds "expect": [{metric, min, max, value, passed}] to doc. Returns TT_OK
 * with *failed the number of violated bounds and `failures` naming them
 * ("step.time_s = 0.31 > max 0.3; ..."), or TT_EINPUT for a path this run
 * did not write (a block the point did not produce). */
int expect_check(const scenario *sc, json_t *doc, int *failed, char *failures, size_t failures_bytes,
                 tt_error *err);

#endif
