/* ttasim profile: a convergence profile's recipe, points, fit and band, and the
 * leave-one-out validation of steps to target against published rows. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/jsonx.h"
#include "common/stats.h"
#include "sim/cli/cli.h"
#include "sim/replay/convergence.h"
#include "sim/replay/scenario.h"
#include "trainer/profile.h"

extern const cli_command cmd_profile;

/* The bar for leave-one-out: median |predicted / published - 1| */
#define LOO_MAX_MEDIAN_ERROR 0.15
/* A published row is the point within this relative distance of its batch (the
 * ViT row at 32,000 is the profile's 32K point) */
#define LOO_SAME_BATCH 0.05
#define LOO_MAX_ROWS 512

static void profile_help(FILE *out)
{
    fprintf(out,
            "ttasim profile show PROFILE [--batch LIST] [--json]\n"
            "  the recipe, target, points with their runs, the McCandlish fit and the steps to\n"
            "  target with their 10th-90th percentile band at each point and at --batch values\n"
            "  (extrapolated ones marked).\n\n"
            "ttasim profile loo PATH... [--json]\n"
            "  leave-one-out validation. A scenario with reference.steps and a profile: its steps\n"
            "  predicted from the profile without the point at its batch (within 5 %%). A profile:\n"
            "  each of its points predicted from the others. Prints the table and the median\n"
            "  |predicted / published - 1| over the scenarios (over the points when no scenario\n"
            "  is given); exit 1 when it exceeds %.0f %%.\n",
            100 * LOO_MAX_MEDIAN_ERROR);
}

static int parse_batches(const char *s, double *v, int cap, int *n)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        double x = strtod(tok, &end);
        if (end == tok || *end || !(x >= 1) || *n == cap)
            return cli_usage_error(&cmd_profile, "--batch: expected up to %d comma-separated batch sizes >= 1, found '%s'",
                                   cap, s);
        v[(*n)++] = x;
    }
    return TT_OK;
}

static json_t *estimate_json(double batch, const convergence_estimate *e)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:b}", "batch", batch, "steps", e->steps, "steps_p10", e->p10,
                     "steps_p90", e->p90, "log_sd", e->log_sd, "extrapolated", e->extrapolated);
}

static int show_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"batch", required_argument, NULL, 'b'}, {"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
    double extra[64];
    int nextra = 0, json = 0, c, rc;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c == 'b') {
            if ((rc = parse_batches(optarg, extra, 64, &nextra)))
                return rc;
        } else if (c == 'j') {
            json = 1;
        } else {
            return cli_bad_option(&cmd_profile, argv, optind, optopt, opts, c == ':');
        }
    }
    if (optind + 1 != argc)
        return cli_usage_error(&cmd_profile, "show takes one profile file");
    const char *path = argv[optind];
    conv_profile p;
    convergence *cv;
    tt_error err = {0};
    if ((rc = profile_load(path, &p, &err)))
        return cli_report_error(rc, err.msg);
    if ((rc = convergence_from_profile(&p, path, &cv, &err))) {
        profile_free(&p);
        return cli_report_error(rc, err.msg);
    }
    int assumed;
    double run_sd = convergence_run_sd(cv, &assumed);
    const profile_recipe *r = &p.recipe;
    if (json) {
        json_t *pts = json_array(), *pred = json_array();
        for (int i = 0; i < p.npoints; i++) {
            const profile_point *q = &p.points[i];
            convergence_estimate e = convergence_at(cv, (double)q->batch);
            json_t *o = estimate_json((double)q->batch, &e);
            json_object_set_new(o, "measured_steps", json_integer(q->steps));
            json_object_set_new(o, "reached", json_boolean(q->reached));
            json_object_set_new(o, "runs", json_integer(q->nruns));
            json_object_set_new(o, "fitted_steps", jx_real_or_null(profile_fit_steps(&p.fit, q->batch)));
            json_array_append_new(pts, o);
        }
        for (int i = 0; i < nextra; i++) {
            convergence_estimate e = convergence_at(cv, extra[i]);
            json_array_append_new(pred, estimate_json(extra[i], &e));
        }
        json_t *doc = json_pack("{s:s, s:i, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:{s:s, s:f}, s:o, s:o, "
                                "s:f, s:b}",
                                "profile", path, "version", p.version, "model", p.model, "dataset", p.dataset,
                                "recipe", "optimizer", r->optimizer, "hyperparameters", r->hyperparameters,
                                "schedule", r->schedule, "warmup", r->warmup, "regularisation", r->regularisation,
                                "precision", r->precision, "target", "metric", p.metric, "value", p.target,
                                "points", pts, "predictions", pred, "run_log_sd", run_sd, "run_log_sd_assumed",
                                assumed);
        json_object_set_new(doc, "fit", p.fit.ok ? json_pack("{s:f, s:f, s:f, s:f}", "s_min", p.fit.s_min, "e_min",
                                                             p.fit.e_min, "b_crit", p.fit.b_crit, "residual",
                                                             p.fit.residual)
                                                 : json_null());
        cli_print_json(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        json_decref(doc);
    } else {
        printf("profile   %s (version %d)\n", path, p.version);
        printf("model     %s on %s; target %s %g\n", p.model[0] ? p.model : "(not stated)", p.dataset, p.metric,
               p.target);
        printf("recipe    %s: %s\n          schedule %s; warm-up %s\n          %s; %s\n\n", r->optimizer,
               r->hyperparameters, r->schedule, r->warmup, r->regularisation, r->precision);
        printf("%9s %5s %9s %9s %9s %8s %11s %11s %11s\n", "batch", "runs", "steps", "runs_min", "runs_max",
               "epochs", "fit_steps", "band_p10", "band_p90");
        for (int i = 0; i < p.npoints; i++) {
            const profile_point *q = &p.points[i];
            long lo, hi;
            profile_point_range(q, &lo, &hi);
            convergence_estimate e = convergence_at(cv, (double)q->batch);
            printf("%9ld %5d %9ld%s %9ld %9ld %8.2f %11.1f %11.1f %11.1f\n", q->batch, q->nruns, q->steps,
                   q->reached ? " " : "!", lo, hi, q->epochs, profile_fit_steps(&p.fit, q->batch), e.p10, e.p90);
        }
        if (p.fit.ok)
            printf("\nfit       S = S_min (1 + B_crit / B): S_min %.1f steps, E_min %.4g examples, B_crit %.0f, "
                   "RMS relative residual %.3f\n",
                   p.fit.s_min, p.fit.e_min, p.fit.b_crit, p.fit.residual);
        else
            printf("\nfit       none (under two reached points, or no critical batch: S_min <= 0)\n");
        printf("spread    run-to-run sd of ln(steps) %.4f%s\n", run_sd,
               assumed ? " (assumed: the profile has no repeated runs)" : " (pooled over the profile's runs)");
        if (nextra)
            printf("\n%12s %11s %11s %11s  %s\n", "batch", "steps", "p10", "p90", "");
        for (int i = 0; i < nextra; i++) {
            convergence_estimate e = convergence_at(cv, extra[i]);
            printf("%12.0f %11.1f %11.1f %11.1f  %s\n", extra[i], e.steps, e.p10, e.p90,
                   e.extrapolated ? "extrapolated" : "");
        }
        for (int i = 0; i < p.npoints; i++)
            if (!p.points[i].reached) {
                printf("! not reached at this batch: steps are the budget spent\n");
                break;
            }
    }
    convergence_free(cv);
    profile_free(&p);
    return TT_OK;
}

typedef struct loo_row {
    char name[256];
    double batch, published, predicted, p10, p90;
    int extrapolated;
} loo_row;

/* Predicts the steps at `batch` from the profile without its points near that batch. */
static int predict_without(const conv_profile *full, const char *label, double batch, loo_row *row, tt_error *err)
{
    conv_profile p = *full;
    p.points = malloc((size_t)(full->npoints ? full->npoints : 1) * sizeof *p.points);
    if (!p.points)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    memcpy(p.points, full->points, (size_t)full->npoints * sizeof *p.points);
    for (int i = p.npoints - 1; i >= 0; i--)
        if (fabs(p.points[i].batch / batch - 1) <= LOO_SAME_BATCH)
            profile_remove(&p, p.points[i].batch);
    profile_refit(&p);
    convergence *cv;
    int rc = convergence_from_profile(&p, label, &cv, err);
    profile_free(&p);
    if (rc)
        return rc;
    convergence_estimate e = convergence_at(cv, batch);
    convergence_free(cv);
    row->batch = batch;
    row->predicted = e.steps;
    row->p10 = e.p10;
    row->p90 = e.p90;
    row->extrapolated = e.extrapolated;
    return TT_OK;
}

static int loo_scenario(const char *path, loo_row *rows, int *n, tt_error *err)
{
    scenario sc;
    int rc = scenario_load(path, &sc, err);
    if (rc)
        return rc;
    if (sc.conv == CONV_PROFILE && sc.ref_steps > 0 && sc.global_batch > 0 && *n < LOO_MAX_ROWS) {
        conv_profile p;
        if (!(rc = profile_load(sc.profile_path, &p, err))) {
            loo_row *r = &rows[*n];
            memset(r, 0, sizeof *r);
            snprintf(r->name, sizeof r->name, "%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
            r->published = sc.ref_steps;
            if (!(rc = predict_without(&p, sc.profile_path, (double)sc.global_batch, r, err)))
                (*n)++;
            profile_free(&p);
        }
    }
    scenario_free(&sc);
    return rc;
}

static int loo_profile(const char *path, loo_row *rows, int *n, tt_error *err)
{
    conv_profile p;
    int rc = profile_load(path, &p, err);
    if (rc)
        return rc;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    for (int i = 0; i < p.npoints && !rc && *n < LOO_MAX_ROWS; i++) {
        if (!p.points[i].reached)
            continue;
        loo_row *r = &rows[*n];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s @ %ld", base, p.points[i].batch);
        r->published = (double)p.points[i].steps;
        rc = predict_without(&p, path, (double)p.points[i].batch, r, err);
        if (rc == TT_EINPUT) { /* the only reached point: nothing left to predict it from */
            rc = TT_OK;
            continue;
        }
        if (!rc)
            (*n)++;
    }
    profile_free(&p);
    return rc;
}

static double median_abs_error(const loo_row *rows, int n, int *inside)
{
    double *e = malloc((size_t)(n ? n : 1) * sizeof *e);
    *inside = 0;
    for (int i = 0; i < n; i++) {
        e[i] = fabs(rows[i].predicted / rows[i].published - 1);
        *inside += rows[i].published >= rows[i].p10 && rows[i].published <= rows[i].p90;
    }
    double m = stats_median(e, (size_t)n);
    free(e);
    return m;
}

static void print_table(const char *title, const loo_row *rows, int n)
{
    int inside;
    double med = median_abs_error(rows, n, &inside);
    printf("%s\n%-44s %9s %11s %11s %11s %11s %8s\n", title, "row", "batch", "published", "predicted", "p10", "p90",
           "error");
    for (int i = 0; i < n; i++) {
        const loo_row *r = &rows[i];
        printf("%-44s %9.0f %11.0f %11.0f %11.0f %11.0f %+7.1f%%%s\n", r->name, r->batch, r->published, r->predicted,
               r->p10, r->p90, 100 * (r->predicted / r->published - 1), r->extrapolated ? " *" : "");
    }
    printf("median |predicted / published - 1| = %.1f %% over %d rows; %d of %d inside the 10th-90th band\n\n",
           100 * med, n, inside, n);
}

static json_t *rows_json(const loo_row *rows, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:b}", "row", rows[i].name, "batch",
                                           rows[i].batch, "published_steps", rows[i].published, "predicted_steps",
                                           rows[i].predicted, "steps_p10", rows[i].p10, "steps_p90", rows[i].p90,
                                           "error", rows[i].predicted / rows[i].published - 1, "extrapolated",
                                           rows[i].extrapolated));
    return a;
}

static int loo_main(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
    int json = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else
            return cli_bad_option(&cmd_profile, argv, optind, optopt, opts, c == ':');
    }
    if (optind == argc)
        return cli_usage_error(&cmd_profile, "loo needs scenario or profile files");
    loo_row *sc_rows = calloc(LOO_MAX_ROWS, sizeof *sc_rows), *pr_rows = calloc(LOO_MAX_ROWS, sizeof *pr_rows);
    int nsc = 0, npr = 0, rc = TT_OK;
    tt_error err = {0};
    for (int i = optind; i < argc && !rc; i++)
        rc = scenario_file_is_scenario(argv[i], NULL, 0) ? loo_scenario(argv[i], sc_rows, &nsc, &err)
                                                : loo_profile(argv[i], pr_rows, &npr, &err);
    if (rc) {
        free(sc_rows);
        free(pr_rows);
        return cli_report_error(rc, err.msg);
    }
    int inside;
    double med = nsc ? median_abs_error(sc_rows, nsc, &inside) : median_abs_error(pr_rows, npr, &inside);
    if (json) {
        json_t *doc = json_pack("{s:o, s:o, s:f, s:f}", "scenarios", rows_json(sc_rows, nsc), "profile_points",
                                rows_json(pr_rows, npr), "median_abs_error", med, "max_median_abs_error",
                                LOO_MAX_MEDIAN_ERROR);
        cli_print_json(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        json_decref(doc);
    } else {
        if (nsc)
            print_table("published scenarios: steps predicted from their profile without the row's point", sc_rows,
                        nsc);
        if (npr)
            print_table("profile points: each predicted from the profile's other points (* extrapolated)", pr_rows,
                        npr);
    }
    free(sc_rows);
    free(pr_rows);
    if (!(med <= LOO_MAX_MEDIAN_ERROR)) {
        fprintf(stderr, "ttasim profile loo: median error %.1f %% exceeds %.0f %%\n", 100 * med,
                100 * LOO_MAX_MEDIAN_ERROR);
        return TT_EFAIL;
    }
    return TT_OK;
}

static int profile_main(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error(&cmd_profile, "expected 'show' or 'loo'");
    if (strcmp(argv[1], "show") == 0)
        return show_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "loo") == 0)
        return loo_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "--help") == 0) {
        profile_help(stdout);
        return TT_OK;
    }
    return cli_usage_error(&cmd_profile, "unknown subcommand '%s'; expected 'show' or 'loo'", argv[1]);
}

const cli_command cmd_profile = {
    "profile", "convergence profiles: recipe, points, fit and band; leave-one-out validation of steps",
    "profile show PROFILE [--batch LIST] [--json] | profile loo PATH... [--json]", profile_main, profile_help,
};
