/* maxmin.h: one coupled component of flows under SimGrid's CM02 sharing,
 * solved event by event (plain arithmetic: collective_fluid.c's solver). */
#ifndef TT_MAXMIN_H
#define TT_MAXMIN_H

#include <stddef.h>

/* One coupled component's flows under CM02's weighted max-min sharing: each
 * flow waits its route's latency, then takes a share inversely proportional
 * to that latency (its sharing penalty) until its bytes are through.
 * done_s[flow[i]] receives flow i's end. */
typedef struct maxmin_comp {
    int nf, nc;
    const size_t *flow;   /* nf: indices into the round's flows */
    int *use_off;         /* nf + 1: flow i's constraints use_c/use_w[use_off[i] ..) */
    int *use_c;           /* local constraint */
    double *use_w;        /* its consumption per byte/s */
    double *cap;          /* nc */
    const double *penalty; /* nf: the route's latency (1 without one), as CM02 weighs flows */
} maxmin_comp;

/* Scratch of maxmin_solve: per flow (nf) and per constraint (nc). */
typedef struct maxmin_work {
    double *rem, *rate;      /* nf */
    unsigned char *state;    /* nf: 0 latency, 1 sending, 2 done */
    int *pending, *sending, *unfixed, *fixed; /* nf: lists of flows, in flow order */
    int *queue, *seen;       /* nf: the flows an event reaches; the event that last reached each */
    double *left, *wsum;     /* nc */
    int *users, *cons;       /* nc: unfixed users; the constraints that have some */
    int *con_off, *con_seen; /* nc + 1: constraint k's flows con_f[con_off[k] ..); the event that last reached it */
    int *con_f;              /* one per use */
} maxmin_work;

/* Flows start at start_s[i] (their ends' ready time plus the route's latency)
 * with bytes[i] to send, each at most bound_Bps[i]; done_s[c->flow[i]]
 * receives when flow i is through. w holds nf and nc entries per field. */
void maxmin_solve(const maxmin_comp *c, const double *bytes, const double *start_s, const double *bound_Bps,
                  double *done_s, maxmin_work *w);

#endif
