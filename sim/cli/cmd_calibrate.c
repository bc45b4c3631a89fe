/* ttasim calibrate [SET]: fits the per-op cost parameters of the devices of a
 * calibration set, writes them, prints the residuals. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/datapath.h"
#include "common/error.h"
#include "common/infile.h"
#include "common/outfile.h"
#include "platforms/device.h"
#include "sim/cli/cli.h"
#include "sim/replay/calibration.h"

extern const cli_command cmd_calibrate;

#define DEFAULT_SET "platforms/calibration/gpus.json"
#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6))

static void calibrate_help(FILE *out)
{
    fprintf(out,
            "ttasim calibrate [SET.json] [--out F | --check F] [--leave-out] [--json]\n\n"
            "Fits the per-op cost parameters of every device group of a calibration set\n"
            "(single-device and single-node per-GPU throughputs with their sources; format\n"
            "in platforms/README.md):\n"
            "host dispatch time per kernel, and per precision the work per kernel at which\n"
            "efficiency is half its maximum and the large-kernel efficiency of the op\n"
            "classes the points exercise. Prints every point's residual (predicted against\n"
            "measured). Deterministic: the committed platforms/calibration/calibrated.json is what\n"
            "'ttasim calibrate --out platforms/calibration/calibrated.json' writes.\n\n"
            "  SET.json   the calibration set (default: the built-in " DEFAULT_SET ")\n"
            "  --out F    write the fitted parameters to F (default: not written)\n"
            "  --check F  exit 1 unless F holds exactly what the fit writes\n"
            "  --leave-out  then leave each generation (group) out in turn: refit the set\n"
            "             without it and predict its points from its device's specification\n"
            "             through the transfer rule a device with no figures takes (the nearest\n"
            "             fitted generation of its vendor; platforms/README.md); prints per\n"
            "             generation the points, median and worst |error|\n"
            "  --json     print the fitted document on stdout instead of the residual table\n"
            "             (with --leave-out, the leave-out document)\n"
            "  --help     this text\n");
}

static void print_residuals(const json_t *doc)
{
    const json_t *res = json_object_get(doc, "residuals");
    size_t i;
    json_t *r;
    printf("%-16s %-8s %-28s %-5s %6s %12s %12s %8s\n", "device", "pass", "trace", "prec", "batch",
           "measured/s", "predicted/s", "error");
    double worst = 0;
    json_array_foreach(res, i, r) {
        double e = json_real_value(json_object_get(r, "error"));
        double measured = json_real_value(json_object_get(r, "measured_samples_per_s"));
        int digits = measured < 100 ? 3 : 1; /* an LLM's few sequences per second */
        worst = fmax(worst, fabs(e));
        printf("%-16s %-8s %-28s %-5s %6lld %12.*f %12.*f %+7.1f%%\n",
               json_string_value(json_object_get(r, "device")), json_string_value(json_object_get(r, "pass")),
               json_string_value(json_object_get(r, "trace")), json_string_value(json_object_get(r, "precision")),
               json_integer_value(json_object_get(r, "batch")), digits, measured, digits,
               json_real_value(json_object_get(r, "predicted_samples_per_s")), 100 * e);
        const json_t *v = json_object_get(r, "versus");
        if (v) /* a same-harness figure of another device: the error is of the ratio */
            printf("  versus %-62s %12.1f %12.1f  (ratio)\n", json_string_value(json_object_get(v, "device")),
                   json_real_value(json_object_get(v, "measured_samples_per_s")),
                   json_real_value(json_object_get(v, "predicted_samples_per_s")));
    }
    printf("%zu points, worst |error| %.1f %%\n", json_array_size(res), 100 * worst);
}

/* One line per generation left out: how well the others predict it. */
static void print_leave_out(const json_t *doc)
{
    const json_t *rows = json_object_get(doc, "generations");
    size_t i;
    json_t *r;
    printf("\nleave one generation out (its points predicted from its specification):\n");
    printf("%-16s %6s %14s %14s  %s\n", "generation", "points", "median |error|", "worst |error|", "refitted");
    json_array_foreach(rows, i, r) {
        char refit[256] = "";
        size_t k;
        json_t *d;
        json_array_foreach(json_object_get(r, "refitted"), k, d)
            snprintf(refit + strlen(refit), sizeof refit - strlen(refit), "%s%s", k ? ", " : "",
                     json_string_value(d));
        printf("%-16s %6lld %13.1f%% %13.1f%%  %s\n", json_string_value(json_object_get(r, "device")),
               json_integer_value(json_object_get(r, "points")),
               100 * json_real_value(json_object_get(r, "median_abs_error")),
               100 * json_real_value(json_object_get(r, "worst_abs_error")), *refit ? refit : "-");
    }
}

/* Exit 1 (a result) when the file's bytes differ from the fit's. */
static int check_file(const char *path, const char *want)
{
    tt_error err = {0};
    char *buf;
    size_t got;
    if (infile_read(path, INFILE_JSON_MAX_BYTES, &buf, &got, &err) != TT_OK) {
        tt_error_prefix(&err, "the fitted-parameters file to check: ");
        return cli_report_error(TT_EINPUT, err.msg);
    }
    size_t n = strlen(want);
    int same = got == n && memcmp(buf, want, n) == 0;
    free(buf);
    if (!same) {
        fprintf(stderr, "ttasim calibrate: %s differs from what the calibration set fits; regenerate it "
                        "with 'ttasim calibrate --out %s' and commit it with the set\n", path, path);
        return TT_EFAIL;
    }
    fprintf(stderr, "%s: reproduced byte for byte\n", path);
    return TT_OK;
}

/* Written whole or not at all (common/outfile.h), never over the set it reads. */
static int write_file(const char *path, const char *set_path, const char *text)
{
    tt_error err = {0};
    const char *inputs[] = {set_path}, *what[] = {"the calibration set"};
    outfile *o;
    FILE *f;
    int rc = outfile_check_distinct(&path, 1, inputs, what, 1, &err);
    if (rc == TT_OK)
        rc = outfile_open(path, "the fitted parameters", &o, &f, &err);
    if (rc == TT_OK) {
        fputs(text, f);
        rc = outfile_commit(o, &err);
    }
    return rc ? cli_report_error(rc, err.msg) : TT_OK;
}

static int calibrate_main(int argc, char **argv)
{
    static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
                                         {"check", required_argument, NULL, 'c'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"leave-out", no_argument, NULL, 'l'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out_path = NULL, *check_path = NULL;
    int json = 0, leave_out = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out_path = optarg; break;
        case 'c': check_path = optarg; break;
        case 'j': json = 1; break;
        case 'l': leave_out = 1; break;
        case 'h': calibrate_help(stdout); return TT_OK;
        default: return cli_bad_option(&cmd_calibrate, argv, optind, optopt, opts, c == ':');
        }
    }
    if (out_path && check_path)
        return cli_usage_error(&cmd_calibrate, "give --out or --check, not both");
    if (argc - optind > 1)
        return cli_usage_error(&cmd_calibrate, "unexpected argument '%s'", argv[optind + 1]);
    char set_path[4096];
    if (optind < argc)
        snprintf(set_path, sizeof set_path, "%s", argv[optind]);
    else if (datapath_find(DEFAULT_SET, set_path, sizeof set_path) != 0)
        return cli_usage_error(&cmd_calibrate, "the built-in calibration set %s is missing; give SET.json",
                               DEFAULT_SET);
    tt_error err = {0};
    device_table lib = {0};
    calibration *cal = NULL;
    json_t *doc = NULL, *table = NULL;
    int rc = device_table_load_uncalibrated(&lib, &err);
    if (rc == TT_OK)
        rc = calibration_load(set_path, &cal, &err);
    if (rc == TT_OK)
        rc = calibration_leave_out(cal, &lib, &doc, leave_out ? &table : NULL, &err);
    calibration_free(cal);
    device_table_free(&lib);
    if (rc)
        return cli_report_error(rc, err.msg);
    char *text = json_dumps(doc, DUMP_FLAGS);
    size_t n = strlen(text);
    char *full = malloc(n + 2);
    memcpy(full, text, n);
    memcpy(full + n, "\n", 2);
    free(text);
    if (json && table) {
        json_dumpf(table, stdout, DUMP_FLAGS);
        fputc('\n', stdout);
    } else if (json)
        fputs(full, stdout);
    else
        print_residuals(doc);
    if (table && !json)
        print_leave_out(table);
    json_decref(doc);
    json_decref(table);
    if (out_path)
        rc = write_file(out_path, set_path, full);
    else if (check_path)
        rc = check_file(check_path, full);
    free(full);
    return rc;
}

const cli_command cmd_calibrate = {
    "calibrate", "fit the devices' per-op cost parameters to a calibration set, print the residuals",
    "calibrate [SET.json] [--out F | --check F] [--leave-out] [--json]",
    calibrate_main, calibrate_help,
};
