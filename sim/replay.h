/* replay.h: executes a collective schedule on a SimGrid platform. */
#ifndef TT_REPLAY_H
#define TT_REPLAY_H

#include "collectives/schedule.h"
#include "common/error.h"
#include "platforms/platform.h"

/* Simulated seconds from the first transfer to the last rank's finish. */
int replay_schedule(const platform *p, network_model net, const schedule *s,
                    double *time_s, tt_error *err);

#endif
