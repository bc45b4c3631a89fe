/* closed_form.h: alpha-beta(-gamma) time of each algorithm on an uncontended
 * star: every rank has its own full-duplex link of bandwidth beta to one
 * switch, a message costs alpha plus its bytes over the bandwidth share of the
 * busiest link, and a reduction costs gamma seconds per byte reduced. */
#ifndef TT_CLOSED_FORM_H
#define TT_CLOSED_FORM_H

#include "collectives/schedule.h"

/* Seconds; NaN when no closed form is known for these parameters (the
 * pipelined binary trees have one only for an odd rank count, where the
 * deepest level ends with two siblings). */
double coll_closed_form_s(const coll_params *p, double alpha_s, double beta_Bps,
                          double gamma_s_per_byte);

#endif
