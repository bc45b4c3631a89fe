#include "platforms/device.h"

#include <stdlib.h>
#include <string.h>

#include "common/datapath.h"
#include "common/jsonx.h"

const char *const COLL_LIB_NAMES[] = {"none", "nccl", "rccl", NULL};
const char *const DEVICE_KIND_NAMES[] = {"accelerator", "cpu", "nic", "switch", NULL};

/* One dtype's table: {"default": x, "conv": y, ...}; "default" fills the rest. */
static int load_eff_table(const jx_obj *eff, const char *dtype, double *table)
{
    const char *keys[OPCLASS_COUNT + 2] = {"default"};
    memcpy(keys + 1, OPCLASS_NAMES, sizeof *keys * (OPCLASS_COUNT + 1));
    jx_obj t;
    int rc;
    double dflt = 0;
    if ((rc = jx_child(eff, dtype, 1, &t)) || (rc = jx_check_keys(&t, keys)) ||
        (rc = jx_number(&t, "default", 1, 1e-4, 1, &dflt)))
        return rc;
    for (int c = 0; c < OPCLASS_COUNT; c++) {
        table[c] = dflt;
        if ((rc = jx_number(&t, OPCLASS_NAMES[c], 0, 1e-4, 1, &table[c])))
            return rc;
    }
    return TT_OK;
}

static int load_efficiency(const jx_obj *d, device_info *dev)
{
    jx_obj eff;
    int rc;
    if ((rc = jx_child(d, "efficiency", dev->kind == DEVICE_ACCELERATOR, &eff)))
        return rc;
    if (!eff.obj)
        return TT_OK;
    if ((rc = jx_check_keys(&eff, DTYPE_NAMES)) || (rc = load_eff_table(&eff, "fp32", dev->efficiency[DTYPE_FP32])))
        return rc;
    /* Half precision runs other kernels (tensor cores): its own table when
     * known, else fp32's (fp8's: bf16's, the precision of its other ops). */
    for (int dt = DTYPE_FP16; dt < DTYPE_COUNT; dt++) {
        if (jx_has(&eff, DTYPE_NAMES[dt])) {
            jx_obj t;
            if ((rc = load_eff_table(&eff, DTYPE_NAMES[dt], dev->efficiency[dt])) ||
                (rc = jx_child(&eff, DTYPE_NAMES[dt], 1, &t)))
                return rc;
            if (dt == DTYPE_FP8)
                dev->fp8_attention = jx_has(&t, "attention");
        } else {
            int from = dt == DTYPE_FP8 ? DTYPE_BF16 : DTYPE_FP32;
            memcpy(dev->efficiency[dt], dev->efficiency[from], sizeof dev->efficiency[dt]);
        }
    }
    return TT_OK;
}

/* {"fp32": x, "fp16": y, ...}: the per-op model's half-work FLOPs per precision. */
static int load_half_work(const jx_obj *d, device_info *dev)
{
    jx_obj h;
    int rc;
    if ((rc = jx_child(d, "half_work_flops", 0, &h)) || !h.obj)
        return rc;
    if ((rc = jx_check_keys(&h, DTYPE_NAMES)))
        return rc;
    for (int dt = 0; dt < DTYPE_COUNT; dt++)
        if ((rc = jx_number(&h, DTYPE_NAMES[dt], 0, 0, 1e18, &dev->half_work_flops[dt])))
            return rc;
    return TT_OK;
}

/* {"conv": r, ...}: one precision's backward-over-forward efficiency ratios
 * (unset classes keep theirs, 1 unless given). */
static int load_backward_row(const jx_obj *row, double *ratios)
{
    int rc = jx_check_keys(row, OPCLASS_NAMES);
    for (int c = 0; rc == TT_OK && c < OPCLASS_COUNT; c++)
        rc = jx_number(row, OPCLASS_NAMES[c], 0, 0.1, 10, &ratios[c]);
    return rc;
}

/* {"fp16": {"conv": r}, ...}: devices.json's backward efficiency ratios. */
static int load_backward(const jx_obj *d, device_info *dev)
{
    jx_obj b, row;
    int rc;
    if ((rc = jx_child(d, "backward_efficiency", 0, &b)) || !b.obj)
        return rc;
    if ((rc = jx_check_keys(&b, DTYPE_NAMES)))
        return rc;
    for (int dt = 0; dt < DTYPE_COUNT; dt++)
        if ((rc = jx_child(&b, DTYPE_NAMES[dt], 0, &row)) ||
            (row.obj && (rc = load_backward_row(&row, dev->backward_efficiency[dt]))))
            return rc;
    return TT_OK;
}

/* The "purchase" block: a named assumption like every price (its "why"). */
static int load_purchase(const jx_obj *d, device_info *dev)
{
    static const char *keys[] = {"price_usd", "power_w", "switch_port_usd", "switch_port_w", "switch_radix",
                                 "cable_usd", "cable_w", "why", NULL};
    long radix = 0;
    jx_obj b;
    const char *why = "";
    int rc;
    if ((rc = jx_child(d, "purchase", 0, &b)) || !b.obj)
        return rc;
    if ((rc = jx_check_keys(&b, keys)) || (rc = jx_number(&b, "price_usd", 1, 0, 1e9, &dev->price_usd)) ||
        (rc = jx_number(&b, "power_w", dev->kind != DEVICE_ACCELERATOR, 0, 1e6, &dev->power_w)) ||
        (rc = jx_number(&b, "switch_port_usd", 0, 0, 1e7, &dev->switch_port_usd)) ||
        (rc = jx_number(&b, "switch_port_w", 0, 0, 1e5, &dev->switch_port_w)) ||
        (rc = jx_number(&b, "cable_usd", 0, 0, 1e7, &dev->cable_usd)) ||
        (rc = jx_number(&b, "cable_w", 0, 0, 1e5, &dev->cable_w)) || (rc = jx_string(&b, "why", 1, &why)) ||
        (rc = jx_int(&b, "switch_radix", 0, 2, 4096, &radix)))
        return rc;
    dev->switch_radix = (int)radix;
    dev->has_purchase = 1;
    snprintf(dev->purchase_why, sizeof dev->purchase_why, "%s", why);
    return TT_OK;
}

static int load_device(const jx_obj *d, const char *name, device_info *dev)
{
    static const char *keys[] = {"kind", "description", "purchase", "peak_flops", "mem_bytes", "mem_Bps",
                                 "tdp_w", "idle_w", "price_usd_per_h", "cores", "thread_mem_Bps", "tcp_message_s",
                                 "tcp_rx_Bps", "bandwidth_Bps", "efficiency", "backward_efficiency", "mem_efficiency",
                                 "half_work_flops", "gemm_half_depth", "dispatch_s", "fusion", "derivation", "sources", "assumptions",
                                 "compute_capability", "switch_reduction", "vendor", "nccl_socket_Bps",
                                 "p2p_write_Bps", "collective_library", "library_link_Bps", "compute_units", "clock_hz", NULL};
    int rc, kind = 0;
    const char *desc = "", *vendor = "";
    long cores = 0, units = 0;
    jx_obj pk;
    memset(dev, 0, sizeof *dev);
    if (strlen(name) >= sizeof dev->name)
        return tt_error_set(d->err, TT_EINPUT, "%s: %s: device name \"%s\" is longer than %zu characters",
                            d->file, d->path, name, sizeof dev->name - 1);
    snprintf(dev->name, sizeof dev->name, "%s", name);
    dev->mem_efficiency = 1;
    for (int dt = 0; dt < DTYPE_COUNT; dt++)
        for (int c = 0; c < OPCLASS_COUNT; c++)
            dev->backward_efficiency[dt][c] = 1;
    if ((rc = jx_check_keys(d, keys)) || (rc = jx_enum(d, "kind", 1, DEVICE_KIND_NAMES, &kind)) ||
        (rc = jx_string(d, "description", 0, &desc)))
        return rc;
    dev->kind = (device_kind)kind;
    snprintf(dev->description, sizeof dev->description, "%s", desc);
    int computes = dev->kind == DEVICE_ACCELERATOR || dev->kind == DEVICE_CPU;
    if ((rc = jx_child(d, "peak_flops", computes, &pk)))
        return rc;
    if (pk.obj) {
        if ((rc = jx_check_keys(&pk, DTYPE_NAMES)) || (rc = jx_number(&pk, "fp32", 1, 1e6, 1e18, &dev->peak_flops[DTYPE_FP32])) ||
            (rc = jx_number(&pk, "fp16", 0, 0, 1e18, &dev->peak_flops[DTYPE_FP16])) ||
            (rc = jx_number(&pk, "bf16", 0, 0, 1e18, &dev->peak_flops[DTYPE_BF16])) ||
            (rc = jx_number(&pk, "fp8", 0, 0, 1e18, &dev->peak_flops[DTYPE_FP8])))
            return rc;
    }
    if ((rc = jx_bytes(d, "mem_bytes", dev->kind == DEVICE_ACCELERATOR, 0, 1e15, &dev->mem_bytes)) ||
        (rc = jx_rate(d, "mem_Bps", computes, 0, 1e15, &dev->mem_Bps)) ||
        (rc = jx_number(d, "tdp_w", computes, 0, 1e5, &dev->tdp_w)) ||
        (rc = jx_number(d, "idle_w", 0, 0, 1e5, &dev->idle_w)) ||
        (rc = jx_number(d, "price_usd_per_h", 0, 0, 1e4, &dev->price_usd_per_h)) ||
        (rc = jx_int(d, "cores", dev->kind == DEVICE_CPU, 1, 4096, &cores)) ||
        (rc = jx_rate(d, "thread_mem_Bps", 0, 1e6, 1e13, &dev->thread_mem_Bps)) ||
        (rc = jx_seconds(d, "tcp_message_s", 0, 0, 1e-2, &dev->tcp_message_s)) ||
        (rc = jx_rate(d, "tcp_rx_Bps", 0, 0, 1e13, &dev->tcp_rx_Bps)) ||
        (rc = jx_rate(d, "bandwidth_Bps", dev->kind == DEVICE_NIC, 1e3, 1e15, &dev->bandwidth_Bps)) ||
        (rc = jx_number(d, "mem_efficiency", 0, 1e-3, 1, &dev->mem_efficiency)) ||
        (rc = jx_number(d, "compute_capability", 0, 1, 20, &dev->compute_capability)) ||
        (rc = jx_int(d, "compute_units", 0, 1, 1 << 20, &units)) ||
        (rc = jx_number(d, "clock_hz", 0, 1e6, 1e11, &dev->clock_hz)) ||
        (rc = jx_bool(d, "switch_reduction", 0, &dev->switch_reduction)) ||
        (rc = jx_string(d, "vendor", 0, &vendor)) ||
        (rc = jx_rate(d, "nccl_socket_Bps", 0, 1e6, 1e13, &dev->nccl_socket_Bps)) ||
        (rc = jx_rate(d, "p2p_write_Bps", 0, 1e6, 1e13, &dev->p2p_write_Bps)) ||
        (rc = jx_enum(d, "collective_library", 0, COLL_LIB_NAMES, &dev->collective_library)) ||
        (rc = jx_rate(d, "library_link_Bps", 0, 1e6, 1e13, &dev->library_link_Bps)) ||
        (rc = load_efficiency(d, dev)) || (rc = load_backward(d, dev)) || (rc = load_half_work(d, dev)) || (rc = load_purchase(d, dev)) ||
        (rc = jx_seconds(d, "dispatch_s", 0, 0, 1, &dev->dispatch_s)) || (rc = jx_bool(d, "fusion", 0, &dev->fusion)) ||
        (rc = jx_number(d, "gemm_half_depth", 0, 0, 1e6, &dev->gemm_half_depth)))
        return rc;
    dev->cores = (int)cores;
    dev->compute_units = (int)units;
    /* An NVIDIA GPU names its generation, and NCCL is its library. */
    if (dev->collective_library == COLL_LIB_NONE && dev->compute_capability > 0)
        dev->collective_library = COLL_LIB_NCCL;
    if (dev->collective_library == COLL_LIB_NCCL && dev->compute_capability <= 0)
        return tt_error_set(d->err, TT_EINPUT, "%s: %s.collective_library: \"nccl\" needs the GPU's "
                            "compute_capability (NCCL tunes by generation)", d->file, d->path);
    snprintf(dev->vendor, sizeof dev->vendor, "%s", vendor);
    return TT_OK;
}

int device_table_add_json(device_table *t, const char *file, json_t *devices, const char *path,
                          tt_error *err)
{
    if (!json_is_object(devices))
        return tt_error_set(err, TT_EINPUT, "%s: %s: expected an object of devices by name", file, path);
    const char *name;
    json_t *v;
    json_object_foreach(devices, name, v) {
        jx_obj d = {file, v, "", err};
        snprintf(d.path, sizeof d.path, "%s.%s", path, name);
        if (!json_is_object(v))
            return tt_error_set(err, TT_EINPUT, "%s: %s: expected an object describing the device", file, d.path);
        json_t *known = t->json ? json_object_get(t->json, name) : NULL;
        json_t *def = known && !json_object_get(v, "kind") ? json_deep_copy(known) : json_incref(v);
        if (def != v)
            jx_merge(def, v);
        d.obj = def;
        device_info dev;
        int rc = load_device(&d, name, &dev);
        if (rc == TT_OK) {
            if (!t->json)
                t->json = json_object();
            json_object_set(t->json, name, def);
        }
        json_decref(def);
        if (rc)
            return rc;
        if ((rc = device_table_put(t, &dev, err)))
            return rc;
        json_t *as = json_object_get(v, "assumptions");
        if (as) {
            size_t k;
            json_t *a;
            int ok = json_is_array(as);
            json_array_foreach(as, k, a)
                ok &= json_is_string(json_object_get(a, "name")) && json_is_string(json_object_get(a, "why")) &&
                      (json_is_string(json_object_get(a, "value")) || json_is_number(json_object_get(a, "value")));
            if (!ok)
                return tt_error_set(err, TT_EINPUT, "%s: %s.assumptions: expected an array of {\"name\": text, \"value\": "
                                    "number or text, \"why\": text}", file, d.path);
            if (!t->assumptions)
                t->assumptions = json_object();
            json_object_set(t->assumptions, name, as);
        }
    }
    return TT_OK;
}

int device_table_put(device_table *t, const device_info *d, tt_error *err)
{
    device_info *old = (device_info *)device_table_find(t, d->name);
    if (old) {
        *old = *d;
        return TT_OK;
    }
    device_info *grown = realloc(t->dev, sizeof *grown * (size_t)(t->n + 1));
    if (!grown)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    t->dev = grown;
    t->dev[t->n++] = *d;
    return TT_OK;
}

/* One precision of a device's fitted parameters. */
static int apply_precision(const jx_obj *o, int dt, device_info *dev)
{
    static const char *const keys[] = {"half_work_flops", "efficiency", "backward_efficiency", NULL};
    jx_obj p, eff, bwd;
    int rc;
    if ((rc = jx_child(o, DTYPE_NAMES[dt], 0, &p)) || !p.obj)
        return rc;
    if ((rc = jx_check_keys(&p, keys)) ||
        (rc = jx_number(&p, "half_work_flops", 1, 0, 1e18, &dev->half_work_flops[dt])) ||
        (rc = jx_child(&p, "backward_efficiency", 0, &bwd)) ||
        (bwd.obj && (rc = load_backward_row(&bwd, dev->backward_efficiency[dt]))) ||
        (rc = jx_child(&p, "efficiency", 1, &eff)) || (rc = jx_check_keys(&eff, OPCLASS_NAMES)))
        return rc;
    for (int c = 0; c < OPCLASS_COUNT; c++)
        if ((rc = jx_number(&eff, OPCLASS_NAMES[c], 0, 1e-4, 1, &dev->efficiency[dt][c])))
            return rc;
    if (dt == DTYPE_FP8 && jx_has(&eff, "attention"))
        dev->fp8_attention = 1;
    return TT_OK;
}

/* The fitted parameters in devices.json's own form, merged into the stored
 * definition: a scenario's partial definition of the device keeps them. A
 * precision without its own efficiency table gets fp32's default. */
static void remember_fitted(device_table *t, const char *name, const device_info *dev, json_t *fitted)
{
    json_t *def = t->json ? json_object_get(t->json, name) : NULL;
    if (!def)
        return;
    json_t *base_eff = json_object_get(def, "efficiency");
    json_t *half = json_object(), *eff = json_object(), *bwd = json_object();
    for (int dt = 0; dt < DTYPE_COUNT; dt++) {
        json_t *p = json_object_get(fitted, DTYPE_NAMES[dt]);
        if (!p)
            continue;
        json_object_set_new(half, DTYPE_NAMES[dt], json_real(dev->half_work_flops[dt]));
        if (json_object_get(p, "backward_efficiency"))
            json_object_set(bwd, DTYPE_NAMES[dt], json_object_get(p, "backward_efficiency"));
        json_t *e = json_deep_copy(json_object_get(p, "efficiency"));
        if (!json_object_get(base_eff, DTYPE_NAMES[dt]))
            json_object_set(e, "default", json_object_get(json_object_get(base_eff, "fp32"), "default"));
        json_object_set_new(eff, DTYPE_NAMES[dt], e);
    }
    json_t *patch = json_pack("{s:f, s:b, s:o, s:o, s:o}", "dispatch_s", dev->dispatch_s, "fusion", dev->fusion,
                              "half_work_flops", half, "efficiency", eff, "backward_efficiency", bwd);
    if (dev->gemm_half_depth > 0)
        json_object_set_new(patch, "gemm_half_depth", json_real(dev->gemm_half_depth));
    jx_merge(def, patch);
    json_decref(patch);
}

int device_table_apply_calibrated(device_table *t, const char *file, json_t *doc, tt_error *err)
{
    static const char *const keys[] = {"format", "version", "devices", "residuals", NULL};
    static const char *const dkeys[] = {"dispatch_s", "gemm_half_depth", "fusion", "fp32", "fp16", "bf16", "fp8", NULL};
    static const char *const FORMATS[] = {"ttasim-calibrated", NULL};
    jx_obj r, devs;
    int rc, format = 0;
    long version = 0;
    if ((rc = jx_root(&r, file, doc, err)) || (rc = jx_check_keys(&r, keys)) ||
        (rc = jx_enum(&r, "format", 1, FORMATS, &format)) || (rc = jx_int(&r, "version", 1, 1, 1, &version)) ||
        (rc = jx_child(&r, "devices", 1, &devs)))
        return rc;
    const char *name;
    json_t *v;
    json_object_foreach(devs.obj, name, v) {
        jx_obj d = {file, v, "", err};
        snprintf(d.path, sizeof d.path, "$.devices.%s", name);
        device_info *dev = (device_info *)device_table_find(t, name);
        if (!dev)
            return tt_error_set(err, TT_EINPUT, "%s: %s: no device \"%s\" in the device library; calibrate "
                                "devices of platforms/devices.json", file, d.path, name);
        if (!json_is_object(v))
            return tt_error_set(err, TT_EINPUT, "%s: %s: expected an object of fitted parameters", file, d.path);
        if ((rc = jx_check_keys(&d, dkeys)) || (rc = jx_seconds(&d, "dispatch_s", 1, 0, 1, &dev->dispatch_s)) ||
            (rc = jx_bool(&d, "fusion", 1, &dev->fusion)) ||
            (rc = jx_number(&d, "gemm_half_depth", 0, 0, 1e6, &dev->gemm_half_depth)))
            return rc;
        for (int dt = 0; dt < DTYPE_COUNT; dt++)
            if ((rc = apply_precision(&d, dt, dev)))
                return rc;
        remember_fitted(t, name, dev, v);
    }
    return TT_OK;
}

int device_table_load_library(device_table *t, tt_error *err)
{
    int rc = device_table_load_uncalibrated(t, err);
    char path[4096];
    if (rc || datapath_find("platforms/calibration/calibrated.json", path, sizeof path) != 0)
        return rc; /* no fitted parameters: devices.json's own */
    json_t *doc;
    if ((rc = jx_load_file(path, &doc, err)))
        return rc;
    rc = device_table_apply_calibrated(t, path, doc, err);
    json_decref(doc);
    return rc;
}

int device_table_load_uncalibrated(device_table *t, tt_error *err)
{
    char path[4096];
    if (datapath_find("platforms/devices.json", path, sizeof path) != 0)
        return tt_error_set(err, TT_EINPUT, "%s: the device library is missing (set TTASIM_DATA_DIR to the "
                                            "directory holding platforms/)", path);
    json_t *root;
    int rc = jx_load_file(path, &root, err);
    if (rc)
        return rc;
    jx_obj r;
    static const char *keys[] = {"format", "version", "devices", NULL};
    long version = 0;
    jx_obj devs;
    static const char *const FORMATS[] = {"ttasim-devices", NULL};
    int format = 0;
    if (!(rc = jx_root(&r, path, root, err)) && !(rc = jx_check_keys(&r, keys)) &&
        !(rc = jx_enum(&r, "format", 0, FORMATS, &format)) &&
        !(rc = jx_int(&r, "version", 1, 1, 1, &version)) && !(rc = jx_child(&r, "devices", 1, &devs)))
        rc = device_table_add_json(t, path, devs.obj, "$.devices", err);
    json_decref(root);
    return rc;
}

const device_info *device_table_find(const device_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->dev[i].name, name) == 0)
            return &t->dev[i];
    return NULL;
}

json_t *device_table_assumptions(const device_table *t, const char *name)
{
    return t->assumptions ? json_object_get(t->assumptions, name) : NULL;
}

void device_table_free(device_table *t)
{
    json_decref(t->assumptions);
    t->assumptions = NULL;
    json_decref(t->json);
    t->json = NULL;
    free(t->dev);
    t->dev = NULL;
    t->n = 0;
}

double device_efficiency(const device_info *d, tt_dtype dt, op_class c)
{
    return d->efficiency[dt][c];
}

tt_dtype device_math_dtype(const device_info *d, tt_dtype dt)
{
    if (dt == DTYPE_BF16 && d->peak_flops[DTYPE_FP16] > 0 && d->peak_flops[DTYPE_BF16] == d->peak_flops[DTYPE_FP16])
        return DTYPE_FP16;
    return d->peak_flops[dt] >= d->peak_flops[DTYPE_FP32] ? dt : DTYPE_FP32;
}

double device_half_work(const device_info *d, tt_dtype dt)
{
    if (dt != DTYPE_FP8 || d->half_work_flops[dt] > 0)
        return d->half_work_flops[dt];
    tt_dtype m = device_math_dtype(d, DTYPE_BF16);
    return d->peak_flops[m] > 0 ? d->half_work_flops[m] * d->peak_flops[dt] / d->peak_flops[m] : 0;
}

tt_dtype device_class_peak_dtype(const device_info *d, tt_dtype precision, op_class c)
{
    if (precision == DTYPE_FP8)
        return c == OPCLASS_GEMM ? DTYPE_FP8 : device_math_dtype(d, DTYPE_BF16);
    return device_math_dtype(d, precision);
}

tt_dtype device_class_dtype(const device_info *d, tt_dtype precision, op_class c)
{
    if (precision == DTYPE_FP8 && c == OPCLASS_ATTENTION && d->fp8_attention)
        return DTYPE_FP8;
    return device_class_peak_dtype(d, precision, c);
}
