/* The platform model: building a node template and a fabric, routes inside a
 * node, the shapes of tori and fat trees, and the accessors (queries in
 * platform_paths.c, summaries in platform_summary.c). */
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
    p->pods = 1;
    p->oversubscription = 1;
    return p;
}

void platform_free(platform *p)
{
    if (!p)
        return;
    free(p->description);
    free(p->storage_why);
    device_table_free(&p->devices);
    json_decref(p->assumptions);
    json_decref(p->sources);
    json_decref(p->notes);
    json_decref(p->dcn_assumptions);
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
    /* Whole pods joined by the data-centre network (multislice): each pod
     * its own torus, the shape asked for or the pod's. */
    int base = p->shape_forced ? total : p->pod_chips;
    if (p->pod_chips && p->dcn_Bps > 0 && members > base && base > 0 && members % base == 0 &&
        base % p->nacc == 0) {
        p->pods = members / base;
        size_t i;
        json_t *a;
        json_array_foreach(p->dcn_assumptions, i, a)
            json_array_append(p->assumptions, a);
        return TT_OK;
    }
    if (p->shape_forced) {
        if (total != members)
            return tt_error_set(err, TT_EINPUT, "%s: the torus shape has %d chips but the slice has %d (nodes x "
                                "accelerators per node): make the shape's product %d", where, total, members, members);
        return TT_OK;
    }
    if (total == members)
        return TT_OK;
    if (p->pod_chips && members > p->pod_chips && p->dcn_Bps > 0)
        return tt_error_set(err, TT_EINPUT, "%s: %d chips asked for, more than the pod's %d: a multi-pod slice is "
                            "whole pods joined by the data-centre network; use a multiple of --nodes %d", where,
                            members, p->pod_chips, p->pod_chips / p->nacc);
    if (p->pod_chips && members > p->pod_chips)
        return tt_error_set(err, TT_EINPUT, "%s: %d chips asked for, but the pod has %d and the file gives no "
                            "data-centre network between pods (fabric.dcn): use at most --nodes %d", where, members,
                            p->pod_chips, p->pod_chips / p->nacc);
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

int platform_pods(const platform *p)
{
    return p->fabric == FABRIC_TORUS && p->pods > 1 ? p->pods : 1;
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

int platform_storage(const platform *p, double *write_Bps, double *read_Bps, const char **why)
{
    *write_Bps = p->storage_write_Bps;
    *read_Bps = p->storage_read_Bps;
    *why = p->storage_why;
    return p->storage_why != NULL;
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
