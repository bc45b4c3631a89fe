/* Optimizers against updates worked out by hand from the papers' formulas
 * (trainer/optimizer.h), learning-rate schedules, and the noise-scale estimator
 * on a synthetic problem with a known gradient covariance. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/lr_schedule.h"
#include "trainer/noise_scale.h"
#include "trainer/optimizer.h"
#include "tests/testutil.h"

/* Two tensors: "w" = [3, 4] (||w|| = 5) with grad [0.6, 0.8] (||g|| = 1), and a
 * bias "b" = [1] with grad [0.5]. A third, "z", is all zero (weights and grads). */
typedef struct fixture {
    float params[5], grads[5];
    param_view views[3];
    param_set ps;
} fixture;

static void fixture_init(fixture *f)
{
    const float p[5] = {3, 4, 1, 0, 0}, g[5] = {0.6f, 0.8f, 0.5f, 0, 0};
    memcpy(f->params, p, sizeof p);
    memcpy(f->grads, g, sizeof g);
    memset(f->views, 0, sizeof f->views);
    strcpy(f->views[0].name, "w");
    f->views[0].ndim = 1, f->views[0].shape[0] = 2, f->views[0].offset = 0, f->views[0].numel = 2;
    strcpy(f->views[1].name, "b");
    f->views[1].ndim = 1, f->views[1].shape[0] = 1, f->views[1].offset = 2, f->views[1].numel = 1;
    f->views[1].is_bias_or_norm = 1;
    strcpy(f->views[2].name, "z");
    f->views[2].ndim = 1, f->views[2].shape[0] = 2, f->views[2].offset = 3, f->views[2].numel = 2;
    f->ps = (param_set){.params = f->params, .grads = f->grads, .numel = 5, .views = f->views, .nviews = 3};
}

static optimizer *make(const optim_config *c, fixture *f)
{
    optimizer *o = NULL;
    tt_error err = {0};
    ck_assert_int_eq(optimizer_create(c, &f->ps, &o, &err), TT_OK);
    return o;
}

#define NEAR(a, b) ck_assert_double_eq_tol((double)(a), (double)(b), 2e-6)

START_TEST(sgd_weight_decay_and_exclusion)
{
    fixture f;
    fixture_init(&f);
    optim_config c;
    ck_assert_int_eq(optim_parse("sgd", &c), 0);
    c.weight_decay = 0.01;
    optimizer *o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.1);
    NEAR(f.params[0], 3 - 0.1 * (0.6 + 0.01 * 3)); /* 2.937 */
    NEAR(f.params[1], 4 - 0.1 * (0.8 + 0.01 * 4)); /* 3.916 */
    NEAR(f.params[2], 1 - 0.1 * 0.5);              /* bias: no decay */
    NEAR(optimizer_w_norms(o)[0], 5.0);
    NEAR(optimizer_g_norms(o)[0], 1.0);
    optimizer_free(o);

    fixture_init(&f);
    c.exclude_bias_norm = 0;
    o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.1);
    NEAR(f.params[2], 1 - 0.1 * (0.5 + 0.01 * 1)); /* 0.949 */
    optimizer_free(o);
}
END_TEST

START_TEST(momentum_heavy_ball_and_nesterov)
{
    fixture f;
    fixture_init(&f);
    optim_config c;
    ck_assert_int_eq(optim_parse("momentum", &c), 0);
    optimizer *o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.1);
    NEAR(f.params[0], 2.94); /* buf = 0.6 */
    optimizer_step(o, &f.ps, 0.1);
    NEAR(f.params[0], 2.826); /* buf = 0.9 * 0.6 + 0.6 = 1.14 */
    optimizer_free(o);

    fixture_init(&f);
    ck_assert_int_eq(optim_parse("nesterov", &c), 0);
    ck_assert_str_eq(optim_name(&c), "nesterov");
    o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.1);
    NEAR(f.params[0], 3 - 0.1 * (0.6 + 0.9 * 0.6)); /* 2.886 */
    optimizer_step(o, &f.ps, 0.1);
    NEAR(f.params[0], 2.886 - 0.1 * (0.6 + 0.9 * 1.14)); /* 2.7234 */
    optimizer_free(o);
}
END_TEST

START_TEST(adamw_bias_correction_steps_1_and_2)
{
    fixture f;
    fixture_init(&f);
    optim_config c;
    ck_assert_int_eq(optim_parse("adamw", &c), 0);
    c.eps = 1e-8;
    c.weight_decay = 0.01;
    optimizer *o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.1);
    /* step 1: m_hat = g, v_hat = g^2, so the Adam direction is g / |g| = 1 */
    double w1 = 3 - 0.1 * (0.6 / (0.6 + 1e-8) + 0.01 * 3);
    NEAR(f.params[0], w1); /* 2.897 */
    NEAR(f.params[2], 1 - 0.1 * (0.5 / (0.5 + 1e-8))); /* bias: no decay */
    f.grads[0] = 0.3f;
    optimizer_step(o, &f.ps, 0.1);
    /* step 2: m = 0.9 * 0.06 + 0.1 * 0.3, v = 0.999 * 0.00036 + 0.001 * 0.09,
     * corrections 1 - 0.9^2 = 0.19 and 1 - 0.999^2 = 0.001999 */
    double m = 0.084, v = 0.00044964;
    double w2 = w1 - 0.1 * ((m / 0.19) / (sqrt(v / 0.001999) + 1e-8) + 0.01 * w1);
    NEAR(f.params[0], w2); /* 2.80088 */
    ck_assert_int_eq(optimizer_steps(o), 2);
    optimizer_free(o);
}
END_TEST

START_TEST(lars_trust_ratio_momentum_and_exclusions)
{
    fixture f;
    fixture_init(&f);
    optim_config c;
    ck_assert_int_eq(optim_parse("lars", &c), 0);
    c.trust_coef = 0.5;
    c.weight_decay = 0.1;
    optimizer *o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.1);
    /* ratio = 0.5 * 5 / (1 + 0.1 * 5) = 5/3; m = 0.1 * 5/3 * (g + 0.1 w) = [0.15, 0.2] */
    NEAR(f.params[0], 2.85);
    NEAR(f.params[1], 3.8);
    NEAR(f.params[2], 1 - 0.1 * 0.5); /* bias: ratio 1, no decay */
    NEAR(f.params[3], 0);             /* zero weights and grads stay zero */
    optimizer_step(o, &f.ps, 0.1);
    /* ||w|| = 4.75, ratio = 0.5 * 4.75 / (1 + 0.475); m = 0.9 * 0.15 + 0.1 * ratio * (0.6 + 0.285) */
    double r2 = 0.5 * 4.75 / 1.475;
    NEAR(f.params[0], 2.85 - (0.9 * 0.15 + 0.1 * r2 * 0.885)); /* 2.5725 */
    optimizer_free(o);

    /* zero weight norm: ratio 1, the step is lr * g */
    fixture_init(&f);
    f.grads[3] = 2;
    o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.1);
    NEAR(f.params[3], -0.2);
    optimizer_free(o);

    /* biases included: ratio 0.5 * 1 / (0.5 + 0.1 * 1) and decay */
    fixture_init(&f);
    c.exclude_bias_norm = 0;
    o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.1);
    NEAR(f.params[2], 1 - 0.1 * (0.5 / 0.6) * (0.5 + 0.1));
    optimizer_free(o);
}
END_TEST

START_TEST(lamb_update_clamp_and_exclusions)
{
    fixture f;
    fixture_init(&f);
    optim_config c;
    ck_assert_int_eq(optim_parse("lamb", &c), 0);
    c.weight_decay = 0.01;
    optimizer *o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.01);
    /* step 1: u = g / (|g| + eps) + 0.01 w; ratio = ||w|| / ||u|| */
    double u0 = 0.6 / (0.6 + 1e-6) + 0.03, u1 = 0.8 / (0.8 + 1e-6) + 0.04;
    double r = 5 / sqrt(u0 * u0 + u1 * u1); /* 3.41593 */
    NEAR(f.params[0], 3 - 0.01 * r * u0);
    NEAR(f.params[1], 4 - 0.01 * r * u1);
    NEAR(f.params[2], 1 - 0.01 * 0.5 / (0.5 + 1e-6)); /* bias: ratio 1, no decay */
    NEAR(f.params[3], 0);
    /* step 2 with a new gradient: corrections 0.19 and 0.001999 */
    double w0 = f.params[0], w1 = f.params[1];
    f.grads[0] = -0.3f;
    optimizer_step(o, &f.ps, 0.01);
    double m0 = 0.9 * 0.06 - 0.03, v0 = 0.999 * 0.00036 + 0.001 * 0.09;
    double m1 = 0.9 * 0.08 + 0.08, v1 = 0.999 * 0.00064 + 0.001 * 0.64;
    double q0 = (m0 / 0.19) / (sqrt(v0 / 0.001999) + 1e-6) + 0.01 * w0;
    double q1 = (m1 / 0.19) / (sqrt(v1 / 0.001999) + 1e-6) + 0.01 * w1;
    double r2 = sqrt(w0 * w0 + w1 * w1) / sqrt(q0 * q0 + q1 * q1);
    NEAR(f.params[0], w0 - 0.01 * r2 * q0);
    NEAR(f.params[1], w1 - 0.01 * r2 * q1);
    optimizer_free(o);

    /* phi clamped to [0, 2]: ratio 2 / ||u|| */
    fixture_init(&f);
    c.phi_min = 0, c.phi_max = 2;
    o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.01);
    NEAR(f.params[0], 3 - 0.01 * (2 / sqrt(u0 * u0 + u1 * u1)) * u0);
    optimizer_free(o);

    /* no weight decay, biases included: bias ratio = 1 / 1 */
    fixture_init(&f);
    c.phi_max = 0, c.weight_decay = 0, c.exclude_bias_norm = 0;
    o = make(&c, &f);
    optimizer_step(o, &f.ps, 0.01);
    double n = sqrt(pow(0.6 / (0.6 + 1e-6), 2) + pow(0.8 / (0.8 + 1e-6), 2));
    NEAR(f.params[0], 3 - 0.01 * (5 / n) * 0.6 / (0.6 + 1e-6));
    NEAR(f.params[2], 1 - 0.01 * (1 / (0.5 / (0.5 + 1e-6))) * 0.5 / (0.5 + 1e-6));
    optimizer_free(o);
}
END_TEST

START_TEST(parse_names)
{
    optim_config c;
    ck_assert_int_eq(optim_parse("lamb", &c), 0);
    ck_assert_int_eq(c.kind, OPT_LAMB);
    ck_assert_int_eq(optim_parse("adam", &c), -1);
    for (int i = 0; OPTIM_NAMES[i]; i++) {
        ck_assert_int_eq(optim_parse(OPTIM_NAMES[i], &c), 0);
        ck_assert_str_eq(optim_name(&c), OPTIM_NAMES[i]);
        ck_assert_ptr_eq(optim_info_of(&c), optim_find(OPTIM_NAMES[i]));
    }
}
END_TEST

/* One row per optimizer serves the trainer (state), the trace (update cost)
 * and replay (state in memory): the moments each update keeps, by hand. */
START_TEST(table_rows)
{
    static const struct {
        const char *name;
        int state_words;
        double flops, words;
    } want[] = {{"sgd", 0, 2, 3},   {"momentum", 1, 4, 5}, {"nesterov", 1, 6, 5},
                {"adamw", 2, 12, 7}, {"lars", 1, 8, 7},     {"lamb", 2, 16, 9}};
    int n = 0;
    while (OPTIM_NAMES[n])
        n++;
    ck_assert_int_eq(n, sizeof want / sizeof *want);
    for (int i = 0; i < n; i++) {
        const optim_info *o = optim_find(want[i].name);
        ck_assert_ptr_nonnull(o);
        ck_assert_str_eq(o->name, want[i].name);
        ck_assert_int_eq(o->state_words, want[i].state_words);
        ck_assert(o->update_flops == want[i].flops && o->update_words == want[i].words);
    }
    ck_assert_ptr_null(optim_find("lambb"));
    ck_assert_ptr_null(optim_find(NULL));
}
END_TEST

START_TEST(lr_scaling_rules)
{
    lr_schedule s = {.base_lr = 0.1, .ref_batch = 256, .batch = 1024, .scaling = LR_SCALE_LINEAR,
                     .total_steps = 100};
    NEAR(lr_schedule_peak(&s), 0.4);
    NEAR(lr_schedule_at(&s, 0), 0.4);
    NEAR(lr_schedule_at(&s, 99), 0.4);
    s.scaling = LR_SCALE_SQRT;
    NEAR(lr_schedule_peak(&s), 0.2);
    s.max_lr = 0.15; /* the cap binds above it and not below */
    NEAR(lr_schedule_peak(&s), 0.15);
    NEAR(lr_schedule_at(&s, 50), 0.15);
    s.batch = 256;
    NEAR(lr_schedule_peak(&s), 0.1);
    s.batch = 1024, s.max_lr = 0;
    s.scaling = LR_SCALE_NONE;
    NEAR(lr_schedule_peak(&s), 0.1);
    ck_assert_int_eq(lr_name_index(LR_SCALING_NAMES, "sqrt"), LR_SCALE_SQRT);
    ck_assert_int_eq(lr_name_index(LR_DECAY_NAMES, "cosine"), LR_DECAY_COSINE);
    ck_assert_int_eq(lr_name_index(LR_DECAY_NAMES, "exp"), -1);
}
END_TEST

START_TEST(lr_warmup_decay_cooldown)
{
    lr_schedule s = {.base_lr = 0.1, .ref_batch = 256, .batch = 1024, .scaling = LR_SCALE_LINEAR,
                     .warmup_steps = 10, .decay = LR_DECAY_POLY, .poly_power = 2,
                     .total_steps = 110};
    NEAR(lr_schedule_at(&s, 0), 0.04); /* first warm-up step: peak / 10 */
    NEAR(lr_schedule_at(&s, 4), 0.2);
    NEAR(lr_schedule_at(&s, 9), 0.4); /* warm-up ends at the peak */
    NEAR(lr_schedule_at(&s, 10), 0.4);
    NEAR(lr_schedule_at(&s, 60), 0.4 * 0.25); /* (1 - 1/2)^2 */
    NEAR(lr_schedule_at(&s, 110), 0);
    s.poly_power = 1;
    NEAR(lr_schedule_at(&s, 35), 0.4 * 0.75);
    s.warmup_start = 0.25; /* Goyal et al.: from the unscaled rate */
    NEAR(lr_schedule_at(&s, 0), 0.4 * (0.25 + 0.75 * 0.1));
    s.warmup_start = 0;
    s.decay = LR_DECAY_COSINE;
    NEAR(lr_schedule_at(&s, 60), 0.2);
    s.end_lr = 0.04;
    NEAR(lr_schedule_at(&s, 60), 0.04 + 0.36 * 0.5);
    NEAR(lr_schedule_at(&s, 110), 0.04);
    s.decay = LR_DECAY_STEP, s.step_every = 30, s.step_gamma = 0.1;
    NEAR(lr_schedule_at(&s, 39), 0.4);
    NEAR(lr_schedule_at(&s, 40), 0.04);
    NEAR(lr_schedule_at(&s, 70), 0.004);
    s.decay = LR_DECAY_CONSTANT, s.cooldown_steps = 10;
    NEAR(lr_schedule_at(&s, 99), 0.4);
    NEAR(lr_schedule_at(&s, 100), 0.4);
    NEAR(lr_schedule_at(&s, 105), 0.2);
    NEAR(lr_schedule_at(&s, 109), 0.04);
    NEAR(lr_schedule_at(&s, 110), 0);
}
END_TEST

/* xorshift64* and Box-Muller: a reproducible Gaussian for the synthetic problem */
static uint64_t rng_state = 88172645463325252ull;
static double uniform(void)
{
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return ((rng_state * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0) + 1e-300;
}
static double gaussian(void) { return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform()); }

START_TEST(noise_scale_known_covariance)
{
    /* per-example gradients G + e with e ~ N(0, diag(s^2)): tr(Sigma) = sum s^2 = 37,
     * |G|^2 = 0.25, so B_simple = 148. K = 8 workers of b = 32 examples each. */
    enum { D = 10, K = 8, B = 32, STEPS = 3000 };
    double G[D], s[D], tr = 0, g2 = 0;
    for (int j = 0; j < D; j++) {
        G[j] = j % 2 ? 0.2 : -0.1;
        s[j] = sqrt(1.0 + 0.6 * j); /* sum over j = 10 + 27 = 37 */
        tr += s[j] * s[j], g2 += G[j] * G[j];
    }
    noise_scale ns;
    noise_scale_init(&ns, 0.01);
    ck_assert(isnan(noise_scale_value(&ns)));
    for (int step = 0; step < STEPS; step++) {
        double global[D] = {0}, small_sq = 0;
        for (int k = 0; k < K; k++) {
            double w[D] = {0}, n2 = 0;
            for (int i = 0; i < B; i++)
                for (int j = 0; j < D; j++)
                    w[j] += (G[j] + s[j] * gaussian()) / B;
            for (int j = 0; j < D; j++)
                n2 += w[j] * w[j], global[j] += w[j] / K;
            small_sq += n2 / K;
        }
        double big_sq = 0;
        for (int j = 0; j < D; j++)
            big_sq += global[j] * global[j];
        noise_scale_add(&ns, small_sq, B, big_sq, (double)K * B);
    }
    double want = tr / g2;
    ck_assert_double_eq_tol(noise_scale_trace(&ns), tr, 0.1 * tr);
    ck_assert_double_eq_tol(noise_scale_grad_sq(&ns), g2, 0.15 * g2);
    ck_assert_double_eq_tol(noise_scale_value(&ns), want, 0.2 * want);
    /* a one-worker sample (no small batch) is ignored */
    long n = ns.samples;
    noise_scale_add(&ns, 1, 256, 1, 256);
    ck_assert_int_eq(ns.samples, n);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("optimizer");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, sgd_weight_decay_and_exclusion);
    tcase_add_test(tc, momentum_heavy_ball_and_nesterov);
    tcase_add_test(tc, adamw_bias_correction_steps_1_and_2);
    tcase_add_test(tc, lars_trust_ratio_momentum_and_exclusions);
    tcase_add_test(tc, lamb_update_clamp_and_exclusions);
    tcase_add_test(tc, parse_names);
    tcase_add_test(tc, table_rows);
    tcase_add_test(tc, lr_scaling_rules);
    tcase_add_test(tc, lr_warmup_decay_cooldown);
    tcase_add_test(tc, noise_scale_known_covariance);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
