/* Precisions on the device model: bf16 shares fp16's calibration where the
 * tensor cores run both at one peak; fp8 runs the linear layers' GEMMs at
 * the fp8 peak and everything else as bf16 (its attention with a fraction
 * of its own where fitted); a device without fp8 refuses. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "platforms/device.h"
#include "sim/replay/device_model.h"
#include "sim/replay/step.h"
#include "sim/replay/workload.h"
#include "tests/testutil.h"

#define TINY TTASIM_SRCDIR "/tests/data/tiny-trace.json"

static device_table lib;

static void load(void)
{
    tt_error err = {0};
    ck_assert_int_eq(device_table_load_library(&lib, &err), TT_OK);
}

static void unload(void)
{
    device_table_free(&lib);
}

static device_model model_at(const char *device, const char *precision)
{
    tt_error err = {0};
    device_model d;
    const device_info *dev = device_table_find(&lib, device);
    ck_assert_ptr_nonnull(dev);
    ck_assert_msg(device_model_of(dev, precision, &d, &err) == TT_OK, "%s", err.msg);
    return d;
}

/* Every number the per-op model reads, equal between the two precisions. */
static void assert_same_model(const device_model *a, const device_model *b)
{
    ck_assert_double_eq(a->peak_flops, b->peak_flops);
    ck_assert_double_eq(a->half_work_flops, b->half_work_flops);
    ck_assert_double_eq(a->dispatch_s, b->dispatch_s);
    ck_assert_double_eq(a->gemm_peak_flops, b->gemm_peak_flops);
    ck_assert_double_eq(a->gemm_half_work_flops, b->gemm_half_work_flops);
    for (int c = 0; c < OPCLASS_COUNT; c++) {
        ck_assert_double_eq(a->efficiency[c], b->efficiency[c]);
        ck_assert_double_eq(a->backward_efficiency[c], b->backward_efficiency[c]);
    }
}

/* A100 and H100 run bf16 and fp16 on the same tensor cores at the same peak:
 * one calibration serves both (issue 28: bf16 ran 1.5-1.8x faster on
 * devices.json's defaults). */
START_TEST(bf16_is_fp16_on_one_datapath)
{
    const char *same[] = {"a100-sxm4-80gb", "a100-sxm4-40gb", "h100-sxm5-80gb"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        device_model bf = model_at(same[i], "bf16"), fp = model_at(same[i], "fp16");
        assert_same_model(&bf, &fp);
        /* and it is the fitted model, not devices.json's defaults */
        ck_assert_double_eq(fp.efficiency[OPCLASS_GEMM],
                            device_table_find(&lib, same[i])->efficiency[DTYPE_FP16][OPCLASS_GEMM]);
        ck_assert(fp.half_work_flops > 0);
    }
    /* no bf16 on a V100: fp32 math on bf16 data; a TPU has bf16 only, its own */
    ck_assert_double_eq(model_at("v100-sxm2", "bf16").peak_flops, 15.7e12);
    ck_assert_double_eq(model_at("tpu-v3", "bf16").peak_flops, 123e12);
    ck_assert_int_eq(device_math_dtype(device_table_find(&lib, "tpu-v3"), DTYPE_BF16), DTYPE_BF16);
}
END_TEST

/* fp8 as Transformer Engine runs it: GEMMs at the fp8 peak with the fp8
 * fraction, attention at the bf16 peak with fp8 runs' own fraction (its
 * fused kernels, fitted on fp8 points), the rest exactly as bf16. */
START_TEST(fp8_runs_the_gemms_at_the_fp8_peak)
{
    const device_info *h100 = device_table_find(&lib, "h100-sxm5-80gb");
    device_model f8 = model_at("h100-sxm5-80gb", "fp8"), bf = model_at("h100-sxm5-80gb", "bf16");
    ck_assert_double_eq(f8.gemm_peak_flops, 1979e12);
    ck_assert_double_eq(device_model_peak(&f8, OPCLASS_GEMM), 1979e12);
    ck_assert_double_eq(f8.peak_flops, 989e12); /* what MFU counts against, as bf16 */
    ck_assert_double_eq(f8.efficiency[OPCLASS_GEMM], h100->efficiency[DTYPE_FP8][OPCLASS_GEMM]);
    ck_assert(f8.efficiency[OPCLASS_GEMM] != bf.efficiency[OPCLASS_GEMM]);
    ck_assert(h100->fp8_attention);
    ck_assert_double_eq(f8.efficiency[OPCLASS_ATTENTION], h100->efficiency[DTYPE_FP8][OPCLASS_ATTENTION]);
    ck_assert(f8.efficiency[OPCLASS_ATTENTION] != bf.efficiency[OPCLASS_ATTENTION]);
    for (int c = 0; c < OPCLASS_COUNT; c++)
        if (c != OPCLASS_GEMM && c != OPCLASS_ATTENTION)
            ck_assert_double_eq(f8.efficiency[c], bf.efficiency[c]);
    ck_assert_double_eq(device_model_peak(&f8, OPCLASS_ATTENTION), 989e12);
    /* a device no fp8 point fitted: its fp8 attention is bf16's */
    device_info plain = *h100;
    plain.fp8_attention = 0;
    device_model p8;
    tt_error perr = {0};
    ck_assert_int_eq(device_model_of(&plain, "fp8", &p8, &perr), TT_OK);
    ck_assert_double_eq(p8.efficiency[OPCLASS_ATTENTION], bf.efficiency[OPCLASS_ATTENTION]);
    ck_assert_double_eq(p8.efficiency[OPCLASS_GEMM], f8.efficiency[OPCLASS_GEMM]);
    ck_assert_double_eq(f8.half_work_flops, bf.half_work_flops);
    /* the same wave of tiles at twice the rate */
    ck_assert_double_eq_tol(f8.gemm_half_work_flops, 2.001 * bf.half_work_flops, 1e-3 * bf.half_work_flops);

    /* on a trace: the GEMM layer gets faster by the peak and efficiency ratio, the conv does not */
    workload t;
    tt_error err = {0};
    ck_assert_int_eq(workload_load(TINY, &t, &err), TT_OK);
    step_options o = {.micro_batch = 8, .accumulation = 1, .dtype_bytes = 2, .grad_dtype_bytes = 2, .ranks = 1};
    bf.dispatch_s = f8.dispatch_s = 0;
    bf.half_work_flops = f8.half_work_flops = bf.gemm_half_work_flops = f8.gemm_half_work_flops = 0;
    double want = 1979e12 * f8.efficiency[OPCLASS_GEMM] / (989e12 * bf.efficiency[OPCLASS_GEMM]);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &bf, &o, 0) / step_layer_s(&t, 1, &f8, &o, 0), want, want * 1e-12);
    ck_assert_double_eq(step_layer_s(&t, 0, &bf, &o, 1), step_layer_s(&t, 0, &f8, &o, 1));
    workload_free(&t);
}
END_TEST

/* A device without an fp8 peak: an input error naming it, exit 2 from run. */
START_TEST(fp8_without_the_silicon_is_refused)
{
    device_model d;
    tt_error err = {0};
    ck_assert_int_eq(device_model_of(device_table_find(&lib, "a100-sxm4-80gb"), "fp8", &d, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "a100-sxm4-80gb has no fp8 peak"), "%s", err.msg);
    char text[512], path[64], args[128], out[1 << 14];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"fp8\", \"platform\": {\"name\": \"dgx-a100\", \"nodes\": 1},\n"
             " \"workload\": {\"trace\": \"" TINY "\", \"global_batch\": 64, \"precision\": \"fp8\"},\n"
             " \"optimizer\": \"sgd\", \"convergence\": {\"steps\": 10}}\n");
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    unlink(path);
    ck_assert_msg(strstr(out, "a100-sxm4-40gb has no fp8 peak"), "%s", out); /* the DGX A100 of 2020 */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("precision");
    TCase *t = tcase_create("device model");
    tcase_add_checked_fixture(t, load, unload);
    tcase_add_test(t, bf16_is_fp16_on_one_datapath);
    tcase_add_test(t, fp8_runs_the_gemms_at_the_fp8_peak);
    tcase_add_test(t, fp8_without_the_silicon_is_refused);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
