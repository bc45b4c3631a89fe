/* scratch.h: a scratch file that exists only as an open descriptor: created
 * in $TMPDIR (else /tmp) and unlinked at once, so no signal, crash or kill
 * can leave it behind. A child process reads it as /proc/self/fd/N. */
#ifndef TT_SCRATCH_H
#define TT_SCRATCH_H

#include "common/error.h"

/* Returns the descriptor (read-write), or -1 with err naming what failed and
 * which directory; what names the file's use in the message. */
int scratch_open(const char *what, tt_error *err);

#endif
