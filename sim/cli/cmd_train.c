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

/* --dataset markov: the vocabulary when --vocab is not given, the source's
 * seed (its transition probabilities), and the held-out sequences */
#define MARKOV_DEFAULT_VOCAB 16
#define MARKOV_SOURCE_SEED UINT64_C(0x6d61726b6f76)
#define MARKOV_TEST_SEQUENCES 2048

static void train_help(FILE *out)
{
    fprintf(out,
            "Trains a model of the zoo with K data-parallel workers until the test accuracy\n"
            "reaches the target (markov: the held-out loss every --target-loss) or the budget\n"
            "runs out. Exit 0 when reached, 1 when not reached or diverged (a non-finite\n"
            "loss), 2 on bad options.\n\n"
            "Model and data\n"
            "  --model NAME            model of the zoo (mlp)\n"
            "  --widths LIST           mlp widths, input..output (784,256,256,10)\n"
            "  --dataset NAME          fashion-mnist | teacher | markov (fashion-mnist); markov:\n"
            "                          an order-K Markov language generated on the fly, whose\n"
            "                          entropy rate H is known exactly, for a decoder model\n"
            "  --markov-order K        tokens of context of the markov source (2)\n"
            "  --markov-successors N   likely next tokens per context (3)\n"
            "  --markov-floor F        probability mass spread over every token (0.05)\n"
            "  --layers N --hidden N --heads N --vocab N --seq-len N\n"
            "                          decoder shape (gpt, llama, moe; default the model's);\n"
            "                          markov: its vocabulary is --vocab (16)\n"
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
            "  --lr-max X              cap on the scaled peak rate (none)\n"
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
            "  --target-loss LIST      markov: held-out loss <= L* + X nats/token for each X\n"
            "                          (up to %d, e.g. 0.1,0.05; the run ends when all are met),\n"
            "                          L* = ((T-K+1) H + H_head) / T the least expected loss of\n"
            "                          T tokens, H_head the first positions' shorter contexts\n"
            "  --eval-every N          steps between evaluations (about every 6000 examples;\n"
            "                          markov: 512)\n"
            "  --max-epochs E (30)     --max-steps N: budget, the smaller applies\n"
            "  --seed N                initialisation, data order, augmentation (1)\n"
            "Batch sweep\n"
            "  --sweep-batch LIST      train once per batch size and seed, fit S = S_min (1 + B_noise/B)\n"
            "  --seeds LIST            seeds of a sweep's runs per batch (--seed); a point is their median\n"
            "  --out FILE              convergence profile to write and resume from\n"
            "                          (DATASET-MODEL-OPTIMIZER.json); with several target\n"
            "                          losses one file per target, separated by ','\n"
            "Output\n"
            "  --json                  one JSON document on stdout\n",
            DP_MAX_TARGETS);
}

enum {
    O_MODEL = 256, O_WIDTHS, O_DATASET, O_DATADIR, O_AUGMENT, O_SMOOTH, O_OPT, O_MOM, O_BETA1,
    O_BETA2, O_EPS, O_WD, O_TRUST, O_PHI, O_NOEXCL, O_LR, O_REFB, O_SCALING, O_LRMAX, O_WUE, O_WUS,
    O_WUSTART, O_DECAY, O_POWER, O_ENDLR, O_STEPEVERY, O_STEPGAMMA, O_CDE, O_CDS, O_BATCH,
    O_WORKERS, O_MICRO, O_TARGET, O_EVAL, O_MAXE, O_MAXS, O_SEED, O_SEEDS, O_SWEEP, O_OUT,
    O_JSON, O_MK_ORDER, O_MK_SUCC, O_MK_FLOOR, O_TLOSS, O_LAYERS, O_HIDDEN, O_HEADS, O_VOCAB,
    O_SEQLEN,
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
    {"lr-max", required_argument, NULL, O_LRMAX},
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
    {"markov-order", required_argument, NULL, O_MK_ORDER},
    {"markov-successors", required_argument, NULL, O_MK_SUCC},
    {"markov-floor", required_argument, NULL, O_MK_FLOOR},
    {"target-loss", required_argument, NULL, O_TLOSS},
    {"layers", required_argument, NULL, O_LAYERS},
    {"hidden", required_argument, NULL, O_HIDDEN},
    {"heads", required_argument, NULL, O_HEADS},
    {"vocab", required_argument, NULL, O_VOCAB},
    {"seq-len", required_argument, NULL, O_SEQLEN},
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

/* --target-loss: 1 to DP_MAX_TARGETS positive numbers separated by ','. */
static int parse_loss_list(const char *s, double *v, int *n)
{
    const char *p = s;
    for (*n = 0;; p++) {
        char *end;
        double x = strtod(p, &end);
        if (end == p || !(x > 0 && x < 100) || *n == DP_MAX_TARGETS || (*end && *end != ','))
            return cli_usage_error(&cmd_train, "--target-loss: expected 1 to %d numbers of nats/token "
                                   "above the optimal loss, in (0, 100), separated by ',' (e.g. "
                                   "0.1,0.05), found '%s'", DP_MAX_TARGETS, s);
        v[(*n)++] = x;
        if (!*end)
            return TT_OK;
        p = end;
    }
}

/* The sweep's profile files: --out (with loss targets split at ',', one per
 * target), or DATASET-MODEL-OPTIMIZER.json, with -lossX before .json per loss
 * target. */
static int sweep_outputs(train_cli *t)
{
    const dp_options *d = &t->dp;
    int want = d->ntarget_loss ? d->ntarget_loss : 1;
    t->nouts = 0;
    if (t->out && !d->ntarget_loss) { /* an accuracy target: the file as given */
        snprintf(t->outs[t->nouts++], sizeof t->outs[0], "%s", t->out);
        return TT_OK;
    }
    if (t->out) {
        const char *p = t->out;
        for (;;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if (len == 0 || len >= sizeof t->outs[0] || t->nouts == want)
                break;
            snprintf(t->outs[t->nouts++], sizeof t->outs[0], "%.*s", (int)len, p);
            if (!comma)
                break;
            p = comma + 1;
        }
        if (t->nouts != want || t->out[strlen(t->out) - 1] == ',')
            return cli_usage_error(&cmd_train, "--out: expected %d profile file%s, one per "
                                   "--target-loss value, separated by ',', found '%s'", want,
                                   want > 1 ? "s" : "", t->out);
        return TT_OK;
    }
    for (int i = 0; i < want; i++) {
        char loss[32] = "";
        if (d->ntarget_loss)
            snprintf(loss, sizeof loss, "-loss%g", d->target_loss[i]);
        snprintf(t->outs[t->nouts++], sizeof t->outs[0], "%s-%s-%s%s.json", t->dataset_name,
                 d->model, optim_name(&d->opt), loss);
    }
    return TT_OK;
}

/* The markov source's options against the dataset and the target. */
static int check_markov_args(train_cli *t)
{
    dp_options *d = &t->dp;
    if (t->dataset != DP_DATA_MARKOV) {
        if (d->ntarget_loss)
            return cli_usage_error(&cmd_train, "--target-loss sets a loss target of --dataset "
                                   "markov; use --target for a test accuracy");
        if (t->markov_set)
            return cli_usage_error(&cmd_train, "--markov-order, --markov-successors and "
                                   "--markov-floor shape --dataset markov; add it or drop them");
        return TT_OK;
    }
    if (!d->ntarget_loss)
        return cli_usage_error(&cmd_train, "--dataset markov trains to a held-out loss: add "
                               "--target-loss X (nats/token above the optimal loss, e.g. 0.05)");
    if (!d->mo.vocab)
        d->mo.vocab = MARKOV_DEFAULT_VOCAB;
    return TT_OK;
}

static int parse_choice(int code, const char *s, const char *const *names, int *out)
{
    char flag[48];
    return cli_choice(&cmd_train, opt_flag(code, flag, sizeof flag), s, names, out);
}

static const char *const DATASETS[] = {"fashion-mnist", "teacher", "markov", NULL};
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
    t->markov_order = 2;
    t->markov_successors = 3;
    t->markov_floor = 0.05;
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
        case O_LRMAX: rc = parse_double(c, optarg, 1e-12, 1e4, &d->lr.max_lr); break;
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
        case O_MK_ORDER:
            if (!(rc = parse_long(c, optarg, 1, 8, &l)))
                t->markov_order = (int)l;
            t->markov_set = 1;
            break;
        case O_MK_SUCC:
            if (!(rc = parse_long(c, optarg, 1, 1 << 20, &l)))
                t->markov_successors = (int)l;
            t->markov_set = 1;
            break;
        case O_MK_FLOOR:
            rc = parse_double(c, optarg, 1e-9, 0.999, &t->markov_floor);
            t->markov_set = 1;
            break;
        case O_TLOSS: rc = parse_loss_list(optarg, d->target_loss, &d->ntarget_loss); break;
        case O_LAYERS: case O_HIDDEN: case O_HEADS: case O_VOCAB: case O_SEQLEN: {
            tt_error e = {0};
            if (model_opts_set(&d->mo, opt_name(c), optarg, &e))
                rc = cli_usage_error(&cmd_train, "%s", e.msg);
            break;
        }
        default: return cli_bad_option(&cmd_train, argv, optind, optopt, OPTS, c == ':');
        }
        if (rc)
            return rc;
    }
    if (optind != argc)
        return cli_usage_error(&cmd_train, "unexpected argument '%s'", argv[optind]);
    if ((rc = check_markov_args(t)))
        return rc;
    if (t->out && !t->nsweep)
        return cli_usage_error(&cmd_train, "--out writes a sweep's profile; add --sweep-batch");
    t->dataset_name = DATASETS[t->dataset];
    if (t->nsweep && (rc = sweep_outputs(t)))
        return rc;
    if (t->nseeds && !t->nsweep)
        return cli_usage_error(&cmd_train, "--seeds sets a sweep's runs; add --sweep-batch, or use --seed for one run");
    if (!t->nseeds)
        t->seeds[t->nseeds++] = (long)d->seed;
    d->mo.seed = d->seed;
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
    json_t *losses = json_array();
    for (int i = 0; i < d->ntarget_loss; i++)
        json_array_append_new(losses, json_pack("{s:f, s:o}", "above_optimal", d->target_loss[i], "steps",
                                                r->target_steps[i] >= 0 ? json_integer(r->target_steps[i])
                                                                        : json_null()));
    json_t *doc = json_pack(
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
    if (d->ntarget_loss) { /* a loss target: L* and the step each target was met at */
        json_object_set_new(doc, "optimal_loss", json_real(r->optimal_loss));
        json_object_set_new(doc, "target_losses", losses);
    } else {
        json_decref(losses);
    }
    return doc;
}

static void print_result(const train_cli *t, const dp_result *r)
{
    const dp_options *d = &t->dp;
    printf("model          %s", d->model);
    for (int i = 0; d->mo.nwidths && !strcmp(d->model, "mlp") && i < d->mo.nwidths; i++)
        printf("%s%d", i ? "-" : " ", d->mo.widths[i]);
    printf("\ndata           %s\n", r->data_note);
    printf("optimizer      %s, peak lr %.6g (%s scaling of %.6g at batch %g", optim_name(&d->opt), r->peak_lr,
           LR_SCALING_NAMES[d->lr.scaling], d->lr.base_lr, d->lr.ref_batch);
    if (d->lr.max_lr > 0)
        printf(", at most %.6g", d->lr.max_lr);
    printf("), warm-up %ld steps, decay %s\n", r->warmup_steps, LR_DECAY_NAMES[d->lr.decay]);
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
    for (int i = 0; i < d->ntarget_loss; i++) {
        double x = d->target_loss[i];
        if (r->target_steps[i] >= 0)
            printf("target loss    %.6f = L* %.6f + %g: met at step %ld\n", r->optimal_loss + x,
                   r->optimal_loss, x, r->target_steps[i]);
        else
            printf("target loss    %.6f = L* %.6f + %g: not met\n", r->optimal_loss + x, r->optimal_loss, x);
    }
    if (r->diverged)
        printf("result         diverged at step %ld (non-finite loss)\n", r->steps_run);
    else if (r->reached && d->ntarget_loss)
        printf("result         met every target loss at step %ld (%.0f examples)\n", r->steps_to_target,
               r->examples_to_target);
    else if (r->reached)
        printf("result         reached test accuracy %.4f at step %ld (epoch %.3f, %.0f examples)\n",
               d->target, r->steps_to_target, r->epochs_to_target, r->examples_to_target);
    else if (d->ntarget_loss)
        printf("result         not reached after %ld steps (%.3f epochs)\n", r->steps_run, r->epochs_run);
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
    markov source;
    dp_data data;
} loaded;

static int load_data(const train_cli *t, loaded *ld, tt_error *err)
{
    memset(ld, 0, sizeof *ld);
    if (t->dataset == DP_DATA_MARKOV) {
        int rc = markov_init(&ld->source, t->dp.mo.vocab, t->markov_order, t->markov_successors,
                             t->markov_floor, MARKOV_SOURCE_SEED, err);
        ld->data = (dp_data){.kind = DP_DATA_MARKOV, .markov = &ld->source, .stream_epoch = 60000,
                             .stream_test = MARKOV_TEST_SEQUENCES};
        return rc;
    }
    if (t->dataset == DP_DATA_TEACHER) {
        int in_dim = t->dp.mo.nwidths ? t->dp.mo.widths[0] : 784;
        if (teacher_init(&ld->teach, in_dim, 64, 10, UINT64_C(0x7eac4e7)))
            return tt_error_set(err, TT_EINTERNAL, "out of memory for the teacher");
        ld->data = (dp_data){.kind = DP_DATA_TEACHER, .teacher = &ld->teach,
                             .stream_epoch = 60000, .stream_test = 10000};
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
    markov_free(&ld->source);
}

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
    "train", "real data-parallel training to a target accuracy or loss; batch sweeps and profiles",
    "train [--model NAME] [--widths LIST] [--dataset NAME] [--data-dir DIR] [--augment MODE]\n"
    "           [--markov-order K] [--markov-successors N] [--markov-floor F] [--layers N] [--hidden N]\n"
    "           [--heads N] [--vocab N] [--seq-len N]\n"
    "           [--label-smoothing X] [--optimizer NAME] [--momentum X] [--beta1 X] [--beta2 X] [--eps X]\n"
    "           [--weight-decay X] [--trust-coef X] [--phi-clamp MIN,MAX] [--no-exclude] [--lr X]\n"
    "           [--ref-batch N] [--lr-scaling RULE] [--lr-max X] [--warmup-epochs E] [--warmup-steps N]\n"
    "           [--warmup-start F] [--decay KIND] [--poly-power P] [--end-lr X] [--step-every N]\n"
    "           [--step-gamma G] [--cooldown-epochs E] [--cooldown-steps N] [--batch N] [--workers K]\n"
    "           [--micro-batch N] [--target X] [--target-loss LIST] [--eval-every N] [--max-epochs E] [--max-steps N]\n"
    "           [--seed N] [--sweep-batch LIST] [--seeds LIST] [--out FILE] [--json]",
    train_main, train_help,
};
