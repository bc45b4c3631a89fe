/* shard_record.h: one sweep point's outcome (run.h's point_outcome) as a
 * JSON object of named fields, and back, validated field by field: each
 * number's type and range, each string's length, each plan an index the
 * report can print. A field that changes meaning gets a new name (units in
 * names) and SHARD_SCHEMA_VERSION a new number. */
#ifndef TT_SHARD_RECORD_H
#define TT_SHARD_RECORD_H

#include <jansson.h>

#include "common/error.h"
#include "sim/replay/run.h"

#define SHARD_SCHEMA_VERSION 6

/* The record of point `index`: {"point": index, fields...}; NULL when out of memory. */
json_t *shard_record_json(const point_outcome *o, size_t index);

/* Reads a record into *o (zeroed first); errors name file and where
 * ("$.records[3]") with the field's path. */
int shard_record_read(const json_t *rec, const char *file, const char *where, point_outcome *o, tt_error *err);

#endif
