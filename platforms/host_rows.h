/* host_rows.h: embedding rows between a node's CPU sockets and its
 * accelerators (tables in host memory, as on Zion), as plain data shared by
 * replay, which says what a rank moves per micro-step, and the engine, which
 * times it on SimGrid (sim/engine/host_embedding.h). */
#ifndef TT_HOST_ROWS_H
#define TT_HOST_ROWS_H

/* What one rank's embedding layers move per micro-step. */
typedef struct step_host_load {
    double rows_bytes;      /* looked-up rows, sockets -> accelerator */
    double grad_rows_bytes; /* their gradients, accelerator -> sockets */
    double lookup_bytes;    /* CPU memory traffic of the lookups (the layers' forward bytes) */
    double update_bytes;    /* of the sparse update (their backward bytes: gradient, row read, row write) */
} step_host_load;

typedef struct host_emb_time {
    double forward_s, backward_s;                    /* per micro-step: max(transfer, DRAM) */
    double forward_transfer_s, backward_transfer_s;  /* SimGrid, all flows at once */
    double lookup_s, update_s;                       /* the busiest socket's DRAM time */
} host_emb_time;

#endif
