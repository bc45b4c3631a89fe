#include "sim/replay/calibration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "sim/replay/device_model.h"
#include "sim/replay/scenario.h"
#include "sim/replay/step.h"
#include "sim/replay/workload.h"

/* No kernel issues faster than a CUDA launch, a few microseconds (U: NVIDIA
 * quotes 3-5 us of launch latency); the fit searches from there up. */
#define DISPATCH_FLOOR_S 4e-6

/* A measured pass: a training step, a forward pass (inference), or the
 * backward alone (what a paper times as "backprop"). */
static const char *const PASSES[] = {"train", "forward", "backward", NULL};
enum { PASS_TRAIN, PASS_FORWARD, PASS_BACKWARD };

typedef struct cal_point {
    char *trace_name; /* as written in the set */
    workload tr;
    int dtype; /* tt_dtype */
    int batch, pass;
    /* Training steps run by a node of GPUs (a per-GPU figure): the batch in
     * micro-batches of micro_batch, one optimizer step, sharded over
     * optimizer_shards GPUs (FSDP, the distributed optimizer; 1: not). */
    int micro_batch, optimizer_shards;
    int fused_attention; /* FlashAttention-style kernels (step.h) */
    double measured; /* samples per second, per GPU */
    /* Another device's figure from the same harness (NULL: none): the fit
     * matches the ratio, so a harness the model does not describe (another
     * framework or data layout) cancels out. */
    char *versus_device;
    double versus_measured;
    /* The measured software's fusion where it differs from its group's (-1:
     * the group's): an older framework of the same silicon runs unfused. */
    int fusion;
} cal_point;

typedef struct cal_group {
    char **devices; /* devices[0] is the one measured; the others share its silicon */
    size_t n_devices;
    int fusion;
    /* An earlier group's first device whose fit gives what this group's
     * points do not determine (NULL: all fitted here): for a silicon
     * measured at one batch only. Its half-work FLOPs are scaled by
     * fill_ratio, the ratio of the waves of tiles that fill the devices. */
    char *inherits;
    double fill_ratio;
    /* Bits of the op classes its points fit (0: every class they carry);
     * the others come from inherits' fit, for points too few to tell them. */
    unsigned fit_classes;
    cal_point *points;
    size_t n_points;
} cal_group;

struct calibration {
    char *path;
    cal_group *groups;
    size_t n_groups;
};

/* ---- loading ---- */

static int out_of_memory(const jx_obj *o)
{
    return tt_error_set(o->err, TT_EINTERNAL, "%s: %s: out of memory", o->file, o->path);
}

static int load_point(const jx_obj *g, size_t i, cal_point *pt)
{
    static const char *const keys[] = {"trace",  "precision", "batch",        "pass",          "samples_per_s",
                                       "versus", "source",    "note",         "fusion",        "micro_batch",
                                       "optimizer_shards",    "fused_attention", NULL};
    static const char *const versus_keys[] = {"device", "samples_per_s", NULL};
    jx_obj p, v;
    const char *name = NULL, *source = NULL;
    long batch = 0, micro = 0, shards = 1;
    char *path = NULL;
    int rc;
    if ((rc = jx_elem(g, "points", i, &p)) || (rc = jx_check_keys(&p, keys)) ||
        (rc = jx_string(&p, "trace", 1, &name)) || (rc = jx_enum(&p, "precision", 1, DTYPE_NAMES, &pt->dtype)) ||
        (rc = jx_int(&p, "batch", 1, 1, 1 << 20, &batch)) || (rc = jx_enum(&p, "pass", 1, PASSES, &pt->pass)) ||
        (rc = jx_number(&p, "samples_per_s", 1, 1e-6, 1e12, &pt->measured)) ||
        (rc = jx_string(&p, "source", 1, &source)))
        return rc;
    if (jx_has(&p, "versus")) {
        const char *dev = NULL;
        if ((rc = jx_child(&p, "versus", 1, &v)) || (rc = jx_check_keys(&v, versus_keys)) ||
            (rc = jx_string(&v, "device", 1, &dev)) ||
            (rc = jx_number(&v, "samples_per_s", 1, 1e-6, 1e12, &pt->versus_measured)))
            return rc;
        if (!(pt->versus_device = strdup(dev)))
            return out_of_memory(&p);
    }
    pt->fusion = -1;
    if ((jx_has(&p, "fusion") && (rc = jx_bool(&p, "fusion", 1, &pt->fusion))) ||
        (rc = jx_int(&p, "micro_batch", 0, 1, batch, &micro)) ||
        (rc = jx_int(&p, "optimizer_shards", 0, 1, 1 << 16, &shards)) ||
        (rc = jx_bool(&p, "fused_attention", 0, &pt->fused_attention)))
        return rc;
    if (micro && (batch % micro || pt->pass != PASS_TRAIN))
        return tt_error_set(p.err, TT_EINPUT, "%s: %s.micro_batch: %ld must divide the batch (%ld) of a \"train\" "
                            "point; give the micro-batches the figure's step ran", p.file, p.path, micro, batch);
    pt->batch = (int)batch;
    pt->micro_batch = micro ? (int)micro : (int)batch;
    pt->optimizer_shards = (int)shards;
    if (!(pt->trace_name = strdup(name)))
        return out_of_memory(&p);
    if ((rc = scenario_resolve_path(&p, "trace", name, &path)))
        return rc;
    rc = workload_load(path, &pt->tr, p.err);
    free(path);
    return rc;
}

static int load_group(const jx_obj *r, size_t i, cal_group *g)
{
    static const char *const keys[] = {"devices", "why", "fusion", "inherits", "points", NULL};
    static const char *const inherits_keys[] = {"device", "fill_ratio", "fits", "why", NULL};
    jx_obj o, in;
    int rc;
    size_t n;
    if ((rc = jx_elem(r, "groups", i, &o)) || (rc = jx_check_keys(&o, keys)) ||
        (rc = jx_bool(&o, "fusion", 1, &g->fusion)) || (rc = jx_child(&o, "inherits", 0, &in)))
        return rc;
    if (in.obj) {
        const char *from = NULL;
        if ((rc = jx_check_keys(&in, inherits_keys)) || (rc = jx_string(&in, "device", 1, &from)) ||
            (rc = jx_number(&in, "fill_ratio", 1, 0.01, 100, &g->fill_ratio)))
            return rc;
        if (!(g->inherits = strdup(from)))
            return out_of_memory(&in);
        if ((rc = jx_array(&in, "fits", 0, &n)))
            return rc;
        for (size_t k = 0; k < n; k++) {
            json_t *e = json_array_get(json_object_get(in.obj, "fits"), k);
            int c = -1;
            for (int j = 0; j < OPCLASS_COUNT && json_is_string(e); j++)
                c = strcmp(json_string_value(e), OPCLASS_NAMES[j]) == 0 ? j : c;
            if (c != OPCLASS_CONV && c != OPCLASS_GEMM && c != OPCLASS_ATTENTION)
                return tt_error_set(in.err, TT_EINPUT, "%s: %s.fits[%zu]: expected \"conv\", \"gemm\" or "
                                    "\"attention\" (the classes a fit searches)", in.file, in.path, k);
            g->fit_classes |= 1u << c;
        }
    }
    if ((rc = jx_array(&o, "devices", 1, &n)))
        return rc;
    json_t *devs = json_object_get(o.obj, "devices");
    if (n == 0)
        return tt_error_set(o.err, TT_EINPUT, "%s: %s.devices: expected at least one device name", o.file, o.path);
    if (!(g->devices = calloc(n, sizeof *g->devices)))
        return out_of_memory(&o);
    for (size_t k = 0; k < n; k++) {
        json_t *d = json_array_get(devs, k);
        if (!json_is_string(d))
            return tt_error_set(o.err, TT_EINPUT, "%s: %s.devices[%zu]: expected a device name (a key of "
                                "platforms/devices.json)", o.file, o.path, k);
        if (!(g->devices[g->n_devices] = strdup(json_string_value(d))))
            return out_of_memory(&o);
        g->n_devices++;
    }
    if ((rc = jx_array(&o, "points", 1, &n)))
        return rc;
    if (n == 0)
        return tt_error_set(o.err, TT_EINPUT, "%s: %s.points: expected at least one measured point", o.file, o.path);
    if (!(g->points = calloc(n, sizeof *g->points)))
        return out_of_memory(&o);
    g->n_points = n; /* zeroed until loaded: calibration_free frees any prefix */
    for (size_t k = 0; k < n; k++)
        if ((rc = load_point(&o, k, &g->points[k])))
            return rc;
    return TT_OK;
}

int calibration_load(const char *path, calibration **out, tt_error *err)
{
    static const char *const keys[] = {"format", "version", "description", "groups", NULL};
    static const char *const FORMATS[] = {"ttasim-calibration", NULL};
    json_t *root;
    int rc = jx_load_file(path, &root, err);
    if (rc)
        return rc;
    calibration *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) {
        free(c);
        json_decref(root);
        return tt_error_set(err, TT_EINTERNAL, "%s: out of memory", path);
    }
    jx_obj r;
    int format = 0;
    long version = 0;
    size_t n = 0;
    if (!(rc = jx_root(&r, path, root, err)) && !(rc = jx_check_keys(&r, keys)) &&
        !(rc = jx_enum(&r, "format", 1, FORMATS, &format)) && !(rc = jx_int(&r, "version", 1, 1, 1, &version)) &&
        !(rc = jx_array(&r, "groups", 1, &n)) && !(c->groups = calloc(n ? n : 1, sizeof *c->groups)))
        rc = out_of_memory(&r);
    if (rc == TT_OK) {
        c->n_groups = n; /* zeroed until loaded: calibration_free frees any prefix */
        for (size_t i = 0; rc == TT_OK && i < n; i++)
            rc = load_group(&r, i, &c->groups[i]);
    }
    json_decref(root);
    if (rc) {
        calibration_free(c);
        return rc;
    }
    *out = c;
    return TT_OK;
}

void calibration_free(calibration *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_groups; i++) {
        cal_group *g = &c->groups[i];
        for (size_t k = 0; k < g->n_devices; k++)
            free(g->devices[k]);
        free(g->devices);
        free(g->inherits);
        for (size_t k = 0; k < g->n_points; k++) {
            free(g->points[k].trace_name);
            free(g->points[k].versus_device);
            if (g->points[k].tr.path)
                workload_free(&g->points[k].tr);
        }
        free(g->points);
    }
    free(c->groups);
    free(c->path);
    free(c);
}

/* ---- the model of one point ---- */

/* The parameters of one group, each searched in log space within bounds. */
typedef struct fit_param {
    double *value;
    double lo, hi;
} fit_param;

typedef struct group_fit {
    const cal_group *g;
    /* devices[0] with the parameters as fitted so far: a point is replayed on
     * device_model_of(dev, its precision), as 'ttasim run' will replay it, so
     * precisions that share parameters (bf16 on fp16's tensor cores, fp8's
     * non-GEMM ops) share them here too. */
    device_info dev;
    /* the math dtypes whose half-work FLOPs the points depend on */
    int used[DTYPE_COUNT];
    /* (dtype, class) efficiencies carrying >= 5 % of a point's FLOPs, or inherited */
    int fitted[DTYPE_COUNT][OPCLASS_COUNT];
    /* Backward over forward efficiency of a class: fitted where its points
     * include a forward pass and a training step or backward, inherited,
     * else 1 (as the forward). */
    int backward_fitted[DTYPE_COUNT][OPCLASS_COUNT];
    fit_param params[1 + DTYPE_COUNT * (1 + 2 * OPCLASS_COUNT)];
    int n_params;
    double *versus_predicted; /* per point: the versus device's throughput as its group fitted it */
    double *no_collectives;   /* every collective of any point's trace takes 0 s */
} group_fit;

/* Per GPU: the collectives of a node's step (FSDP's gathers, the gradients'
 * reduction) are taken as hidden behind its compute (U, stated by the set). */
static double predicted_samples_per_s(const group_fit *f, const cal_point *pt)
{
    device_model d;
    tt_error e;
    if (device_model_of(&f->dev, DTYPE_NAMES[pt->dtype], &d, &e))
        return NAN; /* setup_group checked every point's precision */
    d.fusion = pt->fusion >= 0 ? pt->fusion : f->g->fusion;
    d.mem_bytes = HUGE_VAL; /* memory is not what a throughput figure measures */
    step_options o;
    memset(&o, 0, sizeof o);
    o.micro_batch = pt->micro_batch;
    o.accumulation = pt->batch / pt->micro_batch;
    o.dtype_bytes = o.grad_dtype_bytes = dtype_bytes((tt_dtype)pt->dtype);
    o.overlap = 1;
    o.ranks = pt->optimizer_shards;
    o.zero = pt->optimizer_shards > 1;
    o.fused_attention = pt->fused_attention;
    if (pt->pass == PASS_FORWARD)
        return pt->batch / step_forward_s(&pt->tr, &d, &o);
    if (pt->pass == PASS_BACKWARD) {
        double s = 0;
        for (size_t i = 0; i < pt->tr.n_layers; i++)
            s += step_layer_s(&pt->tr, i, &d, &o, 1);
        return pt->batch / s;
    }
    step_result r;
    step_replay(&pt->tr, &d, &o, f->no_collectives, &r, &e);
    return pt->batch / r.time_s;
}

/* log(predicted / measured), of the ratio to the versus device when the
 * point has one. */
static double log_error(const group_fit *f, size_t i)
{
    const cal_point *pt = &f->g->points[i];
    double e = log(predicted_samples_per_s(f, pt) / pt->measured);
    if (pt->versus_device)
        e -= log(f->versus_predicted[i] / pt->versus_measured);
    return e;
}

/* The L8 norm of the log errors: close to the largest error, which is what
 * "within X % of every published figure" bounds, yet smooth enough for the
 * coordinate search (least squares let one point drift out). */
static double cost_of(const group_fit *f)
{
    double s = 0;
    for (size_t i = 0; i < f->g->n_points; i++) {
        double e = log_error(f, i);
        s += pow(e * e, 4);
    }
    return pow(s, 1.0 / 8);
}

/* Golden-section search of one parameter in log space, the others fixed. */
static void search_param(group_fit *f, const fit_param *p)
{
    const double phi = (sqrt(5.0) - 1) / 2;
    double a = log(p->lo), b = log(p->hi);
    double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
    *p->value = exp(x1);
    double f1 = cost_of(f);
    *p->value = exp(x2);
    double f2 = cost_of(f);
    for (int it = 0; it < 60; it++) {
        if (f1 <= f2) {
            b = x2, x2 = x1, f2 = f1, x1 = b - phi * (b - a);
            *p->value = exp(x1);
            f1 = cost_of(f);
        } else {
            a = x1, x1 = x2, f1 = f2, x2 = a + phi * (b - a);
            *p->value = exp(x2);
            f2 = cost_of(f);
        }
    }
    *p->value = exp(f1 <= f2 ? x1 : x2);
}

/* 4 significant digits: what is written is what was evaluated, and the
 * digits do not depend on the last bits of the search. */
static double round_sig(double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", x);
    return strtod(buf, NULL);
}

static void add_param(group_fit *f, double *value, double lo, double hi, double start)
{
    *value = start;
    f->params[f->n_params++] = (fit_param){value, lo, hi};
}

static double class_share(const workload *t, int c)
{
    double all = 0, mine = 0;
    for (size_t i = 0; i < t->n_layers; i++) {
        double w = t->layers[i].forward_flops + t->layers[i].backward_flops;
        all += w;
        if ((int)t->layers[i].cls == c)
            mine += w;
    }
    return all > 0 ? mine / all : 0;
}

/* A point's GEMM reduction depth, weighted by the GEMMs' FLOPs (0: none). */
static double mean_gemm_depth(const workload *t)
{
    double flops = 0, weighted = 0;
    for (size_t i = 0; i < t->n_layers; i++) {
        double k = step_gemm_depth(t, i);
        if (k > 0) {
            flops += t->layers[i].forward_flops;
            weighted += t->layers[i].forward_flops * k;
        }
    }
    return flops > 0 ? weighted / flops : 0;
}

/* One pass of the fit over the groups in their order: the whole set, or the
 * set without one generation (left_out), whose first device then stands in
 * with the transfer rule's parameters wherever a later group names it. */
typedef struct fit_pass {
    const calibration *cal;
    const device_table *lib;
    const group_fit **done; /* per group: its fit once fitted (NULL: not yet, or left out) */
    long left_out;          /* a group's index, or -1 */
    group_fit stand_in;     /* the left-out generation's transferred parameters, rebuilt per use */
    size_t n_colls;         /* the most collectives of any point's trace */
} fit_pass;

static int transfer_fit(const fit_pass *p, size_t upto, const cal_group *g, group_fit *out, tt_error *err);

/* The fit of the earlier group whose first device is name, or the left-out
 * generation's transferred parameters when it is that generation's. */
static int earlier_fit(fit_pass *p, size_t gi, const char *where, const char *name, const group_fit **src,
                       tt_error *err)
{
    for (size_t k = 0; k < gi; k++)
        if (p->done[k] && strcmp(p->done[k]->g->devices[0], name) == 0) {
            *src = p->done[k];
            return TT_OK;
        }
    const cal_group *out = p->left_out >= 0 ? &p->cal->groups[p->left_out] : NULL;
    if (out && (size_t)p->left_out < gi && strcmp(out->devices[0], name) == 0) {
        *src = &p->stand_in;
        return transfer_fit(p, gi, out, &p->stand_in, err);
    }
    return tt_error_set(err, TT_EINPUT, "%s: %s: \"%s\" is not the first device of an earlier group; put the "
                        "group that fits it before this one", p->cal->path, where, name);
}

/* What this group's points do not determine comes from the group that fits
 * g->inherits: the host dispatch time, per precision the half-work FLOPs
 * times fill_ratio (the same kernels' tiles over more compute units), and
 * the efficiencies of the classes no point of this group carries. */
static int inherit_unfitted(fit_pass *p, size_t gi, group_fit *f, tt_error *err)
{
    const calibration *cal = p->cal;
    char where[48];
    snprintf(where, sizeof where, "$.groups[%zu].inherits.device", gi);
    const group_fit *src;
    int rc = earlier_fit(p, gi, where, f->g->inherits, &src, err);
    if (rc)
        return rc;
    f->dev.dispatch_s = src->dev.dispatch_s;
    f->dev.gemm_half_depth = src->dev.gemm_half_depth;
    f->dev.fp8_attention |= src->dev.fp8_attention;
    for (int dt = 0; dt < DTYPE_COUNT; dt++) {
        if (f->used[dt] && !src->used[dt])
            return tt_error_set(err, TT_EINPUT, "%s: %s: the group of \"%s\" fits no %s point; add one there or "
                                "drop \"inherits\" to fit this group's own", cal->path, where, f->g->inherits,
                                DTYPE_NAMES[dt]);
        if (src->used[dt]) {
            f->used[dt] = 1;
            f->dev.half_work_flops[dt] = round_sig(src->dev.half_work_flops[dt] * f->g->fill_ratio);
        }
        for (int c = 0; c < OPCLASS_COUNT; c++) {
            if (src->fitted[dt][c] && !f->fitted[dt][c]) {
                f->fitted[dt][c] = 1; /* taken as it is, not searched */
                f->dev.efficiency[dt][c] = src->dev.efficiency[dt][c];
            }
            /* the same kernel family's backward over forward, where this group cannot tell it */
            if (src->backward_fitted[dt][c] && !f->backward_fitted[dt][c]) {
                f->backward_fitted[dt][c] = 1;
                f->dev.backward_efficiency[dt][c] = src->dev.backward_efficiency[dt][c];
            }
        }
    }
    return TT_OK;
}

static int setup_group(fit_pass *p, size_t gi, group_fit *f, tt_error *err)
{
    const calibration *cal = p->cal;
    const device_table *lib = p->lib;
    const cal_group *g = &cal->groups[gi];
    memset(f, 0, sizeof *f);
    f->g = g;
    for (size_t k = 0; k < g->n_devices; k++)
        if (!device_table_find(lib, g->devices[k]))
            return tt_error_set(err, TT_EINPUT, "%s: $.groups[%zu].devices[%zu]: no device \"%s\" in the device "
                                "library; use a name of 'ttasim platform list' devices (platforms/devices.json)",
                                cal->path, gi, k, g->devices[k]);
    f->dev = *device_table_find(lib, g->devices[0]);
    int own = g->inherits == NULL;
    if (own)
        add_param(f, &f->dev.dispatch_s, DISPATCH_FLOOR_S, 1e-4, 1e-5);
    f->versus_predicted = calloc(g->n_points, sizeof *f->versus_predicted);
    f->no_collectives = calloc(p->n_colls, sizeof *f->no_collectives);
    if (!f->versus_predicted || !f->no_collectives)
        return tt_error_set(err, TT_EINTERNAL, "%s: out of memory", cal->path);
    int passes[DTYPE_COUNT][OPCLASS_COUNT] = {{0}}; /* per class, a bit per pass kind carrying it */
    for (size_t i = 0; i < g->n_points; i++) {
        const cal_point *pt = &g->points[i];
        device_model probe;
        if (device_model_of(&f->dev, DTYPE_NAMES[pt->dtype], &probe, err))
            return tt_error_prefix(err, "%s: $.groups[%zu].points[%zu]: ", cal->path, gi, i);
        int m = device_class_peak_dtype(&f->dev, pt->dtype, OPCLASS_ATTENTION); /* the math of all but fp8's GEMMs */
        if (!f->used[m]) {
            f->used[m] = 1;
            if (own)
                add_param(f, &f->dev.half_work_flops[m], 1e6, 1e12, 1e9);
        }
        if (pt->versus_device) {
            char where[64];
            snprintf(where, sizeof where, "$.groups[%zu].points[%zu].versus.device", gi, i);
            const group_fit *v;
            int rc = earlier_fit(p, gi, where, pt->versus_device, &v, err);
            if (rc)
                return rc;
            if (!v->used[m])
                return tt_error_set(err, TT_EINPUT, "%s: %s: the group of \"%s\" fits no %s point; compare at a "
                                    "precision it fits", cal->path, where, pt->versus_device, DTYPE_NAMES[pt->dtype]);
            f->versus_predicted[i] = predicted_samples_per_s(v, pt);
        }
        static const op_class matmuls[] = {OPCLASS_CONV, OPCLASS_GEMM, OPCLASS_ATTENTION};
        for (size_t k = 0; k < sizeof matmuls / sizeof *matmuls; k++) {
            int c = matmuls[k];
            if (class_share(&pt->tr, c) < 0.05 || (g->fit_classes && !(g->fit_classes >> c & 1)))
                continue;
            if (pt->dtype == DTYPE_FP8 && c == OPCLASS_ATTENTION)
                f->dev.fp8_attention = 1; /* fp8 points fit their own attention (device.h) */
            int dt = device_class_dtype(&f->dev, pt->dtype, (op_class)c);
            passes[dt][c] |= 1 << pt->pass;
            if (!f->fitted[dt][c]) {
                f->fitted[dt][c] = 1;
                add_param(f, &f->dev.efficiency[dt][c], 0.02, 1.0, f->dev.efficiency[dt][c]);
            }
        }
    }
    /* GEMM points of reduction depths apart (1.5x) tell the depth at which a
     * GEMM reaches half its efficiency from the efficiency itself. */
    double shallow = HUGE_VAL, deep = 0;
    for (size_t i = 0; i < g->n_points; i++) {
        double k = class_share(&g->points[i].tr, OPCLASS_GEMM) >= 0.05 ? mean_gemm_depth(&g->points[i].tr) : 0;
        if (k > 0)
            shallow = fmin(shallow, k), deep = fmax(deep, k);
    }
    if (own && deep >= 1.5 * shallow)
        add_param(f, &f->dev.gemm_half_depth, 8, 8192, 256);
    /* A forward pass and a pass with a backward (train = forward + backward)
     * tell the backward's time from the forward's: the class's backward
     * kernels get their own efficiency. Train and backward points alone
     * could too, but they come from different frameworks (Goyal's Caffe2
     * backprop, TensorFlow's steps): the ratio would absorb the frameworks. */
    for (int dt = 0; dt < DTYPE_COUNT; dt++)
        for (int c = 0; c < OPCLASS_COUNT; c++) {
            int kinds = passes[dt][c];
            if ((kinds & 1 << PASS_FORWARD) && (kinds & (1 << PASS_TRAIN | 1 << PASS_BACKWARD))) {
                f->backward_fitted[dt][c] = 1;
                add_param(f, &f->dev.backward_efficiency[dt][c], 0.25, 4.0, 1.0);
            }
        }
    return own ? TT_OK : inherit_unfitted(p, gi, f, err);
}

static void fit_group(group_fit *f)
{
    double prev = HUGE_VAL;
    for (int sweep = 0; sweep < 40; sweep++) {
        for (int i = 0; i < f->n_params; i++)
            search_param(f, &f->params[i]);
        double now = cost_of(f);
        if (prev - now < 1e-12)
            break;
        prev = now;
    }
    for (int i = 0; i < f->n_params; i++)
        *f->params[i].value = round_sig(*f->params[i].value);
}

/* ---- the transfer rule: a device with no figures of its own ---- */

/* How far apart two devices' generations are (HUGE_VAL: other vendors, or
 * a device no vendor's collective library names): NVIDIA GPUs by compute
 * capability; AMD's have none, so their generations are all at 0. */
static double generation_gap(const device_info *a, const device_info *b)
{
    if (a->collective_library == COLL_LIB_NONE || a->collective_library != b->collective_library)
        return HUGE_VAL;
    return fabs(a->compute_capability - b->compute_capability);
}

enum { HAS_ANY, HAS_DTYPE, HAS_CLASS, HAS_BACKWARD };

/* A group's attention kernels: bit 0 where a point carrying attention runs it
 * unfused, bit 1 fused (FlashAttention-style); 0 where none carries it. */
static unsigned attention_kinds(const cal_group *g)
{
    unsigned kinds = 0;
    for (size_t i = 0; i < g->n_points; i++)
        if (class_share(&g->points[i].tr, OPCLASS_ATTENTION) >= 0.05)
            kinds |= 1u << (g->points[i].fused_attention != 0);
    return kinds;
}

/* The fitted generation of the target's vendor nearest to it that fits the
 * parameter (what: HAS_*, at dt and class c); attention only from one that
 * runs the same attention kernels (kinds, attention_kinds of the target's
 * figures; 0: any). Ties go to the older, as a new device takes its
 * predecessor's. NULL: none. */
static const group_fit *nearest_fit(const fit_pass *p, size_t upto, const device_info *target, unsigned kinds,
                                    int what, int dt, int c)
{
    const group_fit *best = NULL;
    double best_gap = HUGE_VAL;
    for (size_t k = 0; k < upto; k++) {
        const group_fit *f = p->done[k];
        if (!f || (what == HAS_DTYPE && !f->used[dt]) || (what == HAS_CLASS && !f->fitted[dt][c]) ||
            (what == HAS_BACKWARD && !f->backward_fitted[dt][c]) ||
            (what != HAS_DTYPE && c == OPCLASS_ATTENTION && kinds && !(attention_kinds(f->g) & kinds)))
            continue;
        double gap = generation_gap(target, &f->dev);
        if (gap < best_gap || (gap == best_gap && gap < HUGE_VAL &&
                               f->dev.compute_capability < best->dev.compute_capability)) {
            best = f;
            best_gap = gap;
        }
    }
    return best;
}

/* Compute-unit cycles per second (0: a count or clock unknown). */
static double unit_cycles(const device_info *d)
{
    return d->compute_units * d->clock_hz;
}

/* Convolutions (cuDNN's implicit GEMMs over ResNet's 64-512 channels) and
 * fp16/bf16 attention (FlashAttention 2's Ampere MMA instructions) are bound
 * by what an SM issues per cycle, not by the tensor cores' peak: they carry
 * over as a rate per unit-cycle (fitted conv on V100, A100, H100: 0.36, 0.38,
 * 0.40 TFLOP/s per SM-GHz; fused attention on A100 and H100: 1.44, 1.46).
 * Other classes carry over as a fraction of peak. */
static double transferred_efficiency(const group_fit *s, const device_info *t, int dt, int c)
{
    double e = s->dev.efficiency[dt][c];
    int issue_bound = c == OPCLASS_CONV || (c == OPCLASS_ATTENTION && dt != DTYPE_FP8);
    if (!issue_bound || unit_cycles(t) <= 0 || unit_cycles(&s->dev) <= 0 || !(t->peak_flops[dt] > 0))
        return e;
    return fmin(1, e * s->dev.peak_flops[dt] / unit_cycles(&s->dev) * unit_cycles(t) / t->peak_flops[dt]);
}

/* The tensor cores' FLOPs per unit-cycle (0: unknown). A GEMM tile's prologue
 * and epilogue take fixed cycles while its K loop shortens with this rate, so
 * the GEMM half depth scales with it. */
static double tile_rate(const device_info *d)
{
    return unit_cycles(d) > 0 ? d->peak_flops[device_math_dtype(d, DTYPE_FP16)] / unit_cycles(d) : 0;
}

/* The per-op parameters of g's first device from the groups fitted before
 * upto, as a device with no figures of its own gets them: the software
 * stack's dispatch time from the nearest generation of its vendor, the GEMM
 * half depth (scaled by tile_rate) from the one its GEMM efficiency comes
 * from; per precision and class, the efficiency
 * of the nearest generation that fits it (transferred_efficiency) and its
 * backward ratio, and its half-work FLOPs scaled by the compute units (the
 * same kernels' wave of tiles over more SMs; by the peak where a count is
 * unknown). g's fusion is its figures' software, not fitted. */
static int transfer_fit(const fit_pass *p, size_t upto, const cal_group *g, group_fit *out, tt_error *err)
{
    const device_info *target = device_table_find(p->lib, g->devices[0]);
    if (!target)
        return tt_error_set(err, TT_EINPUT, "%s: no device \"%s\" in the device library; use a name of 'ttasim "
                            "platform list' devices (platforms/devices.json)", p->cal->path, g->devices[0]);
    unsigned kinds = attention_kinds(g);
    const group_fit *sw = nearest_fit(p, upto, target, kinds, HAS_ANY, 0, 0);
    if (!sw)
        return tt_error_set(err, TT_EINPUT, "%s: \"%s\": no other generation of its vendor is fitted, so nothing "
                            "transfers to it; add a group of another generation", p->cal->path, g->devices[0]);
    out->g = g;
    out->dev = *target;
    memset(out->used, 0, sizeof out->used);
    memset(out->fitted, 0, sizeof out->fitted);
    memset(out->backward_fitted, 0, sizeof out->backward_fitted);
    out->dev.dispatch_s = sw->dev.dispatch_s;
    /* the half depth goes with the GEMM efficiency fitted beside it (the tensor cores' dtype) */
    const group_fit *gemm = nearest_fit(p, upto, target, kinds, HAS_CLASS, device_math_dtype(target, DTYPE_FP16),
                                        OPCLASS_GEMM);
    out->dev.gemm_half_depth = 0;
    if (gemm && tile_rate(target) > 0 && tile_rate(&gemm->dev) > 0)
        out->dev.gemm_half_depth = round_sig(gemm->dev.gemm_half_depth * tile_rate(target) / tile_rate(&gemm->dev));
    else if (gemm)
        out->dev.gemm_half_depth = gemm->dev.gemm_half_depth;
    out->dev.fp8_attention = 0;
    for (int dt = 0; dt < DTYPE_COUNT; dt++) {
        const group_fit *s = nearest_fit(p, upto, target, kinds, HAS_DTYPE, dt, 0);
        if (s && target->peak_flops[dt] > 0) {
            double units = target->compute_units > 0 && s->dev.compute_units > 0
                               ? (double)target->compute_units / s->dev.compute_units
                               : target->peak_flops[dt] / s->dev.peak_flops[dt];
            out->used[dt] = 1;
            out->dev.half_work_flops[dt] = round_sig(s->dev.half_work_flops[dt] * units);
        }
        for (int c = 0; c < OPCLASS_COUNT; c++) {
            if ((s = nearest_fit(p, upto, target, kinds, HAS_CLASS, dt, c))) {
                out->fitted[dt][c] = 1;
                out->dev.efficiency[dt][c] = round_sig(transferred_efficiency(s, target, dt, c));
                out->dev.fp8_attention |= dt == DTYPE_FP8 && c == OPCLASS_ATTENTION;
            }
            if ((s = nearest_fit(p, upto, target, kinds, HAS_BACKWARD, dt, c))) {
                out->backward_fitted[dt][c] = 1;
                out->dev.backward_efficiency[dt][c] = s->dev.backward_efficiency[dt][c];
            }
        }
    }
    return TT_OK;
}

/* ---- the fitted document ---- */

/* One device's parameters, per dtype that has any. The half-work FLOPs are
 * the work that fills the device once (a wave of tiles over its compute
 * units): a sibling with another peak (other clocks or unit count) scales
 * it by the peak ratio. */
static json_t *device_params(const group_fit *f, const device_info *dev)
{
    json_t *o = json_object();
    json_object_set_new(o, "dispatch_s", json_real(f->dev.dispatch_s));
    if (f->dev.gemm_half_depth > 0)
        json_object_set_new(o, "gemm_half_depth", json_real(f->dev.gemm_half_depth));
    json_object_set_new(o, "fusion", json_boolean(f->g->fusion));
    for (int dt = 0; dt < DTYPE_COUNT; dt++) {
        int any = f->used[dt];
        for (int c = 0; c < OPCLASS_COUNT; c++)
            any |= f->fitted[dt][c];
        if (!any)
            continue;
        json_t *p = json_object(), *eff = json_object();
        double ratio = dev->peak_flops[dt] / f->dev.peak_flops[dt];
        json_object_set_new(p, "half_work_flops", json_real(round_sig(device_half_work(&f->dev, dt) * ratio)));
        json_t *bwd = json_object();
        for (int c = 0; c < OPCLASS_COUNT; c++) {
            if (f->fitted[dt][c])
                json_object_set_new(eff, OPCLASS_NAMES[c], json_real(f->dev.efficiency[dt][c]));
            if (f->backward_fitted[dt][c])
                json_object_set_new(bwd, OPCLASS_NAMES[c], json_real(f->dev.backward_efficiency[dt][c]));
        }
        json_object_set_new(p, "efficiency", eff);
        if (json_object_size(bwd))
            json_object_set(p, "backward_efficiency", bwd);
        json_decref(bwd);
        json_object_set_new(o, DTYPE_NAMES[dt], p);
    }
    return o;
}

static json_t *residual(const group_fit *f, size_t i)
{
    const cal_point *pt = &f->g->points[i];
    double pred = round_sig(predicted_samples_per_s(f, pt));
    json_t *o = json_object();
    json_object_set_new(o, "device", json_string(f->g->devices[0]));
    json_object_set_new(o, "trace", json_string(pt->trace_name));
    json_object_set_new(o, "pass", json_string(PASSES[pt->pass]));
    json_object_set_new(o, "precision", json_string(DTYPE_NAMES[pt->dtype]));
    json_object_set_new(o, "batch", json_integer(pt->batch));
    if (pt->micro_batch != pt->batch)
        json_object_set_new(o, "micro_batch", json_integer(pt->micro_batch));
    if (pt->fusion >= 0)
        json_object_set_new(o, "fusion", json_boolean(pt->fusion));
    json_object_set_new(o, "measured_samples_per_s", json_real(pt->measured));
    json_object_set_new(o, "predicted_samples_per_s", json_real(pred));
    double ratio = pred / pt->measured;
    if (pt->versus_device) {
        double vpred = round_sig(f->versus_predicted[i]);
        json_t *v = json_object();
        json_object_set_new(v, "device", json_string(pt->versus_device));
        json_object_set_new(v, "measured_samples_per_s", json_real(pt->versus_measured));
        json_object_set_new(v, "predicted_samples_per_s", json_real(vpred));
        json_object_set_new(o, "versus", v);
        ratio /= vpred / pt->versus_measured;
    }
    json_object_set_new(o, "error", json_real(round_sig(ratio - 1)));
    return o;
}

/* A group names (inherits, versus) the first device of a group left out or
 * refitted in this pass, so its own fit changes too. */
static int names_changed(const fit_pass *p, const group_fit *full, size_t gi)
{
    const cal_group *g = &p->cal->groups[gi];
    for (size_t k = 0; k < gi; k++) {
        if (p->done[k] == &full[k])
            continue;
        const char *name = p->cal->groups[k].devices[0];
        if (g->inherits && strcmp(g->inherits, name) == 0)
            return 1;
        for (size_t i = 0; i < g->n_points; i++)
            if (g->points[i].versus_device && strcmp(g->points[i].versus_device, name) == 0)
                return 1;
    }
    return 0;
}

/* Fits the pass's groups in order into own; with a generation left out, a
 * group that does not name it (or a group refitted because of it) keeps its
 * fit of the whole set, full. */
static int run_pass(fit_pass *p, const group_fit *full, group_fit *own, tt_error *err)
{
    for (size_t gi = 0; gi < p->cal->n_groups; gi++) {
        if ((long)gi == p->left_out)
            continue;
        if (full && !names_changed(p, full, gi)) {
            p->done[gi] = &full[gi];
            continue;
        }
        int rc = setup_group(p, gi, &own[gi], err);
        if (rc)
            return rc;
        fit_group(&own[gi]);
        p->done[gi] = &own[gi];
    }
    return TT_OK;
}

static void free_fits(group_fit *fits, size_t n)
{
    for (size_t k = 0; fits && k < n; k++) {
        free(fits[k].versus_predicted);
        free(fits[k].no_collectives);
    }
    free(fits);
}

/* The fitted-parameters document of a pass over the whole set. */
static json_t *fitted_document(const fit_pass *p)
{
    json_t *doc = json_object(), *devices = json_object(), *residuals = json_array();
    json_object_set_new(doc, "format", json_string("ttasim-calibrated"));
    json_object_set_new(doc, "version", json_integer(1));
    json_object_set_new(doc, "devices", devices);
    json_object_set_new(doc, "residuals", residuals);
    for (size_t gi = 0; gi < p->cal->n_groups; gi++) {
        const group_fit *f = p->done[gi];
        for (size_t k = 0; k < f->g->n_devices; k++)
            json_object_set_new(devices, f->g->devices[k],
                                device_params(f, device_table_find(p->lib, f->g->devices[k])));
        for (size_t i = 0; i < f->g->n_points; i++)
            json_array_append_new(residuals, residual(f, i));
    }
    return doc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Group gi left out: the set refitted without it, then its points predicted
 * on its first device with the transfer rule's parameters. */
static int leave_out_row(const calibration *c, const device_table *lib, const group_fit *full, size_t gi,
                         size_t n_colls, json_t **row, tt_error *err)
{
    const group_fit **done = calloc(c->n_groups, sizeof *done);
    group_fit *own = calloc(c->n_groups, sizeof *own);
    group_fit t = {0};
    const cal_group *g = &c->groups[gi];
    double *abs_err = calloc(g->n_points, sizeof *abs_err);
    fit_pass p = {c, lib, done, (long)gi, {0}, n_colls};
    p.stand_in.no_collectives = calloc(n_colls, sizeof *p.stand_in.no_collectives);
    t.versus_predicted = calloc(g->n_points, sizeof *t.versus_predicted);
    t.no_collectives = calloc(n_colls, sizeof *t.no_collectives);
    int rc = !done || !own || !abs_err || !p.stand_in.no_collectives || !t.versus_predicted || !t.no_collectives
                 ? tt_error_set(err, TT_EINTERNAL, "%s: out of memory", c->path)
                 : run_pass(&p, full, own, err);
    if (rc == TT_OK)
        rc = transfer_fit(&p, c->n_groups, g, &t, err);
    for (size_t i = 0; rc == TT_OK && i < g->n_points; i++) {
        const cal_point *pt = &g->points[i];
        const group_fit *v;
        char where[64];
        snprintf(where, sizeof where, "$.groups[%zu].points[%zu].versus.device", gi, i);
        if (pt->versus_device && (rc = earlier_fit(&p, gi, where, pt->versus_device, &v, err)) == TT_OK)
            t.versus_predicted[i] = predicted_samples_per_s(v, pt);
    }
    if (rc == TT_OK) {
        json_t *res = json_array(), *refitted = json_array();
        for (size_t i = 0; i < g->n_points; i++) {
            json_t *r = residual(&t, i);
            abs_err[i] = fabs(json_real_value(json_object_get(r, "error")));
            json_array_append_new(res, r);
        }
        for (size_t k = 0; k < c->n_groups; k++)
            if (done[k] == &own[k])
                json_array_append_new(refitted, json_string(c->groups[k].devices[0]));
        qsort(abs_err, g->n_points, sizeof *abs_err, cmp_double);
        size_t n = g->n_points;
        double median = n % 2 ? abs_err[n / 2] : (abs_err[n / 2 - 1] + abs_err[n / 2]) / 2;
        *row = json_pack("{s:s, s:i, s:f, s:f, s:o, s:o, s:o}", "device", g->devices[0], "points", (int)n,
                         "median_abs_error", round_sig(median), "worst_abs_error", abs_err[n - 1], "refitted",
                         refitted, "parameters", device_params(&t, &t.dev), "residuals", res);
    }
    free(abs_err);
    free(done);
    free_fits(own, c->n_groups);
    free(p.stand_in.no_collectives);
    free(t.versus_predicted);
    free(t.no_collectives);
    return rc;
}

/* The most collectives of any point's trace (at least 1): the size of the
 * zeroed collective times every prediction replays with. */
static size_t collectives_max(const calibration *c)
{
    size_t n = 1;
    for (size_t gi = 0; gi < c->n_groups; gi++)
        for (size_t i = 0; i < c->groups[gi].n_points; i++)
            if (step_collectives_max(&c->groups[gi].points[i].tr) > n)
                n = step_collectives_max(&c->groups[gi].points[i].tr);
    return n;
}

int calibration_leave_out(calibration *c, const device_table *lib, json_t **fitted, json_t **table, tt_error *err)
{
    size_t n = c->n_groups ? c->n_groups : 1;
    const group_fit **done = calloc(n, sizeof *done);
    group_fit *fits = calloc(n, sizeof *fits);
    fit_pass p = {c, lib, done, -1, {0}, collectives_max(c)};
    int rc = !done || !fits ? tt_error_set(err, TT_EINTERNAL, "%s: out of memory", c->path) : run_pass(&p, NULL, fits, err);
    json_t *rows = json_array();
    for (size_t gi = 0; rc == TT_OK && table && gi < c->n_groups; gi++) {
        json_t *row = NULL;
        if ((rc = leave_out_row(c, lib, fits, gi, p.n_colls, &row, err)) == TT_OK)
            json_array_append_new(rows, row);
    }
    if (rc == TT_OK) {
        *fitted = fitted_document(&p);
        if (table)
            *table = json_pack("{s:s, s:i, s:O}", "format", "ttasim-leave-out", "version", 1, "generations", rows);
    }
    json_decref(rows);
    free(done);
    free_fits(fits, n);
    return rc;
}

int calibration_fit(calibration *c, const device_table *lib, json_t **fitted, tt_error *err)
{
    return calibration_leave_out(c, lib, fitted, NULL, err);
}
