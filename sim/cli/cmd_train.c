/* ttasim train: real data-parallel training to a target test accuracy, or a
 * sweep over batch sizes that writes a convergence profile. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/jsonx.h"
#include "common/units.h"
#include "sim/cli/cli.h"
#include "sim/cli/train_sweep.h"
#include "trainer/dataparallel.h"
#include "trainer/profile.h"

extern const cli_command cmd_train;

static void train_help(FILE *out)
{
    fprintf(out,
            "Trains a model of the zoo with K data-parallel workers until the test accuracy\n"
            "reaches the target or the budget runs out. Exit 0 when reached, 1 when not\n"
            "reached or diverged (a non-finite loss), 2 on bad options.\n\n"
            "Model and data\n"
            "  --model NAME            model of the zoo (mlp)\n"
            "  --widths LIST           mlp widths, input..output (784,256,256,10)\n"
            "  --dataset NAME          fashion-mnist | teacher (fashion-mnist)\n"
            "  --data-dir DIR          Fashion-MNIST IDX files (" FMNIST_DEFAULT_DIR ")\n"
            "  --augment MODE          auto | on | off: random crop (pad 2) + flip; auto = on\n"
            "                          when the global batch exceeds the 60,000 training images\n"
            "  --label-smoothing X     (0)\n"
            "Optimizer\n"
            "  --optimizer NAME        sgd | momentum | nesterov | adamw | lars | lamb (momentum)\n"
            "  --momentum X --beta1 X --beta2 X --eps X --weight-decay X\n"
            "  --trust-coef X          LARS eta (0.001)\n"
            "  --phi-clamp MIN,MAX     LAMB: clamp ||w|| in the trust ratio (identity)\n"
            "  --no-exclude            apply weight decay and trust ratios to biases too\n"
            "Learning rate\n"
            "  --lr X                  base rate at the reference batch (sgd 0.1, momentum and\n"
            "                          nesterov 0.05, adamw 0.001, lars 0.3, lamb 0.002)\n"
            "  --ref-batch N           (256)\n"
            "  --lr-scaling RULE       linear | sqrt | none (linear; sqrt for adamw, lamb)\n"
            "  --warmup-epochs E       linear warm-up (0); or --warmup-steps N; with both,\n"
            "                          the shorter (a sweep: E epochs, at most N steps)\n"
            "  --warmup-start F        warm-up starts at F x peak (0)\n"
            "  --decay KIND            constant | poly | cosine | step (constant)\n"
            "  --poly-power P (2)  --end-lr X (0)  --step-every N --step-gamma G (0.1)\n"
            "  --cooldown-epochs E     linear cool-down to 0 at the end (0); or --cooldown-steps N\n"
            "Batch and budget\n"
            "  --batch N               global batch (256)\n"
            "  --workers K             data-parallel workers, must divide the batch (1; the\n"
            "                          gradient noise scale needs 2 or more)\n"
            "  --micro-batch N         largest forward pass per worker (4096)\n"
            "  --target X              test accuracy, 0.85 or 85%% (0.85)\n"
            "  --eval-every N          steps between evaluations (about every 6000 examples)\n"
            "  --max-epochs E (30)     --max-steps N: budget, the smaller applies\n"
            "  --seed N                initialisation, data order, augmentation (1)\n"
            "Batch sweep\n"
            "  --sweep-batch LIST      train once per batch size and seed, fit S = S_min (1 + B_noise/B)\n"
            "  --seeds LIST            seeds of a sweep's runs per batch (--seed); a point is their median\n"
            "  --out FILE              convergence profile to write and resume from\n"
            "                          (DATASET-MODEL-OPTIMIZER.json)\n"
            "Output\n"
            "  --json                  one JSON document on stdout\n");
}

enum {
    O_MODEL = 256, O_WIDTHS, O_DATASET, O_DATADIR, O_AUGMENT, O_SMOOTH, O_OPT, O_MOM, O_BETA1,
    O_BETA2, O_EPS, O_WD, O_TRUST, O_PHI, O_NOEXCL, O_LR, O_REFB, O_SCALING, O_WUE, O_WUS,
    O_WUSTART, O_DECAY, O_POWER, O_ENDLR, O_STEPEVERY, O_STEPGAMMA, O_CDE, O_CDS, O_BATCH,
    O_WORKERS, O_MICRO, O_TARGET, O_EVAL, O_MAXE, O_MAXS, O_SEED, O_SEEDS, O_SWEEP, O_OUT,
    O_JSON,
};

static const struct option OPTS[] = {
    {"model", required_argument, NULL, O_MODEL},
    {"widths", required_argument, NULL, O_WIDTHS},
    {"dataset", required_argument, NULL, O_DATASET},
    {"data-dir", required_argument, NULL, O_DATADIR},
    {"augment", required_argument, NULL, O_AUGMENT},
    {"label-smoothing", required_argument, NULL, O_SMOOTH},
    {"optimizer", required_argument, NULL, O_OPT},
    {"momentum", required_argument, NULL, O_MOM},
    {"beta1", required_argument, NULL, O_BETA1},
    {"beta2", required_argument, NULL, O_BETA2},
    {"eps", required_argument, NULL, O_EPS},
    {"weight-decay", required_argument, NULL, O_WD},
    {"trust-coef", required_argument, NULL, O_TRUST},
    {"phi-clamp", required_argument, NULL, O_PHI},
    {"no-exclude", no_argument, NULL, O_NOEXCL},
    {"lr", required_argument, NULL, O_LR},
    {"ref-batch", required_argument, NULL, O_REFB},
    {"lr-scaling", required_argument, NULL, O_SCALING},
    {"warmup-epochs", required_argument, NULL, O_WUE},
    {"warmup-steps", required_argument, NULL, O_WUS},
    {"warmup-start", required_argument, NULL, O_WUSTART},
    {"decay", required_argument, NULL, O_DECAY},
    {"poly-power", required_argument, NULL, O_POWER},
    {"end-lr", required_argument, NULL, O_ENDLR},
    {"step-every", required_argument, NULL, O_STEPEVERY},
    {"step-gamma", required_argument, NULL, O_STEPGAMMA},
    {"cooldown-epochs", required_argument, NULL, O_CDE},
    {"cooldown-steps", required_argument, NULL, O_CDS},
    {"batch", required_argument, NULL, O_BATCH},
    {"workers", required_argument, NULL, O_WORKERS},
    {"micro-batch", required_argument, NULL, O_MICRO},
    {"target", required_argument, NULL, O_TARGET},
    {"eval-every", required_argument, NULL, O_EVAL},
    {"max-epochs", required_argument, NULL, O_MAXE},
    {"max-steps", required_argument, NULL, O_MAXS},
    {"seed", required_argument, NULL, O_SEED},
    {"seeds", required_argument, NULL, O_SEEDS},
    {"sweep-batch", required_argument, NULL, O_SWEEP},
    {"out", required_argument, NULL, O_OUT},
    {"json", no_argument, NULL, O_JSON},
    {NULL, 0, NULL, 0},
};

static const char *opt_name(int code)
{
    for (int i = 0; OPTS[i].name; i++)
        if (OPTS[i].val == code)
            return OPTS[i].name;
    return "?";
}

static int parse_double(int code, const char *s, double lo, double hi, double *out)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end || !(x >= lo && x <= hi))
        return cli_usage_error(&cmd_train, "--%s: expected a number in [%g, %g], found '%s'",
                               opt_name(code), lo, hi, s);
    *out = x;
    return TT_OK;
}

/* The option's name as messages give it: "--batch". */
static const char *opt_flag(int code, char *buf, size_t n)
{
    snprintf(buf, n, "--%s", opt_name(code));
    return buf;
}

static int parse_long(int code, const char *s, long lo, long hi, long *out)
{
    char flag[48];
    return cli_int(&cmd_train, opt_flag(code, flag, sizeof flag), s, lo, hi, out);
}

/* Comma-separated whole numbers into v (1 to cap of them). */
static int parse_list(int code, const char *s, long lo, long hi, long *v, int cap, int *n)
{
    *n = units_parse_int_list(s, ",", lo, hi, v, cap);
    if (*n <= 0)
        return cli_usage_error(&cmd_train, "--%s: expected 1 to %d whole numbers from %ld to %ld separated by ',', "
                               "found '%s'", opt_name(code), cap, lo, hi, s);
    return TT_OK;
}

static int parse_choice(int code, const char *s, const char *const *names, int *out)
{
    char flag[48];
    return cli_choice(&cmd_train, opt_flag(code, flag, sizeof flag), s, names, out);
}

static const char *const DATASETS[] = {"fashion-mnist", "teacher", NULL};
static const char *const AUGMENT_MODES[] = {"auto", "on", "off", NULL};

/* Optimizer settings set before --optimizer survive it: parse the name first,
 * with getopt too, so that --optim X and --optimizer=X count as the main pass does. */
static int find_optimizer(int argc, char **argv, optim_config *c)
{
    const char *name = "momentum";
    int code;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, ":", OPTS, NULL)) != -1)
        if (code == O_OPT)
            name = optarg;
    if (optim_parse(name, c) == 0)
        return TT_OK;
    int idx;
    return parse_choice(O_OPT, name, OPTIM_NAMES, &idx);
}

static double default_lr(const optim_config *c)
{
    switch (c->kind) {
    case OPT_SGD: return 0.1;
    case OPT_MOMENTUM: return 0.05;
    case OPT_ADAMW: return 1e-3;
    case OPT_LARS: return 0.3;
    case OPT_LAMB: return 2e-3;
    default: return 0.01;
    }
}

static int parse_args(int argc, char **argv, train_cli *t)
{
    dp_options *d = &t->dp;
    memset(t, 0, sizeof *t);
    model_opts_default(&d->mo);
    d->model = "mlp";
    const int widths[] = {784, 256, 256, 10};
    memcpy(d->mo.widths, widths, sizeof widths);
    d->mo.nwidths = 4;
    d->workers = 1;
    d->batch = 256;
    d->micro_max = 4096;
    d->augment = -1;
    d->target = 0.85;
    d->max_epochs = 30;
    d->seed = 1;
    d->lr = (lr_schedule){.ref_batch = 256, .warmup_steps = -1, .cooldown_steps = -1,
                          .poly_power = 2, .step_gamma = 0.1};
    t->lr = -1;
    t->scaling = -1;
    for (int i = 0, n = 0; i < argc && n < (int)sizeof t->cmdline - 2; i++)
        n += snprintf(t->cmdline + n, sizeof t->cmdline - (size_t)n, "%s%s", i ? " " : "ttasim ",
                      argv[i]);
    int rc = find_optimizer(argc, argv, &d->opt); /* getopt may reorder argv */
    if (rc)
        return rc;

    int c;
    long l;
    double x;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", OPTS, NULL)) != -1) {
        rc = TT_OK;
        switch (c) {
        case O_MODEL: d->model = optarg; break;
        case O_WIDTHS: {
            long w[MODEL_MAX_WIDTHS];
            int n;
            if (!(rc = parse_list(c, optarg, 1, 1 << 20, w, MODEL_MAX_WIDTHS, &n))) {
                for (int i = 0; i < n; i++)
                    d->mo.widths[i] = (int)w[i];
                d->mo.nwidths = n;
            }
            break;
        }
        case O_DATASET: rc = parse_choice(c, optarg, DATASETS, &t->dataset); break;
        case O_DATADIR: t->data_dir = optarg; break;
        case O_AUGMENT: {
            int m = 0;
            rc = parse_choice(c, optarg, AUGMENT_MODES, &m);
            d->augment = m == 0 ? -1 : m == 1;
            break;
        }
        case O_SMOOTH:
            if (!(rc = parse_double(c, optarg, 0, 0.999, &x)))
                d->mo.label_smoothing = (float)x;
            break;
        case O_OPT: break; /* parsed first */
        case O_MOM: rc = parse_double(c, optarg, 0, 0.9999, &d->opt.momentum); break;
        case O_BETA1: rc = parse_double(c, optarg, 0, 0.9999, &d->opt.beta1); break;
        case O_BETA2: rc = parse_double(c, optarg, 0, 0.999999, &d->opt.beta2); break;
        case O_EPS: rc = parse_double(c, optarg, 0, 1, &d->opt.eps); break;
        case O_WD: rc = parse_double(c, optarg, 0, 10, &d->opt.weight_decay); break;
        case O_TRUST: rc = parse_double(c, optarg, 1e-9, 1e3, &d->opt.trust_coef); break;
        case O_PHI:
            if (sscanf(optarg, "%lf,%lf", &d->opt.phi_min, &d->opt.phi_max) != 2 ||
                !(d->opt.phi_min >= 0 && d->opt.phi_max > d->opt.phi_min))
                rc = cli_usage_error(&cmd_train, "--phi-clamp: expected MIN,MAX with 0 <= MIN < MAX, found '%s'",
                                     optarg);
            break;
        case O_NOEXCL: d->opt.exclude_bias_norm = 0; break;
        case O_LR: rc = parse_double(c, optarg, 1e-12, 1e4, &t->lr); break;
        case O_REFB: rc = parse_double(c, optarg, 1, 1e9, &d->lr.ref_batch); break;
        case O_SCALING: rc = parse_choice(c, optarg, LR_SCALING_NAMES, &t->scaling); break;
        case O_WUE: rc = parse_double(c, optarg, 0, 1e6, &d->warmup_epochs); break;
        case O_WUS: rc = parse_long(c, optarg, 0, 1L << 40, &d->lr.warmup_steps); break;
        case O_WUSTART: rc = parse_double(c, optarg, 0, 1, &d->lr.warmup_start); break;
        case O_DECAY: {
            int k = 0;
            rc = parse_choice(c, optarg, LR_DECAY_NAMES, &k);
            d->lr.decay = (lr_decay)k;
            break;
        }
        case O_POWER: rc = parse_double(c, optarg, 0, 100, &d->lr.poly_power); break;
        case O_ENDLR: rc = parse_double(c, optarg, 0, 1e4, &d->lr.end_lr); break;
        case O_STEPEVERY: rc = parse_long(c, optarg, 1, 1L << 40, &d->lr.step_every); break;
        case O_STEPGAMMA: rc = parse_double(c, optarg, 0, 1, &d->lr.step_gamma); break;
        case O_CDE: rc = parse_double(c, optarg, 0, 1e6, &d->cooldown_epochs); break;
        case O_CDS: rc = parse_long(c, optarg, 0, 1L << 40, &d->lr.cooldown_steps); break;
        case O_BATCH: rc = parse_long(c, optarg, 1, 1L << 24, &d->batch); break;
        case O_WORKERS:
            if (!(rc = parse_long(c, optarg, 1, 1024, &l)))
                d->workers = (int)l;
            break;
        case O_MICRO: rc = parse_long(c, optarg, 1, 1L << 20, &d->micro_max); break;
        case O_TARGET: {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", optarg);
            size_t n = strlen(buf);
            int pct = n > 0 && buf[n - 1] == '%';
            if (pct)
                buf[n - 1] = '\0';
            if (!(rc = parse_double(c, buf, 1e-9, pct ? 100 : 1, &x)))
                d->target = pct ? x / 100 : x;
            break;
        }
        case O_EVAL: rc = parse_long(c, optarg, 1, 1L << 40, &d->eval_every); break;
        case O_MAXE: rc = parse_double(c, optarg, 0, 1e7, &d->max_epochs); break;
        case O_MAXS: rc = parse_long(c, optarg, 0, 1L << 40, &d->max_steps); break;
        case O_SEED:
            if (!(rc = parse_long(c, optarg, 0, 1L << 62, &l)))
                d->seed = (uint64_t)l;
            break;
        case O_SEEDS: rc = parse_list(c, optarg, 1, 1L << 62, t->seeds, MAX_SWEEP, &t->nseeds); break;
        case O_SWEEP: rc = parse_list(c, optarg, 1, 1L << 24, t->sweep, MAX_SWEEP, &t->nsweep); break;
        case O_OUT: t->out = optarg; break;
        case O_JSON: t->json = 1; break;
        default: return cli_bad_option(&cmd_train, argv, optind, optopt, OPTS, c == ':');
        }
        if (rc)
            return rc;
    }
    if (optind != argc)
        return cli_usage_error(&cmd_train, "unexpected argument '%s'", argv[optind]);
    if (t->out && !t->nsweep)
        return cli_usage_error(&cmd_train, "--out writes a sweep's profile; add --sweep-batch");
    if (t->nseeds && !t->nsweep)
        return cli_usage_error(&cmd_train, "--seeds sets a sweep's runs; add --sweep-batch, or use --seed for one run");
    if (!t->nseeds)
        t->seeds[t->nseeds++] = (long)d->seed;
    d->mo.seed = d->seed;
    t->dataset_name = DATASETS[t->dataset];
    d->lr.base_lr = t->lr > 0 ? t->lr : default_lr(&d->opt);
    d->lr.scaling = t->scaling >= 0 ? (lr_scaling)t->scaling
                    : d->opt.kind == OPT_ADAMW || d->opt.kind == OPT_LAMB ? LR_SCALE_SQRT
                                                                          : LR_SCALE_LINEAR;
    if (d->lr.decay == LR_DECAY_STEP && d->lr.step_every <= 0)
        return cli_usage_error(&cmd_train, "--decay step needs --step-every N");
    return TT_OK;
}

/* ---- output ---- */

static void progress_line(void *ctx, long step, long max_steps, double epoch, double acc,
                          double loss)
{
    (void)ctx;
    fprintf(stderr, "\r  step %ld/%ld  epoch %.2f  loss %.4f  test accuracy %.4f   ", step,
            max_steps, epoch, loss, acc);
    fflush(stderr);
}

static json_t *result_json(const train_cli *t, const dp_result *r)
{
    const dp_options *d = &t->dp;
    json_t *curve = json_array();
    for (int i = 0; i < r->ncurve; i++) {
        const dp_eval *e = &r->curve[i];
        json_array_append_new(
            curve, json_pack("{s:I, s:f, s:f, s:o, s:o, s:f, s:o}", "step", (json_int_t)e->step,
                             "epoch", e->epoch, "test_accuracy", e->test_accuracy, "test_loss",
                             jx_real_or_null(e->test_loss), "train_loss", jx_real_or_null(e->train_loss),
                             "lr", e->lr, "noise_scale", jx_real_or_null(e->noise_scale)));
    }
    json_t *widths = json_array();
    for (int i = 0; i < d->mo.nwidths; i++)
        json_array_append_new(widths, json_integer(d->mo.widths[i]));
    return json_pack(
        "{s:b, s:b, s:o, s:o, s:o, s:I, s:f, s:f, s:o, s:f, s:o,"
        " s:{s:s, s:o, s:s, s:s, s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:I}}",
        "reached", r->reached, "diverged", r->diverged, "steps_to_target",
        r->reached ? json_integer(r->steps_to_target) : json_null(), "epochs_to_target",
        r->reached ? json_real(r->epochs_to_target) : json_null(), "examples_to_target",
        r->reached ? json_real(r->examples_to_target) : json_null(), "steps_run",
        (json_int_t)r->steps_run, "epochs_run", r->epochs_run, "final_test_accuracy",
        r->final_test_accuracy, "noise_scale", jx_real_or_null(r->noise_scale), "wall_s", r->wall_s,
        "curve", curve, "config", "model", d->model, "widths", widths, "data", r->data,
        "optimizer", optim_name(&d->opt), "lr_scaling", LR_SCALING_NAMES[d->lr.scaling],
        "peak_lr", r->peak_lr, "warmup_steps", (json_int_t)r->warmup_steps, "batch",
        (json_int_t)d->batch, "workers", (json_int_t)d->workers, "micro_batch",
        (json_int_t)r->micro_batch, "eval_every", (json_int_t)r->eval_every, "target", d->target,
        "label_smoothing", (double)d->mo.label_smoothing, "seed", (json_int_t)d->seed);
}

static void print_result(const train_cli *t, const dp_result *r)
{
    const dp_options *d = &t->dp;
    printf("model          %s", d->model);
    for (int i = 0; d->mo.nwidths && !strcmp(d->model, "mlp") && i < d->mo.nwidths; i++)
        printf("%s%d", i ? "-" : " ", d->mo.widths[i]);
    printf("\ndata           %s\n", r->data_note);
    printf("optimizer      %s, peak lr %.6g (%s scaling of %.6g at batch %g), warm-up %ld steps, decay %s\n",
           optim_name(&d->opt), r->peak_lr, LR_SCALING_NAMES[d->lr.scaling], d->lr.base_lr,
           d->lr.ref_batch, r->warmup_steps, LR_DECAY_NAMES[d->lr.decay]);
    printf("batch          %ld = %d workers x %ld (micro-batch %ld)\n", d->batch, d->workers,
           d->batch / d->workers, r->micro_batch);
    printf("\n%8s %9s %11s %11s %10s %13s %12s\n", "step", "epoch", "lr", "train_loss",
           "test_loss", "test_accuracy", "noise_scale");
    for (int i = 0; i < r->ncurve; i++) {
        const dp_eval *e = &r->curve[i];
        printf("%8ld %9.3f %11.5g %11.4f %10.4f %13.4f %12.5g\n", e->step, e->epoch, e->lr,
               e->train_loss, e->test_loss, e->test_accuracy, e->noise_scale);
    }
    printf("\n");
    if (r->diverged)
        printf("result         diverged at step %ld (non-finite loss)\n", r->steps_run);
    else if (r->reached)
        printf("result         reached test accuracy %.4f at step %ld (epoch %.3f, %.0f examples)\n",
               d->target, r->steps_to_target, r->epochs_to_target, r->examples_to_target);
    else
        printf("result         not reached: %.4f < %.4f after %ld steps (%.3f epochs)\n",
               r->final_test_accuracy, d->target, r->steps_run, r->epochs_run);
    printf("final accuracy %.4f\n", r->final_test_accuracy);
    if (isfinite(r->noise_scale))
        printf("noise scale    B_simple = %.5g (McCandlish et al. 2018, App. A; EMA over steps)\n",
               r->noise_scale);
    else
        printf("noise scale    not measured (needs --workers 2 or more)\n");
    printf("wall time      %.1f s\n", r->wall_s);
}

/* ---- data ---- */

typedef struct loaded {
    fmnist train, test;
    teacher teach;
    dp_data data;
} loaded;

static int load_data(const train_cli *t, loaded *ld, tt_error *err)
{
    memset(ld, 0, sizeof *ld);
    if (t->dataset == 1) {
        int in_dim = t->dp.mo.nwidths ? t->dp.mo.widths[0] : 784;
        if (teacher_init(&ld->teach, in_dim, 64, 10, UINT64_C(0x7eac4e7)))
            return tt_error_set(err, TT_EINTERNAL, "out of memory for the teacher");
        ld->data = (dp_data){.kind = DP_DATA_TEACHER, .teacher = &ld->teach,
                             .teacher_epoch = 60000, .teacher_test = 10000};
        return TT_OK;
    }
    int rc = fmnist_load(t->data_dir, "train", &ld->train, err);
    if (!rc)
        rc = fmnist_load(t->data_dir, "t10k", &ld->test, err);
    ld->data = (dp_data){.kind = DP_DATA_FMNIST, .train = &ld->train, .test = &ld->test};
    return rc;
}

static void free_data(loaded *ld)
{
    fmnist_free(&ld->train);
    fmnist_free(&ld->test);
    teacher_free(&ld->teach);
}

/* ---- sweep ---- */

/* The recipe a sweep runs, stated in its profile. */
static int train_main(int argc, char **argv)
{
    train_cli t;
    int rc = parse_args(argc, argv, &t);
    if (rc)
        return rc;
    int show_progress = isatty(2) && !t.json;
    if (show_progress) {
        t.dp.progress = progress_line;
    }
    tt_error err = {0};
    loaded ld;
    if ((rc = load_data(&t, &ld, &err))) {
        free_data(&ld);
        return cli_report_error(rc, err.msg);
    }
    if (t.nsweep) {
        rc = train_sweep_run(&t, &ld.data, show_progress);
        free_data(&ld);
        return rc;
    }
    dp_result r;
    rc = dp_train(&t.dp, &ld.data, &r, &err);
    if (show_progress)
        fputc('\n', stderr);
    free_data(&ld);
    if (rc)
        return cli_report_error(rc, err.msg);
    if (t.json) {
        json_t *doc = result_json(&t, &r);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        print_result(&t, &r);
    }
    rc = r.reached && !r.diverged ? TT_OK : TT_EFAIL;
    dp_result_free(&r);
    return rc;
}

const cli_command cmd_train = {
    "train", "real data-parallel training to a target accuracy; batch sweeps and profiles",
    "train [--model NAME] [--widths LIST] [--dataset NAME] [--data-dir DIR] [--augment MODE]\n"
    "           [--label-smoothing X] [--optimizer NAME] [--momentum X] [--beta1 X] [--beta2 X] [--eps X]\n"
    "           [--weight-decay X] [--trust-coef X] [--phi-clamp MIN,MAX] [--no-exclude] [--lr X]\n"
    "           [--ref-batch N] [--lr-scaling RULE] [--warmup-epochs E] [--warmup-steps N]\n"
    "           [--warmup-start F] [--decay KIND] [--poly-power P] [--end-lr X] [--step-every N]\n"
    "           [--step-gamma G] [--cooldown-epochs E] [--cooldown-steps N] [--batch N] [--workers K]\n"
    "           [--micro-batch N] [--target X] [--eval-every N] [--max-epochs E] [--max-steps N]\n"
    "           [--seed N] [--sweep-batch LIST] [--seeds LIST] [--out FILE] [--json]",
    train_main, train_help,
};
