/* nccl.h: what NCCL would run. NCCL's topology search (src/graph/search.cc)
 * finds, per algorithm, channels and a bandwidth per channel; its tuning
 * model (src/graph/tuning.cc, NCCL 2.23-2.27) predicts, per collective, size
 * and communicator, the time of every algorithm x protocol as latency +
 * bytes / bandwidth and runs the fastest enabled one. This is the search's
 * outcome on the nodes ttasim describes and that model, as data and
 * arithmetic; no SimGrid here. */
#ifndef TT_NCCL_H
#define TT_NCCL_H

#include "collectives/schedule.h"

/* NCCL's algorithms, in its order (NCCL_ALGO_*); PAT, which runs only with
 * one GPU per node, is not modelled. */
typedef enum {
    NCCL_TREE,
    NCCL_RING,
    NCCL_COLLNET_DIRECT,
    NCCL_COLLNET_CHAIN,
    NCCL_NVLS,
    NCCL_NVLS_TREE,
    NCCL_ALGOS
} nccl_algo;
typedef enum { NCCL_LL, NCCL_LL128, NCCL_SIMPLE, NCCL_PROTOS } nccl_proto;

/* GPU generations NCCL tells apart (its per-channel caps differ). */
typedef enum { NCCL_VOLTA, NCCL_AMPERE, NCCL_HOPPER, NCCL_BLACKWELL } nccl_arch;

/* A node as NCCL's topology detection sees it (every node alike). */
typedef struct nccl_node {
    int gpus;          /* GPUs of the node in the communicator */
    nccl_arch arch;
    int sm;            /* compute capability x 10 (70 = V100): LL128 runs by default on 70, 80, 90, 100, 120 */
    int nvlinks;       /* NVLinks per GPU (0: the GPUs talk over PCIe) */
    int nvswitch;      /* the NVLinks go to NVSwitches (else GPU to GPU) */
    int pair_nvlinks;  /* without NVSwitch: the most NVLinks between two GPUs */
    int nvls;          /* the NVSwitches reduce and multicast (NVLink SHARP, Hopper and later) */
    double pcie_GBps;  /* a GPU's PCIe path to its NIC, NCCL's figure */
    double p2p_GBps;   /* without NVLink: a GPU's path to its peers, NCCL's figure (the CPUs' link between
                          sockets where the node's GPUs span two, less Intel's 64-byte P2P packets) */
    int nics;          /* NICs the node's GPUs use */
    int nic_via_cpu;   /* a GPU's path to its NIC crosses the CPU (NCCL's PHB or SYS, no PCIe switch between) */
    double nic_GBps;   /* each NIC's rate as NCCL reads it (port speed / 8000) */
    double gdr_write_GBps; /* where a GPU reaches its NIC through the CPU and NCCL receives into GPU memory
                              there (GPU Direct RDMA at PHB): what the root complex forwards of one NIC's
                              writes into the GPU, GB/s; 0: no such limit (a PCIe switch, or unknown) */
    int collnet;       /* the fabric's switches reduce (InfiniBand SHARP: NCCL's CollNet) */
    int cpu_amd;       /* NCCL caps LL lower and doubles network overhead behind AMD CPUs */
    double link_GBps;  /* a direct GPU link as the library counts it (RCCL's xGMI figure); 0: NCCL's NVLink
                          rate of arch */
} nccl_node;

/* What the search found for one algorithm (struct ncclTopoGraph). */
typedef struct nccl_graph {
    int channels;          /* nChannels (NCCL then doubles them for rings and trees at run time) */
    double bw_intra_GBps;  /* per channel, inside a node */
    double bw_inter_GBps;  /* per channel, across nodes */
    int simple_tree;       /* tree: NCCL_TOPO_PATTERN_TREE (all network traffic on one GPU), else balanced */
} nccl_graph;

/* The communicator as NCCL's tuner sees it. */
typedef struct nccl_comm {
    int ranks, nodes;
    nccl_node node;
    nccl_graph graph[NCCL_ALGOS]; /* channels 0: the algorithm is not available */
} nccl_comm;

/* The search's outcome for a communicator of ranks over nodes of node: fills
 * comm (ranks, nodes, node and every algorithm's graph). */
void nccl_search(const nccl_node *node, int ranks, int nodes, nccl_comm *comm);

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

/* NCCL_ALGO / NCCL_PROTO as masks of 1 << nccl_algo and 1 << nccl_proto; 0
 * is NCCL's default (every algorithm, every protocol, LL128 only where NCCL
 * enables it by default; a protocol list naming LL128 turns it on anywhere).
 * Parses NCCL's syntax: comma-separated names, case-insensitive (Tree, Ring,
 * CollnetDirect, CollnetChain, NVLS, NVLSTree; LL, LL128, Simple), or ^names
 * for all but those. Returns 0, or -1 with *bad pointing at the unknown word
 * in value (its length in *bad_len). */
int nccl_parse_algos(const char *value, unsigned *mask, const char **bad, int *bad_len);
int nccl_parse_protos(const char *value, unsigned *mask, const char **bad, int *bad_len);
/* The words parse accepts, for messages: "tree, ring, ..." */
const char *nccl_algo_words(void);
const char *nccl_proto_words(void);

/* The fastest enabled algorithm x protocol for op on bytes (nccl-tests size)
 * under the masks. Returns 0, or -1 if none applies (an alltoall: NCCL has
 * no tuned algorithm; or the masks left nothing that runs). */
int nccl_choose(const nccl_comm *c, unsigned algos, unsigned protos, coll_op op, double bytes, nccl_choice *out);

/* What NCCL's kernels move at most, in B/s of algorithm bandwidth: for the
 * tree and the LL and LL128 rings NCCL's bandwidth is its kernels' measured
 * rate (LL's flag per 4 bytes, the tree's 1/3.8 with LL, per-channel caps,
 * the tree's correction at medium sizes), so it is choice's own algbw; 0 for
 * Simple rings, NVLS and CollNet, whose rate is the wire's. */
double nccl_kernel_cap_Bps(const nccl_choice *choice);

/* The same for one given algorithm x protocol; -1 when NCCL would not run it
 * (by default: LL128 where NCCL leaves it off counts as not run). */
int nccl_predict(const nccl_comm *c, coll_op op, double bytes, nccl_algo a, nccl_proto p, nccl_choice *out);

/* Bytes the busiest node's NICs receive per payload byte (nccl-tests size)
 * when a runs op across c's nodes: a ring's bus factor (2(n-1)/n for
 * allreduce over n ranks, (n-1)/n for allgather and reduce_scatter, 1 for
 * a chain); a double binary tree's node inner in one tree and a leaf in the
 * other receives its children's halves and both trees' totals, 2(N-1)/N over
 * N nodes; CollNet and NVLS hand the switches each byte once, 1. */
double nccl_net_recv_factor(const nccl_comm *c, coll_op op, nccl_algo a);

/* NCCL's latency of one step of a across the network with p (tuning.cc hwLat[NET]), seconds. */
double nccl_net_step_s(nccl_algo a, nccl_proto p);

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

/* NCCL's tree chunk per channel (src/enqueue.cc): a Simple step of its 4 MiB
 * buffer over 8 FIFO steps, halved while a channel has fewer than 8 x depth
 * chunks (to 128 KiB), 4 x depth (64 KiB) and depth (32 KiB) of them, so
 * the pipeline fills. */
double nccl_tree_chunk_bytes(double channel_bytes, int depth);

/* NVLS's efficiency on an NVSwitch of this generation: the multimem loads and
 * stores move this much per byte of a port's payload rate (NCCL's
 * nvlsEfficiency, src/tuning/nvls.cc: Hopper 0.85, Blackwell 0.74). */
double nccl_nvls_efficiency(nccl_arch arch);

/* NCCL's approximate tree depth (connectTrees): GPUs per node - 1 + log2 nodes. */
int nccl_tree_depth(const nccl_comm *c);

/* "ring", "tree", "collnet_direct", ... and "LL", "LL128", "Simple". */
const char *nccl_algo_name(nccl_algo a);
const char *nccl_proto_name(nccl_proto p);

#endif
