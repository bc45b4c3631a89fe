/* nccl_plan.h: what NCCL would run on a platform's first `ranks` ranks. The
 * node NCCL's topology detection sees is read off the platform (GPU
 * generation, NVLinks and NVSwitches, PCIe, NICs, the fabric's in-network
 * reduction, CPU vendor); collectives/nccl.h finds the channels and picks
 * the algorithm and protocol. The pick runs as a ttasim schedule on SimGrid
 * with the protocol's bytes on the wire, and NCCL's modelled latency takes
 * the place of the links' own (nccl_timing_total_s). No SimGrid here. */
#ifndef TT_NCCL_PLAN_H
#define TT_NCCL_PLAN_H

#include "collectives/nccl.h"
#include "collectives/schedule.h"
#include "common/error.h"
#include "platforms/platform.h"

/* How NCCL's latency enters the simulated time. The schedule runs its steps
 * unchunked, each paying the links' latency (hw_s in all) on top of its
 * transfer. NCCL's ring (allreduce, reduce_scatter, allgather) cuts a step's
 * block into chunks and a chunk into slices that the next rank forwards as
 * they arrive, so a step's latency (NCCL's per-step figure, replacing the
 * links') shows only where it exceeds what the step's later slices still have
 * to send: per chunk-step max(transfer, latency + one slice's transfer). Its
 * launch latency is always paid. The links' latency is a floor under it, as
 * a chunk meets it going round: hop by hop, not the slowest hop every
 * step as the simulation's synchronous steps charge it. A pipeline (trees, CollNet, NVLS) keeps
 * NCCL's 8 FIFO slots of chunks in flight per edge, so its steps pay no
 * latency once it runs: the links' latency every simulated steady step pays
 * (that of a link inside a node) comes off. A tree's time is at least NCCL's
 * own model of it (cap_Bps: its kernels' rate; its latency holds a chunk's
 * passage per hop of the fill, which the simulation also moves); NVLS and
 * CollNet add NCCL's latency beyond the links' own once. Chains add NCCL's
 * latency beyond the links' own. Where the NICs receive into GPU memory
 * through the CPU (nccl_node.gdr_write_GBps), no algorithm outruns those
 * receives, and a tree's steps each show NCCL's network step latency. */
typedef struct nccl_timing {
    int on;              /* 0: not NCCL, the simulated time stands */
    double latency_s;    /* NCCL's modelled latency (nccl_choice.latency_s) */
    double hw_s;         /* the schedule's simulated time on one byte: its links' latency */
    double launch_s, step_intra_s, step_inter_s; /* nccl_choice's parts */
    int steps, inter_steps; /* a pipelined ring's steps (0: not one) */
    double link_intra_s, link_inter_s; /* a ring hop's links' latency inside a node and between nodes */
    double chunks;       /* chunks per rank's block of a step (NCCL's loops) */
    int slices;          /* slices per chunk */
    long pipe_steady;    /* a pipeline's steady steps (chunks - its depth), 0: none or not one */
    double pipe_lat_s;   /* the links' latency each steady step pays at least in the simulation */
    double bytes;        /* the payload (nccl-tests size) */
    double cap_Bps;      /* the kernels' algorithm bandwidth limit (0: none) */
    double net_cap_Bps;  /* the same set by the NICs' receives into GPU memory through the CPU
                            (nccl_node.gdr_write_GBps; 0: none) */
    double net_steps_s;  /* with net_cap_Bps: a tree pipeline's steps x NCCL's network step latency */
} nccl_timing;

/* The time of the collective from its simulated time. */
double nccl_timing_total_s(const nccl_timing *t, double simulated_s);

typedef struct nccl_plan {
    nccl_comm comm;
    nccl_choice choice;
    coll_params params;  /* what to simulate: the schedule and the bytes on the wire */
    double reduce_s_per_byte; /* the reduction NCCL's pipelined kernels leave exposed */
    nccl_timing timing;  /* how NCCL's latency enters the simulated time */
} nccl_plan;

/* The node NCCL sees on the platform and the search's outcome for a
 * communicator of `ranks` platform ranks, members (NULL: 0..ranks-1; as
 * many on each node as on the first member's); collnet:
 * NCCL_COLLNET_ENABLE (CollNet and multi-node NVLS where the fabric reduces).
 * 0, or -1 when the ranks are not NVIDIA GPUs (NCCL does not apply). */
int nccl_comm_of(const platform *p, const int *members, int ranks, int collnet, nccl_comm *out);

/* The plan for params (op, ranks, bytes, the nccl_* environment; algo is
 * ignored) with the GPU's reduction cost (coll_reduce_s_per_byte): NCCL
 * reduces slice k while slice k+1 is on the wire, so only the part slower
 * than the wire shows. 0, or -1 when NCCL does not apply (not GPUs, an
 * alltoall: NCCL has no tuned algorithm, or the environment disabled all). */
int nccl_plan_make(const platform *p, const int *members, const coll_params *params, double reduce_s_per_byte,
                   nccl_plan *out);

/* Turns a request for ALGO_NCCL into what runs: NCCL's plan on NVIDIA GPUs
 * (name "ring/Simple", *timing for nccl_timing_total_s), else the
 * platform's native schedule: the torus allreduce on a torus, else auto
 * (name "", timing->on = 0). Other requests are left as they are.
 * TT_EINPUT when it asks NCCL (on its GPUs) for a collective that the
 * environment's masks leave no algorithm for (one plan made serves both). */
int nccl_resolve(const platform *p, const int *members, coll_params *params, double *reduce_s_per_byte,
                 nccl_timing *timing, char *name, size_t name_bytes, tt_error *err);

/* "ring/LL128", "nvls_tree/Simple". */
const char *nccl_plan_name(const nccl_plan *plan, char *buf, size_t buf_bytes);

#endif
