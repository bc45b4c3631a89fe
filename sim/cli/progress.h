/* progress.h: how far a long command is, on stderr: a bar redrawn in place
 * on a terminal, otherwise a plain line now and then (points done, elapsed,
 * remaining) so CI logs of long sweeps show life; nothing with --quiet.
 * One command runs at a time, so the state is the process's. */
#ifndef TT_PROGRESS_H
#define TT_PROGRESS_H

#include <stddef.h>

/* Starts a stage named `what` ("run quickstart") counting `units` ("points"). */
void progress_start(const char *what, const char *units, int quiet);
/* done of total units: run_scenario's callback. */
void progress_update(size_t done, size_t total);

#endif
