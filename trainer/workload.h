/* workload.h: the work of one training step as the simulator replays it.
 * The skeleton carries only the gradient bytes; the trainer fills in layers,
 * gradient tensors and collectives (issue: workload traces). */
#ifndef TT_WORKLOAD_H
#define TT_WORKLOAD_H

typedef struct workload {
    double gradient_bytes; /* allreduced once per step */
} workload;

/* A workload that only allreduces a gradient of the given size. */
void workload_gradient_only(workload *w, double gradient_bytes);

#endif
