/* shard.h: one shard of a command's independent simulations (the points of
 * a sweep, 'ttasim run --shard I/N'; the layouts of a search, 'ttasim plan
 * --shard I/N'; a batch job array's task) as a JSON document, and the shards
 * put back together ('ttasim merge', 'ttasim plan --merge'). A shard names
 * its schema version, the command and its options that change the results,
 * the ttasim build that wrote it, a checksum of the scenario's bytes with its
 * --set values, every file its run read (path, size, checksum) and its
 * points' records (shard_record.h); a checksum of the document's bytes ends
 * it. A merge refuses, naming the file, a shard of another schema, command,
 * options, build, scenario or set of files, one changed by a byte, and a
 * point given twice or in the wrong shard. */
#ifndef TT_SHARD_H
#define TT_SHARD_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"
#include "sim/replay/run.h"
#include "sim/replay/scenario.h"

/* Parses "I/N" (0 <= I < N <= 100000). */
int shard_parse(const char *text, int *index, int *count, tt_error *err);

/* What shards belong to: the command that ran them ("run", "plan"), its
 * options that change the results as words ("--simulate 15"; "" for run),
 * the scenario file and its --set values. */
typedef struct shard_origin {
    const char *command, *options, *scenario_path;
    char *const *sets;
    size_t n_sets;
} shard_origin;

/* Writes shard `shard` of `shards`: the records of its points (those
 * present) among n_points. */
int shard_write(FILE *f, const shard_origin *o, int shard, int shards, const point_outcome *records,
                size_t n_points, tt_error *err);

/* The shards of one merge: read, then checked against the files the merge read. */
typedef struct shard_set shard_set;

/* Reads shard files of o (same command and options, same file bytes, same
 * --set values, same build) into records (n_points point_outcome): each
 * point from the shard that ran it. */
int shard_set_read(char *const *files, size_t nfiles, const shard_origin *o, size_t n_points, void *records,
                   shard_set **out, tt_error *err);

/* After the merge ran the scenario's own point: every shard's run read the
 * same files before its points as this merge, unchanged, and the files its
 * points read are unchanged. */
int shard_set_check_inputs(const shard_set *s, tt_error *err);
void shard_set_free(shard_set *s);

/* Refuses (TT_EINPUT), before a run or merge, an output (NULL entries
 * skipped; db, the --db file or NULL, among them) onto a file of the
 * scenario, a shard being merged or another output. */
int shard_check_outputs(const scenario *sc, char *const *shards, size_t n_shards, const char *const *outs,
                        size_t n_outs, const char *db, tt_error *err);

#endif
