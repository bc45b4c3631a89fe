/* The platform model: building a node template and a fabric, routes inside a
 * node, and the closed-form queries (paths, hops, bisection) that must agree
 * with what SimGrid routes on the XML of platform_xml.c. */
#include "platforms/platform.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "platforms/platform_impl.h"

platform *plat_alloc(const char *name, tt_error *err)
{
    platform *p = calloc(1, sizeof *p);
    if (!p) {
        tt_error_set(err, TT_EINTERNAL, "out of memory");
        return NULL;
    }
    snprintf(p->name, sizeof p->name, "%s", name);
    p->assumptions = json_array();
    p->sources = json_array();
    p->notes = json_array();
    p->fab_eff = PLAT_NODE_EFFICIENCY;
    p->nodes = 1;
    p->oversubscription = 1;
    return p;
}

void platform_free(platform *p)
{
    if (!p)
        return;
    free(p->description);
    device_table_free(&p->devices);
    json_decref(p->assumptions);
    json_decref(p->sources);
    json_decref(p->notes);
    free(p->comp);
    free(p->link);
    free(p->acc);
    free(p->att);
    free(p->att_uplink_Bps);
    free(p->comp_att);
    free(p->nhops);
    free(p->nnext);
    free(p->nvia);
    free(p->nlat);
    free(p->nbw);
    for (int r = 0; r < p->n_rank_hosts; r++)
        free(p->rank_hosts[r]);
    free(p->rank_hosts);
    free(p->user_xml);
    free(p);
}

int plat_find_comp(const platform *p, const char *name)
{
    for (int i = 0; i < p->ncomp; i++)
        if (strcmp(p->comp[i].name, name) == 0)
            return i;
    return -1;
}

int plat_add_comp(platform *p, const char *name, const device_info *dev, tt_error *err)
{
    if (plat_find_comp(p, name) >= 0)
        return tt_error_set(err, TT_EINPUT, "component \"%s\" is defined twice", name);
    if (p->ncomp >= 256)
        return tt_error_set(err, TT_EINPUT, "a node holds at most 256 components");
    pcomp *grown = realloc(p->comp, sizeof *grown * (size_t)(p->ncomp + 1));
    if (!grown)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    p->comp = grown;
    snprintf(p->comp[p->ncomp].name, sizeof p->comp[p->ncomp].name, "%s", name);
    p->comp[p->ncomp].dev = dev;
    p->comp[p->ncomp].planes = 1;
    p->ncomp++;
    return TT_OK;
}

int plat_add_link(platform *p, int a, int b, double bw_Bps, double latency_s, int count,
                  const char *cls, tt_error *err)
{
    if (a == b)
        return tt_error_set(err, TT_EINPUT, "a link from \"%s\" to itself; a link joins two different components",
                            p->comp[a].name);
    plink *grown = realloc(p->link, sizeof *grown * (size_t)(p->nlink + 1));
    if (!grown)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    p->link = grown;
    plink *l = &p->link[p->nlink++];
    l->a = a;
    l->b = b;
    l->bw_Bps = bw_Bps;
    l->latency_s = latency_s;
    l->count = count;
    snprintf(l->cls, sizeof l->cls, "%s", cls);
    return TT_OK;
}

void plat_assume(platform *p, const char *name, const char *value, const char *why)
{
    json_array_append_new(p->assumptions, json_pack("{s:s, s:s, s:s}", "name", name, "value", value, "why", why));
}

/* Routes can pass through switches, CPUs (UPI, root complexes) and
 * accelerators (NVLink forwarding, as NCCL does), never through a NIC. */
static int can_transit(const platform *p, int c)
{
    return p->comp[c].dev->kind != DEVICE_NIC;
}

/* Breadth-first from s: fewest hops, ties broken by the widest bottleneck,
 * then the lowest latency. Fills row s of the node tables (nnext holds the
 * predecessor on s's tree, nvia the link into that vertex). */
static void route_from(platform *p, int s, int *queue)
{
    int n = p->ncomp;
    int *hops = p->nhops + (size_t)s * n, *prev = p->nnext + (size_t)s * n, *via = p->nvia + (size_t)s * n;
    double *lat = p->nlat + (size_t)s * n, *bw = p->nbw + (size_t)s * n;
    for (int v = 0; v < n; v++) {
        hops[v] = -1;
        prev[v] = via[v] = -1;
        lat[v] = 0;
        bw[v] = 0;
    }
    hops[s] = 0;
    bw[s] = DBL_MAX;
    int head = 0, tail = 0;
    queue[tail++] = s;
    while (head < tail) {
        int u = queue[head++];
        if (u != s && !can_transit(p, u))
            continue;
        for (int k = 0; k < p->nlink; k++) {
            const plink *l = &p->link[k];
            int v = l->a == u ? l->b : l->b == u ? l->a : -1;
            if (v < 0)
                continue;
            double w = fmin(bw[u], l->bw_Bps * l->count), t = lat[u] + l->latency_s;
            if (hops[v] < 0) {
                hops[v] = hops[u] + 1;
                queue[tail++] = v;
            } else if (hops[v] != hops[u] + 1 || w < bw[v] || (w == bw[v] && t >= lat[v])) {
                continue;
            }
            bw[v] = w;
            lat[v] = t;
            prev[v] = u;
            via[v] = k;
        }
    }
    bw[s] = 0;
}

static int in_group(const platform *p, int c, const char *group)
{
    size_t n = strlen(group);
    const char *name = p->comp[c].name;
    if (strncmp(name, group, n) != 0)
        return 0;
    for (const char *s = name + n; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return name[n] != '\0';
}

/* Each component leaves the node by its nearest attachment; among equals an
 * accelerator takes the one matching its position (GPU i -> NIC i on rails). */
static void choose_exits(platform *p)
{
    for (int c = 0; c < p->ncomp; c++) {
        int best = -1, want = -1;
        for (int r = 0; r < p->nacc; r++)
            if (p->acc[r] == c)
                want = r * p->natt / p->nacc;
        for (int j = 0; j < p->natt; j++) {
            int h = p->att[j] == c ? 0 : p->nhops[(size_t)c * p->ncomp + p->att[j]];
            if (h < 0)
                continue;
            int hb = best < 0 ? -1 : p->att[best] == c ? 0 : p->nhops[(size_t)c * p->ncomp + p->att[best]];
            if (best < 0 || h < hb || (h == hb && j == want))
                best = j;
        }
        p->comp_att[c] = best;
    }
}

/* Whether a slice may be n chips long in one dimension: at most unit, or a
 * whole number of units (TPU v4 slices are built of 4 x 4 x 4 cubes). */
static int slice_size_ok(int n, int unit)
{
    return unit <= 1 || n <= unit || n % unit == 0;
}

/* The most cube-like torus of total chips (smallest largest side, then
 * smallest sum), dims[0] >= dims[1] >= dims[2]; -1 if none fits the unit. */
static int torus_shape(int total, int ndims, int unit, int *dims)
{
    int best[3] = {0, 0, 0}, found = 0;
    for (int a = 1; a <= total; a++) {
        if (total % a || !slice_size_ok(a, unit))
            continue;
        int rest = total / a;
        for (int b = ndims > 1 ? 1 : rest; b <= rest; b++) {
            if (rest % b || !slice_size_ok(b, unit) || (ndims == 2 && b != rest) || (ndims == 1 && b != 1))
                continue;
            int c = ndims == 3 ? rest / b : 1;
            int x[3] = {a, b, c};
            if (ndims < 3 && c != 1)
                continue;
            if (!slice_size_ok(c, unit) || a < b || b < c)
                continue;
            if (!found || a < best[0] || (a == best[0] && a + b + c < best[0] + best[1] + best[2])) {
                memcpy(best, x, sizeof best);
                found = 1;
            }
        }
    }
    if (!found)
        return -1;
    for (int d = 0; d < ndims; d++)
        dims[d] = best[d];
    return 0;
}

/* Chooses the grid of a torus slice of `members` chips: the one asked for,
 * the pod itself, a published slice shape, or the most cube-like. */
static int torus_slice(platform *p, int members, const char *where, tt_error *err)
{
    int total = 1;
    for (int d = 0; d < p->ndims; d++)
        total *= p->dims[d];
    if (p->shape_forced) {
        if (total != members)
            return tt_error_set(err, TT_EINPUT, "%s: the torus shape has %d chips but the slice has %d (nodes x "
                                "accelerators per node): make the shape's product %d", where, total, members, members);
        return TT_OK;
    }
    if (total == members)
        return TT_OK;
    if (p->pod_chips && members > p->pod_chips)
        return tt_error_set(err, TT_EINPUT, "%s: %d chips asked for, but the pod has %d; multi-pod layouts are not "
                            "modelled: use at most --nodes %d", where, members, p->pod_chips, p->pod_chips / p->nacc);
    for (int k = 0; k < p->nslices; k++) {
        int n = 1;
        for (int d = 0; d < p->ndims; d++)
            n *= p->slices[k][d];
        if (n == members) {
            memcpy(p->dims, p->slices[k], sizeof p->dims);
            return TT_OK;
        }
    }
    if (torus_shape(members, p->ndims, p->slice_unit, p->dims))
        return tt_error_set(err, TT_EINPUT, "%s: no slice of %d chips: each side must be at most %d or a multiple of "
                            "%d; pick another --nodes", where, members, p->slice_unit, p->slice_unit);
    return TT_OK;
}

static int fattree_shape(platform *p, int members, tt_error *err)
{
    int k = p->down[0] > 0 ? p->down[0] : 16;
    /* checked even when one leaf suffices: the file is wrong at any size */
    if (p->oversubscription < 1 || k % p->oversubscription != 0)
        return tt_error_set(err, TT_EINPUT, "$.fabric.oversubscription: %d must divide the %d "
                            "nodes per leaf ($.fabric.nodes_per_leaf); use a divisor such as 1 or 2",
                            p->oversubscription, k);
    if (members <= k) {
        p->levels = 1;
        p->down[0] = members;
        p->up[0] = 1;
        return TT_OK;
    }
    if (p->levels < 2)
        p->levels = 2;
    if (p->levels > PLAT_MAX_LEVELS)
        return tt_error_set(err, TT_EINPUT, "a fat tree has at most %d levels", PLAT_MAX_LEVELS);
    long below = 1;
    for (int l = 0; l < p->levels - 1; l++) {
        p->down[l] = k;
        below *= k;
    }
    /* The top level takes what is left, rounded up: spare ports stay unused. */
    p->down[p->levels - 1] = (int)((members + below - 1) / below);
    p->up[0] = 1;
    for (int l = 1; l < p->levels; l++)
        p->up[l] = p->down[l - 1];
    p->up[1] = k / p->oversubscription;
    return TT_OK;
}

/* A NIC's cable runs at the slower of the NIC and the fabric's link (both
 * ends must agree); --link-bw sets it outright. When one value overrides
 * the other, a note says so, once: a raised rate with no effect is not silent. */
static double nic_uplink_Bps(platform *p, int c)
{
    const device_info *d = p->comp[c].dev;
    double nic = d->bandwidth_Bps, fab = p->fab_bw_Bps;
    char buf[512] = "";
    if (p->fab_bw_forced && nic != fab)
        snprintf(buf, sizeof buf, "--link-bw %.4g B/s replaces the NICs' own rate (%s: %s, %.4g B/s) on every "
                 "uplink", fab, p->comp[c].name, d->name, nic);
    else if (!p->fab_bw_forced && fab > nic)
        snprintf(buf, sizeof buf, "fabric.link.bandwidth_Bps = %.4g B/s has no effect beyond the NICs: %s (%s) runs "
                 "at %.4g B/s and caps each node's uplink; raise the NIC's bandwidth_Bps (platform.devices) to use a "
                 "faster fabric", fab, p->comp[c].name, d->name, nic);
    else if (!p->fab_bw_forced && fab < nic)
        snprintf(buf, sizeof buf, "fabric.link.bandwidth_Bps = %.4g B/s caps the NICs: %s (%s) could run at "
                 "%.4g B/s", fab, p->comp[c].name, d->name, nic);
    if (buf[0] && json_array_size(p->notes) == 0)
        json_array_append_new(p->notes, json_string(buf));
    return p->fab_bw_forced ? fab : fmin(nic, fab);
}

int plat_finish(platform *p, const char *attach_group, const char *where, tt_error *err)
{
    int n = p->ncomp;
    p->acc = calloc((size_t)n + 1, sizeof *p->acc);
    p->att = calloc((size_t)n + 1, sizeof *p->att);
    p->att_uplink_Bps = calloc((size_t)n + 1, sizeof *p->att_uplink_Bps);
    p->comp_att = calloc((size_t)n + 1, sizeof *p->comp_att);
    size_t nn = (size_t)n * n + 1;
    p->nhops = calloc(nn, sizeof *p->nhops);
    p->nnext = calloc(nn, sizeof *p->nnext);
    p->nvia = calloc(nn, sizeof *p->nvia);
    p->nlat = calloc(nn, sizeof *p->nlat);
    p->nbw = calloc(nn, sizeof *p->nbw);
    int *queue = calloc((size_t)n + 1, sizeof *queue);
    if (!p->acc || !p->att || !p->att_uplink_Bps || !p->comp_att || !p->nhops || !p->nnext ||
        !p->nvia || !p->nlat || !p->nbw || !queue) {
        free(queue);
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    }
    for (int c = 0; c < n; c++) {
        p->comp_att[c] = -1;
        if (p->comp[c].dev->kind == p->rank_kind)
            p->acc[p->nacc++] = c;
    }
    if (p->nacc == 0 && p->rank_kind == DEVICE_CPU)
        return free(queue), tt_error_set(err, TT_EINPUT, "%s: ranks \"cpu\": the node has no CPU socket (a component whose "
                                         "device has \"kind\": \"cpu\"); train on the accelerators (drop \"ranks\") or "
                                         "use a platform with CPU sockets (zion, dgx-a100)", where);
    if (p->nacc == 0)
        return free(queue), tt_error_set(err, TT_EINPUT, "%s: the node has no accelerator (a device of kind \"accelerator\")", where);
    if (p->rank_kind == DEVICE_CPU && p->fabric == FABRIC_TORUS)
        return free(queue), tt_error_set(err, TT_EINPUT, "%s: ranks \"cpu\": the torus joins the accelerators themselves, "
                                         "so the sockets have no path between nodes; drop \"ranks\"", where);
    for (int s = 0; s < n; s++)
        route_from(p, s, queue);
    free(queue);
    if (p->fabric == FABRIC_TORUS) {
        /* The accelerators themselves are the torus. */
        for (int r = 0; r < p->nacc; r++) {
            p->att_uplink_Bps[r] = p->fab_bw_Bps;
            p->comp_att[p->acc[r]] = r;
            p->att[p->natt++] = p->acc[r];
        }
    } else if (p->fabric != FABRIC_NONE) {
        if (!attach_group)
            return tt_error_set(err, TT_EINPUT, "%s: the fabric needs \"attach\", the devices that connect to it", where);
        for (int c = 0; c < n; c++)
            if (in_group(p, c, attach_group) || strcmp(p->comp[c].name, attach_group) == 0) {
                const device_info *d = p->comp[c].dev;
                p->att_uplink_Bps[p->natt] = d->kind == DEVICE_NIC ? nic_uplink_Bps(p, c) : p->fab_bw_Bps;
                p->port_bw_Bps += p->att_uplink_Bps[p->natt];
                p->att[p->natt++] = c;
            }
        if (p->natt == 0)
            return tt_error_set(err, TT_EINPUT, "%s: attach: no component named \"%s\" or \"%s0\", \"%s1\"...",
                                where, attach_group, attach_group, attach_group);
        choose_exits(p);
    } else if (p->nodes != 1) {
        return tt_error_set(err, TT_EINPUT, "%s: %d nodes need a fabric (\"fabric\": {\"topology\": ...})", where, p->nodes);
    }
    /* One rank whose only companions are its NICs: the node is one
     * host of a SimGrid cluster (its NIC folded into the host's link). */
    int others = 0;
    for (int c = 0; c < n; c++)
        others += p->comp[c].dev->kind != p->rank_kind && (p->comp[c].dev->kind != DEVICE_NIC || p->comp_att[c] < 0 || p->att[p->comp_att[c]] != c);
    p->flat = p->fabric == FABRIC_TORUS || (p->nacc == 1 && others == 0 && p->fabric != FABRIC_NONE);
    /* Hosts of one node must reach each other inside it. */
    if (!p->flat)
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (a != b && p->comp[a].dev->kind != DEVICE_SWITCH && p->comp[b].dev->kind != DEVICE_SWITCH &&
                    p->nhops[(size_t)a * n + b] < 0)
                    return tt_error_set(err, TT_EINPUT, "%s: no route from \"%s\" to \"%s\" inside the node: add a link",
                                        where, p->comp[a].name, p->comp[b].name);
    int members = p->flat ? p->nodes * p->nacc : p->nodes;
    if (p->fabric == FABRIC_TORUS) {
        int rc = torus_slice(p, members, where, err);
        if (rc)
            return rc;
    } else if (p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL) {
        int rc = fattree_shape(p, members, err);
        if (rc)
            return tt_error_prefix(err, "%s: ", where);
    }
    return TT_OK;
}

int platform_torus_dims(const platform *p, int dims[3])
{
    int nd = p->fabric == FABRIC_TORUS ? p->ndims : 0;
    for (int d = 0; d < 3; d++)
        dims[d] = d < nd ? p->dims[d] : 1;
    return nd;
}

int platform_fattree_shape(const platform *p, int *nodes_per_leaf, int *levels, int *oversubscription)
{
    if (p->fabric != FABRIC_FATTREE && p->fabric != FABRIC_RAIL)
        return 0;
    *nodes_per_leaf = p->down[0];
    *levels = p->levels;
    *oversubscription = p->oversubscription;
    return 1;
}

int platform_shape_parse(const char *text, int shape[3], tt_error *err)
{
    long v[3];
    int n = units_parse_int_list(text, "x", 1, 4096, v, 3);
    memset(shape, 0, 3 * sizeof *shape);
    if (n < 0)
        return tt_error_set(err, TT_EINPUT, "torus shape \"%s\": expected 2 or 3 sizes of 1..4096 joined by "
                            "'x' (\"16x32\", \"8x8x12\"), fastest-varying first", text);
    for (int i = 0; i < n; i++)
        shape[i] = (int)v[i];
    if (n < 1)
        return tt_error_set(err, TT_EINPUT, "torus shape \"\": expected sizes joined by 'x' (\"16x32\")");
    return TT_OK;
}

int plat_apply_shape(platform *p, const int shape[3], const char *where, tt_error *err)
{
    int n = 0;
    while (n < 3 && shape[n] > 0)
        n++;
    if (n == 0)
        return TT_OK;
    if (p->fabric != FABRIC_TORUS)
        return tt_error_set(err, TT_EINPUT, "%s: a torus shape was given but the fabric is %s, not a torus", where,
                            platform_fabric_name(p));
    if (n != p->ndims)
        return tt_error_set(err, TT_EINPUT, "%s: the torus shape has %d sizes but the fabric is %d-dimensional", where,
                            n, p->ndims);
    memcpy(p->dims, shape, sizeof p->dims);
    p->shape_forced = 1;
    return TT_OK;
}

const char *platform_user_xml(const platform *p)
{
    return p->user_xml;
}

const char *platform_name(const platform *p)
{
    return p->name;
}

const char *platform_description(const platform *p)
{
    return p->description ? p->description : "";
}

const char *platform_fabric_name(const platform *p)
{
    switch (p->fabric) {
    case FABRIC_NONE: return "none";
    case FABRIC_SWITCH: return "single_switch";
    case FABRIC_FATTREE: return "fattree";
    case FABRIC_RAIL: return "rail";
    case FABRIC_TORUS: return p->ndims == 1 ? "ring" : p->ndims == 2 ? "torus2d" : "torus3d";
    }
    return "?";
}

int platform_ranks(const platform *p)
{
    return p->nodes * p->nacc;
}

int platform_nodes(const platform *p)
{
    return p->nodes;
}

int platform_ranks_per_node(const platform *p)
{
    return p->nacc;
}

const char *platform_rank_host(const platform *p, int rank, char *buf, size_t buf_bytes)
{
    if (p->rank_hosts)
        snprintf(buf, buf_bytes, "%s", p->rank_hosts[rank]);
    else if (p->flat)
        snprintf(buf, buf_bytes, "acc-%d", rank);
    else
        snprintf(buf, buf_bytes, "n%d-%s", rank / p->nacc, p->comp[p->acc[rank % p->nacc]].name);
    return buf;
}

const device_info *platform_device(const platform *p, int rank)
{
    return p->comp[p->acc[rank % p->nacc]].dev;
}

device_kind platform_rank_kind(const platform *p)
{
    return p->rank_kind;
}

const char *platform_rank_exit(const platform *p, int rank)
{
    if (p->fabric == FABRIC_NONE || p->flat)
        return NULL;
    return p->comp[p->att[p->comp_att[p->acc[rank % p->nacc]]]].name;
}

const char *platform_rank_component(const platform *p, int rank)
{
    if (p->flat || p->user_xml || p->nacc < 1)
        return NULL;
    return p->comp[p->acc[rank % p->nacc]].name;
}

int plat_fabric_hops(const platform *p, int x, int y)
{
    if (x == y)
        return 0;
    switch (p->fabric) {
    case FABRIC_NONE:
        return 0;
    case FABRIC_SWITCH:
        return 2;
    case FABRIC_FATTREE:
    case FABRIC_RAIL: {
        long div = 1;
        for (int l = 0; l < p->levels; l++) {
            div *= p->down[l];
            if (x / div == y / div)
                return 2 * (l + 1);
        }
        return 2 * p->levels;
    }
    case FABRIC_TORUS: {
        int h = 0;
        for (int d = 0; d < p->ndims; d++) {
            int dx = abs(x % p->dims[d] - y % p->dims[d]);
            h += dx < p->dims[d] - dx ? dx : p->dims[d] - dx;
            x /= p->dims[d];
            y /= p->dims[d];
        }
        return h;
    }
    }
    return 0;
}

/* Fabric links between nodes carry a node's aggregate uplink; a torus's
 * links are the chip-to-chip links themselves. */
double plat_fabric_link_Bps(const platform *p)
{
    return p->fabric == FABRIC_TORUS ? p->fab_bw_Bps : p->port_bw_Bps;
}

int platform_torus_paired(const platform *p, int a, int b)
{
    if (p->fabric != FABRIC_TORUS || plat_fabric_hops(p, a, b) != 1)
        return 0;
    for (int d = 0; d < p->ndims; d++) {
        if (a % p->dims[d] != b % p->dims[d])
            return p->dims[d] == 2;
        a /= p->dims[d];
        b /= p->dims[d];
    }
    return 0;
}

int platform_path(const platform *p, int a, int b, double *latency_s, double *bw_Bps)
{
    *latency_s = 0;
    *bw_Bps = 0;
    if (a == b)
        return 0;
    if (p->user_xml) {
        *latency_s = p->user_lat_s;
        *bw_Bps = p->user_bw_Bps;
        return p->user_hops;
    }
    if (p->flat) {
        int hops = plat_fabric_hops(p, a, b);
        *latency_s = hops * p->fab_lat_s;
        *bw_Bps = plat_fabric_link_Bps(p) * (platform_torus_paired(p, a, b) ? 2 : 1);
        return hops;
    }
    int n = p->ncomp, ka = a / p->nacc, kb = b / p->nacc;
    int ca = p->acc[a % p->nacc], cb = p->acc[b % p->nacc];
    if (ka == kb) {
        *latency_s = p->nlat[(size_t)ca * n + cb];
        *bw_Bps = p->nbw[(size_t)ca * n + cb];
        return p->nhops[(size_t)ca * n + cb];
    }
    int ja = p->comp_att[ca], jb = p->comp_att[cb];
    int xa = p->att[ja], xb = p->att[jb];
    int hops = plat_fabric_hops(p, ka, kb);
    double bw = fmin(p->att_uplink_Bps[ja], p->att_uplink_Bps[jb]);
    bw = fmin(bw, plat_fabric_link_Bps(p));
    *latency_s = hops * p->fab_lat_s;
    if (xa != ca) {
        hops += p->nhops[(size_t)ca * n + xa];
        *latency_s += p->nlat[(size_t)ca * n + xa];
        bw = fmin(bw, p->nbw[(size_t)ca * n + xa]);
    }
    if (xb != cb) {
        hops += p->nhops[(size_t)xb * n + cb];
        *latency_s += p->nlat[(size_t)xb * n + cb];
        bw = fmin(bw, p->nbw[(size_t)xb * n + cb]);
    }
    *bw_Bps = bw;
    return hops;
}

/* Links of class cls on the node route from component u to component v. */
static int route_class_links(const platform *p, int u, int v, const char *cls)
{
    int n = p->ncomp, links = 0;
    while (v >= 0 && v != u) { /* back along u's routing tree */
        links += strcmp(p->link[p->nvia[(size_t)u * n + v]].cls, cls) == 0;
        v = p->nnext[(size_t)u * n + v];
    }
    return links;
}

int platform_path_class_links(const platform *p, int a, int b, const char *cls)
{
    if (p->flat || p->user_xml || a == b)
        return 0;
    int ca = p->acc[a % p->nacc], cb = p->acc[b % p->nacc];
    if (a / p->nacc == b / p->nacc)
        return route_class_links(p, ca, cb, cls);
    return route_class_links(p, ca, p->att[p->comp_att[ca]], cls) + route_class_links(p, p->att[p->comp_att[cb]], cb, cls);
}

int platform_rail_relay(const platform *p, int a, int b)
{
    if (p->fabric != FABRIC_RAIL)
        return -1;
    const char *cls, *xa = platform_rank_exit(p, a), *xb = platform_rank_exit(p, b);
    int g = p->nacc, node = a / g;
    if (!xa || !xb || node == b / g || strcmp(xa, xb) == 0)
        return -1;
    for (int r = 0; r < g; r++)
        if (strcmp(platform_rank_exit(p, node * g + r), xb) == 0)
            return platform_rank_links(p, a, node * g + r, &cls) > 0 && strncmp(cls, "nvlink", 6) == 0 ? node * g + r
                                                                                                        : -1;
    return -1;
}

int platform_rank_links(const platform *p, int a, int b, const char **cls)
{
    *cls = NULL;
    if (p->flat || p->user_xml || a == b || a / p->nacc != b / p->nacc)
        return 0;
    int n = p->ncomp, ca = p->acc[a % p->nacc], v = p->acc[b % p->nacc], k = -1;
    while (v >= 0 && v != ca) { /* back along a's routing tree to its first link */
        k = p->nvia[(size_t)ca * n + v];
        v = p->nnext[(size_t)ca * n + v];
    }
    if (v != ca || k < 0)
        return 0;
    *cls = p->link[k].cls;
    return p->link[k].count;
}

/* Depth-first search for a cycle through the g ranks over direct links with
 * a free unit in the direction used (cap[a][b]), widest links first. */
static int ring_extend(int g, int cap[16][16], int *order, int len, int *used, unsigned last_ok)
{
    int a = order[len - 1];
    if (len == g)
        return cap[a][order[0]] > 0 && (last_ok >> a & 1);
    for (int want = 8; want >= 1; want--) /* widest first: doubled NVLinks before single */
        for (int r = 0; r < g; r++)
            if (!used[r] && cap[a][r] == want) {
                used[r] = 1;
                order[len] = r;
                if (ring_extend(g, cap, order, len + 1, used, last_ok))
                    return 1;
                used[r] = 0;
            }
    return 0;
}

int platform_ring_orders(const platform *p, int c, int orders[][16])
{
    int g = platform_ranks_per_node(p), cap[16][16];
    if (g > 16)
        g = 16;
    for (int a = 0; a < g; a++)
        for (int b = 0; b < g; b++) {
            const char *cls;
            int n = a != b && !p->flat && platform_hops(p, a, b) == 1 ? platform_rank_links(p, a, b, &cls) : 0;
            cap[a][b] = n > 8 ? 8 : n;
        }
    /* The node's NICs, in order of first use: channel j runs between NIC j's
     * ranks (enters at one, leaves at another), as NCCL opens a channel per NIC. */
    const char *nic[16];
    int nnic = 0;
    for (int r = 0; r < g; r++) {
        const char *x = platform_rank_exit(p, r);
        int seen = !x;
        for (int k = 0; k < nnic && !seen; k++)
            seen = strcmp(nic[k], x) == 0;
        if (!seen)
            nic[nnic++] = x;
    }
    int rings = 0;
    for (int j = 0; j < c && j < 8; j++) {
        int used[16] = {0}, *o = orders[j], found = 0;
        unsigned mine = 0;
        for (int r = 0; r < g && nnic; r++)
            if (strcmp(platform_rank_exit(p, r), nic[j % nnic]) == 0)
                mine |= 1u << r;
        /* from a rank of NIC j back to one (when there are NICs), else any ring */
        for (int start = 0; start < g && !found && g >= 3; start++) {
            if (nnic && !(mine >> start & 1))
                continue;
            memset(used, 0, sizeof used);
            used[start] = 1;
            o[0] = start;
            found = ring_extend(g, cap, o, 1, used, nnic ? mine & ~(1u << start) : ~0u);
        }
        if (!found && g >= 3) {
            memset(used, 0, sizeof used);
            used[0] = 1;
            o[0] = 0;
            found = ring_extend(g, cap, o, 1, used, ~0u);
        }
        if (found) {
            for (int k = 0; k < g; k++)
                cap[o[k]][o[(k + 1) % g]]--;
            rings++;
        } else if (rings > 0) {
            memcpy(o, orders[j - 1], sizeof orders[j]);
        } else { /* behind a switch: rank order entering at NIC j's first rank, as NCCL's ring per NIC */
            int first = nnic ? __builtin_ctz(mine) : 0;
            for (int k = 0; k < g; k++)
                o[k] = (first + k) % g;
        }
    }
    return rings;
}

int platform_fabric_sharp(const platform *p)
{
    return p->sharp;
}

int platform_hops(const platform *p, int a, int b)
{
    double lat, bw;
    return platform_path(p, a, b, &lat, &bw);
}

int platform_component_path(const platform *p, const char *from, const char *to, double *latency_s,
                            double *bw_Bps)
{
    int a = plat_find_comp(p, from), b = plat_find_comp(p, to);
    *latency_s = 0;
    *bw_Bps = 0;
    if (a < 0 || b < 0 || a == b || p->nhops == NULL || p->nhops[(size_t)a * p->ncomp + b] < 0)
        return -1;
    size_t i = (size_t)a * p->ncomp + b;
    *latency_s = p->nlat[i];
    *bw_Bps = p->nbw[i];
    return p->nhops[i];
}

int platform_component_links(const platform *p, const char *component, const char *link_class)
{
    int c = plat_find_comp(p, component);
    if (c < 0)
        return -1;
    int units = 0;
    for (int k = 0; k < p->nlink; k++)
        if ((p->link[k].a == c || p->link[k].b == c) && (!link_class || strcmp(p->link[k].cls, link_class) == 0))
            units += p->link[k].count;
    return units;
}

int platform_node_components(const platform *p, device_kind kind, const char **names,
                             const device_info **devs, int max)
{
    int n = 0;
    for (int c = 0; !p->flat && !p->user_xml && c < p->ncomp; c++)
        if (p->comp[c].dev->kind == kind) {
            if (n < max) {
                names[n] = p->comp[c].name;
                devs[n] = p->comp[c].dev;
            }
            n++;
        }
    return n;
}

const char *platform_component_host(const platform *p, int node, const char *component, char *buf,
                                    size_t buf_bytes)
{
    (void)p; /* node platforms name every host nN-COMPONENT (platform_xml.c) */
    snprintf(buf, buf_bytes, "n%d-%s", node, component);
    return buf;
}

int platform_assumption_count(const platform *p)
{
    return (int)json_array_size(p->assumptions);
}

void platform_assumption(const platform *p, int i, const char **name, const char **value, const char **note)
{
    json_t *a = json_array_get(p->assumptions, (size_t)i);
    *name = json_string_value(json_object_get(a, "name"));
    *value = json_string_value(json_object_get(a, "value"));
    *note = json_string_value(json_object_get(a, "why"));
}

int platform_note_count(const platform *p)
{
    return (int)json_array_size(p->notes);
}

const char *platform_note(const platform *p, int i)
{
    return json_string_value(json_array_get(p->notes, (size_t)i));
}

int platform_source_count(const platform *p)
{
    return (int)json_array_size(p->sources);
}

const char *platform_source(const platform *p, int i)
{
    return json_string_value(json_array_get(p->sources, (size_t)i));
}

/* ---- summary ---- */

static void add_class(platform_summary *s, const char *name, double bw_Bps, long count)
{
    for (int i = 0; i < s->n_link_classes; i++)
        if (strcmp(s->link_classes[i].name, name) == 0 && s->link_classes[i].bw_Bps == bw_Bps) {
            s->link_classes[i].count += count;
            return;
        }
    if (s->n_link_classes == (int)(sizeof s->link_classes / sizeof s->link_classes[0]))
        return;
    platform_link_class *c = &s->link_classes[s->n_link_classes++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->bw_Bps = bw_Bps;
    c->count = count;
}

/* Links in the fabric: a fat tree has up[l] uplinks per element of level l. */
static long fabric_link_count(const platform *p, int members)
{
    switch (p->fabric) {
    case FABRIC_NONE: return 0;
    case FABRIC_SWITCH: return members;
    case FABRIC_TORUS: return (long)members * p->ndims;
    case FABRIC_FATTREE:
    case FABRIC_RAIL: {
        /* Level l (0 = end points) holds E_l elements, each with up[l] uplinks;
         * E_{l+1} = E_l * up[l] / down[l]. */
        long elems = 1, total = 0;
        for (int l = 0; l < p->levels; l++)
            elems *= p->down[l];
        for (int l = 0; l < p->levels; l++) {
            total += elems * p->up[l];
            elems = elems * p->up[l] / p->down[l];
        }
        return total;
    }
    }
    return 0;
}

/* Max flow (Dinic) between two vertex sets of the node graph, per direction. */
typedef struct flownet {
    int n;
    double *cap; /* n x n residual capacities */
    int *level, *it;
} flownet;

static int flow_bfs(flownet *f, int s, int t, int *queue)
{
    for (int v = 0; v < f->n; v++)
        f->level[v] = -1;
    int head = 0, tail = 0;
    f->level[s] = 0;
    queue[tail++] = s;
    while (head < tail) {
        int u = queue[head++];
        for (int v = 0; v < f->n; v++)
            if (f->level[v] < 0 && f->cap[(size_t)u * f->n + v] > 1e-9) {
                f->level[v] = f->level[u] + 1;
                queue[tail++] = v;
            }
    }
    return f->level[t] >= 0;
}

static double flow_dfs(flownet *f, int u, int t, double pushed)
{
    if (u == t)
        return pushed;
    for (; f->it[u] < f->n; f->it[u]++) {
        int v = f->it[u];
        double *c = &f->cap[(size_t)u * f->n + v];
        if (*c > 1e-9 && f->level[v] == f->level[u] + 1) {
            double got = flow_dfs(f, v, t, fmin(pushed, *c));
            if (got > 0) {
                *c -= got;
                f->cap[(size_t)v * f->n + u] += got;
                return got;
            }
        }
    }
    return 0;
}

/* Min over balanced splits of the node's accelerators (the first on side A)
 * of the max flow from A to B. */
static double node_bisection_Bps(const platform *p)
{
    int n = p->ncomp + 2, s = n - 2, t = n - 1, m = p->nacc;
    if (m < 2 || m > 20)
        return 0;
    flownet f = {n, calloc((size_t)n * n, sizeof(double)), calloc((size_t)n, sizeof(int)), calloc((size_t)n, sizeof(int))};
    int *queue = calloc((size_t)n, sizeof *queue);
    double best = DBL_MAX;
    for (unsigned mask = 0; mask < (1u << m); mask++) {
        if (!(mask & 1u) || __builtin_popcount(mask) != m / 2)
            continue;
        memset(f.cap, 0, sizeof(double) * (size_t)n * n);
        for (int k = 0; k < p->nlink; k++) {
            const plink *l = &p->link[k];
            f.cap[(size_t)l->a * n + l->b] += l->bw_Bps * l->count;
            f.cap[(size_t)l->b * n + l->a] += l->bw_Bps * l->count;
        }
        for (int r = 0; r < m; r++) {
            if (mask & (1u << r))
                f.cap[(size_t)s * n + p->acc[r]] = DBL_MAX / 4;
            else
                f.cap[(size_t)p->acc[r] * n + t] = DBL_MAX / 4;
        }
        double flow = 0;
        while (flow_bfs(&f, s, t, queue)) {
            memset(f.it, 0, sizeof(int) * (size_t)n);
            double got;
            while ((got = flow_dfs(&f, s, t, DBL_MAX)) > 0)
                flow += got;
        }
        if (flow < best)
            best = flow;
    }
    free(f.cap);
    free(f.level);
    free(f.it);
    free(queue);
    return best;
}

static double fabric_bisection_Bps(const platform *p, int members)
{
    double link = plat_fabric_link_Bps(p);
    switch (p->fabric) {
    case FABRIC_NONE: return 0;
    case FABRIC_SWITCH: return members / 2 * link;
    case FABRIC_TORUS: {
        int dmax = 1;
        for (int d = 0; d < p->ndims; d++)
            if (p->dims[d] > dmax)
                dmax = p->dims[d];
        /* Halving the longest ring cuts two links per ring (one with wrap-around). */
        return dmax < 2 ? 0 : 2.0 * (members / dmax) * link;
    }
    case FABRIC_FATTREE:
    case FABRIC_RAIL:
        return members / 2 * link / (p->levels > 1 ? p->oversubscription : 1);
    }
    return 0;
}

void platform_summarize(const platform *p, platform_summary *s)
{
    memset(s, 0, sizeof *s);
    s->nodes = p->nodes;
    for (int c = 0; c < p->ncomp; c++) {
        device_kind k = p->comp[c].dev->kind;
        int i = 0;
        while (i < s->n_devices && s->devices[i].dev != p->comp[c].dev)
            i++;
        if (i < (int)(sizeof s->devices / sizeof s->devices[0])) {
            s->devices[i].dev = p->comp[c].dev;
            s->devices[i].count += (long)p->comp[c].planes * p->nodes;
            if (i == s->n_devices)
                s->n_devices++;
        }
        s->accelerators += (k == DEVICE_ACCELERATOR) * p->nodes;
        s->cpu_sockets += (k == DEVICE_CPU) * p->nodes;
        s->nics += (k == DEVICE_NIC) * p->nodes;
        s->switches += (k == DEVICE_SWITCH) * p->comp[c].planes * p->nodes;
    }
    for (int k = 0; k < p->nlink; k++)
        add_class(s, p->link[k].cls, p->link[k].bw_Bps, (long)p->link[k].count * p->nodes);
    int members = p->flat ? platform_ranks(p) : p->nodes;
    /* A node's port is natt cables (one per NIC, rails) at the NIC's rate. */
    if (p->fabric != FABRIC_NONE && (p->flat || p->nodes > 1)) {
        int per = p->flat ? 1 : p->natt;
        add_class(s, p->fab_cls, plat_fabric_link_Bps(p) / per, fabric_link_count(p, members) * per);
    }
    if (!p->user_xml) /* unknown for a user's XML */
        s->bisection_Bps = p->nodes == 1 && !p->flat ? node_bisection_Bps(p) : fabric_bisection_Bps(p, members);
    for (int b = 0; b < platform_ranks(p); b++) {
        int h = platform_hops(p, 0, b);
        for (int a = 1; a < p->nacc && a < platform_ranks(p); a++) {
            int h2 = platform_hops(p, a, b);
            if (h2 > h)
                h = h2;
        }
        if (h > s->diameter_hops)
            s->diameter_hops = h;
    }
    for (int r = 0; r < platform_ranks(p); r++)
        for (int d = 0; d < DTYPE_COUNT; d++)
            s->peak_flops[d] += platform_device(p, r)->peak_flops[d];
}

/* Switches of a tree: an element of level m has down[m-1] links down and
 * up[m] up (none at the top), each a node port of `per` cables (one per
 * rail on a rail-optimised tree, each rail its own switches). An element
 * wider than a switch takes several; smaller whole elements share one (the
 * narrow top elements of a PGFT are one spine with parallel links). */
static long tree_switches(const platform *p, long per, int radix)
{
    long elems = 1, total = 0;
    for (int l = 0; l < p->levels; l++)
        elems *= p->down[l];
    int rails = p->fabric == FABRIC_RAIL;
    long sets = rails ? per : 1, width = rails ? 1 : per;
    for (int m = 1; m <= p->levels; m++) {
        elems = elems * p->up[m - 1] / p->down[m - 1];
        long ports = width * (p->down[m - 1] + (m < p->levels ? p->up[m] : 0));
        long n = ports > radix ? elems * ((ports + radix - 1) / radix)
                               : (elems + radix / ports - 1) / (radix / ports);
        total += sets * n;
    }
    return total;
}

void platform_fabric_bom_of(const platform *p, int radix, platform_fabric_bom *out)
{
    memset(out, 0, sizeof *out);
    int members = p->flat ? platform_ranks(p) : p->nodes;
    if (p->fabric == FABRIC_NONE || p->user_xml || (!p->flat && p->nodes < 2))
        return;
    long per = p->flat ? 1 : p->natt;
    out->cables = fabric_link_count(p, members) * per;
    long ends = (long)members * per; /* end point to first switch: one switch port each */
    if (p->fabric == FABRIC_SWITCH)
        out->switch_ports = ends;
    else if (p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL)
        out->switch_ports = ends + 2 * (out->cables - ends);
    out->priced_by = !p->flat && p->natt > 0 ? p->comp[p->att[0]].dev : platform_device(p, 0);
    /* accelerators cabled to a generic fabric: the generic fabric's prices unless they carry their own */
    const device_info *generic = device_table_find(&p->devices, "generic-accelerator");
    if (out->priced_by->cable_usd <= 0 && generic)
        out->priced_by = generic;
    if (radix <= 0)
        radix = out->priced_by->switch_radix > 0 ? out->priced_by->switch_radix : 64;
    if (p->fabric == FABRIC_SWITCH)
        out->switches = (out->switch_ports + radix - 1) / radix;
    else if (p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL)
        out->switches = tree_switches(p, per, radix);
}
