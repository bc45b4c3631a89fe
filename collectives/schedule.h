/* schedule.h: a collective as data: which rank sends which bytes to whom, in
 * which step. No SimGrid here; sim/ executes schedules, tests check them. */
#ifndef TT_SCHEDULE_H
#define TT_SCHEDULE_H

#include <stddef.h>

#include "common/error.h"

typedef struct transfer {
    int src, dst;
    double bytes;
    int reduce; /* the receiver reduces the block into its buffer */
} transfer;

/* Steps run in order; a rank starts step s once its own transfers of step s-1
 * (sent and received) are done. */
typedef struct schedule {
    int ranks;
    int steps;
    size_t *step_begin; /* steps + 1 offsets into xfers */
    transfer *xfers;
} schedule;

void schedule_free(schedule *s);

/* Ring allreduce of `bytes` over n ranks: n-1 reduce-scatter steps then n-1
 * allgather steps, each rank sending bytes/n to its successor. */
int ring_allreduce(int n, double bytes, schedule *out, tt_error *err);

/* Alpha-beta time of the ring: 2(n-1) (alpha + bytes / (n beta)). */
double ring_allreduce_closed_form_s(int n, double bytes, double alpha_s, double beta_Bps);

#endif
