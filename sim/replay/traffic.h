/* traffic.h: the bytes a collective puts on the links of one class ("upi"),
 * read from the schedule of the algorithm that ran: each message counts once
 * per link of that class its route crosses. */
#ifndef TT_TRAFFIC_H
#define TT_TRAFFIC_H

#include "collectives/schedule.h"
#include "common/error.h"
#include "platforms/platform.h"

/* params: a concrete algorithm (not auto or nccl) on ranks 0..params->ranks-1
 * of p, params->bytes its nccl-tests size. */
int traffic_class_bytes(const platform *p, const coll_params *params, const char *cls, double *bytes, tt_error *err);

#endif
