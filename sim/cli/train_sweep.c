/* train_sweep.c: `ttasim train --sweep-batch`: real training at each batch
 * size and seed, gathered into a convergence profile (train_sweep.h). */
#include "sim/cli/train_sweep.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/jsonx.h"
#include "sim/cli/cli.h"
#include "trainer/profile.h"

static void describe_recipe(const train_cli *t, const char *data, profile_recipe *r)
{
    const dp_options *d = &t->dp;
    const optim_config *o = &d->opt;
    char arch[128] = "";
    for (int i = 0; !strcmp(d->model, "mlp") && i < d->mo.nwidths; i++)
        snprintf(arch + strlen(arch), sizeof arch - strlen(arch), "%s%d", i ? "-" : "mlp ", d->mo.widths[i]);
    if (d->mo.layers || d->mo.hidden || d->mo.heads || d->mo.vocab || d->mo.seq_len) /* a decoder's shape */
        snprintf(arch, sizeof arch, "%s (layers %d, hidden %d, heads %d, vocab %d, seq-len %d; 0: the model's)",
                 d->model, d->mo.layers, d->mo.hidden, d->mo.heads, d->mo.vocab, d->mo.seq_len);
    char opt[128];
    if (o->kind == OPT_ADAMW || o->kind == OPT_LAMB)
        snprintf(opt, sizeof opt, "betas %g/%g, eps %g", o->beta1, o->beta2, o->eps);
    else if (o->kind == OPT_LARS)
        snprintf(opt, sizeof opt, "momentum %g, trust coefficient %g", o->momentum, o->trust_coef);
    else
        snprintf(opt, sizeof opt, "momentum %g", o->momentum);
    snprintf(r->optimizer, sizeof r->optimizer, "%s", optim_name(o));
    char scale[64];
    int n = snprintf(scale, sizeof scale, "%s scaling", LR_SCALING_NAMES[d->lr.scaling]);
    if (d->lr.max_lr > 0)
        snprintf(scale + n, sizeof scale - (size_t)n, " to at most %g", d->lr.max_lr);
    snprintf(r->hyperparameters, sizeof r->hyperparameters, "%s; base rate %g at batch %g, %s; %s; %d workers",
             arch[0] ? arch : d->model, d->lr.base_lr, d->lr.ref_batch, scale, opt, d->workers);
    snprintf(r->schedule, sizeof r->schedule, "%s", LR_DECAY_NAMES[d->lr.decay]);
    if (d->lr.decay == LR_DECAY_POLY)
        snprintf(r->schedule, sizeof r->schedule, "poly, power %g, to %g over the budget", d->lr.poly_power,
                 d->lr.end_lr);
    else if (d->lr.decay == LR_DECAY_COSINE)
        snprintf(r->schedule, sizeof r->schedule, "cosine to %g over the budget", d->lr.end_lr);
    else if (d->lr.decay == LR_DECAY_STEP)
        snprintf(r->schedule, sizeof r->schedule, "x %g every %ld steps", d->lr.step_gamma, d->lr.step_every);
    if (d->lr.warmup_steps >= 0)
        snprintf(r->warmup, sizeof r->warmup, "linear, %g epochs, at most %ld steps", d->warmup_epochs,
                 d->lr.warmup_steps);
    else
        snprintf(r->warmup, sizeof r->warmup, "linear, %g epochs", d->warmup_epochs);
    snprintf(r->regularisation, sizeof r->regularisation,
             "weight decay %g%s, label smoothing %g, data %s", o->weight_decay,
             o->exclude_bias_norm ? " (not on biases and norms)" : "", (double)d->mo.label_smoothing, data);
    snprintf(r->precision, sizeof r->precision, "fp32");
}

static int has_seed(const profile_point *pt, uint64_t seed)
{
    for (int i = 0; pt && i < pt->nruns; i++)
        if (pt->runs[i].seed == seed)
            return 1;
    return 0;
}

static void print_profile(const conv_profile *p, const char *out)
{
    printf("model %s on %s, optimizer %s, target %s %g\n\n", p->model, p->dataset, p->recipe.optimizer,
           p->metric, p->target);
    printf("%8s %10s %7s %5s %8s %8s %8s %9s %8s %10s %12s %9s  %s\n", "batch", "peak_lr", "warmup", "runs",
           "steps", "min", "max", "epochs", "reached", "fit_steps", "noise_scale", "gap", "data");
    for (int i = 0; i < p->npoints; i++) {
        const profile_point *q = &p->points[i];
        long lo, hi;
        double gap = 0;
        int ngap = 0;
        profile_point_range(q, &lo, &hi);
        for (int k = 0; k < q->nruns; k++) {
            const profile_run *r = &q->runs[k];
            if (!r->reached && isfinite(r->test_loss - r->train_loss)) {
                gap += r->test_loss - r->train_loss;
                ngap++;
            }
        }
        printf("%8ld %10.5g %7ld %5d %8ld %8ld %8ld %9.3f %8s %10.1f %12.5g %9.4f  %s\n", q->batch, q->lr,
               q->warmup_steps, q->nruns, q->steps, lo, hi, q->epochs, q->reached ? "yes" : "no",
               profile_fit_steps(&p->fit, q->batch), q->noise_scale, ngap ? gap / ngap : NAN, q->data);
    }
    if (p->fit.ok)
        printf("\nfit S = S_min (1 + B_noise/B): S_min %.1f steps, E_min %.0f examples, "
               "B_crit %.0f, residual %.3f (RMS relative)\n",
               p->fit.s_min, p->fit.e_min, p->fit.b_crit, p->fit.residual);
    else
        printf("\nfit: needs two batch sizes that reached the target\n");
    printf("run-to-run spread: sd of ln(steps) %.4f (pooled over batches whose runs all reached)\n", p->run_log_sd);
    printf("gap: mean test loss - training loss at the end of the runs that did not reach the target\n");
    printf("measured noise scale B_simple (median over batches): %.5g\n", p->noise_scale);
    printf("profile written to %s\n", out);
}

static json_t *profile_json(const conv_profile *p, const char *out)
{
    json_t *pts = json_array();
    for (int i = 0; i < p->npoints; i++) {
        const profile_point *q = &p->points[i];
        json_t *runs = json_array();
        for (int k = 0; k < q->nruns; k++) {
            const profile_run *r = &q->runs[k];
            json_array_append_new(runs, json_pack("{s:I, s:b, s:I, s:o, s:o, s:o}", "seed", (json_int_t)r->seed,
                                                  "reached", r->reached, "steps", (json_int_t)r->steps,
                                                  "final_accuracy", jx_real_or_null(r->final_accuracy),
                                                  "train_loss", jx_real_or_null(r->train_loss), "test_loss",
                                                  jx_real_or_null(r->test_loss)));
        }
        json_array_append_new(
            pts, json_pack("{s:I, s:b, s:I, s:f, s:f, s:f, s:I, s:o, s:o, s:o, s:o, s:s}", "batch",
                           (json_int_t)q->batch, "reached", q->reached, "steps", (json_int_t)q->steps, "epochs",
                           q->epochs, "examples", q->examples, "lr", q->lr, "warmup_steps",
                           (json_int_t)q->warmup_steps, "noise_scale", jx_real_or_null(q->noise_scale),
                           "fitted_steps", jx_real_or_null(profile_fit_steps(&p->fit, q->batch)), "log_sd",
                           jx_real_or_null(q->log_sd), "runs", runs, "data", q->data));
    }
    json_t *fit = p->fit.ok ? json_pack("{s:f, s:f, s:f, s:f}", "s_min", p->fit.s_min, "e_min", p->fit.e_min,
                                        "b_crit", p->fit.b_crit, "residual", p->fit.residual)
                            : json_null();
    return json_pack("{s:s, s:s, s:s, s:s, s:f, s:o, s:o, s:o, s:o}", "profile", out, "model", p->model,
                     "dataset", p->dataset, "optimizer", p->recipe.optimizer, "target", p->target, "points",
                     pts, "fit", fit, "noise_scale", jx_real_or_null(p->noise_scale), "run_log_sd",
                     jx_real_or_null(p->run_log_sd));
}

/* A profile's metric for the sweep's target i. */
static const char *target_metric(const train_cli *t, int i, double *value)
{
    if (t->dp.ntarget_loss) {
        *value = t->dp.target_loss[i];
        return "loss_above_optimal";
    }
    *value = t->dp.target;
    return "test_accuracy";
}

/* The profile at path, or a new one; TT_EINPUT (reported) when it is another sweep's. */
static int open_profile(const train_cli *t, const dp_data *data, int i, const char *path,
                        conv_profile *p)
{
    const char *dataset = t->dataset_name, *opt = optim_name(&t->dp.opt);
    double target;
    const char *metric = target_metric(t, i, &target);
    tt_error err = {0};
    if (access(path, F_OK) != 0) {
        profile_init(p, t->dp.model, dataset, opt, metric, target);
        p->dataset_examples = t->dataset == DP_DATA_FMNIST ? (double)data->train->n
                                                            : (double)data->stream_epoch;
        return TT_OK;
    }
    int rc = profile_load(path, p, &err);
    if (rc)
        return cli_report_error(rc, err.msg);
    if (strcmp(p->model, t->dp.model) || strcmp(p->dataset, dataset) || strcmp(p->recipe.optimizer, opt) ||
        strcmp(p->metric, metric) || fabs(p->target - target) > 1e-12) {
        fprintf(stderr,
                "ttasim: %s holds a profile for %s on %s with %s to %s %g, not %s on %s with %s to %s %g; "
                "remove it or choose another --out\n",
                path, p->model, p->dataset, p->recipe.optimizer, p->metric, p->target, t->dp.model, dataset,
                opt, metric, target);
        profile_free(p);
        return TT_EINPUT;
    }
    return TT_OK;
}

int train_sweep_run(const train_cli *t, const dp_data *data, int show_progress)
{
    conv_profile p[DP_MAX_TARGETS];
    int np = 0, rc = TT_OK;
    tt_error err = {0};
    for (; np < t->nouts && !rc; np++)
        rc = open_profile(t, data, np, t->outs[np], &p[np]);
    if (rc)
        np--; /* the failed one holds nothing */
    for (int j = 0; j < np && !rc; j++) {
        profile_add_source(&p[j], t->cmdline);
        profile_add_source(&p[j], "fit: S = S_min (1 + B_noise/B), McCandlish et al. 2018 (arXiv 1812.06162)");
    }

    for (int i = 0; i < t->nsweep && !rc; i++)
        for (int k = 0; k < t->nseeds && !rc; k++) {
            long b = t->sweep[i];
            uint64_t seed = (uint64_t)t->seeds[k];
            int done = 1;
            for (int j = 0; j < np; j++)
                done &= has_seed(profile_find(&p[j], b), seed);
            if (done) {
                if (!t->json)
                    fprintf(stderr, "batch %ld seed %llu: already in %s, skipped\n", b,
                            (unsigned long long)seed, t->outs[0]);
                continue;
            }
            dp_options o = t->dp;
            o.batch = b;
            o.seed = o.mo.seed = seed;
            dp_result r;
            if (show_progress)
                fprintf(stderr, "batch %ld seed %llu\n", b, (unsigned long long)seed);
            rc = dp_train(&o, data, &r, &err);
            if (show_progress)
                fputc('\n', stderr);
            if (rc) {
                rc = cli_report_error(rc, err.msg);
                break;
            }
            profile_point pt = {.batch = b, .lr = r.peak_lr, .warmup_steps = r.warmup_steps,
                                .noise_scale = r.noise_scale};
            snprintf(pt.data, sizeof pt.data, "%s", r.data);
            const dp_eval *last = r.ncurve ? &r.curve[r.ncurve - 1] : NULL;
            for (int j = 0; j < np && !rc; j++) {
                /* a loss target met on the way counts at its own step */
                long at = t->dp.ntarget_loss ? r.target_steps[j] : r.reached ? r.steps_to_target : -1;
                profile_run run = {.seed = seed, .reached = at >= 0 && !r.diverged,
                                   .steps = at >= 0 ? at : r.steps_run,
                                   .final_accuracy = r.final_test_accuracy,
                                   .train_loss = last ? last->train_loss : NAN,
                                   .test_loss = last ? last->test_loss : NAN};
                describe_recipe(t, r.data, &p[j].recipe);
                profile_add_source(&p[j], r.data_note);
                if (has_seed(profile_find(&p[j], b), seed))
                    continue;
                if ((rc = profile_add_run(&p[j], &pt, &run, &err))) {
                    rc = cli_report_error(rc, err.msg);
                    break;
                }
                profile_refit(&p[j]);
                if ((rc = profile_save(&p[j], t->outs[j], &err))) /* after every run: a resumable sweep */
                    rc = cli_report_error(rc, err.msg);
            }
            dp_result_free(&r);
        }
    int any = 0;
    for (int j = 0; j < np && !rc; j++) {
        for (int i = 0; i < p[j].npoints; i++)
            any |= p[j].points[i].reached;
        if (t->json) {
            json_t *doc = profile_json(&p[j], t->outs[j]);
            json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
            fputc('\n', stdout);
            json_decref(doc);
        } else {
            print_profile(&p[j], t->outs[j]);
            if (j + 1 < np)
                printf("\n");
        }
    }
    for (int j = 0; j < np; j++)
        profile_free(&p[j]);
    return rc ? rc : any ? TT_OK : TT_EFAIL;
}
