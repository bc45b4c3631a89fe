/* collective_group.h: a communicator's worker actors and the rounds they
 * execute (engine-internal: collective_sim.c and collective_exec.c only). */
#ifndef TTASIM_SIM_ENGINE_COLLECTIVE_GROUP_H
#define TTASIM_SIM_ENGINE_COLLECTIVE_GROUP_H

#include <stddef.h>

#include <simgrid/forward.h>

#include "collectives/schedule.h"
#include "platforms/platform.h"
#include "sim/engine/collective_fluid.h"
#include "sim/engine/collective_sim.h"
#include "sim/engine/link_tally.h"

/* One step's network flows, merged per (src, dst), indexed both ways. */
typedef struct step_round {
    size_t *send_off; /* ranks + 1: rank r sends mailbox/send_bytes[send_off[r] .. send_off[r+1]) */
    double *send_bytes;
    sg_mailbox_t *mailbox; /* per flow, in send order */
    size_t *recv_off; /* ranks + 1: rank r receives recv_mailbox[recv_off[r] ..) */
    sg_mailbox_t *recv_mailbox;
    double *reduce_bytes; /* ranks: what each rank reduces after receiving */
    int busy;             /* any flow or reduction at all */
    int streamed;         /* the reduction runs alongside the transfers (sched_stage.streamed) */
    int on_host;          /* the ranks work in host memory: reductions on a CPU thread (sched_stage.on_host) */
    int staging;          /* +1 / -1: rank r moves stage_bytes[r] down to its socket / back (sched_stage.staging) */
    double *stage_bytes;  /* ranks, when staging */
    double *recv_bytes;   /* ranks, when on_host: what each receives (its socket's receive thread reads them) */
    const coll_flow *flows; /* the round's flows (send order) while it executes, or NULL */
} step_round;


/* The mailbox of the blocks rank src sends rank dst: one per pair, so that
 * blocks of successive steps between two ranks match in order. Open
 * addressing on src * n + dst, created on first use and kept for the group. */
typedef struct pair_slot {
    long key; /* -1: empty */
    sg_mailbox_t mailbox;
} pair_slot;

typedef struct coll_group coll_group;

/* What a worker actor reads through sg_actor_self_get_data(). */
typedef struct worker_arg {
    coll_group *g;
    int rank;
} worker_arg;

struct coll_group {
    const platform *p;
    int n;
    long serial; /* names this group's mailboxes */
    double gamma; /* reduce seconds per byte */
    int *ranks; /* platform rank of each member */
    int *index, index_n; /* group rank of each platform rank below index_n, -1 for none */
    int *relay; /* per (sender's, receiver's) place in a node: the relay's place (platform_rail_relay between
                 * two nodes, alike on every pair of nodes), -1 none, -2 not yet asked; NULL until needed */
    sg_host_t *hosts;   /* of each member */
    link_tally *tally;  /* when counting link bytes: the flows of the timed run */
    double *speed_flops;
    /* host staging (coll_params.staging): each member's accelerator and CPU socket hosts and
     * that socket's rates; hosts[r] follows the worker while it is staged */
    int staged;
    sg_host_t *dev_host, *cpu_host;
    coll_socket *sockets;
    /* the TCP transport's one receive thread per node (Gloo's device loop, shared by every
     * context of the server's one process): when it is next free, a FIFO kept at the node's
     * first member (rx_first[r]) */
    double *rx_free_s;
    int *rx_first;
    double *finish_s; /* each worker's last step end */
    int sync_only;    /* rounds without free-running windows (auto's screening) */
    int classes;      /* a symmetric crossbar: steps by classes of identical flows (execute_classes) */
    coll_group *reps; /* those classes' representatives: ranks 0..COLL_CLASS_RANKS-1 alone, so a
                       * class step does not wake every worker of thousands (created on first use) */
    coll_fluid *fluid; /* coll_fluid_applies: rounds of more than fluid_flows flows solved by components */
    int fold; /* members beyond the folded platform loaded: every round is solved by components (hosts[r]:
               * the host standing for member r, of its device, platform_fold_rank) */
    long fluid_flows;
    worker_arg *args;
    sg_actor_t *workers; /* started on the first round SimGrid runs (rounds solved by components need none) */
    int spawned;
    sg_comm_t **comms; /* per worker, comm_cap[r] entries: grown by the controller, never by workers */
    size_t *comm_cap;
    pair_slot *pairs;
    size_t pair_cap, npairs;
    sg_bar_t start, end;
    int quit;
    const step_round *rounds; /* what the workers execute next */
    long nrounds;
    long stride; /* 1: rounds in order; 0: rounds[0] nrounds times */
};

/* A group of members on the hosts of platform ranks ranks[i] (group rank i =
 * ranks[i]), one worker actor each once it first runs rounds; with fold,
 * ranks of a platform loaded folded stand for them (platform_fold_rank),
 * for rounds solved by components only. From an actor; NULL when out of
 * memory. */
coll_group *coll_group_create(const platform *p, const int *ranks, int n, long serial, int fold);
/* From an actor: stops the workers and frees the group. */
void coll_group_destroy(coll_group *g);
/* Host staging: each member's CPU socket and its rates, found once; -1 when
 * out of memory or a socket is missing. */
int coll_group_stage_setup(coll_group *g);
/* The workers execute rounds[k * stride] for k < nrounds; the simulated
 * seconds that took. */
double coll_group_run_rounds(coll_group *g, const step_round *rounds, long nrounds, long stride);
/* After a staging round: where each staged member's worker now is. */
void coll_group_follow_staging(coll_group *g, const step_round *rd);

/* Merges a step's transfers into flows (scratch, sorted by src) and each
 * rank's reductions: the number of flows, -1 when out of memory. */
long coll_round_flows(step_round *rd, coll_group *g, const schedule *s, const sched_stage *stg, xfer *xs, size_t nx,
                      coll_flow *scratch);
/* Indexes a round's w flows both ways for SimGrid's mailboxes; -1 when out
 * of memory (rd is then freed). */
int coll_round_index(step_round *rd, coll_group *g, const coll_flow *flows, size_t w);
/* coll_round_flows, then coll_round_index. */
int coll_round_build(step_round *rd, coll_group *g, const schedule *s, const sched_stage *stg, xfer *xs, size_t nx,
                     coll_flow *scratch);
/* Frees a round's arrays (harmless twice). */
void coll_round_free(step_round *rd);

/* From an actor: runs the schedule on the group (collective_exec.c): the
 * simulated seconds, or -1 when out of memory. */
double coll_group_run(coll_group *g, const schedule *s, int messages);

#endif
