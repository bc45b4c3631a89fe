/* Data-parallel training: K workers with micro-batches and gradient averaging
 * give the update of one worker on the whole batch; training to a target on the
 * teacher stream; divergence as a result; `ttasim train` and sweep resumption. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainer/dataparallel.h"
#include "trainer/profile.h"
#include "tests/testutil.h"

enum { IN = 12, CLASSES = 4 };

static teacher TEACH;

static void fill_teacher(void *ctx, uint64_t first, model_inputs *in)
{
    (void)ctx;
    teacher_fill(&TEACH, first, in->batch, in->x, in->labels);
}

static dp_trainer *make_dp(int workers, long batch, long micro)
{
    model_opts mo;
    model_opts_default(&mo);
    const int w[] = {IN, 16, CLASSES};
    memcpy(mo.widths, w, sizeof w);
    mo.nwidths = 3;
    mo.seed = 7;
    dp_trainer *dp = NULL;
    tt_error err = {0};
    ck_assert_msg(dp_create(&dp, "mlp", &mo, workers, batch, micro, &err) == TT_OK, "%s", err.msg);
    return dp;
}

/* One worker on 24 samples vs 4 workers x 2 micro-batches of 3 vs 3 workers x 8:
 * same averaged gradient, and after two LAMB steps the same parameters (the
 * second step also checks the broadcast of the new parameters). */
START_TEST(workers_match_one_big_batch)
{
    ck_assert_int_eq(teacher_init(&TEACH, IN, 8, CLASSES, 3), 0);
    const int K[] = {1, 4, 3};
    const long micro[] = {24, 4, 8};
    dp_trainer *dp[3];
    optimizer *opt[3];
    optim_config c;
    optim_parse("lamb", &c);
    c.weight_decay = 0.01;
    tt_error err = {0};
    for (int i = 0; i < 3; i++) {
        dp[i] = make_dp(K[i], 24, micro[i]);
        ck_assert_int_eq(optimizer_create(&c, model_params(dp_master(dp[i])), &opt[i], &err), 0);
    }
    ck_assert_int_eq(dp_micro_batch(dp[1]), 3);
    ck_assert_int_eq(dp_micro_steps(dp[1]), 2);
    ck_assert_int_eq(dp_micro_steps(dp[2]), 1);
    for (int step = 0; step < 2; step++) {
        dp_grad_stats st[3];
        for (int i = 0; i < 3; i++)
            dp_gradients(dp[i], fill_teacher, NULL, (uint64_t)step * 24, &st[i]);
        param_set *ref = model_params(dp_master(dp[0]));
        double gmax = 0;
        for (size_t j = 0; j < ref->numel; j++)
            gmax = fmax(gmax, fabs(ref->grads[j]));
        ck_assert_double_gt(gmax, 1e-3);
        for (int i = 1; i < 3; i++) {
            param_set *ps = model_params(dp_master(dp[i]));
            for (size_t j = 0; j < ref->numel; j++)
                ck_assert_double_eq_tol(ps->grads[j], ref->grads[j], 1e-6 + 1e-4 * gmax);
            ck_assert_double_eq_tol(st[i].loss, st[0].loss, 1e-5);
            ck_assert_double_eq_tol(st[i].global_sq, st[0].global_sq, 1e-4 * st[0].global_sq);
            /* mean of squares >= square of mean: the small-batch gradients are noisier */
            ck_assert_double_gt(st[i].worker_sq, st[i].global_sq);
        }
        ck_assert_double_eq_tol(st[0].worker_sq, st[0].global_sq, 1e-9 * st[0].global_sq);
        for (int i = 0; i < 3; i++)
            dp_apply(dp[i], opt[i], 0.01);
    }
    param_set *ref = model_params(dp_master(dp[0]));
    for (int i = 1; i < 3; i++) {
        param_set *ps = model_params(dp_master(dp[i]));
        for (size_t j = 0; j < ref->numel; j++)
            ck_assert_double_eq_tol(ps->params[j], ref->params[j], 1e-5);
    }
    for (int i = 0; i < 3; i++) {
        optimizer_free(opt[i]);
        dp_free(dp[i]);
    }
    teacher_free(&TEACH);
}
END_TEST

START_TEST(bad_shapes)
{
    model_opts mo;
    model_opts_default(&mo);
    dp_trainer *dp = NULL;
    tt_error err = {0};
    ck_assert_int_eq(dp_create(&dp, "mlp", &mo, 3, 32, 8, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a multiple of 3 workers"));
    ck_assert_int_eq(dp_create(&dp, "no-such-model", &mo, 1, 32, 8, &err), TT_EINPUT);
    /* shard 7 with at most 4 per micro-batch: 7 micro-batches of 1 (equal sizes) */
    const int w[] = {IN, 8, CLASSES};
    memcpy(mo.widths, w, sizeof w);
    mo.nwidths = 3;
    ck_assert_int_eq(dp_create(&dp, "mlp", &mo, 1, 7, 4, &err), TT_OK);
    ck_assert_int_eq(dp_micro_batch(dp), 1);
    ck_assert_int_eq(dp_micro_steps(dp), 7);
    dp_free(dp);
}
END_TEST

static void small_options(dp_options *o)
{
    memset(o, 0, sizeof *o);
    o->model = "mlp";
    model_opts_default(&o->mo);
    const int w[] = {IN, 32, CLASSES};
    memcpy(o->mo.widths, w, sizeof w);
    o->mo.nwidths = 3;
    o->workers = 4;
    o->batch = 64;
    o->micro_max = 16;
    optim_parse("adamw", &o->opt);
    o->lr = (lr_schedule){.base_lr = 3e-3, .ref_batch = 64, .scaling = LR_SCALE_SQRT,
                          .warmup_steps = 10, .decay = LR_DECAY_CONSTANT};
    o->augment = -1;
    o->target = 0.75;
    o->eval_every = 25;
    o->max_steps = 600;
    o->seed = 1;
}

START_TEST(trains_to_target_on_teacher)
{
    ck_assert_int_eq(teacher_init(&TEACH, IN, 8, CLASSES, 3), 0);
    dp_data data = {.kind = DP_DATA_TEACHER, .teacher = &TEACH, .stream_epoch = 6400,
                    .stream_test = 2000};
    dp_options o;
    small_options(&o);
    o.warmup_epochs = 1; /* 100 steps, but at most the 10 steps set: the shorter */
    dp_result r;
    tt_error err = {0};
    ck_assert_int_eq(dp_train(&o, &data, &r, &err), TT_OK);
    ck_assert_int_eq(r.warmup_steps, 10);
    ck_assert_double_eq_tol(r.peak_lr, 3e-3, 1e-12);
    ck_assert_msg(r.reached, "final accuracy %g", r.final_test_accuracy);
    ck_assert(!r.diverged);
    ck_assert_int_eq(r.steps_to_target % 25, 0);
    ck_assert_int_gt(r.steps_to_target, 0);
    ck_assert_double_eq_tol(r.epochs_to_target, r.steps_to_target * 64 / 6400.0, 1e-9);
    ck_assert_double_ge(r.final_test_accuracy, 0.75);
    ck_assert_int_eq(r.curve[r.ncurve - 1].step, r.steps_to_target);
    ck_assert_double_lt(r.curve[0].test_accuracy, r.final_test_accuracy + 1e-9);
    ck_assert(isfinite(r.noise_scale) && r.noise_scale > 0);
    ck_assert_str_eq(r.data, "teacher");
    /* the same seed gives the same run */
    dp_result r2;
    ck_assert_int_eq(dp_train(&o, &data, &r2, &err), TT_OK);
    ck_assert_int_eq(r2.steps_to_target, r.steps_to_target);
    ck_assert_double_eq(r2.final_test_accuracy, r.final_test_accuracy);
    dp_result_free(&r2);
    dp_result_free(&r);

    /* a huge plain-SGD rate overflows: a diverged result, not an error */
    optim_parse("sgd", &o.opt);
    o.lr.base_lr = 1e30;
    ck_assert_int_eq(dp_train(&o, &data, &r, &err), TT_OK);
    ck_assert(r.diverged);
    ck_assert(!r.reached);
    ck_assert_int_lt(r.steps_run, 30);
    dp_result_free(&r);
    teacher_free(&TEACH);
}
END_TEST

/* Seeded augmentation on the real images: reproducible, and it changes training. */
START_TEST(fashion_mnist_augmentation)
{
    fmnist train, test;
    tt_error err = {0};
    ck_assert_msg(fmnist_load(NULL, "train", &train, &err) == TT_OK, "%s", err.msg);
    ck_assert_msg(fmnist_load(NULL, "t10k", &test, &err) == TT_OK, "%s", err.msg);
    dp_data data = {.kind = DP_DATA_FMNIST, .train = &train, .test = &test};
    dp_options o;
    small_options(&o);
    const int w[] = {784, 32, 10};
    memcpy(o.mo.widths, w, sizeof w);
    o.batch = 128, o.workers = 2, o.micro_max = 64;
    o.max_steps = 30, o.eval_every = 30, o.target = 0.99;
    o.augment = 1;
    dp_result a, b, c;
    ck_assert_int_eq(dp_train(&o, &data, &a, &err), TT_OK);
    ck_assert_int_eq(dp_train(&o, &data, &b, &err), TT_OK);
    o.augment = -1; /* auto: off, the batch is far below the 60,000 images */
    ck_assert_int_eq(dp_train(&o, &data, &c, &err), TT_OK);
    ck_assert_str_eq(a.data, "fashion-mnist+augment");
    ck_assert_str_eq(c.data, "fashion-mnist");
    ck_assert_int_eq(a.steps_run, 30);
    ck_assert_double_eq(a.final_test_accuracy, b.final_test_accuracy);
    ck_assert_double_ne(a.final_test_accuracy, c.final_test_accuracy);
    ck_assert_double_gt(a.final_test_accuracy, 0.4); /* still learns */
    ck_assert_double_gt(c.final_test_accuracy, 0.4);
    dp_result_free(&a);
    dp_result_free(&b);
    dp_result_free(&c);
    fmnist_free(&train);
    fmnist_free(&test);
}
END_TEST

#define TEACHER_ARGS "train --dataset teacher --widths 20,32,10 --optimizer adamw --lr 0.01 " \
                     "--workers 2 --target 0.6 --max-steps 300 --eval-every 20 "

START_TEST(cli_train_and_sweep_resume)
{
    static char out[1 << 16];
    ck_assert_int_eq(tu_run_ttasim(TEACHER_ARGS "--batch 64 --json", out, sizeof out), 0);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc, "not JSON: %s", out);
    ck_assert(json_is_true(json_object_get(doc, "reached")));
    ck_assert(json_integer_value(json_object_get(doc, "steps_to_target")) > 0);
    ck_assert(json_is_number(json_object_get(doc, "noise_scale")));
    ck_assert(json_real_value(json_object_get(doc, "final_test_accuracy")) >= 0.6);
    ck_assert(json_array_size(json_object_get(doc, "curve")) > 0);
    json_decref(doc);

    ck_assert_int_eq(tu_run_ttasim("train --optimizer lambb", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "did you mean 'lamb'"));
    /* an abbreviated --optimizer is read, not silently left at momentum */
    ck_assert_int_eq(tu_run_ttasim("train --optim=lambb", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "did you mean 'lamb'"));
    ck_assert_int_eq(tu_run_ttasim("train --batch 0", out, sizeof out), 2);
    ck_assert_int_eq(tu_run_ttasim("train --target 120%", out, sizeof out), 2);
    ck_assert_int_eq(tu_run_ttasim("train --warmpu-epochs 2", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "did you mean '--warmup-epochs'"));
    ck_assert_int_eq(
        tu_run_ttasim(TEACHER_ARGS "--batch 64 --optimizer sgd --lr 1e4", out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "diverged"));

    char path[64];
    tu_write_temp("", path, sizeof path);
    unlink(path); /* a fresh sweep */
    char args[512];
    snprintf(args, sizeof args, TEACHER_ARGS "--sweep-batch 32,128 --out %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "B_crit"));
    snprintf(args, sizeof args, TEACHER_ARGS "--sweep-batch 32,64,128 --out %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "batch 32 seed 1: already in"));
    ck_assert_ptr_nonnull(strstr(out, "batch 128 seed 1: already in"));
    conv_profile p;
    tt_error err = {0};
    ck_assert_int_eq(profile_load(path, &p, &err), TT_OK);
    ck_assert_int_eq(p.npoints, 3);
    ck_assert_str_eq(p.model, "mlp");
    ck_assert_str_eq(p.dataset, "teacher");
    ck_assert_str_eq(p.recipe.optimizer, "adamw");
    ck_assert_int_eq(p.points[0].nruns, 1);
    ck_assert_int_eq(p.points[0].runs[0].seed, 1);
    ck_assert_int_eq(p.points[1].batch, 64);
    ck_assert(p.points[0].reached && p.points[2].reached);
    /* more examples but fewer steps at the larger batch */
    ck_assert_int_gt(p.points[0].steps, p.points[2].steps);
    /* a second seed at batch 32 adds a run; the point is now the mean of the two runs */
    long first = p.points[0].steps;
    profile_free(&p);
    snprintf(args, sizeof args, TEACHER_ARGS "--sweep-batch 32 --seeds 1,2 --out %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "batch 32 seed 1: already in"));
    ck_assert_int_eq(profile_load(path, &p, &err), TT_OK);
    ck_assert_int_eq(p.points[0].nruns, 2);
    ck_assert_int_eq(p.points[0].runs[0].steps, first);
    ck_assert_int_eq(p.points[0].runs[1].seed, 2);
    ck_assert(p.points[0].runs[0].reached && p.points[0].runs[1].reached);
    ck_assert_int_eq(p.points[0].steps, lround(0.5 * (first + p.points[0].runs[1].steps)));
    ck_assert_int_eq(p.points[1].nruns, 1);
    profile_free(&p);
    /* a profile for another optimizer is not resumed into */
    snprintf(args, sizeof args, TEACHER_ARGS "--optimizer lamb --sweep-batch 32 --out %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "remove it or choose another --out"));
    unlink(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dataparallel");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, workers_match_one_big_batch);
    tcase_add_test(tc, bad_shapes);
    tcase_add_test(tc, trains_to_target_on_teacher);
    tcase_add_test(tc, fashion_mnist_augmentation);
    tcase_add_test(tc, cli_train_and_sweep_resume);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
