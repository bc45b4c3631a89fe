/* expect.h: a scenario's "expect" bounds checked against its run's JSON
 * document; a violated bound is a result (exit 1), an unknown metric an
 * input error (exit 2). */
#ifndef TT_EXPECT_H
#define TT_EXPECT_H

#include <jansson.h>
#include <stddef.h>

#include "common/error.h"
#include "sim/replay/scenario.h"

/* Adds "expect": [{metric, min, max, value, passed}] to doc. Returns TT_OK
 * with *failed the number of violated bounds and `failures` naming them
 * ("step.time_s = 0.31 > max 0.3; ..."), or TT_EINPUT for an unknown metric. */
int expect_check(const scenario *sc, json_t *doc, int *failed, char *failures, size_t failures_bytes,
                 tt_error *err);

#endif
