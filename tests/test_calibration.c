/* The calibration fit: throughputs made by the per-op model at known
 * parameters are fitted back to those parameters; bad sets are refused with
 * the file and JSON path. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platforms/device.h"
#include "sim/replay/calibration.h"
#include "sim/replay/device_model.h"
#include "sim/replay/step.h"
#include "sim/replay/workload.h"
#include "tests/testutil.h"

/* One layer of a class and a loss: each trace exercises one efficiency. */
static const char *ONE_CLASS =
    "{\"format\": \"ttasim-trace\", \"version\": 1, \"model\": \"one\", \"micro_batch\": 8,\n"
    " \"precision\": \"fp32\", \"dtype_bytes\": 4, \"params\": 2500000, \"param_bytes\": 1e7,\n"
    " \"forward_flops\": 1e11, \"backward_flops\": 2e11,\n"
    " \"layers\": [\n"
    "  {\"name\": \"l\", \"class\": \"%s\", \"forward_flops\": 1e11, \"forward_bytes\": 1e8,\n"
    "   \"backward_flops\": 2e11, \"backward_bytes\": 2e8, \"activation_bytes\": 1e8, \"param_bytes\": 1e7},\n"
    "  {\"name\": \"loss\", \"class\": \"loss\", \"forward_flops\": 1e5, \"forward_bytes\": 1e6,\n"
    "   \"backward_flops\": 1e5, \"backward_bytes\": 1e6, \"activation_bytes\": 0, \"param_bytes\": 0}],\n"
    " \"gradients\": [{\"name\": \"l.weight\", \"bytes\": 1e7, \"layer\": 0}],\n"
    " \"optimizer\": {\"name\": \"sgd\", \"flops\": 5e6, \"bytes\": 4e7},\n"
    " \"buckets\": [{\"bytes\": 1e7, \"ready_after_layer\": 0}]}\n";

#define TRUE_CONV 0.6
#define TRUE_GEMM 0.8
#define TRUE_HALF_WORK 2e10

typedef struct synthetic {
    char conv_path[64], gemm_path[64], set_path[64];
} synthetic;

/* The model's fp32 throughput on a device at the given conv efficiency and
 * backward-over-forward ratio, half-work FLOPs, GEMM half depth and fusion (gemm at
 * TRUE_GEMM, 4 us dispatch). */
static double model_on(const char *device, double conv, double conv_backward, double half_work, double half_depth,
                       int fusion, const char *trace_path, int batch, int forward)
{
    device_table lib = {0};
    tt_error err = {0};
    ck_assert_int_eq(device_table_load_library(&lib, &err), TT_OK);
    device_model d;
    ck_assert_int_eq(device_model_of(device_table_find(&lib, device), "fp32", &d, &err), TT_OK);
    d.efficiency[OPCLASS_CONV] = conv;
    d.efficiency[OPCLASS_GEMM] = TRUE_GEMM;
    d.backward_efficiency[OPCLASS_CONV] = conv_backward;
    d.half_work_flops = half_work;
    d.gemm_half_depth = half_depth;
    d.dispatch_s = 4e-6;
    d.fusion = fusion;
    d.mem_bytes = HUGE_VAL;
    workload t;
    ck_assert_int_eq(workload_load(trace_path, &t, &err), TT_OK);
    step_options o = {.micro_batch = batch, .accumulation = 1, .dtype_bytes = 4, .grad_dtype_bytes = 4,
                      .overlap = 1, .ranks = 1, .embeddings = EMB_ACCELERATORS};
    double s;
    if (forward) {
        s = step_forward_s(&t, &d, &o);
    } else {
        double none[1] = {0};
        step_result r;
        ck_assert_int_eq(step_replay(&t, &d, &o, none, &r, &err), TT_OK);
        s = r.time_s;
    }
    workload_free(&t);
    device_table_free(&lib);
    return batch / s;
}

static double model_samples_per_s(const char *trace_path, int batch, int forward)
{
    return model_on("generic-accelerator", TRUE_CONV, 1, TRUE_HALF_WORK, 0, 0, trace_path, batch, forward);
}

static void make_traces(synthetic *sy)
{
    char text[4096];
    snprintf(text, sizeof text, ONE_CLASS, "conv");
    tu_write_temp(text, sy->conv_path, sizeof sy->conv_path);
    snprintf(text, sizeof text, ONE_CLASS, "gemm");
    tu_write_temp(text, sy->gemm_path, sizeof sy->gemm_path);
}

/* The set: the traces' figures at known parameters, then more_groups. */
static void write_set(synthetic *sy, const char *more_groups)
{
    char text[4096];
    char points[2048] = "";
    const int batches[] = {1, 4, 16, 64};
    for (int c = 0; c < 2; c++)
        for (int b = 0; b < 4; b++) {
            const char *path = c ? sy->gemm_path : sy->conv_path;
            int forward = b == 1;
            char one[384];
            snprintf(one, sizeof one, "%s{\"trace\": \"%s\", \"precision\": \"fp32\", \"batch\": %d, \"pass\": \"%s\", "
                     "\"samples_per_s\": %.17g, \"source\": \"the model at known parameters\"}",
                     *points ? ", " : "", path, batches[b], forward ? "forward" : "train",
                     model_samples_per_s(path, batches[b], forward));
            strcat(points, one);
        }
    snprintf(text, sizeof text,
             "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": false, \"points\": [%s]}%s]}\n", points, more_groups);
    tu_write_temp(text, sy->set_path, sizeof sy->set_path);
}

static void remove_synthetic(const synthetic *sy)
{
    unlink(sy->conv_path);
    unlink(sy->gemm_path);
    unlink(sy->set_path);
}

static double param(json_t *doc, const char *key)
{
    json_t *fp32 = json_object_get(json_object_get(json_object_get(doc, "devices"), "generic-accelerator"), "fp32");
    if (strcmp(key, "half_work_flops") == 0)
        return json_real_value(json_object_get(fp32, key));
    return json_real_value(json_object_get(json_object_get(fp32, "efficiency"), key));
}

/* The fitted backward-over-forward ratio of a class on a device at fp32. */
static double backward_param(json_t *doc, const char *device, const char *cls)
{
    json_t *fp32 = json_object_get(json_object_get(json_object_get(doc, "devices"), device), "fp32");
    return json_real_value(json_object_get(json_object_get(fp32, "backward_efficiency"), cls));
}

START_TEST(fit_recovers_known_parameters)
{
    synthetic sy;
    make_traces(&sy);
    write_set(&sy, "");
    device_table lib = {0};
    tt_error err = {0};
    calibration *c = NULL;
    json_t *doc = NULL;
    ck_assert_int_eq(device_table_load_library(&lib, &err), TT_OK);
    ck_assert_msg(calibration_load(sy.set_path, &c, &err) == TT_OK, "%s", err.msg);
    ck_assert_msg(calibration_fit(c, &lib, &doc, &err) == TT_OK, "%s", err.msg);
    /* 4 significant digits are written */
    ck_assert_double_eq_tol(param(doc, "conv"), TRUE_CONV, 2e-3);
    ck_assert_double_eq_tol(param(doc, "gemm"), TRUE_GEMM, 2e-3);
    ck_assert_double_eq_tol(param(doc, "half_work_flops") / TRUE_HALF_WORK, 1, 3e-3);
    ck_assert_ptr_null(json_object_get(json_object_get(json_object_get(doc, "devices"), "generic-accelerator"),
                                       "gemm_half_depth"));
    /* forward and training points of each class: the backward ratio is fitted, and is 1 */
    ck_assert_double_eq_tol(backward_param(doc, "generic-accelerator", "conv"), 1, 2e-3);
    ck_assert_double_eq_tol(backward_param(doc, "generic-accelerator", "gemm"), 1, 2e-3);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "residuals"), i, r)
        ck_assert_double_lt(fabs(json_real_value(json_object_get(r, "error"))), 2e-3);
    ck_assert_int_eq((int)json_array_size(json_object_get(doc, "residuals")), 8);
    /* the same set fits to the same document */
    json_t *again = NULL;
    ck_assert_int_eq(calibration_fit(c, &lib, &again, &err), TT_OK);
    char *a = json_dumps(doc, JSON_PRESERVE_ORDER), *b = json_dumps(again, JSON_PRESERVE_ORDER);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    json_decref(again);
    json_decref(doc);
    calibration_free(c);
    device_table_free(&lib);
    remove_synthetic(&sy);
}
END_TEST

/* Loads the calibration set at path and fits it against the device library. */
static int fit_file(const char *path, json_t **doc, tt_error *err)
{
    device_table lib = {0};
    calibration *c = NULL;
    *doc = NULL;
    ck_assert_int_eq(device_table_load_library(&lib, err), TT_OK);
    int rc = calibration_load(path, &c, err);
    if (rc == TT_OK)
        rc = calibration_fit(c, &lib, doc, err);
    calibration_free(c);
    device_table_free(&lib);
    return rc;
}

/* Fits points (the JSON of a points array's members) as the one group of
 * the generic accelerator, fusing or not. */
static json_t *fit_points(const char *points, int fusion)
{
    char text[4096], set[64];
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": %s, \"points\": [%s]}]}", fusion ? "true" : "false", points);
    tu_write_temp(text, set, sizeof set);
    tt_error err = {0};
    json_t *doc = NULL;
    ck_assert_msg(fit_file(set, &doc, &err) == TT_OK, "%s", err.msg);
    unlink(set);
    return doc;
}

/* A GEMM of 1e11 FLOPs over act_bytes of fp32 output: depth 1e11 / (2 x act_bytes / 4). */
static const char *DEPTH_GEMM =
    "{\"format\": \"ttasim-trace\", \"version\": 1, \"model\": \"depth\", \"micro_batch\": 8,\n"
    " \"precision\": \"fp32\", \"dtype_bytes\": 4, \"params\": 2500000, \"param_bytes\": 1e7,\n"
    " \"forward_flops\": 1e11, \"backward_flops\": 2e11,\n"
    " \"layers\": [{\"name\": \"l\", \"class\": \"gemm\", \"forward_flops\": 1e11, \"forward_bytes\": 1e8,\n"
    "   \"backward_flops\": 2e11, \"backward_bytes\": 2e8, \"activation_bytes\": %g, \"param_bytes\": 1e7}],\n"
    " \"gradients\": [{\"name\": \"l.weight\", \"bytes\": 1e7, \"layer\": 0}],\n"
    " \"optimizer\": {\"name\": \"sgd\", \"flops\": 5e6, \"bytes\": 4e7},\n"
    " \"buckets\": [{\"bytes\": 1e7, \"ready_after_layer\": 0}]}\n";

/* GEMMs of depth 2000 and 100, their figures made at a half depth of 300:
 * the fit finds both within 2-3 % (the two trade against each other along a
 * shallow valley), every figure within 1 %. One depth alone
 * (fit_recovers_known_parameters) fits no half depth. */
START_TEST(fit_recovers_gemm_half_depth)
{
    char deep[64], shallow[64], points[4096] = "", text[4096];
    snprintf(text, sizeof text, DEPTH_GEMM, 1e8);
    tu_write_temp(text, deep, sizeof deep);
    snprintf(text, sizeof text, DEPTH_GEMM, 2e9);
    tu_write_temp(text, shallow, sizeof shallow);
    const int batches[] = {1, 4, 16, 64};
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 4; b++) {
            const char *path = k ? shallow : deep;
            char one[384];
            snprintf(one, sizeof one, "%s{\"trace\": \"%s\", \"precision\": \"fp32\", \"batch\": %d, "
                     "\"pass\": \"%s\", \"samples_per_s\": %.17g, \"source\": \"the model\"}", *points ? ", " : "",
                     path, batches[b], b == 1 ? "forward" : "train",
                     model_on("generic-accelerator", TRUE_CONV, 1, TRUE_HALF_WORK, 300, 0, path, batches[b], b == 1));
            strcat(points, one);
        }
    json_t *doc = fit_points(points, 0);
    json_t *dev = json_object_get(json_object_get(doc, "devices"), "generic-accelerator");
    ck_assert_double_eq_tol(json_real_value(json_object_get(dev, "gemm_half_depth")) / 300, 1, 0.03);
    ck_assert_double_eq_tol(param(doc, "gemm"), TRUE_GEMM, 0.02);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "residuals"), i, r)
        ck_assert_double_lt(fabs(json_real_value(json_object_get(r, "error"))), 0.01);
    json_decref(doc);
    unlink(deep);
    unlink(shallow);
}
END_TEST

/* The set of write_set with more_groups, fitted. */
static json_t *fit_set(synthetic *sy, const char *more_groups)
{
    write_set(sy, more_groups);
    tt_error err = {0};
    json_t *doc = NULL;
    ck_assert_msg(fit_file(sy->set_path, &doc, &err) == TT_OK, "%s", err.msg);
    return doc;
}

/* A fitted device's fp32 efficiency of class cls. */
static double fp32_efficiency(json_t *doc, const char *device, const char *cls)
{
    json_t *d = json_object_get(json_object_get(json_object_get(doc, "devices"), device), "fp32");
    return json_real_value(json_object_get(json_object_get(d, "efficiency"), cls));
}

/* A device measured at one batch only, in a harness half as fast as the
 * model: its figure is fitted as the ratio to a device of an earlier group
 * measured in the same harness (the harness cancels), and what one batch
 * cannot tell comes from that group: the dispatch time, the half-work FLOPs
 * times the fill ratio, the gemm efficiency. */
START_TEST(versus_fits_the_ratio_and_inherits_the_rest)
{
    synthetic sy;
    make_traces(&sy);
    const double conv = 0.3, fill = 2, harness = 0.5;
    double own = model_on("v100-sxm2", conv, 1, fill * TRUE_HALF_WORK, 0, 0, sy.conv_path, 64, 0);
    double other = model_samples_per_s(sy.conv_path, 64, 0);
    char group[1024];
    snprintf(group, sizeof group, ", {\"devices\": [\"v100-sxm2\"], \"fusion\": false, \"inherits\": {\"device\": "
             "\"generic-accelerator\", \"fill_ratio\": %g}, \"points\": [{\"trace\": \"%s\", \"precision\": \"fp32\", "
             "\"batch\": 64, \"pass\": \"train\", \"samples_per_s\": %.17g, \"versus\": {\"device\": "
             "\"generic-accelerator\", \"samples_per_s\": %.17g}, \"source\": \"s\"}]}",
             fill, sy.conv_path, harness * own, harness * other);
    json_t *doc = fit_set(&sy, group);
    json_t *devs = json_object_get(doc, "devices");
    json_t *mine = json_object_get(json_object_get(devs, "v100-sxm2"), "fp32");
    json_t *theirs = json_object_get(json_object_get(devs, "generic-accelerator"), "fp32");
    ck_assert_double_eq_tol(fp32_efficiency(doc, "v100-sxm2", "conv"), conv, 2e-3);
    ck_assert_double_eq(fp32_efficiency(doc, "v100-sxm2", "gemm"), fp32_efficiency(doc, "generic-accelerator", "gemm"));
    ck_assert_double_eq(json_real_value(json_object_get(mine, "half_work_flops")),
                        fill * json_real_value(json_object_get(theirs, "half_work_flops")));
    /* one training figure cannot tell backward from forward: the ratio is the earlier group's */
    ck_assert_double_eq(backward_param(doc, "v100-sxm2", "conv"), backward_param(doc, "generic-accelerator", "conv"));
    ck_assert_double_eq(json_real_value(json_object_get(json_object_get(devs, "v100-sxm2"), "dispatch_s")),
                        json_real_value(json_object_get(json_object_get(devs, "generic-accelerator"), "dispatch_s")));
    json_t *res = json_object_get(doc, "residuals");
    ck_assert_int_eq((int)json_array_size(res), 9);
    json_t *last = json_array_get(res, 8), *v = json_object_get(last, "versus");
    /* the absolute figure is the harness's, half the model's; the ratio is met */
    ck_assert_double_eq_tol(json_real_value(json_object_get(last, "predicted_samples_per_s")) / own, 1, 2e-3);
    ck_assert_double_eq_tol(json_real_value(json_object_get(v, "predicted_samples_per_s")) / other, 1, 2e-3);
    ck_assert_str_eq(json_string_value(json_object_get(v, "device")), "generic-accelerator");
    ck_assert_double_lt(fabs(json_real_value(json_object_get(last, "error"))), 2e-3);
    json_decref(doc);
    remove_synthetic(&sy);
}
END_TEST

/* "fits" names the classes a group's points search: a conv figure 30 %
 * above the model, in a group that fits only gemm, leaves the conv fraction
 * inherited and the point's error standing. */
START_TEST(fits_restricts_the_search)
{
    synthetic sy;
    make_traces(&sy);
    double own = model_on("v100-sxm2", TRUE_CONV, 1, TRUE_HALF_WORK, 0, 0, sy.conv_path, 64, 0);
    char group[1024];
    snprintf(group, sizeof group, ", {\"devices\": [\"v100-sxm2\"], \"fusion\": false, \"inherits\": {\"device\": "
             "\"generic-accelerator\", \"fill_ratio\": 1, \"fits\": [\"gemm\"]}, \"points\": [{\"trace\": \"%s\", "
             "\"precision\": \"fp32\", \"batch\": 64, \"pass\": \"train\", \"samples_per_s\": %.17g, "
             "\"source\": \"s\"}]}", sy.conv_path, 1.3 * own);
    json_t *doc = fit_set(&sy, group);
    ck_assert_double_eq(fp32_efficiency(doc, "v100-sxm2", "conv"), fp32_efficiency(doc, "generic-accelerator", "conv"));
    json_t *res = json_object_get(doc, "residuals");
    ck_assert_double_eq_tol(json_real_value(json_object_get(json_array_get(res, 8), "error")), 1 / 1.3 - 1, 0.01);
    json_decref(doc);
    remove_synthetic(&sy);
}
END_TEST

/* Three figures at the same batch that no parameters reconcile, two at what
 * the model gives at known parameters and one 20 % higher: least squares settles a third of the way (errors
 * +6.3 % and -11.5 %), the near-worst-error fit about halfway (+9.1 %, -9.1 %). */
START_TEST(fit_bounds_the_worst_error)
{
    char conv[64], text[4096];
    snprintf(text, sizeof text, ONE_CLASS, "conv");
    tu_write_temp(text, conv, sizeof conv);
    double base = model_samples_per_s(conv, 8, 0), measured[] = {base, base, 1.2 * base};
    char points[768] = "";
    for (int i = 0; i < 3; i++) {
        char one[256];
        snprintf(one, sizeof one, "%s{\"trace\": \"%s\", \"precision\": \"fp32\", \"batch\": 8, \"pass\": "
                 "\"train\", \"samples_per_s\": %.17g, \"source\": \"s\"}", i ? ", " : "", conv, measured[i]);
        strcat(points, one);
    }
    json_t *doc = fit_points(points, 0);
    json_t *res = json_object_get(doc, "residuals");
    ck_assert_double_eq_tol(json_real_value(json_object_get(json_array_get(res, 0), "error")), 0.0906, 2e-3);
    ck_assert_double_eq_tol(json_real_value(json_object_get(json_array_get(res, 2), "error")), -0.0911, 2e-3);
    json_decref(doc);
    unlink(conv);
}
END_TEST

/* A forward pass and a training step at batch 64, made with backward kernels
 * 1.5 times as efficient as forward ones. The conv is compute bound and its
 * backward is two kernels of the forward's work (same saturation), so at one
 * efficiency for both a step is 1 + 2 = 3 forward times whatever the
 * efficiency, half-work FLOPs or dispatch; measured it is 1 + 2 / 1.5 = 2.33.
 * Without the ratio the best fit splits 3 / 2.33 = 1.29 into +13.4 % and
 * -11.8 %; only backward_efficiency 1.5 meets both figures. */
START_TEST(two_passes_fit_the_backward_ratio)
{
    char conv[64], text[4096], points[1024];
    snprintf(text, sizeof text, ONE_CLASS, "conv");
    tu_write_temp(text, conv, sizeof conv);
    double forward = model_on("generic-accelerator", TRUE_CONV, 1.5, TRUE_HALF_WORK, 0, 0, conv, 64, 1);
    double train = model_on("generic-accelerator", TRUE_CONV, 1.5, TRUE_HALF_WORK, 0, 0, conv, 64, 0);
    ck_assert_double_eq_tol(forward / train, 2.333, 1e-2); /* 2.324: the loss and the optimizer */
    snprintf(points, sizeof points, "{\"trace\": \"%s\", \"precision\": \"fp32\", \"batch\": 64, \"pass\": "
             "\"forward\", \"samples_per_s\": %.17g, \"source\": \"s\"}, {\"trace\": \"%s\", \"precision\": "
             "\"fp32\", \"batch\": 64, \"pass\": \"train\", \"samples_per_s\": %.17g, \"source\": \"s\"}",
             conv, forward, conv, train);
    json_t *doc = fit_points(points, 0);
    /* two figures do not pin dispatch_s (a few kernels in 0.3 s): the ratio within 1.5 % */
    ck_assert_double_eq_tol(backward_param(doc, "generic-accelerator", "conv"), 1.5, 0.022);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "residuals"), i, r)
        ck_assert_double_lt(fabs(json_real_value(json_object_get(r, "error"))), 2e-3);
    json_decref(doc);
    /* a training point alone cannot tell it: no ratio is written (1, as the forward) */
    snprintf(points, sizeof points, "{\"trace\": \"%s\", \"precision\": \"fp32\", \"batch\": 64, \"pass\": "
             "\"train\", \"samples_per_s\": %.17g, \"source\": \"s\"}", conv, train);
    doc = fit_points(points, 0);
    ck_assert_ptr_null(json_object_get(json_object_get(json_object_get(json_object_get(doc, "devices"),
                                                                       "generic-accelerator"), "fp32"),
                                       "backward_efficiency"));
    json_decref(doc);
    unlink(conv);
}
END_TEST

static void expect_bad(const char *text, const char *needle)
{
    char path[64];
    tu_write_temp(text, path, sizeof path);
    tt_error err = {0};
    json_t *doc = NULL;
    int rc = fit_file(path, &doc, &err);
    json_decref(doc);
    unlink(path);
    ck_assert_int_eq(rc, TT_EINPUT);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "expected '%s' in: %s", needle, err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
}

/* A convolution, its batchnorm and a loss: fusion folds the norm into the
 * convolution's kernel (no launch, one read of the activation saved). */
static const char *CONV_NORM =
    "{\"format\": \"ttasim-trace\", \"version\": 1, \"model\": \"cn\", \"micro_batch\": 8,\n"
    " \"precision\": \"fp32\", \"dtype_bytes\": 4, \"params\": 2500000, \"param_bytes\": 1e7,\n"
    " \"forward_flops\": 1e11, \"backward_flops\": 2e11,\n"
    " \"layers\": [\n"
    "  {\"name\": \"c\", \"class\": \"conv\", \"forward_flops\": 1e11, \"forward_bytes\": 1e8,\n"
    "   \"backward_flops\": 2e11, \"backward_bytes\": 2e8, \"activation_bytes\": 4e8, \"param_bytes\": 1e7},\n"
    "  {\"name\": \"bn\", \"class\": \"norm\", \"forward_flops\": 1e8, \"forward_bytes\": 8e8,\n"
    "   \"backward_flops\": 2e8, \"backward_bytes\": 1.6e9, \"activation_bytes\": 4e8, \"param_bytes\": 0},\n"
    "  {\"name\": \"loss\", \"class\": \"loss\", \"forward_flops\": 1e5, \"forward_bytes\": 1e6,\n"
    "   \"backward_flops\": 1e5, \"backward_bytes\": 1e6, \"activation_bytes\": 0, \"param_bytes\": 0}],\n"
    " \"gradients\": [{\"name\": \"c.weight\", \"bytes\": 1e7, \"layer\": 0}],\n"
    " \"optimizer\": {\"name\": \"sgd\", \"flops\": 5e6, \"bytes\": 4e7},\n"
    " \"buckets\": [{\"bytes\": 1e7, \"ready_after_layer\": 0}]}\n";

/* Fits a group that fuses to figures the model makes unfused at known
 * parameters, with (mark) or without each point's "fusion": false. */
static json_t *fit_unfused_figures(const char *trace, const char *mark)
{
    char points[2048] = "";
    const int batches[] = {1, 4, 16, 64};
    for (int b = 0; b < 4; b++) {
        char one[384];
        snprintf(one, sizeof one, "%s{\"trace\": \"%s\", \"precision\": \"fp32\", \"batch\": %d, \"pass\": "
                 "\"train\", %s\"samples_per_s\": %.17g, \"source\": \"the model unfused\"}", b ? ", " : "", trace,
                 batches[b], mark, model_on("generic-accelerator", TRUE_CONV, 1, TRUE_HALF_WORK, 0, 0, trace, batches[b], 0));
        strcat(points, one);
    }
    return fit_points(points, 1);
}

/* A point measured with software that does not fuse (an older framework on
 * the same silicon) is replayed unfused in a group that fuses: the known
 * parameters come back. Replayed fused, the norm's launches and reads are
 * missing: the half-work FLOPs grow to stand in for them (2.9e10 for 2e10)
 * and the figures are still missed by over 1 %. */
START_TEST(point_fusion_overrides_its_group)
{
    char trace[64];
    tu_write_temp(CONV_NORM, trace, sizeof trace);
    json_t *doc = fit_unfused_figures(trace, "\"fusion\": false, ");
    ck_assert_double_eq_tol(param(doc, "conv"), TRUE_CONV, 2e-3);
    ck_assert_double_eq_tol(param(doc, "half_work_flops") / TRUE_HALF_WORK, 1, 3e-3);
    ck_assert_ptr_null(json_object_get(json_object_get(json_object_get(doc, "devices"), "generic-accelerator"),
                                       "gemm_half_depth"));
    json_t *devs = json_object_get(doc, "devices");
    ck_assert(json_is_true(json_object_get(json_object_get(devs, "generic-accelerator"), "fusion")));
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "residuals"), i, r) {
        ck_assert(json_is_false(json_object_get(r, "fusion")));
        ck_assert_double_lt(fabs(json_real_value(json_object_get(r, "error"))), 2e-3);
    }
    json_decref(doc);
    doc = fit_unfused_figures(trace, "");
    ck_assert_double_gt(param(doc, "half_work_flops") / TRUE_HALF_WORK, 1.2);
    double worst = 0;
    json_array_foreach(json_object_get(doc, "residuals"), i, r)
        worst = fmax(worst, fabs(json_real_value(json_object_get(r, "error"))));
    ck_assert_double_gt(worst, 0.01);
    ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(doc, "residuals"), 0), "fusion"));
    json_decref(doc);
    unlink(trace);
}
END_TEST

START_TEST(bad_sets_are_refused)
{
    char text[1024];
    const char *point = "{\"trace\": \"" TTASIM_SRCDIR "/tests/data/tiny-trace.json\", \"precision\": \"fp32\", "
                        "\"batch\": 8, \"pass\": \"train\", \"samples_per_s\": 100, \"source\": \"s\"}";
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"no-such-gpu\"], \"fusion\": true, \"points\": [%s]}]}", point);
    expect_bad(text, "$.groups[0].devices[0]: no device \"no-such-gpu\"");
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": true, \"pointz\": [%s]}]}", point);
    expect_bad(text, "did you mean \"points\"");
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": true, \"points\": [{\"trace\": \"no/such.json\", "
             "\"precision\": \"fp32\", \"batch\": 8, \"pass\": \"train\", \"samples_per_s\": 1, \"source\": \"s\"}]}]}");
    expect_bad(text, "$.groups[0].points[0].trace: cannot read \"no/such.json\"");
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": true, \"points\": [%s]}]}", point);
    *strstr(text, "train") = 'b';
    expect_bad(text, "$.groups[0].points[0].pass");
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": true, \"points\": [{\"trace\": \"" TTASIM_SRCDIR
             "/tests/data/tiny-trace.json\", \"precision\": \"fp32\", \"batch\": 8, \"pass\": \"train\", "
             "\"fusion\": \"no\", \"samples_per_s\": 1, \"source\": \"s\"}]}]}");
    expect_bad(text, "$.groups[0].points[0].fusion");
    /* a versus device or an inherited one must be fitted by an earlier group */
    const char *versus = "{\"trace\": \"" TTASIM_SRCDIR "/tests/data/tiny-trace.json\", \"precision\": \"fp32\", "
                         "\"batch\": 8, \"pass\": \"train\", \"samples_per_s\": 100, \"versus\": {\"device\": "
                         "\"v100-sxm2\", \"samples_per_s\": 50}, \"source\": \"s\"}";
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": true, \"points\": [%s]}]}", versus);
    expect_bad(text, "$.groups[0].points[0].versus.device: \"v100-sxm2\" is not the first device of an earlier group");
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": true, \"inherits\": {\"device\": \"v100-sxm2\", "
             "\"fill_ratio\": 1}, \"points\": [%s]}]}", point);
    expect_bad(text, "$.groups[0].inherits.device: \"v100-sxm2\" is not the first device of an earlier group");
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": true, \"inherits\": {\"device\": \"v100-sxm2\"}, "
             "\"points\": [%s]}]}", point);
    expect_bad(text, "fill_ratio");
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": [{\"devices\": "
             "[\"generic-accelerator\"], \"fusion\": true, \"inherits\": {\"device\": \"v100-sxm2\", "
             "\"fill_ratio\": 1, \"fits\": [\"norm\"]}, \"points\": [%s]}]}", point);
    expect_bad(text, "$.groups[0].inherits.fits[0]: expected \"conv\", \"gemm\" or \"attention\"");
}
END_TEST

/* A fitted-parameters file naming an unknown device or key is refused with
 * the file and JSON path; a good one sets the device's per-op parameters. */
START_TEST(fitted_file_applies_and_refuses)
{
    device_table lib = {0};
    tt_error err = {0};
    ck_assert_int_eq(device_table_load_uncalibrated(&lib, &err), TT_OK);
    json_error_t je;
    json_t *good = json_loads("{\"format\": \"ttasim-calibrated\", \"version\": 1, \"devices\": {\"generic-accelerator\": "
                              "{\"dispatch_s\": 5e-6, \"fusion\": true, \"fp16\": {\"half_work_flops\": 2e9, "
                              "\"efficiency\": {\"conv\": 0.4}, \"backward_efficiency\": {\"conv\": 1.3}}}}, "
                              "\"residuals\": []}", 0, &je);
    ck_assert_int_eq(device_table_apply_calibrated(&lib, "fitted.json", good, &err), TT_OK);
    const device_info *d = device_table_find(&lib, "generic-accelerator");
    ck_assert_double_eq(d->dispatch_s, 5e-6);
    ck_assert_int_eq(d->fusion, 1);
    ck_assert_double_eq(d->half_work_flops[DTYPE_FP16], 2e9);
    ck_assert_double_eq(d->efficiency[DTYPE_FP16][OPCLASS_CONV], 0.4);
    ck_assert_double_eq(d->efficiency[DTYPE_FP16][OPCLASS_GEMM], 0.5); /* untouched */
    ck_assert_double_eq(d->backward_efficiency[DTYPE_FP16][OPCLASS_CONV], 1.3);
    ck_assert_double_eq(d->backward_efficiency[DTYPE_FP16][OPCLASS_GEMM], 1); /* as the forward */
    ck_assert_double_eq(d->backward_efficiency[DTYPE_FP32][OPCLASS_CONV], 1);
    json_decref(good);
    json_t *bad = json_loads("{\"format\": \"ttasim-calibrated\", \"version\": 1, \"devices\": {\"no-such\": "
                             "{\"dispatch_s\": 5e-6, \"fusion\": true}}}", 0, &je);
    ck_assert_int_eq(device_table_apply_calibrated(&lib, "fitted.json", bad, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "fitted.json: $.devices.no-such: no device"));
    json_decref(bad);
    bad = json_loads("{\"format\": \"ttasim-calibrated\", \"version\": 1, \"devices\": {\"generic-accelerator\": "
                     "{\"dispatch_s\": 5e-6, \"fusion\": true, \"fp16\": {\"half_work_flop\": 1}}}}", 0, &je);
    ck_assert_int_eq(device_table_apply_calibrated(&lib, "fitted.json", bad, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "did you mean \"half_work_flops\"") != NULL, "%s", err.msg);
    json_decref(bad);
    /* a backward ratio that is not a positive number, fitted or in a device definition */
    const char *ratios[] = {"0", "-1.2", "\"fast\""};
    for (int k = 0; k < 3; k++) {
        char text[512];
        snprintf(text, sizeof text, "{\"format\": \"ttasim-calibrated\", \"version\": 1, \"devices\": "
                 "{\"generic-accelerator\": {\"dispatch_s\": 5e-6, \"fusion\": true, \"fp16\": {\"half_work_flops\": "
                 "2e9, \"efficiency\": {\"conv\": 0.4}, \"backward_efficiency\": {\"conv\": %s}}}}}", ratios[k]);
        bad = json_loads(text, 0, &je);
        ck_assert_int_eq(device_table_apply_calibrated(&lib, "fitted.json", bad, &err), TT_EINPUT);
        const char *where = "fitted.json: $.devices.generic-accelerator.fp16.backward_efficiency.conv";
        ck_assert_msg(strstr(err.msg, where) != NULL, "%s", err.msg);
        json_decref(bad);
        snprintf(text, sizeof text, "{\"mine\": {\"kind\": \"accelerator\", \"peak_flops\": {\"fp32\": 1e13}, "
                 "\"mem_bytes\": 1e10, \"mem_Bps\": 1e12, \"tdp_w\": 300, \"efficiency\": {\"fp32\": "
                 "{\"default\": 0.5}}, \"backward_efficiency\": {\"fp32\": {\"conv\": %s}}}}", ratios[k]);
        bad = json_loads(text, 0, &je);
        ck_assert_int_eq(device_table_add_json(&lib, "mine.json", bad, "$.devices", &err), TT_EINPUT);
        ck_assert_msg(strstr(err.msg, "mine.json: $.devices.mine.backward_efficiency.fp32.conv") != NULL, "%s",
                      err.msg);
        json_decref(bad);
    }
    device_table_free(&lib);
}
END_TEST

/* The points of write_set made by the model on a device at a conv efficiency
 * and half-work FLOPs. */
static void points_on(const synthetic *sy, const char *device, double conv, double half_work, char *points,
                      size_t size)
{
    const int batches[] = {1, 4, 16, 64};
    *points = 0;
    for (int c = 0; c < 2; c++)
        for (int b = 0; b < 4; b++) {
            const char *path = c ? sy->gemm_path : sy->conv_path;
            char one[384];
            snprintf(one, sizeof one, "%s{\"trace\": \"%s\", \"precision\": \"fp32\", \"batch\": %d, \"pass\": \"%s\", "
                     "\"samples_per_s\": %.17g, \"source\": \"the model at known parameters\"}",
                     *points ? ", " : "", path, batches[b], b == 1 ? "forward" : "train",
                     model_on(device, conv, 1, half_work, 0, 0, path, batches[b], b == 1));
            snprintf(points + strlen(points), size - strlen(points), "%s", one);
        }
}

/* 'ttasim calibrate --leave-out' on the set at path (from devices.json alone,
 * as the command fits); the leave-out's fit of the whole set must be
 * calibration_fit's. */
static int leave_out_file(const char *path, json_t **fitted, json_t **table, tt_error *err)
{
    device_table lib = {0};
    calibration *c = NULL;
    json_t *plain = NULL;
    *fitted = *table = NULL;
    ck_assert_int_eq(device_table_load_uncalibrated(&lib, err), TT_OK);
    int rc = calibration_load(path, &c, err);
    if (rc == TT_OK)
        rc = calibration_leave_out(c, &lib, fitted, table, err);
    if (rc == TT_OK) {
        ck_assert_int_eq(calibration_fit(c, &lib, &plain, err), TT_OK);
        ck_assert(json_equal(*fitted, plain));
        json_decref(plain);
    }
    calibration_free(c);
    device_table_free(&lib);
    return rc;
}

/* Two parts of one silicon (V100 SXM2 and SXM3: the same peaks and SMs) and
 * an older generation (P100, conv at half the fraction): leaving either V100
 * out, the other predicts it (the nearest generation, not the P100), within
 * the fit's own error; the P100 left out takes the V100's fractions, and
 * its figures, made at another conv fraction, miss by what that costs. No
 * group names another, so none is refitted. */
START_TEST(leave_out_predicts_from_the_nearest_generation)
{
    synthetic sy;
    make_traces(&sy);
    char a[2048], b[2048], old[2048], text[8192];
    points_on(&sy, "v100-sxm2", TRUE_CONV, TRUE_HALF_WORK, a, sizeof a);
    points_on(&sy, "v100-sxm3-32gb", TRUE_CONV, TRUE_HALF_WORK, b, sizeof b);
    points_on(&sy, "p100-sxm2", TRUE_CONV / 2, TRUE_HALF_WORK, old, sizeof old);
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": ["
             "{\"devices\": [\"v100-sxm2\"], \"fusion\": false, \"points\": [%s]}, "
             "{\"devices\": [\"v100-sxm3-32gb\"], \"fusion\": false, \"points\": [%s]}, "
             "{\"devices\": [\"p100-sxm2\"], \"fusion\": false, \"points\": [%s]}]}\n", a, b, old);
    tu_write_temp(text, sy.set_path, sizeof sy.set_path);
    tt_error err = {0};
    json_t *fitted, *table;
    ck_assert_msg(leave_out_file(sy.set_path, &fitted, &table, &err) == TT_OK, "%s", err.msg);
    json_t *rows = json_object_get(table, "generations");
    ck_assert_int_eq((int)json_array_size(rows), 3);
    for (int k = 0; k < 2; k++) {
        json_t *row = json_array_get(rows, (size_t)k);
        ck_assert_int_eq((int)json_integer_value(json_object_get(row, "points")), 8);
        ck_assert_double_lt(json_real_value(json_object_get(row, "worst_abs_error")), 5e-3);
        ck_assert_int_eq((int)json_array_size(json_object_get(row, "refitted")), 0);
        json_t *conv = json_object_get(json_object_get(json_object_get(row, "parameters"), "fp32"), "efficiency");
        ck_assert_double_eq_tol(json_real_value(json_object_get(conv, "conv")), TRUE_CONV, 3e-3);
    }
    /* the P100's conv-bound points run at about twice the predicted fraction's time */
    json_t *p100 = json_array_get(rows, 2);
    ck_assert_str_eq(json_string_value(json_object_get(p100, "device")), "p100-sxm2");
    ck_assert_double_gt(json_real_value(json_object_get(p100, "worst_abs_error")), 0.5);
    json_decref(fitted);
    json_decref(table);
    remove_synthetic(&sy);
}
END_TEST

/* Across generations a convolution keeps its rate per SM-cycle and a GEMM
 * its fraction of peak, and the work that fills the device scales with its
 * SMs: H100 figures made so (fp32 conv at the A100's FLOPs per SM-cycle)
 * are predicted from the A100's fit alone, and the other way round. */
START_TEST(leave_out_carries_conv_per_sm_cycle)
{
    synthetic sy;
    make_traces(&sy);
    device_table lib = {0};
    tt_error err = {0};
    ck_assert_int_eq(device_table_load_library(&lib, &err), TT_OK);
    const device_info *a100 = device_table_find(&lib, "a100-sxm4-80gb"), *h100 = device_table_find(&lib, "h100-sxm5-80gb");
    double per_cycle = TRUE_CONV * a100->peak_flops[DTYPE_FP32] / (a100->compute_units * a100->clock_hz);
    double conv_h = per_cycle * h100->compute_units * h100->clock_hz / h100->peak_flops[DTYPE_FP32];
    double half_h = TRUE_HALF_WORK * h100->compute_units / a100->compute_units;
    device_table_free(&lib);
    char a[2048], h[2048], text[8192];
    points_on(&sy, "a100-sxm4-80gb", TRUE_CONV, TRUE_HALF_WORK, a, sizeof a);
    points_on(&sy, "h100-sxm5-80gb", conv_h, half_h, h, sizeof h);
    snprintf(text, sizeof text, "{\"format\": \"ttasim-calibration\", \"version\": 1, \"groups\": ["
             "{\"devices\": [\"a100-sxm4-80gb\"], \"fusion\": false, \"points\": [%s]}, "
             "{\"devices\": [\"h100-sxm5-80gb\"], \"fusion\": false, \"points\": [%s]}]}\n", a, h);
    tu_write_temp(text, sy.set_path, sizeof sy.set_path);
    json_t *fitted, *table;
    ck_assert_msg(leave_out_file(sy.set_path, &fitted, &table, &err) == TT_OK, "%s", err.msg);
    json_t *rows = json_object_get(table, "generations");
    for (int k = 0; k < 2; k++)
        ck_assert_double_lt(json_real_value(json_object_get(json_array_get(rows, (size_t)k), "worst_abs_error")), 5e-3);
    json_t *h100_conv = json_object_get(json_object_get(json_object_get(json_object_get(json_array_get(rows, 1),
                                        "parameters"), "fp32"), "efficiency"), "conv");
    ck_assert_double_eq_tol(json_real_value(h100_conv), conv_h, 3e-3);
    json_decref(fitted);
    json_decref(table);
    remove_synthetic(&sy);
}
END_TEST

/* A generation with no other of its vendor fitted has nothing to take: an
 * input error naming the device, not a prediction from defaults. */
START_TEST(leave_out_needs_another_generation)
{
    synthetic sy;
    make_traces(&sy);
    write_set(&sy, "");
    tt_error err = {0};
    json_t *fitted, *table;
    ck_assert_int_eq(leave_out_file(sy.set_path, &fitted, &table, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "\"generic-accelerator\": no other generation of its vendor") != NULL, "%s",
                  err.msg);
    remove_synthetic(&sy);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("calibration");
    TCase *t = tcase_create("fit");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, fit_recovers_known_parameters);
    tcase_add_test(t, fit_recovers_gemm_half_depth);
    tcase_add_test(t, fit_bounds_the_worst_error);
    tcase_add_test(t, versus_fits_the_ratio_and_inherits_the_rest);
    tcase_add_test(t, fits_restricts_the_search);
    tcase_add_test(t, point_fusion_overrides_its_group);
    tcase_add_test(t, two_passes_fit_the_backward_ratio);
    tcase_add_test(t, bad_sets_are_refused);
    tcase_add_test(t, fitted_file_applies_and_refuses);
    tcase_add_test(t, leave_out_predicts_from_the_nearest_generation);
    tcase_add_test(t, leave_out_needs_another_generation);
    tcase_add_test(t, leave_out_carries_conv_per_sm_cycle);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
