/* collective_sim.h: collective schedules executed on SimGrid.
 *
 * Two executors share one set of per-rank worker actors (one group per rank
 * count of a batch, driven by a controller actor):
 * - rounds (the default, fast): each step is a synchronous round whose flows
 *   all start together (contention is SimGrid's bandwidth sharing); a stage
 *   whose steps are identical (a ring's 2(n-1) steps) is simulated once and the
 *   controller sleeps for the remaining identical rounds. Then a reduction
 *   runs as an exec on the receiver (its work at the device's memory bandwidth).
 * - messages (the reference): every rank advances through its own steps as
 *   soon as its own sends and receives of the previous step are done.
 * Both give the same time on synchronous schedules (checked by tests and by
 * `ttasim bench sim`); rounds costs O(ranks) activities per distinct step. */
#ifndef TT_COLLECTIVE_SIM_H
#define TT_COLLECTIVE_SIM_H

#include "collectives/schedule.h"
#include "common/error.h"
#include "platforms/platform.h"
#include "platforms/link_usage.h"

/* ---- Without SimGrid ---- */

/* Contention-free estimate: per step, the slowest flow alone on its path
 * (platform_path latency + bytes / bottleneck bandwidth; on a symmetric
 * crossbar at least the busiest rank's bytes on its own link) plus the
 * largest reduction; identical stages multiplied. A lower bound on the
 * rounds executor's time. Microseconds to compute: auto's
 * screening and a cheap fallback. Schedule rank i is platform rank ranks[i]
 * (ranks NULL: i). sim_cost (if not NULL) receives, summed over the rounds
 * a rounds executor simulates, flows times the longest path's hops: flows of
 * different path lengths end apart and SimGrid re-solves the sharing each
 * time, so this predicts what simulating costs.
 * Returns -1 when out of memory. */
double coll_estimate_s(const platform *p, const int *ranks, const schedule *s, double reduce_s_per_byte,
                       long *sim_cost);

/* Whether every rank pair of p is joined the same way with nothing shared
 * but the two ranks' own links: a flat single switch (one accelerator per
 * node, one private link each, no backbone). There any permutation of ranks
 * maps the platform onto itself, so flows fall into classes of identical
 * ones (schedule_step_pattern) that a few representatives stand for. */
int coll_symmetric_crossbar(const platform *p);

/* Ranks an all-pairs step is simulated on, on a symmetric crossbar: each of
 * their links carries COLL_CLASS_RANKS - 1 flows holding what n - 1 flows
 * carry, so every link sees the same load and sharing as with n ranks. */
#define COLL_CLASS_RANKS 16

/* ---- From the parent process: a whole simulation of a batch ---- */

typedef struct coll_request {
    coll_params params;       /* algo may be ALGO_AUTO: the fastest simulated candidate */
    double reduce_s_per_byte; /* the receiver's seconds to reduce one byte (0: free) */
    int messages;             /* 1: message-level reference executor */
    int links;                /* 1: count the bytes on every link (coll_result.links) */
    long fluid_flows; /* rounds executor: rounds of more flows, or on more ranks, are solved by components
                       * where coll_fluid_applies (collective_fluid.h; 0: COLL_FLUID_FLOWS; -1: never) */
    /* The communicator: params.ranks platform ranks in its order, times
     * replicas (each copy the same collective on its own communicator of a
     * layout, all at once, their flows sharing links); NULL: ranks
     * 0..params.ranks-1 and one copy. Kept alive by the caller until
     * coll_simulate returns. */
    const int *members;
    int replicas;
    int full_platform; /* 1: load every node even where a folded platform gives the same routes
                        * (platform_fold_nodes): the reference the shortcut is tested against */
    int fold_identical; /* 1: a group's identical stages (rings) fold too at any size (tests); 0: only
                         * where loading every node costs COLL_FOLD_IDENTICAL_LOAD_S */
} coll_request;

/* Identical stages outside a pipeline (rings) run as SimGrid rounds of the
 * whole platform unless loading it would take at least this many CPU
 * seconds (platform_estimate: 4,096 DGX H100 nodes and more): then
 * they are solved by components on the folded platform as well, the
 * synchronous round and, where its ranks finish apart, free-running
 * windows (collective_exec.c, execute_identical_fluid). */
#define COLL_FOLD_IDENTICAL_LOAD_S 5.0

/* Rounds above this many flows are solved by components: below it a whole
 * round on SimGrid costs milliseconds. */
#define COLL_FLUID_FLOWS 512

typedef struct coll_result {
    double time_s;
    coll_algo algo; /* the algorithm that ran (auto's choice) */
    double peak_rss_bytes; /* of the whole simulation process (for benchmarks) */
    char nccl[24];         /* for nccl: NCCL's pick ("ring/LL128"), else "" */
    link_usage links;      /* coll_request.links: the busiest links of the run that was timed */
} coll_result;

/* The request every command runs for `asked` (op, algo, bytes; any other
 * field left 0 takes its default) on ranks 0..ranks-1 of p: ranks = every
 * accelerator, chunk_bytes 1 MiB, ranks_per_node the platform's, hier
 * allreduce one inter-node ring per NIC of a node when the NICs divide its
 * ranks, the reduction at the accelerator's memory bandwidth, rounds executor.
 * (collective_request.c) */
coll_request coll_request_build(const platform *p, const coll_params *asked);

/* The same on a communicator: asked->ranks members (kept alive by the
 * caller), replicas copies of it listed one after the other (<= 1: one);
 * ranks_per_node is then the members on the first member's node. */
coll_request coll_request_on(const platform *p, const coll_params *asked, const int *members, int replicas);

/* Host staging (collective_staging.c): the CPU socket a rank stages
 * through, the nearest of its node's sockets, and its rates. */
typedef struct coll_socket {
    char host[64];            /* its SimGrid host */
    double reduce_s_per_byte; /* a CPU thread sums one byte: 3 bytes streamed at thread_mem_Bps */
    double message_s;         /* the kernel TCP stack's one-way cost of a message (tcp_message_s) */
    double rx_s_per_byte;     /* the TCP transport's one receive thread reads one byte (1 / tcp_rx_Bps) */
} coll_socket;
/* Errors (TT_EINPUT) when the node has no socket, no route to one, or the
 * socket's device lacks thread_mem_Bps, tcp_message_s or tcp_rx_Bps. */
int coll_staging_socket(const platform *p, int rank, coll_socket *out, tt_error *err);
/* Whether params can run on p: TT_OK for device staging; host staging needs
 * the hier allreduce and a socket every rank of a node reaches. */
int coll_staging_check(const platform *p, const coll_params *params, tt_error *err);

/* Runs the requests one after another in one simulation, each on its
 * members (ranks 0..params.ranks-1 without them) and all its copies at once.
 * Members out of the platform's range or repeated are refused (TT_EINPUT). */
int coll_simulate(const platform *p, network_model net, const coll_request *reqs, int nreq,
                  coll_result *out, tt_error *err);

#endif
