/* nccl.h: what NCCL would run. NCCL's public tuning model (src/graph/tuning.cc,
 * NCCL 2.19) predicts, per collective, size and communicator, the time of every
 * algorithm x protocol as latency + bytes / bandwidth and runs the fastest.
 * This is that model as data and arithmetic, fed with rates taken from the
 * platform instead of NCCL's topology search; no SimGrid here. */
#ifndef TT_NCCL_H
#define TT_NCCL_H

#include "collectives/schedule.h"

typedef enum { NCCL_RING, NCCL_TREE, NCCL_NVLS, NCCL_ALGOS } nccl_algo;
typedef enum { NCCL_LL, NCCL_LL128, NCCL_SIMPLE, NCCL_PROTOS } nccl_proto;

/* GPU generations NCCL tells apart (its per-channel caps differ). */
typedef enum { NCCL_VOLTA, NCCL_AMPERE, NCCL_HOPPER } nccl_arch;

/* The communicator as NCCL's tuner sees it. */
typedef struct nccl_comm {
    int ranks, nodes;
    nccl_arch arch;
    int intra_nvlink;     /* ranks of a node talk over NVLink (else PCIe) */
    int nvls;             /* NVSwitch with in-switch reduction (NVLink SHARP, H100) */
    int channels;         /* parallel rings/trees: one per NVLink, or per NIC across nodes */
    double bus_intra_Bps; /* a rank's payload rate inside its node, all channels */
    double bus_inter_Bps; /* the node's NICs summed: each channel's ring leaves by one (0: one node) */
    int nics;             /* NICs of a node (0: one node) */
    int cpu_amd;          /* NCCL caps LL lower behind AMD CPUs */
} nccl_comm;

typedef struct nccl_choice {
    nccl_algo algo;
    nccl_proto proto;
    double latency_s; /* NCCL's modelled latency: launch + per-step software and hardware */
    double algbw_Bps; /* its modelled algorithm bandwidth */
    double time_s;    /* latency_s + bytes / algbw_Bps */
    /* latency_s in its parts (ring allreduce, reduce_scatter, allgather; else
     * steps = 0): launch_s + (steps - inter_steps) x step_intra_s + inter_steps
     * x step_inter_s, each with NCCL's plateau factor when it applies. */
    double launch_s, step_intra_s, step_inter_s;
    int steps, inter_steps;
} nccl_choice;

/* The fastest enabled algorithm x protocol for op on bytes (nccl-tests size);
 * returns 0, or -1 if none applies (an alltoall: NCCL has no tuned algorithm). */
int nccl_choose(const nccl_comm *c, coll_op op, double bytes, nccl_choice *out);

/* The same for one given algorithm x protocol; -1 when NCCL would not run it. */
int nccl_predict(const nccl_comm *c, coll_op op, double bytes, nccl_algo a, nccl_proto p, nccl_choice *out);

/* Bytes on the wire per payload byte: LL sends a 4-byte flag with every 4
 * bytes of data, LL128 8 bytes of flag per 128-byte line, Simple none. */
double nccl_wire_factor(nccl_proto p);

/* NCCL's ring pipeline (src/device/prims_simple.h, all_reduce.h): with Simple a
 * rank's block of a step is cut into chunks of at most NCCL_RING_CHUNK_BYTES
 * (4 MiB buffer / 8 FIFO steps x 4 chunk steps), each sent as
 * NCCL_RING_SLICES slices that the next rank reduces and forwards as they
 * arrive; LL and LL128 move flagged lines and count here as one slice per step. */
#define NCCL_RING_CHUNK_BYTES (2.0 * 1024 * 1024)
#define NCCL_RING_SLICES 2
int nccl_ring_slices(nccl_proto p);

/* The ttasim schedule that moves data as algo does (ring -> ring, tree ->
 * double binary tree); NVLS has none (ALGO_AUTO): its reduction is in the switch. */
coll_algo nccl_schedule_algo(nccl_algo a);

const char *nccl_algo_name(nccl_algo a);
const char *nccl_proto_name(nccl_proto p);

#endif
