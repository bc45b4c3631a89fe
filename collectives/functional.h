/* functional.h: executes a schedule on real buffers (one double per element)
 * and checks the result: element-wise sums for reductions, the right copies
 * for gathers and broadcasts, the right permutation for alltoall. It also
 * checks that stages marked identical really are (the fast executor relies on
 * it) and that no rank forwards data before it holds it. */
#ifndef TT_FUNCTIONAL_H
#define TT_FUNCTIONAL_H

#include <stddef.h>

#include "collectives/schedule.h"

/* 0 when the schedule computes its collective; -1 with why filled otherwise.
 * A switched schedule (NVLS, SHARP: the switches reduce) is checked for its
 * identical stages only. */
int schedule_verify(const schedule *s, char *why, size_t why_bytes);

#endif
