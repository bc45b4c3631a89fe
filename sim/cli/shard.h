/* shard.h: one shard of a sweep ('ttasim run --shard I/N', a batch job
 * array's task) as a JSON document, and the shards put back together for
 * 'ttasim merge'. A shard names its schema version, the ttasim build that
 * wrote it, a checksum of the scenario's bytes with its --set values, every
 * file its run read (path, size, checksum) and its points' records
 * (shard_record.h); a checksum of the document's bytes ends it. Merge
 * refuses, naming the file, a shard of another schema, build, scenario or
 * set of files, one changed by a byte, and a point given twice or in the
 * wrong shard. */
#ifndef TT_SHARD_H
#define TT_SHARD_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"
#include "sim/replay/run.h"

/* Parses "I/N" (0 <= I < N <= 100000). */
int shard_parse(const char *text, int *index, int *count, tt_error *err);

/* Writes the shard document of a run made with opt->shard/opt->shards on
 * the scenario file with its --set values. */
int shard_write(FILE *f, const char *scenario_path, char *const *sets, size_t n_sets, const run_options *opt,
                const run_result *r, tt_error *err);

/* The shards of one merge: read, then checked against the files the merge read. */
typedef struct shard_set shard_set;

/* Reads shard files of the scenario (same file bytes, same --set values,
 * same build) into records (n_points point_outcome): each point from the
 * shard that ran it. */
int shard_set_read(char *const *files, size_t nfiles, const char *scenario_path, char *const *sets, size_t n_sets,
                   size_t n_points, void *records, shard_set **out, tt_error *err);

/* After the merge ran the scenario's own point: every shard's run read the
 * same files before its points as this merge, unchanged, and the files its
 * points read are unchanged. */
int shard_set_check_inputs(const shard_set *s, tt_error *err);
void shard_set_free(shard_set *s);

#endif
