/* test_input_pipeline.c: the host input pipeline (sim/replay/input_pipeline.c,
 * workload.input): the per-core rate from its benchmarks, the host rate, the
 * step rule (max of the accelerators' step and the host's, not their sum), a
 * scenario where the host binds and one where it does not, and bad input. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/replay/input_pipeline.h"
#include "tests/testutil.h"

#define PUB TTASIM_SRCDIR "/scenarios/published/"

/* Worked by hand: a 469 x 387 px image at 517 x 606 px / 4.5461893 ms
 * (2.63366 ms), a crop at 1/1295 s, a flip at 1/1652 s: 4.011239 ms, 249.2995/s. */
START_TEST(core_rate_from_benchmarks)
{
    ck_assert_double_eq_tol(input_pipeline_core_images_per_s(INPUT_CPU_JPEG), 249.2995, 1e-3);
    ck_assert_double_eq(input_pipeline_core_images_per_s(INPUT_NONE), 0);
    ck_assert_double_eq(input_pipeline_core_images_per_s(INPUT_SYNTHETIC), 0);
}
END_TEST

START_TEST(host_rate_is_workers_times_core_rate)
{
    tt_error err = {0};
    double r, core = input_pipeline_core_images_per_s(INPUT_CPU_JPEG);
    ck_assert_int_eq(input_pipeline_host_images_per_s(INPUT_CPU_JPEG, 40, 0, "s.json", "p", &r, &err), TT_OK);
    ck_assert_double_eq_tol(r, 40 * core, 1e-9);
    ck_assert_int_eq(input_pipeline_host_images_per_s(INPUT_CPU_JPEG, 40, 16, "s.json", "p", &r, &err), TT_OK);
    ck_assert_double_eq_tol(r, 16 * core, 1e-9); /* fewer workers than cores */
    ck_assert_int_eq(input_pipeline_host_images_per_s(INPUT_CPU_JPEG, 40, 64, "s.json", "p", &r, &err), TT_OK);
    ck_assert_double_eq_tol(r, 40 * core, 1e-9); /* more workers than cores share them */
    ck_assert_int_eq(input_pipeline_host_images_per_s(INPUT_SYNTHETIC, 0, 0, "s.json", "p", &r, &err), TT_OK);
    ck_assert_double_eq(r, 0);
    ck_assert_int_eq(input_pipeline_host_images_per_s(INPUT_CPU_JPEG, 0, 0, "s.json", "tpu-pod", &r, &err),
                     TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "s.json: $.workload.input.pipeline"));
    ck_assert_ptr_nonnull(strstr(err.msg, "tpu-pod has no CPU component"));
}
END_TEST

/* 256 images at 1,000 images/s take 0.256 s: a 0.2 s step waits 0.056 s (the
 * pipeline ran ahead: not 0.456 s), a 0.3 s step does not wait. */
START_TEST(step_is_the_max_not_the_sum)
{
    double in, wait;
    input_pipeline_step(0.2, 256, 1000, &in, &wait);
    ck_assert_double_eq_tol(in, 0.256, 1e-12);
    ck_assert_double_eq_tol(wait, 0.056, 1e-12);
    input_pipeline_step(0.3, 256, 1000, &in, &wait);
    ck_assert_double_eq_tol(in, 0.256, 1e-12);
    ck_assert_double_eq(wait, 0);
    input_pipeline_step(0.3, 256, 0, &in, &wait); /* no host pipeline */
    ck_assert_double_eq(in, 0);
    ck_assert_double_eq(wait, 0);
}
END_TEST

static json_t *step_of(const char *scenario, const char *sets)
{
    char args[1024], out[1 << 16];
    snprintf(args, sizeof args, "run %s --json %s", scenario, sets);
    json_t *doc = tu_run_ttasim_json(args, 0, out, sizeof out);
    json_t *step = json_incref(json_object_get(doc, "step"));
    json_decref(doc);
    ck_assert_ptr_nonnull(step);
    return step;
}

static double num_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    ck_assert_msg(v != NULL, "no %s", key);
    return json_number_value(v);
}

/* One Big Basin server (2 x 20 host cores), 8 P100 at 32 images each: the
 * host needs 256 / (40 x 249.3) = 25.7 ms, under the GPUs' step, so the
 * step does not move; with 2 decode threads it needs 513 ms and binds. */
START_TEST(big_basin_host_keeps_up_unless_threads_are_few)
{
    json_t *none = step_of(PUB "resnet50-he-2016.json", "--set workload.input.pipeline=none");
    json_t *jpeg = step_of(PUB "resnet50-he-2016.json", "--set workload.input.pipeline=cpu-jpeg "
                                                        "--set workload.input.threads=40");
    json_t *two = step_of(PUB "resnet50-he-2016.json", "--set workload.input.pipeline=cpu-jpeg "
                                                       "--set workload.input.threads=2");
    double core = input_pipeline_core_images_per_s(INPUT_CPU_JPEG), gpu_s = num_of(none, "time_s");
    ck_assert_ptr_null(json_object_get(none, "input_s")); /* not modelled: not reported */
    ck_assert_double_eq_tol(num_of(jpeg, "input_s"), 256 / (40 * core), 1e-9);
    ck_assert_double_eq(num_of(jpeg, "input_wait_s"), 0);
    ck_assert_double_eq_tol(num_of(jpeg, "time_s"), gpu_s, 1e-12);
    ck_assert_double_eq_tol(num_of(two, "input_s"), 256 / (2 * core), 1e-9);
    ck_assert_double_eq_tol(num_of(two, "time_s"), 256 / (2 * core), 1e-9);
    ck_assert_double_eq_tol(num_of(two, "input_wait_s"), 256 / (2 * core) - gpu_s, 1e-9);
    ck_assert_double_eq_tol(num_of(two, "idle_s") - num_of(none, "idle_s"), 256 / (2 * core) - gpu_s, 1e-9);
    json_decref(none);
    json_decref(jpeg);
    json_decref(two);
    char out[1 << 15];
    ck_assert_int_eq(tu_run_ttasim("run " PUB "resnet50-he-2016.json --set workload.input.pipeline=cpu-jpeg "
                                   "--set workload.input.threads=2", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "step.input_s") && strstr(out, "(host input pipeline for the node's images; waited"),
                  "the text report does not show the input pipeline: %s", out);
}
END_TEST

/* One DGX-1 (2 x 20 host cores), 8 V100 at ViT-B/32 fp16 with 128 images
 * each: 1,024 images take the host 102.7 ms, more than the GPUs' step. */
START_TEST(dgx1_host_binds_vit)
{
    const char *one = "--set platform.nodes=1 --set workload.global_batch=1024 ";
    char sets[256];
    snprintf(sets, sizeof sets, "%s--set workload.input.pipeline=none", one);
    json_t *none = step_of(PUB "vit-b32-64gpu.json", sets);
    snprintf(sets, sizeof sets, "%s--set workload.input.pipeline=cpu-jpeg", one);
    json_t *jpeg = step_of(PUB "vit-b32-64gpu.json", sets);
    double host_s = 1024 / (40 * input_pipeline_core_images_per_s(INPUT_CPU_JPEG));
    ck_assert_msg(num_of(none, "time_s") < host_s, "the GPUs' step %g s is not under the host's %g s",
                  num_of(none, "time_s"), host_s);
    ck_assert_double_eq_tol(num_of(jpeg, "input_s"), host_s, 1e-9);
    ck_assert_double_eq_tol(num_of(jpeg, "time_s"), host_s, 1e-9);
    ck_assert_double_eq_tol(num_of(jpeg, "input_wait_s"), host_s - num_of(none, "time_s"), 1e-9);
    ck_assert_double_eq_tol(num_of(jpeg, "compute_s"), num_of(none, "compute_s"), 1e-12);
    json_decref(none);
    json_decref(jpeg);
}
END_TEST

static void refused(const char *sets, const char *want)
{
    char args[512], out[8192];
    snprintf(args, sizeof args, "run " PUB "resnet50-he-2016.json %s", sets);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, want) != NULL, "ttasim %s said: %s (wanted %s)", args, out, want);
}

START_TEST(bad_input_is_named)
{
    refused("--set workload.input.pipeline=gpu",
            "$.workload.input.pipeline: expected one of \"none\", \"synthetic\", \"cpu-jpeg\", found \"gpu\"");
    refused("--set workload.input.thread=4", "$.workload.input: unknown key \"thread\" (did you mean \"threads\"?)");
    refused("--set workload.input.pipeline=cpu-jpeg --set workload.input.threads=0", "$.workload.input.threads");
    char args[512], out[8192];
    snprintf(args, sizeof args, "run " PUB "resnet50-smith-2017.json --set workload.input.pipeline=cpu-jpeg");
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "resnet50-smith-2017.json: $.workload.input.pipeline: \"cpu-jpeg\" decodes on the "
                              "host CPUs, but platform tpu-v2-pod has no CPU component") != NULL, "%s", out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("input_pipeline");
    TCase *t = tcase_create("rule");
    tcase_add_test(t, core_rate_from_benchmarks);
    tcase_add_test(t, host_rate_is_workers_times_core_rate);
    tcase_add_test(t, step_is_the_max_not_the_sum);
    suite_add_tcase(s, t);
    TCase *r = tcase_create("scenarios");
    tcase_set_timeout(r, 300);
    tcase_add_test(r, big_basin_host_keeps_up_unless_threads_are_few);
    tcase_add_test(r, dgx1_host_binds_vit);
    tcase_add_test(r, bad_input_is_named);
    suite_add_tcase(s, r);
    return tu_run_suite(s) ? 1 : 0;
}
