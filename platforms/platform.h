/* platform.h: hardware as data (platforms/README.md), turned into a SimGrid platform.
 * A platform is a node template (devices and the links among them) repeated
 * `nodes` times and joined by a cluster fabric. Ranks are the accelerators
 * (or the CPU sockets, platform_options.rank_kind), numbered node-major;
 * every accelerator and CPU socket is a SimGrid host (NICs are routers). */
#ifndef TT_PLATFORM_H
#define TT_PLATFORM_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"
#include "platforms/device.h"

typedef struct platform platform;

/* The most nodes a platform may have, in every entry point (--nodes, a
 * scenario's platform.nodes and sweep.nodes, a fabric's node count). */
#define PLATFORM_MAX_NODES 65536

/* Network models: ideal = CM02 without cross-traffic (the alpha-beta closed
 * form); calibrated = the default for predictions (platforms/README.md). */
typedef enum { NETWORK_IDEAL = 0, NETWORK_CALIBRATED = 1 } network_model;

/* Overrides of a platform's defaults; 0 / NULL keep the file's value. */
typedef struct platform_options {
    int nodes;
    double link_bw_Bps;       /* fabric links, per direction */
    double link_latency_s;    /* fabric links */
    const char *accelerator;  /* a device name replacing the accelerator type */
    const char *mesh;         /* replaces the accelerator mesh pattern (zion: "fully_connected") */
    const json_t *fabric;     /* fields merged over the file's "fabric" (a scenario's platform.fabric) */
    const json_t *components; /* {group: count} replacing node groups' counts (a partly populated rack) */
    const json_t *devices;    /* definitions by name; a partial one is merged over the device it names */
    const char *overlay_file; /* where fabric and devices come from, for messages */
    int shape[3];             /* torus grid of the slice, shape[0] fastest (0: published or most square) */
    /* What the ranks are: the node's accelerators (the default, 0) or its
     * CPU sockets (DEVICE_CPU: CPU-only training, Zion's 8 sockets). */
    device_kind rank_kind;
} platform_options;

/* Parses a torus grid "16x32" or "8x8x12" into shape (unused sizes 0). */
int platform_shape_parse(const char *text, int shape[3], tt_error *err);

/* A built-in name (platform_list), a generic name (star, ring, torus2d,
 * torus3d, fattree) or a path to a platform JSON file. opt may be NULL. */
platform *platform_load(const char *name_or_path, const platform_options *opt, tt_error *err);
void platform_free(platform *p);

/* The built-in names: platforms/ *.json then the generic ones; NULL-terminated,
 * caller frees the array and strings with platform_list_free. */
char **platform_list(tt_error *err);
void platform_list_free(char **names);

const char *platform_name(const platform *p);
const char *platform_description(const platform *p);
/* The file system checkpoints go to ("storage": aggregate write and read
 * bandwidth, and why): 1 when the platform file gives it, else 0. */
int platform_storage(const platform *p, double *write_Bps, double *read_Bps, const char **why);
const char *platform_fabric_name(const platform *p); /* "single_switch", "fattree", "torus2d"... */
/* A "simgrid" platform's own XML file (as its JSON names it, relative to the
 * working directory); NULL for platforms ttasim generates. */
const char *platform_user_xml(const platform *p);

int platform_ranks(const platform *p);
int platform_nodes(const platform *p);
int platform_ranks_per_node(const platform *p);
/* The SimGrid host name of rank i. */
const char *platform_rank_host(const platform *p, int rank, char *buf, size_t buf_bytes);
/* The device of a rank (an accelerator, or a CPU socket with rank_kind DEVICE_CPU). */
const device_info *platform_device(const platform *p, int rank);
/* What the ranks are: DEVICE_ACCELERATOR or DEVICE_CPU. */
device_kind platform_rank_kind(const platform *p);

/* Route from rank a to rank b: summed latency, bottleneck bandwidth (per
 * direction, bundles counted as their sum); returns the physical links crossed. */
int platform_path(const platform *p, int a, int b, double *latency_s, double *bw_Bps);
/* A torus's grid (dims[0] varies fastest in rank order): returns its
 * dimensions (0 for other fabrics) and fills dims[0..2] (unused 1). */
int platform_torus_dims(const platform *p, int dims[3]);
/* A multi-pod torus slice (platforms/README.md, "Multi-pod"): how many pods
 * (1 for every other platform); platform_torus_dims gives one pod's grid and
 * ranks are pod-major. Across pods a rank's traffic leaves by its node's
 * data-centre NIC: platform_dcn_link's cables. */
int platform_pods(const platform *p);
/* The data-centre network's SimGrid links of a multi-pod platform, which the
 * engine sets after loading (SimGrid's torus gives every dimension one
 * rate): the k-th into name with its rate (per direction, at the network
 * model's payload efficiency) and latency; 0 past the last (and on one pod).
 * Each chip's cable to the next pod carries its share of its node's NIC:
 * dcn_Bps / chips per node, halved when there are more than 2 pods (the
 * two rings over the pods leave by both of its cables at once). */
int platform_dcn_link(const platform *p, network_model net, long k, char *name, size_t name_bytes, double *bw_Bps,
                      double *latency_s);
/* A fat tree's shape (rails included): nodes per leaf, levels and the leaf's
 * oversubscription (down:up); returns 0 for other fabrics. */
int platform_fattree_shape(const platform *p, int *nodes_per_leaf, int *levels, int *oversubscription);
int platform_hops(const platform *p, int a, int b);
/* Whether the fabric's switches reduce in the network (InfiniBand SHARP,
 * the fabric's "in_network_reduction"): NCCL's CollNet can use them. */
int platform_fabric_sharp(const platform *p);
/* How many links of class cls ("upi") a message from rank a to rank b
 * crosses inside nodes (to and from the NICs across nodes); 0 for flat and
 * user-XML platforms, which have no node template. */
int platform_path_class_links(const platform *p, int a, int b, const char *cls);
/* The first link from rank a toward rank b of the same node: its link units
 * (an NVLink bundle counts its links) and class ("nvlink3"); 0 and NULL for
 * ranks of different nodes and flat platforms. NCCL runs a channel per link. */
int platform_rank_links(const platform *p, int a, int b, const char **cls);
/* The node template's component a rank is ("gpu3"), NULL for flat and
 * user-XML platforms. */
const char *platform_rank_component(const platform *p, int rank);
/* The component through which rank leaves its node ("nic3"), NULL if the
 * platform has no node fabric; rail-optimised fabrics give GPU i NIC i. */
const char *platform_rank_exit(const platform *p, int rank);

/* A rail-optimised fabric's cross-rail hop from rank a to rank b of another
 * node: the rank of a's node on b's rail (its NIC is b's NIC's rail), which
 * a's data reaches over NVLink first (NCCL's PXN), so that every byte between
 * nodes stays on one rail; -1 when a and b share a rail, for other fabrics,
 * and when a reaches that rank by no NVLink (no relay: the cross-rail route). */
int platform_rail_relay(const platform *p, int a, int b);

/* NCCL's intra-node rings: for each of c channels an order of a node's
 * ranks whose consecutive ranks (and last to first) are joined by a direct
 * link, each ring taking a link unit of each direction it uses, so channels
 * spread over all the links (DGX-1's hybrid cube mesh holds 6 such rings);
 * when no such ring is left, the previous one again, and where there is none
 * (a switch) rank order rotated to enter at a rank of NIC j (so the rings
 * cross between nodes at every NIC, as NCCL's ring per NIC). Fills orders[j][0 .. ranks_per_node) for j < c
 * (c <= 8, ranks_per_node <= 16); returns how many rings use links of their
 * own (0 behind a switch). across: the channels cross between nodes; where
 * each rank has a NIC of its own (AMD's 8-GPU platforms), a channel is then
 * a chain from NIC j's rank to any other, which leaves by its own NIC, and
 * takes no link back to its first rank. */
int platform_ring_orders(const platform *p, int c, int across, int orders[][16]);

/* What loading the platform into SimGrid will cost, estimated before it is
 * written from what its XML will declare and per-object costs measured on
 * SimGrid 3.32 (platform_estimate.c; platforms/calibration/measure-load.sh):
 * memory beyond the process's own, and CPU seconds to parse and seal it.
 * `nodes` may differ from the platform's (what fewer nodes would cost);
 * actors_per_rank counts the simulation's actors (a collective: 1). */
typedef struct platform_load_cost {
    double hosts, links, routes, zones;
    double memory_bytes, cpu_s;
} platform_load_cost;
void platform_estimate(const platform *p, int nodes, double actors_per_rank, platform_load_cost *out);
/* The pairs of ranks whose route the engine checks in a user's XML before
 * simulating: every pair up to PLATFORM_ROUTE_CHECK_ALL_RANKS ranks (a pair
 * costs about a microsecond), else each rank with rank 0 both ways and with
 * the next (a route missing elsewhere stops the simulation that takes it).
 * Pair k of n ranks into *a, *b; 0 past the last. */
#define PLATFORM_ROUTE_CHECK_ALL_RANKS 1024
int platform_route_pair(int ranks, long k, int *a, int *b);
/* The most nodes (below the platform's) whose estimate fits budget_bytes; 0 if none. */
int platform_estimate_max_nodes(const platform *p, double actors_per_rank, double budget_bytes);

/* Summary for `ttasim platform show`. */
typedef struct platform_link_class {
    char name[32];
    double bw_Bps;   /* per link, per direction */
    long count;      /* link units in the whole platform (a bundle of 2 counts 2) */
} platform_link_class;

typedef struct platform_device_count {
    const device_info *dev;
    long count; /* in the whole platform */
} platform_device_count;

typedef struct platform_summary {
    int nodes, accelerators, cpu_sockets, nics, switches;
    int n_devices;
    platform_device_count devices[24]; /* by type, in node-template order */
    int n_link_classes;
    platform_link_class link_classes[16];
    double bisection_Bps;   /* per direction, across the worst balanced cut of ranks */
    int diameter_hops;      /* between accelerators */
    double peak_flops[DTYPE_COUNT]; /* the ranks (accelerators or sockets), whole platform */
} platform_summary;
void platform_summarize(const platform *p, platform_summary *out);

/* What the fabric between nodes is made of, for its price and power: cables
 * (a rail-optimised or fat-tree node has one per NIC per link of the tree),
 * the switch ports they plug into (an end point's cable one, a cable between
 * switches two; none in a torus) and the device whose "purchase" block
 * prices them (the NIC the fabric attaches, else the accelerator, else the
 * generic-accelerator's generic links). */
typedef struct platform_fabric_bom {
    long cables, switch_ports;
    long switches; /* of radix ports: per tree element (per rail in a rail-optimised one), rounded up */
    const device_info *priced_by; /* NULL without a fabric */
} platform_fabric_bom;
/* radix: ports per switch (<= 0: the priced_by device's switch_radix, else 64). */
void platform_fabric_bom_of(const platform *p, int radix, platform_fabric_bom *out);

/* Route between two components of one node ("cpu3" -> "oam0": an embedding
 * table's rows reaching an accelerator): hops, or -1 if either is unknown or
 * there is no route inside the node (and for flat or user-XML platforms). */
int platform_component_path(const platform *p, const char *from, const char *to, double *latency_s,
                            double *bw_Bps);

/* Link units of class link_class ending at component `component` ("gpu3") of
 * every node's template; -1 if there is no such component. */
int platform_component_links(const platform *p, const char *component, const char *link_class);

/* The node template's components of one kind (DEVICE_CPU: the sockets) in
 * file order: returns how many; the first max names and devices are stored.
 * 0 for flat and user-XML platforms (no node template). */
int platform_node_components(const platform *p, device_kind kind, const char **names,
                             const device_info **devs, int max);
/* The SimGrid host name of a component of node `node` ("n0-cpu3"). */
const char *platform_component_host(const platform *p, int node, const char *component, char *buf,
                                    size_t buf_bytes);

/* Named assumptions (numbers tagged U or C in numbers.md) and sources, in
 * file order: name, chosen value as text, why. */
int platform_assumption_count(const platform *p);
void platform_assumption(const platform *p, int i, const char **name, const char **value,
                         const char **note);
int platform_source_count(const platform *p);
/* Values of the platform (or its overrides) that another one overrides: a
 * fabric rate above the NIC's has no effect (the NIC caps it), and so on. */
int platform_note_count(const platform *p);
const char *platform_note(const platform *p, int i);
const char *platform_source(const platform *p, int i);

/* A SimGrid link of the platform's XML, as a person reads it: its class
 * ("nvlink4", "pcie5", "upi", "nic", "node-leaf", "leaf-spine", a torus's
 * "ici"), and the ends it runs from and to in that direction. */
typedef struct platform_link_info {
    char name[48]; /* SimGrid's name ("n0-l3_UP") */
    char cls[24];
    char from[40], to[40];
} platform_link_info;
void platform_link_describe(const platform *p, const char *sg_name, platform_link_info *out);

/* A torus side of 2 joins each pair by two cables (the direct one and the
 * wrap-around), but SimGrid's torus routes both directions of the pair over
 * the lower node's cable: that cable stands for both. The k-th SimGrid link
 * whose bandwidth counts twice (the engine doubles it after loading): 1 with
 * its name, 0 past the last. */
int platform_paired_link(const platform *p, long k, char *name, size_t name_bytes);
/* Whether torus ranks a and b are one hop apart along a side of 2: their
 * path runs at both cables' rate. */
int platform_torus_paired(const platform *p, int a, int b);

/* Writes a SimGrid 4.1 platform XML document: links at their line rate for
 * the ideal network, at their payload rate (line rate x the link kind's
 * payload efficiency) for the calibrated one. */
int platform_write_xml(const platform *p, network_model net, FILE *out, tt_error *err);

/* The same document for the platform's first `nodes` nodes (fewer than it
 * has; otherwise all): a folded platform (platform_fold_nodes). */
int platform_write_xml_nodes(const platform *p, network_model net, int nodes, FILE *out, tt_error *err);

/* Folding. Where every node is the same, each leaf a star of its nodes and
 * the leaves under one flat level (a single switch; a two-level fat tree or
 * rails), the route between two ranks depends only on their places in their
 * nodes and on whether the nodes are one, share a leaf or not: a platform of
 * one leaf and one node more holds every route p has, with the same links,
 * rates and latencies. Its node count, or 0 when p does not fold (or is no
 * larger). In it, seen from rank `from` (standing on node 0), rank `to`
 * stands on node 0, node 1 or the second leaf's first node: */
int platform_fold_nodes(const platform *p);
int platform_fold_rank(const platform *p, int from, int to);
/* Which link of p a link of the folded platform (by its SimGrid name) stands
 * for in the route from `from` to `to`: the folded one belongs to the node or
 * leaf of `from` or of `to` (or to none), and is the same link of every node
 * (leaf) as `first`, its name on node (leaf) 0; platform_owner_index numbers
 * the owner, nodes 0 .. nodes - 1 then leaves (-1 for none), so that two
 * routes of p share a link exactly when their links' `first` and owner
 * numbers agree. */
typedef enum { OWNER_NONE, OWNER_FROM_NODE, OWNER_TO_NODE, OWNER_FROM_LEAF, OWNER_TO_LEAF } platform_owner;
platform_owner platform_link_owner(const platform *p, const char *sg_name, char *first, size_t first_bytes);
long platform_owner_index(const platform *p, platform_owner owner, int from, int to);
/* The name in p of the link `first` (a folded link's name on node or leaf 0)
 * standing for owner number `owner` (platform_owner_index; -1: first itself):
 * what a count of bytes per folded link reports. */
void platform_owner_link_name(const platform *p, const char *first, long owner, char *name, size_t name_bytes);

/* SimGrid --cfg words for a network model on p (sim/engine/engine.c passes them to
 * simgrid_init); returns how many were written to argv (at most max). */
int network_simgrid_args(const platform *p, network_model m, const char **argv, int max);
const char *network_name(network_model m);

#endif
