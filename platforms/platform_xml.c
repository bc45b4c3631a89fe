/* A platform as a SimGrid 4.1 XML document.
 * Flat platforms (tori, one-accelerator nodes) are one <cluster>: SimGrid
 * routes TORUS / FAT_TREE / FLAT clusters in closed form, so 4,096 hosts load
 * in milliseconds. Other platforms have one zone per leaf switch holding its
 * nodes' hosts (explicit routes, computed in platform.c; write_group), and
 * the levels above the leaves as a cluster. Links are SPLITDUPLEX: the two
 * directions never share. */
#include "platforms/platform.h"

#include <stdio.h>
#include <string.h>

#include "platforms/platform_impl.h"

#include <math.h>
#include <string.h>

/* SimGrid's FAT_TREE topology of the tree's levels from `first` up:
 * levels;down per level;up per level;parallel links per level. */
static void write_fattree(const platform *p, int first, FILE *out)
{
    fprintf(out, " topology=\"FAT_TREE\" topo_parameters=\"%d;", p->levels - first);
    for (int l = first; l < p->levels; l++)
        fprintf(out, "%s%d", l > first ? "," : "", p->down[l]);
    fprintf(out, ";");
    for (int l = first; l < p->levels; l++)
        fprintf(out, "%s%d", l > first ? "," : "", p->up[l]);
    fprintf(out, ";");
    for (int l = first; l < p->levels; l++)
        fprintf(out, "%s1", l > first ? "," : "");
    fprintf(out, "\"");
}

static void cluster_topology(const platform *p, FILE *out)
{
    int torus_dims = 0;
    for (int d = 0; d < p->ndims; d++)
        torus_dims += p->dims[d] > 1;
    if (p->fabric == FABRIC_TORUS && torus_dims > 0) {
        /* SimGrid refuses a dimension of size 1; it adds nothing to routes. */
        fprintf(out, " topology=\"TORUS\" topo_parameters=\"");
        for (int d = 0, first = 1; d < p->ndims; d++)
            if (p->dims[d] > 1) {
                fprintf(out, "%s%d", first ? "" : ",", p->dims[d]);
                first = 0;
            }
        /* Pods: the last dimension, whose cables the engine sets to the
         * data-centre network's rate and latency (platform_dcn_link). */
        if (platform_pods(p) > 1)
            fprintf(out, ",%d", platform_pods(p));
        fprintf(out, "\"");
    } else if ((p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL) && p->levels > 1) {
        write_fattree(p, 0, out);
    } else {
        fprintf(out, " topology=\"FLAT\"");
    }
}

/* Hosts in the cluster: a fat tree has all its ports, used or not. */
long plat_cluster_hosts(const platform *p, int members)
{
    if ((p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL) && p->levels > 1) {
        long m = 1;
        for (int l = 0; l < p->levels; l++)
            m *= p->down[l];
        return m;
    }
    return members;
}

static void write_cluster(const platform *p, FILE *out, const char *id, const char *prefix,
                          int members, double speed_flops, double bw_Bps)
{
    fprintf(out, "<cluster id=\"%s\" prefix=\"%s\" suffix=\"\" radical=\"0-%ld\" speed=\"%.17gf\" "
                 "bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"",
            id, prefix, plat_cluster_hosts(p, members) - 1, speed_flops, bw_Bps, p->fab_lat_s);
    cluster_topology(p, out);
    fprintf(out, "/>\n");
}

/* Routes start and end at accelerators and CPU sockets, the only hosts:
 * NICs and switches are routers, since routes list their links and nothing
 * runs on them (SimGrid 3.32 seals every zone by scanning every host, so
 * each host costs load time in proportion to the node count). */
static int is_host(const platform *p, int c)
{
    device_kind k = p->comp[c].dev->kind;
    return k == DEVICE_ACCELERATOR || k == DEVICE_CPU;
}

static double host_speed(const platform *p, int c)
{
    double f = p->comp[c].dev->peak_flops[DTYPE_FP32];
    return f > 0 ? f : 1; /* a device without a figure; SimGrid wants a speed */
}

/* The links from u to v along u's routing tree, in travel order, or last
 * first when `backward` (for a Dijkstra edge: see write_node_routes). */
static void write_path(const platform *p, int k, int u, int v, int backward, FILE *out)
{
    int n = p->ncomp, hops = p->nhops[(size_t)u * n + v];
    int seq[256];
    int x = v;
    for (int i = hops - 1; i >= 0; i--) {
        seq[i] = x;
        x = p->nnext[(size_t)u * n + x];
    }
    for (int j = 0; j < hops; j++) {
        int i = backward ? hops - 1 - j : j, from = i > 0 ? seq[i - 1] : u;
        int l = p->nvia[(size_t)u * n + seq[i]];
        fprintf(out, "<link_ctn id=\"n%d-l%d\" direction=\"%s\"/>", k, l, p->link[l].a == from ? "UP" : "DOWN");
    }
}

/* Payload over line rate, per link kind: eff[0] inside a node, eff[1] on
 * the fabric (its NICs' cables included); 1 and 1 for the ideal network. */
static void write_node_links(const platform *p, int k, const double eff[2], FILE *out)
{
    for (int l = 0; l < p->nlink; l++)
        fprintf(out, " <link id=\"n%d-l%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                k, l, eff[0] * p->link[l].bw_Bps * p->link[l].count, p->link[l].latency_s);
    if (p->nodes > 1) {
        for (int j = 0; j < p->natt; j++)
            fprintf(out, " <link id=\"n%d-up%d\" bandwidth=\"%.17gBps\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                    k, j, eff[1] * p->att_uplink_Bps[j]);
        /* A node's cable(s) to its leaf, as one link of the aggregate rate. */
        fprintf(out, " <link id=\"n%d-port\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                k, eff[1] * p->port_bw_Bps, p->fab_lat_s);
    }
}

/* A platform of one node: one Full zone with every component and the
 * routes between its hosts. */
static void write_single_node(const platform *p, const double eff[2], FILE *out)
{
    int n = p->ncomp;
    fprintf(out, "<zone id=\"n0\" routing=\"Full\">\n");
    for (int c = 0; c < n; c++) {
        if (is_host(p, c))
            fprintf(out, " <host id=\"n0-%s\" speed=\"%.17gf\"/>\n", p->comp[c].name, host_speed(p, c));
        else
            fprintf(out, " <router id=\"n0-%s\"/>\n", p->comp[c].name);
    }
    write_node_links(p, 0, eff, out);
    for (int u = 0; u < n; u++)
        for (int v = 0; v < n; v++)
            if (v != u && is_host(p, u) && is_host(p, v)) {
                fprintf(out, " <route src=\"n0-%s\" dst=\"n0-%s\" symmetrical=\"NO\">", p->comp[u].name, p->comp[v].name);
                write_path(p, 0, u, v, 0, out);
                fprintf(out, "</route>\n");
            }
    fprintf(out, "</zone>\n");
}

/* The links from the leaf down to host u of node k (NIC j's uplink, then
 * its path from NIC x), in travel order or last first. */
static void write_down(const platform *p, int k, int u, int backward, FILE *out)
{
    int j = p->comp_att[u], x = p->att[j];
    if (!backward)
        fprintf(out, "<link_ctn id=\"n%d-port\" direction=\"DOWN\"/><link_ctn id=\"n%d-up%d\" direction=\"DOWN\"/>", k, k, j);
    write_path(p, k, x, u, backward, out);
    if (backward)
        fprintf(out, "<link_ctn id=\"n%d-up%d\" direction=\"DOWN\"/><link_ctn id=\"n%d-port\" direction=\"DOWN\"/>", k, j, k);
}

/* Node k's routes in its group's zone. The group is a star: each host's
 * way up to the leaf (its path to its NIC, the NIC's uplink, the node's
 * port) and down, as the edges of a Dijkstra graph with one path between
 * two hosts. SimGrid 3.32's Dijkstra puts each edge's links last first
 * and its route before the links already found, so edges are written
 * backwards, and the way down is also a bypass route, which SimGrid
 * appends in order (a route from another group ends with it). Routes
 * among a node's hosts are bypass routes too: a search by link count
 * could prefer a path through another host to the one platform.c chose. */
static void write_node_routes(const platform *p, int k, int g, FILE *out)
{
    int n = p->ncomp;
    for (int u = 0; u < n; u++) {
        if (!is_host(p, u))
            continue;
        for (int v = 0; v < n; v++)
            if (v != u && is_host(p, v)) {
                fprintf(out, " <bypassRoute src=\"n%d-%s\" dst=\"n%d-%s\">", k, p->comp[u].name, k, p->comp[v].name);
                write_path(p, k, u, v, 0, out);
                fprintf(out, "</bypassRoute>\n");
            }
        int j = p->comp_att[u], x = p->att[j];
        const char *name = p->comp[u].name;
        fprintf(out, " <route src=\"n%d-%s\" dst=\"g%d-leaf\" symmetrical=\"NO\"><link_ctn id=\"n%d-port\" "
                     "direction=\"UP\"/><link_ctn id=\"n%d-up%d\" direction=\"UP\"/>", k, name, g, k, k, j);
        write_path(p, k, u, x, 1, out);
        fprintf(out, "</route>\n <route src=\"g%d-leaf\" dst=\"n%d-%s\" symmetrical=\"NO\">", g, k, name);
        write_down(p, k, u, 1, out);
        fprintf(out, "</route>\n <bypassRoute src=\"g%d-leaf\" dst=\"n%d-%s\">", g, k, name);
        write_down(p, k, u, 0, out);
        fprintf(out, "</bypassRoute>\n");
    }
}

/* Nodes sharing a leaf switch form a group zone; a single switch is cut
 * into groups of 32 joined by a zero-latency crossbar. The group is one
 * zone, a star of its hosts around its leaf, not a zone per node: SimGrid
 * 3.32 seals each zone by scanning every host of the platform and checks
 * each new host's name zone by zone, so a zone per node made loading
 * quadratic in nodes. A star has one path between two hosts, so Dijkstra's
 * routes are the ones written. */
#define SWITCH_GROUP 32

int plat_group_nodes(const platform *p)
{
    return p->fabric == FABRIC_SWITCH ? SWITCH_GROUP : p->down[0];
}

static void write_group(const platform *p, int g, FILE *out)
{
    int per = plat_group_nodes(p), first = g * per, last = first + per < p->nodes ? first + per : p->nodes;
    fprintf(out, "<zone id=\"g%d\" routing=\"DijkstraCache\">\n<router id=\"g%d-leaf\"/>\n", g, g);
    for (int k = first; k < last; k++) /* SimGrid's DTD: a zone's hosts before its routes */
        for (int c = 0; c < p->ncomp; c++)
            if (is_host(p, c))
                fprintf(out, " <host id=\"n%d-%s\" speed=\"%.17gf\"/>\n", k, p->comp[c].name, host_speed(p, c));
    for (int k = first; k < last; k++)
        write_node_routes(p, k, g, out);
    fprintf(out, "</zone>\n");
}

/* A leaf's uplinks as one link: a single switch's crossbar takes a whole
 * group at once; a fat tree's leaf has up[1] links of a node port each. */
static double leaf_uplink_Bps(const platform *p)
{
    return (p->fabric == FABRIC_SWITCH ? SWITCH_GROUP : p->up[1]) * p->port_bw_Bps;
}

/* Above the leaves: FLAT for a two-level tree or a single switch (zero
 * latency: it is the same switch), a fat tree of the upper levels otherwise. */
static void write_spine(const platform *p, int groups, double eff, FILE *out)
{
    fprintf(out, "<cluster id=\"spine\" prefix=\"leaf-\" suffix=\"\" ");
    if (p->fabric == FABRIC_SWITCH || p->levels <= 2) {
        fprintf(out, "radical=\"0-%d\" speed=\"1f\" bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\" "
                     "topology=\"FLAT\"/>\n", groups - 1, eff * leaf_uplink_Bps(p), p->fabric == FABRIC_SWITCH ? 0 : p->fab_lat_s);
        return;
    }
    long hosts = 1;
    for (int l = 1; l < p->levels; l++)
        hosts *= p->down[l];
    fprintf(out, "radical=\"0-%ld\" speed=\"1f\" bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"",
            hosts - 1, eff * p->port_bw_Bps, p->fab_lat_s);
    write_fattree(p, 1, out);
    fprintf(out, "/>\n");
}

int platform_write_xml(const platform *p, network_model net, FILE *out, tt_error *err)
{
    return platform_write_xml_nodes(p, net, p->nodes, out, err);
}

/* The writer reads the node count from the platform: a copy with fewer. */
int platform_write_xml_nodes(const platform *full, network_model net, int nodes, FILE *out, tt_error *err)
{
    platform fewer = *full;
    const platform *p = &fewer;
    fewer.nodes = nodes > 0 && nodes < full->nodes ? nodes : full->nodes;
    if (p->user_xml) /* their file, as it was checked */
        return plat_user_xml_copy(p, out, err);
    double eff[2] = {1, 1};
    if (net == NETWORK_CALIBRATED) {
        eff[0] = PLAT_NODE_EFFICIENCY;
        eff[1] = p->fab_eff;
    }
    fprintf(out, "<?xml version='1.0'?>\n"
                 "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<!-- ttasim platform %s: %d nodes, %d accelerators -->\n"
                 "<platform version=\"4.1\">\n",
            p->name, p->nodes, platform_ranks(p));
    int groups = p->nodes > 1 && !p->flat ? (p->nodes + plat_group_nodes(p) - 1) / plat_group_nodes(p) : 0;
    if (p->flat) {
        write_cluster(p, out, "fabric", "acc-", platform_ranks(p), platform_device(p, 0)->peak_flops[DTYPE_FP32],
                      eff[1] * plat_fabric_link_Bps(p));
    } else if (p->nodes == 1) {
        write_single_node(p, eff, out);
    } else {
        /* SimGrid finds a link by name searching zones depth-first from the
         * root: declared in the first zone, every lookup ends at once
         * (declared in each node's zone, loading was quadratic in nodes). */
        fprintf(out, "<zone id=\"world\" routing=\"Floyd\">\n<zone id=\"links\" routing=\"Full\">\n");
        for (int k = 0; k < p->nodes; k++)
            write_node_links(p, k, eff, out);
        for (int g = 0; g < groups && groups > 1; g++)
            fprintf(out, "<link id=\"g%d-up\" bandwidth=\"%.17gBps\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                    g, eff[1] * leaf_uplink_Bps(p));
        fprintf(out, "</zone>\n");
        for (int g = 0; g < groups; g++)
            write_group(p, g, out);
        if (groups > 1)
            write_spine(p, groups, eff[1], out);
        for (int g = 0; g < groups && groups > 1; g++)
            fprintf(out,
                    "<zoneRoute src=\"g%d\" dst=\"spine\" gw_src=\"g%d-leaf\" gw_dst=\"leaf-%d\" symmetrical=\"NO\">"
                    "<link_ctn id=\"g%d-up\" direction=\"UP\"/></zoneRoute>\n"
                    "<zoneRoute src=\"spine\" dst=\"g%d\" gw_src=\"leaf-%d\" gw_dst=\"g%d-leaf\" symmetrical=\"NO\">"
                    "<link_ctn id=\"g%d-up\" direction=\"DOWN\"/></zoneRoute>\n",
                    g, g, g, g, g, g, g, g);
        fprintf(out, "</zone>\n");
    }
    fprintf(out, "</platform>\n");
    if (ferror(out))
        return tt_error_set(err, TT_EINPUT, "could not write the platform XML");
    return TT_OK;
}

/* Names written above, read back: n<k>-l<i> a node link (its class, its
 * ends; UP runs from its first end), n<k>-up<j> an attachment's uplink (the
 * NIC), n<k>-port a node's cable to its leaf, g<g>-up a leaf's uplinks,
 * spine_* the levels above, fabric_* a flat cluster's links (SimGrid's
 * names: fabric_link_from_X_to_Y on a torus). */
void platform_link_describe(const platform *p, const char *sg_name, platform_link_info *out)
{
    int k, i, used = 0;
    size_t len = strlen(sg_name);
    int down = len > 5 && strcmp(sg_name + len - 5, "_DOWN") == 0;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", sg_name);
    if (sscanf(sg_name, "n%d-l%d%n", &k, &i, &used) == 2 && i >= 0 && i < p->nlink && (used == (int)len || sg_name[used] == '_')) {
        const plink *l = &p->link[i];
        snprintf(out->cls, sizeof out->cls, "%s", l->cls);
        snprintf(out->from, sizeof out->from, "n%d-%s", k, p->comp[down ? l->b : l->a].name);
        snprintf(out->to, sizeof out->to, "n%d-%s", k, p->comp[down ? l->a : l->b].name);
        return;
    }
    char ends[2][40] = {"", ""};
    if (sscanf(sg_name, "n%d-up%d", &k, &i) == 2 && i >= 0 && i < p->natt) {
        snprintf(out->cls, sizeof out->cls, "nic");
        snprintf(ends[0], sizeof ends[0], "n%d-%s", k, p->comp[p->att[i]].name);
        snprintf(ends[1], sizeof ends[1], "n%d-port", k);
    } else if (sscanf(sg_name, "n%d-port", &k) == 1) { /* rails: the node's cables to its rail leaves, as one */
        snprintf(out->cls, sizeof out->cls, p->fabric == FABRIC_RAIL ? "rail-leaves" : "node-leaf");
        snprintf(ends[0], sizeof ends[0], "n%d", k);
        snprintf(ends[1], sizeof ends[1], p->fabric == FABRIC_SWITCH ? "switch" : p->fabric == FABRIC_RAIL ? "rails %d" : "leaf %d",
                 k / plat_group_nodes(p));
    } else if (sscanf(sg_name, "g%d-up", &k) == 1) {
        snprintf(out->cls, sizeof out->cls, p->fabric == FABRIC_SWITCH ? "switch" : "leaf-spine");
        snprintf(ends[0], sizeof ends[0], "leaf %d", k);
        snprintf(ends[1], sizeof ends[1], "spine");
    } else if (strncmp(sg_name, "spine_", 6) == 0) {
        snprintf(out->cls, sizeof out->cls, "spine");
        snprintf(ends[0], sizeof ends[0], "%.*s", (int)(len - (down ? 5 : 3)), sg_name); /* SPLITDUPLEX */
        snprintf(ends[1], sizeof ends[1], "above");
    } else if (sscanf(sg_name, "fabric_link_from_%d_to_%d", &k, &i) == 2) {
        int pod = platform_ranks(p) / platform_pods(p);
        snprintf(out->cls, sizeof out->cls, "%s", k / pod != i / pod ? "dcn" : p->fab_cls[0] ? p->fab_cls : platform_fabric_name(p));
        snprintf(ends[0], sizeof ends[0], "acc-%d", k);
        snprintf(ends[1], sizeof ends[1], "acc-%d", i);
    } else if (sscanf(sg_name, "fabric_link_%d", &k) == 1) {
        snprintf(out->cls, sizeof out->cls, "%s", p->fab_cls[0] ? p->fab_cls : platform_fabric_name(p));
        snprintf(ends[0], sizeof ends[0], p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL ? "tree link %d" : "acc-%d", k);
        snprintf(ends[1], sizeof ends[1], p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL ? "above" : "switch");
    } else {
        snprintf(out->cls, sizeof out->cls, "other");
        snprintf(ends[0], sizeof ends[0], "%.39s", sg_name);
        snprintf(ends[1], sizeof ends[1], "?");
    }
    snprintf(out->from, sizeof out->from, "%s", ends[down]);
    snprintf(out->to, sizeof out->to, "%s", ends[!down]);
}

/* Written by write_group and write_spine: every node the same links under
 * the same names, a star per leaf, the leaves under one flat level. */
int platform_fold_nodes(const platform *p)
{
    int tree = (p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL) && p->levels <= 2;
    int per = p->nodes > 1 ? plat_group_nodes(p) : 0;
    if (p->user_xml || p->flat || (!tree && p->fabric != FABRIC_SWITCH) || per < 1 || p->nodes <= per + 1)
        return 0;
    return per + 1;
}

int platform_fold_rank(const platform *p, int from, int to)
{
    int per = plat_group_nodes(p), a = from / p->nacc, b = to / p->nacc;
    int node = b == a ? 0 : b / per == a / per ? 1 : per;
    return node * p->nacc + to % p->nacc;
}

/* A decimal number at *s, advancing past it; -1 when there is none. */
static long take_number(const char **s)
{
    long v = -1;
    for (; **s >= '0' && **s <= '9'; (*s)++)
        v = (v < 0 ? 0 : 10 * v) + (**s - '0');
    return v;
}

/* The names of links a node (n), a leaf (g) or a leaf's spine uplink owns, before the owner's number. */
static const char *const OWNED_PREFIX[] = {"n", "g", "spine_link_"};

platform_owner platform_link_owner(const platform *p, const char *sg_name, char *first, size_t first_bytes)
{
    (void)p;
    for (int k = 0; k < 3; k++) {
        size_t len = strlen(OWNED_PREFIX[k]);
        const char *s = sg_name + len;
        long x;
        if (strncmp(sg_name, OWNED_PREFIX[k], len) != 0 || (x = take_number(&s)) < 0 || *s != (k == 2 ? '_' : '-') ||
            (k == 1 && strcmp(s, "-up_UP") != 0 && strcmp(s, "-up_DOWN") != 0))
            continue;
        snprintf(first, first_bytes, "%s0%s", OWNED_PREFIX[k], s);
        return k == 0 ? (x == 0 ? OWNER_FROM_NODE : OWNER_TO_NODE) : x == 0 ? OWNER_FROM_LEAF : OWNER_TO_LEAF;
    }
    snprintf(first, first_bytes, "%s", sg_name);
    return OWNER_NONE;
}

long platform_owner_index(const platform *p, platform_owner owner, int from, int to)
{
    int node = (owner == OWNER_FROM_NODE || owner == OWNER_FROM_LEAF ? from : to) / p->nacc;
    if (owner == OWNER_FROM_NODE || owner == OWNER_TO_NODE)
        return node;
    return owner == OWNER_NONE ? -1 : (long)p->nodes + node / plat_group_nodes(p);
}

void platform_owner_link_name(const platform *p, const char *first, long owner, char *name, size_t name_bytes)
{
    for (int k = 0; owner >= 0 && k < 3; k++) {
        size_t len = strlen(OWNED_PREFIX[k]);
        if (strncmp(first, OWNED_PREFIX[k], len) == 0 && first[len] == '0' && (first[len + 1] < '0' || first[len + 1] > '9')) {
            snprintf(name, name_bytes, "%s%ld%s", OWNED_PREFIX[k], k == 0 ? owner : owner - p->nodes, first + len + 1);
            return;
        }
    }
    snprintf(name, name_bytes, "%s", first);
}

/* Along a side of 2, the nodes at coordinate 0 own the cables SimGrid routes
 * (fabric_link_from_X_to_X+stride, both directions); the others' wrap-around
 * cables lie idle. */
int platform_paired_link(const platform *p, long k, char *name, size_t name_bytes)
{
    if (p->user_xml || !p->flat || p->fabric != FABRIC_TORUS || k < 0)
        return 0;
    long members = platform_ranks(p), stride = 1;
    for (int d = 0; d < p->ndims; stride *= p->dims[d++]) {
        if (p->dims[d] != 2)
            continue;
        if (k >= members) {
            k -= members;
            continue;
        }
        long j = k / 2, x = j / stride * 2 * stride + j % stride;
        snprintf(name, name_bytes, "fabric_link_from_%ld_to_%ld_%s", x, x + stride, k % 2 ? "DOWN" : "UP");
        return 1;
    }
    return 0;
}

int platform_dcn_link(const platform *p, network_model net, long k, char *name, size_t name_bytes, double *bw_Bps,
                      double *latency_s)
{
    long members = platform_ranks(p), pod = members / platform_pods(p);
    if (p->user_xml || !p->flat || platform_pods(p) < 2 || k < 0 || k >= 2 * members)
        return 0;
    /* chip x's cable along the pods' dimension: to its counterpart in the
     * next pod (the last pod's wraps to the first), SimGrid's torus names */
    long x = k / 2, to = x + pod < members ? x + pod : x + pod - members;
    snprintf(name, name_bytes, "fabric_link_from_%ld_to_%ld_%s", x, to, k % 2 ? "DOWN" : "UP");
    *bw_Bps = plat_dcn_cable_Bps(p) * (net == NETWORK_CALIBRATED ? p->dcn_eff : 1);
    *latency_s = p->dcn_lat_s;
    return 1;
}

/* The cluster of `members` as write_cluster declares it: a torus gives each
 * host a link per dimension; a fat tree adds its switches and their links. */
static void count_cluster(const platform *p, long members, plat_xml_counts *c)
{
    c->cluster_members += (double)members;
    c->zones += 1;
    if (p->fabric == FABRIC_TORUS)
        for (int d = 0; d < p->ndims; d++)
            c->links += (double)members * (p->dims[d] > 1);
    if (platform_pods(p) > 1)
        c->links += (double)members;
    if ((p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL) && p->levels > 1)
        for (int l = 1; l <= p->levels; l++) {
            double sw = 1;
            for (int i = l; i < p->levels; i++)
                sw *= p->down[i];
            for (int i = 0; i < l; i++)
                sw *= p->up[i];
            c->routers += sw;
            c->links += sw * p->down[l - 1];
            c->tree_pairs += sw * (double)members;
        }
}

void plat_xml_count(const platform *p, int nodes, plat_xml_counts *c)
{
    memset(c, 0, sizeof *c);
    if (p->user_xml) {
        *c = p->user_counts;
        return;
    }
    if (p->flat) {
        count_cluster(p, plat_cluster_hosts(p, nodes * p->nacc), c);
        return;
    }
    int n = p->ncomp;
    double ends = 0, route_links = 0, edge_links = 0;
    for (int u = 0; u < n; u++) {
        if (!is_host(p, u))
            continue;
        ends++;
        for (int v = 0; v < n; v++)
            route_links += v != u && is_host(p, v) ? p->nhops[(size_t)u * n + v] : 0;
        if (nodes > 1) /* one node has no way out: comp_att is -1 */
            edge_links += p->nhops[(size_t)u * n + p->att[p->comp_att[u]]] + 2;
    }
    c->hosts = ends * nodes;
    c->zones = 1;
    if (nodes == 1) { /* write_single_node: one Full zone of every component */
        c->routers = n - ends;
        c->links = p->nlink;
        c->routes = ends * (ends - 1);
        c->route_links = route_links;
        c->full_cells = (double)n * n;
        return;
    }
    /* write_group: a star per group, every route within a node and the way
     * down a bypass route, the ways up and down the graph's edges */
    int per = plat_group_nodes(p);
    double groups = (nodes + per - 1) / per;
    c->links = (p->nlink + p->natt + 1) * (double)nodes;
    c->edges = 2 * ends * nodes;
    c->bypass_routes = ends * ends * nodes;
    c->route_links = (route_links + 3 * edge_links) * nodes;
    c->routers = groups;
    c->zones = groups + 2; /* and the world and its links */
    c->floyd_cells = 3 * (groups + 2) * (groups + 2);
    c->floyd_steps = pow(groups + 2, 3);
    if (groups > 1) {
        long spine = 1;
        for (int l = 1; l < p->levels; l++)
            spine *= p->down[l];
        count_cluster(p, p->fabric == FABRIC_SWITCH || p->levels <= 2 ? (long)groups : spine, c);
        c->links += groups;
        c->routes += 2 * groups;
        c->route_links += 2 * groups;
    }
}
