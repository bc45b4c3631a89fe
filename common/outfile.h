/* outfile.h: outputs never destroy. A regular file (or a new one) is
 * written whole or not at all: the bytes go to an unnamed temporary file in
 * the target's directory, flushed and synced, then linked at the target's
 * name (a new file), or beside it and renamed over it (a symbolic link keeps
 * pointing at it): a full disk, an error or an interrupt leaves the previous
 * file as it was. A FIFO, a character
 * device or this process's standard output or error is written in place,
 * every write and the close checked; nothing else is replaced. An output
 * that is a file the run read (common/infile.h) is refused. */
#ifndef TT_OUTFILE_H
#define TT_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

typedef struct outfile outfile;

/* Opens path for writing; what names the output in messages ("the CSV
 * file"). On success *f is the stream to write. */
int outfile_open(const char *path, const char *what, outfile **out, FILE **f, tt_error *err);

/* The same for a file the command reads and writes back by design (a
 * convergence profile a sweep resumes from): replaced even though the run
 * read it. */
int outfile_open_update(const char *path, const char *what, outfile **out, FILE **f, tt_error *err);

/* Whether path could be written as outfile_open would (its directory, its
 * type, an input of the run), checked before a long run rather than after:
 * nothing is created or changed. A FIFO or character device passes unopened. */
int outfile_probe(const char *path, const char *what, tt_error *err);

/* Flushes, syncs and renames over the target (in a batch: flushes and syncs,
 * the rename waits for outfile_batch_end); frees o. An error (with the
 * system's reason) removes the temporary file and leaves the target alone. */
int outfile_commit(outfile *o, tt_error *err);

/* Drops the output: removes the temporary file, frees o. NULL is a no-op. */
void outfile_discard(outfile *o);

/* A run's outputs are of one run: between begin and end, committed outputs
 * wait; end renames them all when commit is set and every one was written,
 * else none (each target stays as it was). Returns the first error. */
void outfile_batch_begin(void);
int outfile_batch_end(int commit, tt_error *err);

/* Removes every named temporary output still open; async-signal-safe (for
 * the SIGINT/SIGTERM handler). Unnamed ones go with the process. */
void outfile_remove_pending(void);

/* Refuses (TT_EINPUT) an output path that names an existing file among the
 * inputs (same device and inode, whatever the spelling), a file the run has
 * read, or another output of the same run: writing it would destroy what
 * the run reads; or one outfile_probe refuses. Entries may be NULL.
 * input_what[i] names inputs[i]. */
int outfile_check_distinct(const char *const *outputs, size_t n_outputs, const char *const *inputs,
                           const char *const *input_what, size_t n_inputs, tt_error *err);

#endif
