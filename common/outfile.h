/* outfile.h: an output file written whole or not at all. The bytes go to a
 * temporary file in the target's directory, which is flushed, synced and
 * renamed over the target on commit: a full disk, an error or an interrupt
 * leaves the previous file as it was and no partial one. */
#ifndef TT_OUTFILE_H
#define TT_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

typedef struct outfile outfile;

/* Opens a temporary file beside path for writing; what names the output in
 * messages ("the CSV file"). On success *f is the stream to write. */
int outfile_open(const char *path, const char *what, outfile **out, FILE **f, tt_error *err);

/* Flushes, syncs and renames over the target; frees o. An error (with the
 * system's reason) removes the temporary file and leaves the target alone. */
int outfile_commit(outfile *o, tt_error *err);

/* Drops the output: removes the temporary file, frees o. NULL is a no-op. */
void outfile_discard(outfile *o);

/* Removes every temporary output still open; async-signal-safe (for the
 * SIGINT/SIGTERM handler). */
void outfile_remove_pending(void);

/* Refuses (TT_EINPUT) an output path that names an existing file among the
 * inputs (same device and inode, whatever the spelling) or another output
 * of the same run: writing it would destroy what the run reads. Entries may
 * be NULL. input_what[i] names inputs[i] in the message. */
int outfile_check_distinct(const char *const *outputs, size_t n_outputs, const char *const *inputs,
                           const char *const *input_what, size_t n_inputs, tt_error *err);

#endif
