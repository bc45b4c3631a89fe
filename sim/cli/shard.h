/* shard.h: one shard of a sweep ('ttasim run --shard I/N', a batch job
 * array's task) as a JSON file, and the shards put back together for
 * 'ttasim merge'. A shard carries its points' records as hex: they are only
 * read by the same ttasim build, which the file's record size checks. */
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

/* Reads shard files of the scenario (same file bytes, same --set values)
 * into records (n_points of run_record_bytes): each point from the shard that ran it. */
int shard_read_all(char *const *files, size_t nfiles, const char *scenario_path, char *const *sets,
                   size_t n_sets, size_t n_points, void *records, tt_error *err);

#endif
