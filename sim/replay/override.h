/* override.h: one value changed in a scenario document without editing the
 * file ('--set PATH=VALUE', and each point of a sweep over a path). Paths are
 * dotted keys into the scenario ("platform.fabric.oversubscription",
 * "devices.h100-sxm5-80gb.price_usd_per_h", "workload.phases[1].fraction"). */
#ifndef TT_OVERRIDE_H
#define TT_OVERRIDE_H

#include <jansson.h>

#include "common/error.h"

/* Splits "PATH=VALUE": VALUE is read as JSON when it is JSON (3.5, true,
 * "x", [1, 2]), else taken as a string (dgx-h100, 64K). */
int override_parse(const char *arg, char **path, json_t **value, tt_error *err);

/* Sets the member at path in doc to value (a new reference is taken),
 * creating the objects on the way; an array element is named by [index].
 * `what` names the override in messages ("--set x=1"). */
int override_set(json_t *doc, const char *path, json_t *value, const char *what, tt_error *err);

#endif
