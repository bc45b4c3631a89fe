/* Reading a platform JSON file (format in platforms/README.md). */
#include <stdlib.h>
#include <string.h>

#include "common/infile.h"
#include "common/jsonx.h"
#include "platforms/platform_impl.h"

#define PLATFORM_VERSION 1

static const char *const TOPOLOGIES[] = {"none", "single_switch", "fattree", "rail", "ring", "torus2d", "torus3d", NULL};
static const char *const PATTERNS[] = {"all", "pair", "fully_connected", "hybrid_cube_mesh",
                                       "hybrid_cube_mesh_4", "cube", "ring", NULL};
enum { PAT_ALL, PAT_PAIR, PAT_FC, PAT_HCM, PAT_HCM4, PAT_CUBE, PAT_RING };

/* The DGX-1 V100 hybrid cube mesh: two fully connected quads joined i <-> i+4,
 * eight pairs doubled so every GPU has 6 links (nvidia-smi topo -m of a DGX-1V).
 * The 4-port variant (DGX-1 P100, OAM HCM) has the same pairs, single. */
static const int HCM[16][3] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1},
                               {1, 5, 2}, {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1},
                               {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};

/* Components named group0, group1...: returns how many, their indices in out. */
static int group_members(const platform *p, const char *name, int *out)
{
    int c = plat_find_comp(p, name);
    if (c >= 0) {
        out[0] = c;
        return 1;
    }
    int n = 0, lo, hi, used = 0;
    char base[48];
    /* "gpu[8-15]": a range of a group. */
    if (sscanf(name, "%47[^[][%d-%d]%n", base, &lo, &hi, &used) == 3 && name[used] == '\0' && lo <= hi) {
        for (int i = lo; i <= hi && n < 256; i++) {
            char full[64];
            snprintf(full, sizeof full, "%s%d", base, i);
            if ((c = plat_find_comp(p, full)) < 0)
                return 0;
            out[n++] = c;
        }
        return n;
    }
    for (int i = 0; i < 256; i++) {
        char full[64];
        snprintf(full, sizeof full, "%s%d", name, i);
        if ((c = plat_find_comp(p, full)) < 0)
            break;
        out[n++] = c;
    }
    return n;
}

static int no_component(const jx_obj *l, const platform *p, const char *key, const char *name)
{
    char list[512] = "";
    size_t used = 0;
    for (int c = 0; c < p->ncomp && used + 40 < sizeof list; c++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", c ? ", " : "", p->comp[c].name);
    return tt_error_set(l->err, TT_EINPUT, "%s: %s.%s: no component \"%s\" in the node (it has: %s); name a component or a group",
                        l->file, l->path, key, name, list);
}

/* Adds the links of one pattern between the members ga[0..na) and gb[0..nb). */
static int add_pattern(platform *p, int pat, const int *ga, int na, const int *gb, int nb, double bw,
                       double lat, int c, const char *cls, tt_error *err)
{
    int rc;
    switch (pat) {
    case PAT_ALL:
        for (int i = 0; i < na; i++)
            for (int j = 0; j < nb; j++)
                if ((rc = plat_add_link(p, ga[i], gb[j], bw, lat, c, cls, err)))
                    return rc;
        return TT_OK;
    case PAT_PAIR:
        for (int i = 0; i < (na > nb ? na : nb); i++) {
            int x = na >= nb ? ga[i] : ga[(long)i * na / nb], y = na >= nb ? gb[(long)i * nb / na] : gb[i];
            if ((rc = plat_add_link(p, x, y, bw, lat, c, cls, err)))
                return rc;
        }
        return TT_OK;
    case PAT_FC:
        for (int i = 0; i < na; i++)
            for (int j = i + 1; j < na; j++)
                if ((rc = plat_add_link(p, ga[i], ga[j], bw, lat, c, cls, err)))
                    return rc;
        return TT_OK;
    case PAT_HCM:
    case PAT_HCM4:
        for (int k = 0; k < 16; k++)
            if ((rc = plat_add_link(p, ga[HCM[k][0]], ga[HCM[k][1]], bw, lat, pat == PAT_HCM ? HCM[k][2] * c : c, cls, err)))
                return rc;
        return TT_OK;
    case PAT_CUBE:
        for (int i = 0; i < 8; i++)
            for (int bit = 1; bit < 8; bit <<= 1)
                if (i < (i ^ bit) && (rc = plat_add_link(p, ga[i], ga[i ^ bit], bw, lat, c, cls, err)))
                    return rc;
        return TT_OK;
    default:
        for (int i = 0; i < na && na > 1; i++)
            if ((na > 2 || i == 0) && (rc = plat_add_link(p, ga[i], ga[(i + 1) % na], bw, lat, c, cls, err)))
                return rc;
        return TT_OK;
    }
}

/* mesh: the pattern replacing the accelerator mesh (-1: keep the file's);
 * *had_mesh is set when the link is a mesh pattern. */
static int load_link(platform *p, const jx_obj *l, int mesh, int *had_mesh)
{
    static const char *keys[] = {"a", "b", "pattern", "bandwidth_Bps", "latency_s", "count", "class", NULL};
    const char *a = NULL, *b = NULL, *cls = "link";
    double bw = 0, lat = 0;
    long count = 1;
    int pat = PAT_ALL, rc;
    if ((rc = jx_check_keys(l, keys)) || (rc = jx_string(l, "a", 1, &a)) || (rc = jx_string(l, "b", 0, &b)) ||
        (rc = jx_enum(l, "pattern", 0, PATTERNS, &pat)) ||
        (rc = jx_rate(l, "bandwidth_Bps", 1, 1e3, 1e15, &bw)) ||
        (rc = jx_seconds(l, "latency_s", 1, 0, 1, &lat)) || (rc = jx_int(l, "count", 0, 1, 64, &count)) ||
        (rc = jx_string(l, "class", 0, &cls)))
        return rc;
    int ga[256], gb[256], na = group_members(p, a, ga), nb = b ? group_members(p, b, gb) : 0;
    if (na == 0)
        return no_component(l, p, "a", a);
    if (b && nb == 0)
        return no_component(l, p, "b", b);
    int is_mesh = pat == PAT_FC || pat == PAT_HCM || pat == PAT_HCM4;
    *had_mesh |= is_mesh;
    if (is_mesh && mesh >= 0 && p->comp[ga[0]].dev->kind == DEVICE_ACCELERATOR)
        pat = mesh;
    if (pat >= PAT_FC && b)
        return tt_error_set(l->err, TT_EINPUT, "%s: %s: pattern \"%s\" links the members of \"a\" among themselves: remove \"b\"",
                            l->file, l->path, PATTERNS[pat]);
    if (pat < PAT_FC && !b)
        return tt_error_set(l->err, TT_EINPUT, "%s: %s: missing required key \"b\" (the other end of the link)", l->file, l->path);
    if ((pat == PAT_HCM || pat == PAT_HCM4 || pat == PAT_CUBE) && na != 8)
        return tt_error_set(l->err, TT_EINPUT, "%s: %s: pattern \"%s\" needs 8 members in \"%s\", found %d",
                            l->file, l->path, PATTERNS[pat], a, na);
    if ((rc = add_pattern(p, pat, ga, na, gb, nb, bw, lat, (int)count, cls, l->err)))
        return tt_error_prefix(l->err, "%s: %s: ", l->file, l->path);
    return TT_OK;
}

static int unknown_device(const jx_obj *o, const platform *p, const char *name)
{
    const char **names = calloc((size_t)p->devices.n + 1, sizeof *names);
    for (int i = 0; names && i < p->devices.n; i++)
        names[i] = p->devices.dev[i].name;
    const char *close = names ? jx_closest(name, names) : NULL;
    int rc = tt_error_set(o->err, TT_EINPUT, "%s: %s.device: unknown device \"%s\"%s%s%s; devices are defined in "
                                             "platforms/devices.json or the file's \"devices\"",
                          o->file, o->path, name, close ? ": did you mean \"" : "", close ? close : "", close ? "\"?" : "");
    free(names);
    return rc;
}

/* A scenario's platform.components: {"gpu": 64} populates a group with
 * fewer (or more) members than the file, as a rack with trays left out. */
static int component_count(const platform_options *opt, const char *name, long *count, tt_error *err)
{
    json_t *v = opt && opt->components ? json_object_get(opt->components, name) : NULL;
    if (!v)
        return TT_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 128)
        return tt_error_set(err, TT_EINPUT, "%s: $.platform.components.%s: expected a count of 1 to 128",
                            opt->overlay_file, name);
    *count = (long)json_integer_value(v);
    return TT_OK;
}

/* Every name of platform.components is a group of the node's components. */
static int components_known(const platform_options *opt, const jx_obj *node, size_t nc)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)opt->components, key, v) {
        int found = 0;
        for (size_t i = 0; i < nc && !found; i++)
            found = strcmp(json_string_value(json_object_get(json_array_get(json_object_get(node->obj, "components"), i),
                                                             "name")), key) == 0;
        if (!found)
            return tt_error_set(node->err, TT_EINPUT, "%s: $.platform.components.%s: the platform's node has no "
                                "component group \"%s\" (its groups are in 'ttasim platform show')",
                                opt->overlay_file, key, key);
    }
    return TT_OK;
}

static int load_node(platform *p, const jx_obj *root, const platform_options *opt)
{
    static const char *keys[] = {"components", "links", NULL};
    static const char *ckeys[] = {"name", "device", "count", "crossbar", NULL};
    static const char *const MESHES[] = {"fully_connected", "hybrid_cube_mesh", "hybrid_cube_mesh_4", NULL};
    jx_obj node;
    size_t nc = 0, nl = 0;
    int rc, mesh = -1;
    if (opt && opt->mesh) {
        for (int i = PAT_FC; i <= PAT_HCM4; i++)
            if (strcmp(opt->mesh, PATTERNS[i]) == 0)
                mesh = i;
        const char *near = jx_closest(opt->mesh, MESHES);
        if (mesh < 0)
            return tt_error_set(root->err, TT_EINPUT, "--mesh %s: expected fully_connected, hybrid_cube_mesh or "
                                "hybrid_cube_mesh_4%s%s%s", opt->mesh, near ? " (did you mean " : "", near ? near : "",
                                near ? "?)" : "");
    }
    if ((rc = jx_child(root, "node", 1, &node)) || (rc = jx_check_keys(&node, keys)) ||
        (rc = jx_array(&node, "components", 1, &nc)) || (rc = jx_array(&node, "links", 0, &nl)))
        return rc;
    for (size_t i = 0; i < nc; i++) {
        jx_obj c;
        const char *name, *devname;
        long count = 1;
        int crossbar = 0;
        if ((rc = jx_elem(&node, "components", i, &c)) || (rc = jx_check_keys(&c, ckeys)) ||
            (rc = jx_string(&c, "name", 1, &name)) || (rc = jx_string(&c, "device", 1, &devname)) ||
            (rc = jx_int(&c, "count", 0, 1, 128, &count)) || (rc = jx_bool(&c, "crossbar", 0, &crossbar)) ||
            (rc = component_count(opt, name, &count, c.err)))
            return rc;
        const device_info *dev = device_table_find(&p->devices, devname);
        if (!dev)
            return unknown_device(&c, p, devname);
        if (crossbar) {
            /* NCCL spreads a GPU's traffic over all its NVLinks, one channel per
             * link: parallel switch planes act as one crossbar of their sum. */
            if (dev->kind != DEVICE_SWITCH)
                return tt_error_set(c.err, TT_EINPUT, "%s: %s.crossbar: \"%s\" is not a switch; only switch planes "
                                    "merge into a crossbar (remove \"crossbar\")", c.file, c.path, devname);
            if ((rc = plat_add_comp(p, name, dev, c.err)))
                return tt_error_prefix(c.err, "%s: %s: ", c.file, c.path);
            p->comp[p->ncomp - 1].planes = (int)count;
            continue;
        }
        if (dev->kind == DEVICE_ACCELERATOR && opt && opt->accelerator) {
            dev = device_table_find(&p->devices, opt->accelerator);
            if (dev && dev->kind == DEVICE_CPU)
                return tt_error_set(c.err, TT_EINPUT, "--accelerator %s: a CPU, not an accelerator; to train on the "
                                    "node's CPU sockets set the scenario's platform.ranks to \"cpu\"", opt->accelerator);
            if (!dev || dev->kind != DEVICE_ACCELERATOR)
                return tt_error_set(c.err, TT_EINPUT, "--accelerator %s: not an accelerator in platforms/devices.json",
                                    opt->accelerator);
        }
        for (long k = 0; k < count; k++) {
            char full[64];
            snprintf(full, sizeof full, "%s%ld", name, k);
            if ((rc = plat_add_comp(p, full, dev, c.err)))
                return tt_error_prefix(c.err, "%s: %s: ", c.file, c.path);
        }
    }
    if (opt && opt->components && (rc = components_known(opt, &node, nc)))
        return rc;
    int had_mesh = 0;
    for (size_t i = 0; i < nl; i++) {
        jx_obj l;
        if ((rc = jx_elem(&node, "links", i, &l)) || (rc = load_link(p, &l, mesh, &had_mesh)))
            return rc;
    }
    if (mesh >= 0 && !had_mesh)
        return tt_error_set(root->err, TT_EINPUT, "%s: --mesh: this platform has no accelerator mesh to replace", root->file);
    return TT_OK;
}

/* A pod's published slice shapes ("slices": [[4, 4], [4, 8]]) and the rule
 * for the others ("slice_unit": 4: sides of at most 4 or multiples of 4). */
static int load_slices(platform *p, const jx_obj *f)
{
    size_t ns = 0;
    long unit = 1;
    int rc;
    if ((rc = jx_int(f, "slice_unit", 0, 1, 64, &unit)) || (rc = jx_array(f, "slices", 0, &ns)))
        return rc;
    p->slice_unit = (int)unit;
    if (ns > sizeof p->slices / sizeof p->slices[0])
        return tt_error_set(f->err, TT_EINPUT, "%s: %s.slices: at most %zu shapes, found %zu", f->file, f->path,
                            sizeof p->slices / sizeof p->slices[0], ns);
    for (size_t k = 0; k < ns; k++) {
        json_t *shape = json_array_get(json_object_get(f->obj, "slices"), k);
        if (!json_is_array(shape) || (int)json_array_size(shape) != p->ndims)
            return tt_error_set(f->err, TT_EINPUT, "%s: %s.slices[%zu]: expected an array of %d sizes (a slice's "
                                "grid, fastest-varying first)", f->file, f->path, k, p->ndims);
        for (int d = 0; d < p->ndims; d++) {
            json_t *v = json_array_get(shape, (size_t)d);
            if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > p->dims[d])
                return tt_error_set(f->err, TT_EINPUT, "%s: %s.slices[%zu][%d]: expected a whole number from 1 to the "
                                    "pod's %d", f->file, f->path, k, d, p->dims[d]);
            p->slices[k][d] = (int)json_integer_value(v);
        }
    }
    p->nslices = (int)ns;
    return TT_OK;
}

static int load_assumptions(platform *p, const jx_obj *o, const char *key);

static int load_fabric(platform *p, const jx_obj *root, const platform_options *opt, const char **attach)
{
    static const char *keys[] = {"topology", "nodes", "attach", "link", "class", "nodes_per_leaf",
                                 "levels", "oversubscription", "dims", "slices", "slice_unit",
                                 "in_network_reduction", "dcn", NULL};
    static const char *lkeys[] = {"bandwidth_Bps", "latency_s", "payload_efficiency", NULL};
    static const char *dkeys[] = {"bandwidth_Bps", "latency_s", "payload_efficiency", "assumptions", NULL};
    static const char *const REDUCTIONS[] = {"none", "sharp", NULL};
    jx_obj f, l;
    int topo = 0, rc;
    long nodes = 1, per_leaf = 16, levels = 2, over = 1;
    const char *cls = "fabric";
    size_t nd = 0;
    if ((rc = jx_child(root, "fabric", 0, &f)))
        return rc;
    if (!f.obj) {
        p->fabric = FABRIC_NONE;
        if (opt && opt->nodes > 1)
            return tt_error_set(root->err, TT_EINPUT, "%s: --nodes %d: this platform is one node (no \"fabric\")", root->file, opt->nodes);
        return TT_OK;
    }
    if ((rc = jx_check_keys(&f, keys)) || (rc = jx_enum(&f, "topology", 1, TOPOLOGIES, &topo)) ||
        (rc = jx_int(&f, "nodes", 1, 1, PLATFORM_MAX_NODES, &nodes)) || (rc = jx_string(&f, "attach", topo != 0 && topo < 4, attach)) ||
        (rc = jx_string(&f, "class", 0, &cls)) || (rc = jx_int(&f, "nodes_per_leaf", 0, 1, 4096, &per_leaf)) ||
        (rc = jx_int(&f, "levels", 0, 2, PLAT_MAX_LEVELS, &levels)) ||
        (rc = jx_int(&f, "oversubscription", 0, 1, 64, &over)) || (rc = jx_array(&f, "dims", topo >= 4, &nd)) ||
        (rc = jx_enum(&f, "in_network_reduction", 0, REDUCTIONS, &p->sharp)))
        return rc;
    if (topo != 0 && ((rc = jx_child(&f, "link", 1, &l)) || (rc = jx_check_keys(&l, lkeys)) ||
                      (rc = jx_rate(&l, "bandwidth_Bps", 1, 1e3, 1e15, &p->fab_bw_Bps)) ||
                      (rc = jx_seconds(&l, "latency_s", 1, 0, 1, &p->fab_lat_s)) ||
                      (rc = jx_number(&l, "payload_efficiency", 0, 0.05, 1, &p->fab_eff))))
        return rc;
    static const fabric_kind KINDS[] = {FABRIC_NONE, FABRIC_SWITCH, FABRIC_FATTREE, FABRIC_RAIL,
                                        FABRIC_TORUS, FABRIC_TORUS, FABRIC_TORUS};
    p->fabric = KINDS[topo];
    p->nodes = opt && opt->nodes > 0 ? opt->nodes : (int)nodes;
    if (p->fabric == FABRIC_NONE && p->nodes != 1)
        return tt_error_set(f.err, TT_EINPUT, "%s: %s: --nodes %d needs a fabric topology other than \"none\"", f.file, f.path, p->nodes);
    if (opt && opt->link_bw_Bps > 0) {
        p->fab_bw_Bps = opt->link_bw_Bps;
        p->fab_bw_forced = 1;
    }
    if (opt && opt->link_latency_s > 0)
        p->fab_lat_s = opt->link_latency_s;
    snprintf(p->fab_cls, sizeof p->fab_cls, "%s", cls);
    p->down[0] = (int)per_leaf;
    p->levels = (int)levels;
    p->oversubscription = (int)over;
    if (topo >= 4) {
        p->ndims = topo - 3;
        if ((int)nd != p->ndims)
            return tt_error_set(f.err, TT_EINPUT, "%s: %s.dims: a %s needs %d sizes, found %zu", f.file, f.path,
                                TOPOLOGIES[topo], p->ndims, nd);
        for (size_t d = 0; d < nd; d++) {
            double x;
            if ((rc = jx_elem_bytes(&f, "dims", d, 1, 4096, &x)))
                return rc;
            p->dims[d] = (int)x;
        }
        /* The dims describe the file's own node count; --nodes N takes a slice, reshaped. */
        long chips = 0, total = 1;
        for (int c = 0; c < p->ncomp; c++)
            chips += p->comp[c].dev->kind == DEVICE_ACCELERATOR;
        for (int d = 0; d < p->ndims; d++)
            total *= p->dims[d];
        if (p->nodes == (int)nodes && total != nodes * chips)
            return tt_error_set(f.err, TT_EINPUT,
                                "%s: %s.dims: the torus holds %ld chips, but %ld nodes of %ld "
                                "accelerators are %ld; make the dims multiply to %ld or change "
                                "\"nodes\"",
                                f.file, f.path, total, nodes, chips, nodes * chips, nodes * chips);
        /* The file's grid is the whole machine: more chips are refused. */
        p->pod_chips = p->dims[0] * (p->ndims > 1 ? p->dims[1] : 1) * (p->ndims > 2 ? p->dims[2] : 1);
        if ((rc = load_slices(p, &f)))
            return rc;
        /* Pods joined by the data-centre network: each node's NIC (a TPU host's). */
        jx_obj dcn;
        if ((rc = jx_child(&f, "dcn", 0, &dcn)))
            return rc;
        p->dcn_eff = p->fab_eff;
        if (dcn.obj && ((rc = jx_check_keys(&dcn, dkeys)) ||
                        (rc = jx_rate(&dcn, "bandwidth_Bps", 1, 1e3, 1e15, &p->dcn_Bps)) ||
                        (rc = jx_seconds(&dcn, "latency_s", 1, 0, 1, &p->dcn_lat_s)) ||
                        (rc = jx_number(&dcn, "payload_efficiency", 0, 0.05, 1, &p->dcn_eff))))
            return rc;
        if (dcn.obj) { /* its assumptions apply to multi-pod slices only: set aside */
            json_t *mine = p->assumptions;
            p->assumptions = json_array();
            rc = load_assumptions(p, &dcn, "assumptions");
            p->dcn_assumptions = p->assumptions;
            p->assumptions = mine;
            if (rc)
                return rc;
        }
    } else if (json_object_get(f.obj, "dcn")) {
        return tt_error_set(f.err, TT_EINPUT, "%s: %s.dcn: a data-centre network joins the pods of a torus "
                            "(\"topology\": \"torus2d\" or \"torus3d\"); other fabrics have none", f.file, f.path);
    }
    return opt ? plat_apply_shape(p, opt->shape, f.file, f.err) : TT_OK;
}

/* An assumption's chosen value as text: a string, or a number. */
static int value_text(const json_t *v, char *text, size_t n)
{
    if (json_is_string(v))
        snprintf(text, n, "%s", json_string_value(v));
    else if (json_is_number(v))
        snprintf(text, n, "%.6g", json_number_value(v));
    else
        return -1;
    return 0;
}

static int load_assumptions(platform *p, const jx_obj *o, const char *key)
{
    static const char *akeys[] = {"name", "value", "why", NULL};
    size_t na = 0;
    int rc;
    if ((rc = jx_array(o, key, 0, &na)))
        return rc;
    for (size_t i = 0; i < na; i++) {
        jx_obj a;
        const char *name, *why;
        char text[160];
        if ((rc = jx_elem(o, key, i, &a)) || (rc = jx_check_keys(&a, akeys)) ||
            (rc = jx_string(&a, "name", 1, &name)) || (rc = jx_string(&a, "why", 1, &why)))
            return rc;
        if (value_text(json_object_get(a.obj, "value"), text, sizeof text))
            return tt_error_set(a.err, TT_EINPUT, "%s: %s.value: expected the chosen value (a number or a string)", a.file, a.path);
        plat_assume(p, name, text, why);
    }
    return TT_OK;
}

/* storage: {write_Bps, read_Bps, why}, optional: the parallel file system's
 * aggregate bandwidth a job's checkpoints see. */
static int load_storage(platform *p, const jx_obj *r)
{
    static const char *const keys[] = {"write_Bps", "read_Bps", "why", NULL};
    jx_obj s;
    const char *why = NULL;
    int rc;
    if ((rc = jx_child(r, "storage", 0, &s)) || !s.obj)
        return rc;
    if ((rc = jx_check_keys(&s, keys)) || (rc = jx_rate(&s, "write_Bps", 1, 1e3, 1e16, &p->storage_write_Bps)) ||
        (rc = jx_rate(&s, "read_Bps", 1, 1e3, 1e16, &p->storage_read_Bps)) || (rc = jx_string(&s, "why", 1, &why)))
        return rc;
    p->storage_why = strdup(why);
    return TT_OK;
}

static int load_meta(platform *p, const jx_obj *r)
{
    size_t ns = 0;
    int rc;
    const char *desc = "";
    if ((rc = jx_string(r, "description", 0, &desc)) || (rc = jx_array(r, "assumptions", 1, &ns)) ||
        (rc = load_assumptions(p, r, "assumptions")) || (rc = jx_array(r, "sources", 1, &ns)) ||
        (rc = load_storage(p, r)))
        return rc;
    p->description = strdup(desc);
    for (size_t i = 0; i < ns; i++) {
        json_t *s = json_array_get(json_object_get(r->obj, "sources"), i);
        if (!json_is_string(s))
            return tt_error_set(r->err, TT_EINPUT, "%s: $.sources[%zu]: expected a string citing a source", r->file, i);
        json_array_append(p->sources, s);
    }
    return TT_OK;
}

/* The assumptions of the devices in use follow the platform's own. */
static void add_device_assumptions(platform *p)
{
    for (int i = 0; i < p->devices.n; i++) {
        int used = 0;
        for (int c = 0; c < p->ncomp; c++)
            used |= p->comp[c].dev == &p->devices.dev[i];
        json_t *as = used ? device_table_assumptions(&p->devices, p->devices.dev[i].name) : NULL;
        size_t k;
        json_t *a;
        json_array_foreach(as, k, a) {
            char text[160];
            const char *name = json_string_value(json_object_get(a, "name"));
            const char *why = json_string_value(json_object_get(a, "why"));
            if (name && why && value_text(json_object_get(a, "value"), text, sizeof text) == 0)
                plat_assume(p, name, text, why);
        }
    }
}

/* A path in a platform file is relative to the file's directory. */
static char *relative_to(const char *file, const char *path)
{
    if (path[0] == '/' || !strchr(file, '/'))
        return strdup(path);
    size_t dir = (size_t)(strrchr(file, '/') - file);
    char *out = malloc(dir + strlen(path) + 2);
    if (out)
        sprintf(out, "%.*s/%s", (int)dir, file, path);
    return out;
}

/* The rank -> host file: one SimGrid host name per line, rank order; blank
 * lines and lines starting with # are skipped. Read whole: a line has no
 * length limit, a name has PLAT_HOST_NAME_MAX bytes (messages and the
 * engine's lookups hold a name in 256). */
int plat_parse_rank_hosts(platform *p, const char *file, const char *text, size_t len, long *ranks, tt_error *err)
{
    long n = 0, lineno = 0;
    for (int r = 0; r < p->n_rank_hosts; r++) /* the file read again replaces what was read */
        free(p->rank_hosts[r]);
    p->n_rank_hosts = 0;
    for (const char *line = text, *end = text + len; line < end; lineno++) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t ll = (size_t)((nl ? nl : end) - line);
        const char *next = nl ? nl + 1 : end;
        while (ll > 0 && line[ll - 1] == '\r')
            ll--;
        if (ll == 0 || line[0] == '#') {
            line = next;
            continue;
        }
        for (size_t k = 0; k < ll; k++)
            if (line[k] == ' ' || line[k] == '\t' || line[k] == '\0' || line[k] == '\r')
                return tt_error_set(err, TT_EINPUT, "%s:%ld: expected one SimGrid host name per line, found \"%.*s\"",
                                    file, lineno + 1, (int)(ll < 80 ? ll : 80), line);
        if (ll > PLAT_HOST_NAME_MAX)
            return tt_error_set(err, TT_EINPUT, "%s:%ld: a host name of %zu bytes; at most %d", file, lineno + 1, ll,
                                PLAT_HOST_NAME_MAX);
        char **grown = realloc(p->rank_hosts, sizeof *grown * (size_t)(n + 1));
        char *name = strndup(line, ll);
        if (!grown || !name) {
            free(name);
            if (grown)
                p->rank_hosts = grown;
            return tt_error_set(err, TT_EINPUT, "%s: out of memory reading the host names; free some memory", file);
        }
        p->rank_hosts = grown;
        p->rank_hosts[n++] = name;
        p->n_rank_hosts = (int)n;
        line = next;
    }
    *ranks = n;
    if (n == 0)
        return tt_error_set(err, TT_EINPUT, "%s: no host names (rank i is the host on the i-th line)", file);
    return TT_OK;
}

static int load_rank_hosts(platform *p, const char *file, long *ranks, tt_error *err)
{
    char *text;
    size_t len;
    int rc = infile_read(file, PLAT_RANK_HOSTS_MAX_BYTES, &text, &len, err);
    if (rc)
        return tt_error_prefix(err, "the rank-to-host file ");
    rc = plat_parse_rank_hosts(p, file, text, len, ranks, err);
    free(text);
    return rc;
}

static int load_user_simgrid(platform *p, const jx_obj *r)
{
    static const char *keys[] = {"xml", "rank_hosts", "accelerator", "ranks_per_node", "path_estimate", NULL};
    static const char *ekeys[] = {"bandwidth_Bps", "latency_s", "hops", NULL};
    jx_obj u, e;
    const char *xml, *hosts, *acc;
    long rpn = 1, hops = 0, ranks = 0;
    int rc;
    if ((rc = jx_child(r, "simgrid", 1, &u)) || (rc = jx_check_keys(&u, keys)) ||
        (rc = jx_string(&u, "xml", 1, &xml)) || (rc = jx_string(&u, "rank_hosts", 1, &hosts)) ||
        (rc = jx_string(&u, "accelerator", 1, &acc)) || (rc = jx_int(&u, "ranks_per_node", 0, 1, 256, &rpn)) ||
        (rc = jx_child(&u, "path_estimate", 1, &e)) || (rc = jx_check_keys(&e, ekeys)) ||
        (rc = jx_rate(&e, "bandwidth_Bps", 1, 1e3, 1e15, &p->user_bw_Bps)) ||
        (rc = jx_seconds(&e, "latency_s", 1, 0, 1, &p->user_lat_s)) || (rc = jx_int(&e, "hops", 1, 1, 1000, &hops)))
        return rc;
    p->user_hops = (int)hops;
    const device_info *dev = device_table_find(&p->devices, acc);
    if (!dev || dev->kind != DEVICE_ACCELERATOR)
        return tt_error_set(u.err, TT_EINPUT, "%s: %s.accelerator: \"%s\" is not an accelerator of platforms/devices.json or the file's \"devices\"",
                            u.file, u.path, acc);
    char *hosts_path = relative_to(u.file, hosts);
    p->user_xml = relative_to(u.file, xml);
    if (!hosts_path || !p->user_xml) {
        free(hosts_path);
        return tt_error_set(u.err, TT_EINTERNAL, "out of memory");
    }
    rc = load_rank_hosts(p, hosts_path, &ranks, u.err);
    if (rc == TT_OK && ranks > PLATFORM_MAX_NODES * 8L)
        rc = tt_error_set(u.err, TT_EINPUT, "%s: %ld ranks; at most %ld", hosts_path, ranks, PLATFORM_MAX_NODES * 8L);
    if (rc == TT_OK)
        rc = plat_user_xml_load(p, p->user_xml, u.err);
    if (rc == TT_OK && ranks % rpn != 0)
        rc = tt_error_set(u.err, TT_EINPUT, "%s: %ld ranks are not a whole number of nodes of %ld (%s.ranks_per_node)",
                          hosts_path, ranks, rpn, u.path);
    free(hosts_path);
    if (rc)
        return rc;
    p->nodes = (int)(ranks / rpn);
    p->acc = calloc((size_t)rpn, sizeof *p->acc);
    if (!p->acc)
        return tt_error_set(u.err, TT_EINTERNAL, "out of memory");
    for (long i = 0; i < rpn; i++) {
        char name[32];
        snprintf(name, sizeof name, "acc%ld", i);
        if ((rc = plat_add_comp(p, name, dev, u.err)))
            return rc;
        p->acc[p->nacc++] = p->ncomp - 1;
    }
    return TT_OK;
}

platform *plat_load_json(const char *path, const platform_options *opt, tt_error *err)
{
    static const char *keys[] = {"format", "version", "name", "description", "sources", "assumptions",
                                 "devices", "node", "fabric", "simgrid", "storage", NULL};
    json_t *root = NULL;
    if (jx_load_file(path, &root, err))
        return NULL;
    jx_obj r;
    long version = 0;
    const char *name = NULL, *attach = NULL;
    platform *p = NULL;
    int rc;
    static const char *const FORMATS[] = {"ttasim-platform", NULL};
    int format = 0;
    if ((rc = jx_root(&r, path, root, err)) || (rc = jx_check_keys(&r, keys)) ||
        (rc = jx_enum(&r, "format", 0, FORMATS, &format)) ||
        (rc = jx_int(&r, "version", 1, PLATFORM_VERSION, PLATFORM_VERSION, &version)) ||
        (rc = jx_string(&r, "name", 1, &name)))
        goto done;
    if (!(p = plat_alloc(name, err)))
        goto done;
    if ((rc = device_table_load_library(&p->devices, err)))
        goto done;
    json_t *devs = json_object_get(root, "devices");
    if (devs && (rc = device_table_add_json(&p->devices, path, devs, "$.devices", err)))
        goto done;
    if (opt && opt->devices &&
        (rc = device_table_add_json(&p->devices, opt->overlay_file, (json_t *)opt->devices, "$.devices", err)))
        goto done;
    if (opt && opt->fabric) {
        if (!json_is_object(json_object_get(root, "fabric"))) {
            rc = tt_error_set(err, TT_EINPUT, "%s: $.platform.fabric: the platform %s has no fabric to change; "
                              "remove \"fabric\"", opt->overlay_file, name);
            goto done;
        }
        jx_merge(json_object_get(root, "fabric"), (json_t *)opt->fabric);
    }
    if ((rc = load_meta(p, &r)))
        goto done;
    p->rank_kind = opt ? opt->rank_kind : DEVICE_ACCELERATOR;
    if (jx_has(&r, "simgrid")) {
        if (jx_has(&r, "node") || jx_has(&r, "fabric")) {
            rc = tt_error_set(err, TT_EINPUT, "%s: \"simgrid\" (your own platform XML) replaces \"node\" and \"fabric\": keep one", path);
            goto done;
        }
        if (opt && (opt->nodes || opt->link_bw_Bps > 0 || opt->accelerator || opt->mesh || opt->components ||
                    opt->rank_kind == DEVICE_CPU)) {
            rc = tt_error_set(err, TT_EINPUT, "%s: a SimGrid XML platform takes no --nodes, --link-bw, --accelerator, "
                              "--mesh, components or ranks \"cpu\" (its rank_hosts file names the ranks)", path);
            goto done;
        }
        if ((rc = load_user_simgrid(p, &r)))
            goto done;
    } else if ((rc = load_node(p, &r, opt)) || (rc = load_fabric(p, &r, opt, &attach)) ||
               (rc = plat_finish(p, attach, path, err))) {
        goto done;
    }
    add_device_assumptions(p);
done:
    json_decref(root);
    if (rc && p) {
        platform_free(p);
        p = NULL;
    }
    return p;
}
