/* platform_impl.h: the platform model shared by the loader, the queries and
 * the SimGrid writer (private to platforms/). */
#ifndef TT_PLATFORM_IMPL_H
#define TT_PLATFORM_IMPL_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "common/infile.h"

#include "platforms/device.h"
#include "platforms/platform.h"

#define PLAT_MAX_LEVELS 4

/* Payload over line rate of the links inside a node (NVLink, PCIe, UPI) in
 * the calibrated network: NVLink3 carries ~20 of its 25 GB/s (128-byte
 * payloads with their headers; NCCL maintainer, nccl-tests #149). */
#define PLAT_NODE_EFFICIENCY 0.8

/* One device instance of the node template ("gpu3"). */
typedef struct pcomp {
    char name[32];
    const device_info *dev;
    int planes; /* switches merged into this crossbar (1: a lone device) */
} pcomp;

/* A full-duplex link of the node template: bw_Bps per direction per link,
 * `count` parallel links (an NVLink bundle) act as one pipe of count * bw_Bps. */
typedef struct plink {
    int a, b;
    double bw_Bps, latency_s;
    int count;
    char cls[32];
} plink;

/* What a SimGrid XML holds, for the load estimate (platform_estimate.c):
 * plat_xml_count's of what platform_write_xml writes, or a user's file as
 * scanned. Routes include zoneRoutes; route_links counts the links listed
 * by routes, edges and bypass routes; a Full zone of V netpoints holds a
 * V x V table, a Floyd zone three. */
typedef struct plat_xml_counts {
    double hosts, routers, links, routes, route_links, zones;
    double edges, bypass_routes; /* a Dijkstra zone's routes; <bypassRoute>s */
    double cluster_members; /* a <cluster>'s hosts, each with its private link */
    double tree_pairs; /* a FAT_TREE cluster's members times its switches: its load grows with that product */
    double full_cells, floyd_cells;
    double floyd_steps; /* sum of V^3 over the Floyd zones */
} plat_xml_counts;

typedef enum { FABRIC_NONE, FABRIC_SWITCH, FABRIC_FATTREE, FABRIC_RAIL, FABRIC_TORUS } fabric_kind;

struct platform {
    char name[64];
    char *description;
    device_table devices;
    json_t *assumptions; /* array of {"name", "value", "why"} */
    json_t *sources;     /* array of strings */
    json_t *notes;       /* array of strings: a value that another one overrides */
    double storage_write_Bps, storage_read_Bps; /* "storage": the file system checkpoints go to (0: not given) */
    char *storage_why;

    /* Node template. */
    int ncomp, nlink;
    pcomp *comp;
    plink *link;
    device_kind rank_kind;   /* DEVICE_ACCELERATOR, or DEVICE_CPU: the sockets are the ranks */
    int nacc, *acc;          /* ranks of a node in order (component indices): accelerators or sockets */
    int natt, *att;          /* components attached to the fabric */
    double *att_uplink_Bps;  /* per attachment: NIC bandwidth, else the fabric link's */
    int *comp_att;           /* per component: index into att it leaves the node by */
    /* All pairs inside a node (ncomp x ncomp): fewest hops, then widest. */
    int *nhops, *nnext, *nvia;
    double *nlat, *nbw;

    /* Fabric. */
    fabric_kind fabric;
    int nodes;
    double fab_bw_Bps, fab_lat_s; /* one fabric link */
    double fab_eff;               /* its payload over line rate, NIC cables included (fabric.link.payload_efficiency) */
    char fab_cls[32];             /* its link class ("edr-ib", "ici") */
    int fab_bw_forced;            /* --link-bw: NIC uplinks run at fab_bw_Bps too */
    double port_bw_Bps;           /* a node's aggregate uplink: fabric links carry this */
    int ndims, dims[3];           /* torus: dims[0] varies fastest (SimGrid's order) */
    int pod_chips;                /* a pod file's torus: the chips it has (0: any size) */
    int nslices, slices[16][3];   /* published slice shapes of a pod */
    int slice_unit;               /* slice sizes per dimension: <= unit or a multiple (TPU v4: 4) */
    /* Multi-pod (multislice): pods whole pods (dims each), pod-major ranks,
     * joined by the data-centre network: each node's (TPU host's) NIC of
     * dcn_Bps per direction, dcn_lat_s one way; dcn_Bps 0: the file has no
     * "dcn" and a slice stays inside one pod. */
    int pods;
    double dcn_Bps, dcn_lat_s, dcn_eff;
    json_t *dcn_assumptions; /* fabric.dcn.assumptions: listed only when the slice spans pods */
    int shape_forced;             /* dims come from platform_options.shape */
    int levels, down[PLAT_MAX_LEVELS], up[PLAT_MAX_LEVELS]; /* fat tree (SimGrid's PGFT) */
    int oversubscription;
    int sharp; /* the fabric's switches reduce (in_network_reduction "sharp": InfiniBand SHARP) */
    int flat; /* written as one SimGrid cluster of accelerators */

    /* A user's own SimGrid XML: the file, rank -> host, and the route
     * summary platform_path reports for every pair. */
    char *user_xml;
    char **rank_hosts;
    int n_rank_hosts;
    double user_bw_Bps, user_lat_s;
    int user_hops;
    plat_xml_counts user_counts; /* the user's XML as scanned (user_xml.c) */
    uint64_t user_fnv;      /* its bytes' checksum: SimGrid gets the same bytes */
    double user_bytes;
};

/* Building (platform.c). */
platform *plat_alloc(const char *name, tt_error *err);
int plat_add_comp(platform *p, const char *name, const device_info *dev, tt_error *err);
int plat_add_link(platform *p, int a, int b, double bw_Bps, double latency_s, int count,
                  const char *cls, tt_error *err);
int plat_find_comp(const platform *p, const char *name);
void plat_assume(platform *p, const char *name, const char *value, const char *why);
/* Computes ranks, attachments, routes and fabric shape after components, links
 * and the fabric fields are set; attach = the component group leaving the node. */
int plat_finish(platform *p, const char *attach_group, const char *where, tt_error *err);

/* Sets a torus's grid from platform_options.shape (no sizes: keeps it). */
int plat_apply_shape(platform *p, const int shape[3], const char *where, tt_error *err);

/* Fabric distance between nodes (or flat ranks) in fabric links. */
int plat_fabric_hops(const platform *p, int x, int y);
/* A multi-pod's ring distance between pods x and y (0 on one pod), and the
 * line rate of a chip's data-centre cable (platform_dcn_link). */
int plat_pod_hops(const platform *p, int x, int y);
double plat_dcn_cable_Bps(const platform *p);
/* The bandwidth of one fabric link, per direction. */
double plat_fabric_link_Bps(const platform *p);

/* The SimGrid writer's shapes (platform_xml.c), which the load estimate
 * counts: a cluster's hosts for `members` (a fat tree has all its ports) and
 * the nodes of one group zone (a leaf, or 32 of a single switch). */
long plat_cluster_hosts(const platform *p, int members);
int plat_group_nodes(const platform *p);

/* What platform_write_xml writes for this platform with `nodes` nodes (a
 * user's XML: its scanned counts). */
void plat_xml_count(const platform *p, int nodes, plat_xml_counts *out);

/* A user's own SimGrid XML (user_xml.c), read as data before SimGrid sees
 * it: XML with <platform> at its root and only the elements of a platform
 * (no <include>, <config>, <trace>, actors or *_file attributes, which read
 * or write other files or run code), its objects counted for the estimate.
 * plat_user_xml_load reads and scans p->user_xml's file (path); copy writes
 * the same bytes to out for SimGrid, refusing a file changed since. */
#define PLAT_USER_XML_MAX_BYTES INFILE_MAX_BYTES
int plat_user_xml_scan(const char *file, const char *text, size_t len, plat_xml_counts *out, tt_error *err);
int plat_user_xml_load(platform *p, const char *path, tt_error *err);
int plat_user_xml_copy(const platform *p, FILE *out, tt_error *err);

/* A user platform's rank -> host file (platform_json.c): one host name a
 * line, no line-length limit. */
#define PLAT_RANK_HOSTS_MAX_BYTES (64u << 20)
#define PLAT_HOST_NAME_MAX 255
int plat_parse_rank_hosts(platform *p, const char *file, const char *text, size_t len, long *ranks, tt_error *err);

/* Loading a platform JSON file (platform_json.c). */
platform *plat_load_json(const char *path, const platform_options *opt, tt_error *err);

#endif
