#include "sim/report/html.h"

#include <stdio.h>
#include <string.h>

#include "common/outfile.h"
#include "sim/report/human.h"
#include "sim/report/report.h"
#include "sim/report/svg.h"
#include "sim/report/validation.h"
#include "sim/report/xml.h"

/* How a value reads beside its number. */
typedef enum { K_S, K_USD, K_J, K_BYTES, K_COUNT, K_SHARE, K_PER_DAY, K_BPS, K_W, K_FLOPS, K_RATIO } kind;

typedef struct field {
    const char *key, *label;
    kind k;
} field;

static const field STEP[] = {
    {"step.time_s", "step time", K_S}, {"step.compute_s", "compute", K_S}, {"step.comm_s", "communication", K_S},
    {"step.exposed_comm_s", "exposed communication", K_S}, {"step.optimizer_s", "optimizer", K_S},
    {"step.host_embedding_s", "host embeddings", K_S}, {"step.idle_s", "idle (no compute)", K_S},
    {"step.tp_comm_s", "tensor-parallel collectives", K_S}, {"step.bubble_s", "pipeline bubble", K_S},
    {"step.cp_comm_s", "context-parallel ring", K_S}, {"step.ep_comm_s", "MoE alltoalls", K_S},
    {"step.input_s", "host input pipeline", K_S}, {"step.input_wait_s", "input wait", K_S},
    {"step.straggler_s", "wait for stragglers", K_S}, {"step.mfu", "model FLOPs utilisation", K_SHARE},
    {"step.samples_per_s", "samples a second", K_COUNT}, {"tokens_per_s", "tokens a second", K_COUNT},
    {"model_tflops_per_gpu", "model TFLOP/s per GPU", K_COUNT}, {"step.model_flops", "model FLOPs a step", K_FLOPS},
    {"step.memory.total_bytes", "memory per device", K_BYTES}, {"step.memory.params_bytes", "parameters", K_BYTES},
    {"step.memory.gradients_bytes", "gradients", K_BYTES}, {"step.memory.optimizer_bytes", "optimizer state", K_BYTES},
    {"step.memory.activations_bytes", "activations", K_BYTES},
};

static const field TARGET[] = {
    {"steps_to_target", "steps to target", K_COUNT}, {"steps_to_target_p10", "10th percentile", K_COUNT},
    {"steps_to_target_p90", "90th percentile", K_COUNT}, {"epochs", "epochs", K_COUNT},
    {"tokens_to_target", "tokens to target", K_COUNT}, {"tokens_to_target_p10", "10th percentile", K_COUNT},
    {"tokens_to_target_p90", "90th percentile", K_COUNT}, {"evaluation_s", "evaluation", K_S},
    {"time_to_accuracy_s", "time to accuracy", K_S}, {"time_to_accuracy_p10_s", "10th percentile", K_S},
    {"time_to_accuracy_p90_s", "90th percentile", K_S},
};

static const field COST[] = {
    {"cost_usd", "cost to accuracy (renting)", K_USD}, {"cost_usd_p10", "10th percentile", K_USD},
    {"cost_usd_p90", "90th percentile", K_USD}, {"energy_j", "energy to accuracy", K_J},
    {"energy_j_p10", "10th percentile", K_J}, {"energy_j_p90", "90th percentile", K_J},
    {"per_step.cost_usd", "cost a step", K_USD}, {"per_step.energy_j", "energy a step", K_J},
};

static const field RESILIENCE[] = {
    {"resilience.interruptions_per_day", "interruptions a day", K_PER_DAY},
    {"resilience.mtbf_s", "mean time between interruptions", K_S},
    {"resilience.interruptions", "interruptions to accuracy", K_COUNT},
    {"resilience.checkpoint_bytes", "checkpoint", K_BYTES},
    {"resilience.checkpoint_write_s", "checkpoint write", K_S},
    {"resilience.checkpoint_read_s", "checkpoint read", K_S},
    {"resilience.checkpoint_interval_s", "checkpoint interval", K_S},
    {"resilience.storage_write_Bps", "storage write bandwidth", K_BPS},
    {"resilience.storage_read_Bps", "storage read bandwidth", K_BPS},
    {"resilience.restart_s", "restart", K_S}, {"resilience.goodput", "goodput", K_SHARE},
    {"resilience.goodput_p10", "10th percentile", K_SHARE}, {"resilience.goodput_p90", "90th percentile", K_SHARE},
    {"time_to_accuracy_with_failures_s", "time to accuracy with failures", K_S},
    {"time_to_accuracy_with_failures_p10_s", "10th percentile", K_S},
    {"time_to_accuracy_with_failures_p90_s", "90th percentile", K_S},
    {"resilience.lost_cost_usd", "rent lost to failures", K_USD},
    {"cost_usd_with_failures", "cost with failures (renting)", K_USD},
    {"resilience.lost_energy_j", "energy lost to failures", K_J},
    {"energy_j_with_failures", "energy with failures", K_J},
};

static const field OWNING[] = {
    {"ownership.capex_usd.total", "capital cost", K_USD},
    {"ownership.capex_usd.accelerators", "accelerators", K_USD},
    {"ownership.capex_usd.servers", "servers", K_USD}, {"ownership.capex_usd.nics", "NICs", K_USD},
    {"ownership.capex_usd.fabric_switches", "fabric switches", K_USD},
    {"ownership.capex_usd.cables", "cables", K_USD},
    {"ownership.fabric_switches", "fabric switches (count)", K_COUNT},
    {"ownership.fabric_switch_ports", "fabric switch ports", K_COUNT},
    {"ownership.fabric_cables", "fabric cables", K_COUNT},
    {"ownership.it_power_other_w", "other IT power", K_W},
    {"ownership.to_accuracy_usd", "to accuracy, owning", K_USD},
    {"ownership.to_accuracy_capex_usd", "capital share", K_USD},
    {"ownership.to_accuracy_energy_usd", "energy at the PUE", K_USD},
    {"ownership.per_step_usd", "a step, owning", K_USD},
    {"ownership.tco_usd", "TCO over the lifetime", K_USD},
};

static const field REFERENCE[] = {
    {"reference.step_time_s", "published step time", K_S},
    {"reference.step_time_ratio", "predicted / published step", K_RATIO},
    {"reference.time_s", "published total time", K_S},
    {"reference.time_ratio", "predicted / published total", K_RATIO},
    {"reference.steps", "published steps", K_COUNT},
    {"reference.interruptions_per_day", "published interruptions a day", K_PER_DAY},
    {"reference.interruptions_ratio", "predicted / published interruptions", K_RATIO},
};

/* The sweep table's columns. */
static const field POINT[] = {
    {"nodes", "nodes", K_COUNT}, {"ranks", "ranks", K_COUNT}, {"global_batch", "batch", K_COUNT},
    {"step.time_s", "step", K_S}, {"step.mfu", "MFU", K_SHARE}, {"steps_to_target", "steps", K_COUNT},
    {"time_to_accuracy_s", "time to accuracy", K_S}, {"cost_usd", "rent", K_USD},
    {"ownership.to_accuracy_usd", "own", K_USD}, {"energy_j", "energy", K_J},
};

#define N_OF(a) (sizeof a / sizeof *a)

static const char STYLE[] =
    "body{font-family:sans-serif;margin:0 auto;padding:16px 24px;max-width:1080px;color:#222;line-height:1.4}"
    "h1{font-size:1.5em;margin:0.2em 0;overflow-wrap:anywhere}h2{font-size:1.15em;margin:1.4em 0 0.4em;"
    "border-bottom:1px solid #ccc}"
    ".what{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0.6em 0}"
    ".what dt{color:#555}.what dd{margin:0;overflow-wrap:anywhere}"
    ".cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(440px,1fr));gap:0 32px}.cols>*{min-width:0}"
    ".wide{overflow-x:auto}table{border-collapse:collapse;font-size:0.92em;margin:0.3em 0}.cols table{width:100%}"
    "td code{font-size:0.8em;overflow-wrap:anywhere;color:#555}"
    "th,td{padding:3px 8px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}"
    "thead th{border-bottom:2px solid #999;white-space:nowrap}td.num{text-align:right;font-variant-numeric:"
    "tabular-nums;white-space:nowrap}td.h{color:#444;white-space:nowrap}tbody th{font-weight:normal}"
    ".err{color:#b00020}.note{color:#555;font-size:0.9em}figure{margin:0.5em 0}"
    "figure svg{width:100%;height:auto;border:1px solid #eee}"
    "details{margin:0.4em 0}summary{cursor:pointer;font-weight:bold}details li{margin:0.2em 0}";

static void text(FILE *f, const char *s)
{
    xml_write_text(f, s ? s : "");
}

/* The value as a person reads it. */
static const char *readable(kind k, double v, char *buf, size_t n)
{
    switch (k) {
    case K_S: return human_duration(v, buf, n);
    case K_USD: return human_usd(v, buf, n);
    case K_COUNT: return human_count(v, buf, n);
    case K_J: snprintf(buf, n, "%.4g kWh", v / 3.6e6); break;
    case K_BYTES: snprintf(buf, n, "%.4g GB", v / 1e9); break;
    case K_SHARE: snprintf(buf, n, "%.1f %%", 100 * v); break;
    case K_PER_DAY: snprintf(buf, n, "%.4g a day", v); break;
    case K_BPS: snprintf(buf, n, "%.4g GB/s", v / 1e9); break;
    case K_W: snprintf(buf, n, "%.4g W", v); break;
    case K_FLOPS: snprintf(buf, n, "%.4g TFLOP", v / 1e12); break;
    case K_RATIO: snprintf(buf, n, "%.3f", v); break;
    }
    return buf;
}

/* Two cells: the JSON value (path and 12 digits in attributes, %.6g shown) and the readable form. */
static void value_cells(FILE *f, const char *path, double v, kind k, int with_readable)
{
    char buf[64];
    fprintf(f, "<td class=\"num\" data-key=\"");
    text(f, path);
    fprintf(f, "\" data-value=\"%.12g\">%.6g</td>", v, v);
    if (with_readable)
        fprintf(f, "<td class=\"h\">%s</td>", readable(k, v, buf, sizeof buf));
}

/* A table of the fields present in doc (a sweep point's: prefix "sweep[i]."); nothing when none is. */
static void fields_table(FILE *f, json_t *doc, const char *id, const char *title, const field *fs, size_t n)
{
    double v;
    size_t present = 0;
    for (size_t i = 0; i < n; i++)
        present += report_lookup(doc, fs[i].key, &v);
    if (!present)
        return;
    fprintf(f, "<section id=\"%s\"><h2>%s</h2><table><thead><tr><th>quantity</th><th>JSON key</th>"
               "<th>value</th><th></th></tr></thead><tbody>\n", id, title);
    for (size_t i = 0; i < n; i++) {
        if (!report_lookup(doc, fs[i].key, &v))
            continue;
        fprintf(f, "<tr><th>%s</th><td><code>%s</code></td>", fs[i].label, fs[i].key);
        value_cells(f, fs[i].key, v, fs[i].k, 1);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody></table></section>\n");
}

static const char *str_at(json_t *doc, const char *obj, const char *key)
{
    json_t *o = obj ? json_object_get(doc, obj) : doc;
    return json_string_value(json_object_get(o, key));
}

static void what_row(FILE *f, const char *name, const char *value)
{
    if (!value || !*value)
        return;
    fprintf(f, "<dt>%s</dt><dd>", name);
    text(f, value);
    fprintf(f, "</dd>\n");
}

/* What ran: the scenario, its platform, workload, collectives and convergence. */
static void header(FILE *f, const scenario *sc, const run_result *r)
{
    const run_point *b = &r->base;
    char line[512];
    fprintf(f, "<h1 id=\"scenario\">");
    text(f, sc->name);
    fprintf(f, "</h1>\n<dl class=\"what\">\n");
    what_row(f, "scenario file", sc->path);
    what_row(f, "description", sc->description);
    snprintf(line, sizeof line, "%s, %d nodes, %d x %s", r->platform, b->nodes, b->ranks, r->accelerator);
    what_row(f, "platform", line);
    snprintf(line, sizeof line, "%s, %s, optimizer %s, global batch %ld (micro-batch %d, accumulation %d)", r->model,
             r->precision, r->optimizer, b->global_batch, b->micro_batch, b->accumulation);
    what_row(f, "workload", line);
    snprintf(line, sizeof line, "allreduce %s, alltoall %s, %s", r->allreduce, r->alltoall,
             sc->overlap ? "overlapping the backward" : "after the backward");
    what_row(f, "collectives", line);
    what_row(f, "convergence", r->convergence);
    what_row(f, "target", r->target);
    fprintf(f, "</dl>\n");
    if (r->has_recipe) {
        fprintf(f, "<details><summary>the convergence profile's recipe</summary><dl class=\"what\">\n");
        what_row(f, "optimizer", r->recipe.optimizer);
        what_row(f, "hyperparameters", r->recipe.hyperparameters);
        what_row(f, "schedule", r->recipe.schedule);
        what_row(f, "warm-up", r->recipe.warmup);
        what_row(f, "regularisation", r->recipe.regularisation);
        what_row(f, "precision", r->recipe.precision);
        fprintf(f, "</dl></details>\n");
    }
}

static void summary_row(FILE *f, const validation_set *v, const char *what, const char *id, const char *model_name,
                        const char *accelerator)
{
    for (int cal = 0; cal <= 1; cal++) {
        validation_summary s;
        validation_summarise(v, model_name, accelerator, cal, &s);
        fprintf(f, "<tr data-validation=\"%s-%s\"><th>", id, cal ? "calibration" : "validation");
        text(f, what);
        fprintf(f, "</th><td>%s</td><td class=\"num\" data-rows=\"%zu\">%zu</td>", cal ? "calibration" : "validation",
                s.n, s.n);
        if (s.n)
            fprintf(f, "<td class=\"num\" data-median=\"%.12g\">%.1f %%</td><td class=\"num\" data-worst=\"%.12g\">"
                       "%.1f %%</td></tr>\n", s.median, 100 * s.median, s.worst, 100 * s.worst);
        else
            fprintf(f, "<td class=\"num\">-</td><td class=\"num\">-</td></tr>\n");
    }
}

/* How well ttasim's predictions of this model and accelerator matched published runs. */
static void validation(FILE *f, const run_result *r)
{
    validation_set v;
    tt_error err = {0};
    fprintf(f, "<section id=\"validation\" data-model=\"");
    text(f, r->model);
    fprintf(f, "\" data-accelerator=\"");
    text(f, r->accelerator);
    fprintf(f, "\"><h2>Validation status</h2>\n");
    if (validation_load(&v, &err)) {
        fprintf(f, "<p class=\"err\">No validation data: ");
        text(f, err.msg);
        fprintf(f, "</p></section>\n");
        return;
    }
    size_t both = 0, of_model = 0, accel = 0;
    for (size_t i = 0; i < v.n; i++) {
        both += validation_matches(&v.rows[i], r->model, r->accelerator);
        of_model += validation_matches(&v.rows[i], r->model, NULL);
        accel += validation_matches(&v.rows[i], NULL, r->accelerator);
    }
    fprintf(f, "<p>Predicted against published step times of the published training runs "
               "(<code>scenarios/published</code>, written by <code>make validation-table</code> to <code>"
               VALIDATION_FILE "</code>, ratios to 3 decimals): |predicted / published &minus; 1| over the rows with a published step time. "
               "Calibration rows fed a device efficiency and check nothing; validation rows fed nothing.</p>\n");
    if (!both)
        fprintf(f, "<p class=\"err\" id=\"validation-gap\">No published run of this model on this accelerator "
                   "was validated: the numbers above are not checked against a published result of this kind%s.</p>\n",
                of_model || accel ? "; the closest rows follow" : " nor of this model or this accelerator alone");
    char what[160];
    fprintf(f, "<table><thead><tr><th>rows</th><th>role</th><th>count</th><th>median</th><th>worst</th></tr>"
               "</thead><tbody>\n");
    snprintf(what, sizeof what, "%s on %s", r->model, r->accelerator);
    summary_row(f, &v, what, "both", r->model, r->accelerator);
    snprintf(what, sizeof what, "%s, any accelerator", r->model);
    summary_row(f, &v, what, "model", r->model, NULL);
    snprintf(what, sizeof what, "any model on %s", r->accelerator);
    summary_row(f, &v, what, "accelerator", NULL, r->accelerator);
    summary_row(f, &v, "every published run", "all", NULL, NULL);
    fprintf(f, "</tbody></table>\n");
    if (of_model || accel) {
        fprintf(f, "<details><summary>the %zu published runs of %s or on %s</summary><table><thead><tr>"
                   "<th>scenario</th><th>model</th><th>accelerator</th><th>role</th><th>step ratio</th>"
                   "<th>total ratio</th></tr></thead><tbody>\n", of_model + accel - both, r->model, r->accelerator);
        for (size_t i = 0; i < v.n; i++) {
            const validation_row *row = &v.rows[i];
            if (!validation_matches(row, r->model, NULL) && !validation_matches(row, NULL, r->accelerator))
                continue;
            fprintf(f, "<tr><td>");
            text(f, row->scenario);
            fprintf(f, "</td><td>");
            text(f, row->model);
            fprintf(f, "</td><td>");
            text(f, row->accelerator);
            fprintf(f, "</td><td>%s</td>", row->calibration ? "calibration" : "validation");
            for (int k = 0; k < 2; k++) {
                double x = k ? row->time_ratio : row->step_ratio;
                if (x > 0)
                    fprintf(f, "<td class=\"num\">%.3f</td>", x);
                else
                    fprintf(f, "<td class=\"num\">-</td>");
            }
            fprintf(f, "</tr>\n");
        }
        fprintf(f, "</tbody></table></details>\n");
    }
    fprintf(f, "</section>\n");
    validation_free(&v);
}

/* Every point of the sweep: its label (or why it does not run) and the columns of POINT. */
static void sweep(FILE *f, json_t *doc)
{
    json_t *pts = json_object_get(doc, "sweep"), *p;
    size_t i;
    if (!json_array_size(pts))
        return;
    fprintf(f, "<section id=\"sweep\"><h2>Sweep: %zu points</h2><div class=\"wide\"><table><thead><tr>"
               "<th>point</th>", json_array_size(pts));
    for (size_t c = 0; c < N_OF(POINT); c++)
        fprintf(f, "<th>%s</th>", POINT[c].label);
    fprintf(f, "</tr></thead><tbody>\n");
    json_array_foreach(pts, i, p) {
        const char *label = str_at(p, NULL, "label"), *error = str_at(p, NULL, "error");
        fprintf(f, "<tr><th>");
        text(f, label ? label : str_at(p, NULL, "platform"));
        fprintf(f, "</th>");
        for (size_t c = 0; c < N_OF(POINT); c++) {
            char path[96];
            double v;
            snprintf(path, sizeof path, "sweep[%zu].%s", i, POINT[c].key);
            if (error && c == 3) { /* the point's own columns stop where it did not run */
                fprintf(f, "<td class=\"err\" colspan=\"%zu\">does not run: ", N_OF(POINT) - c);
                text(f, error);
                fprintf(f, "</td>");
                break;
            }
            if (report_lookup(doc, path, &v))
                value_cells(f, path, v, POINT[c].k, 0);
            else
                fprintf(f, "<td></td>");
        }
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody></table></div><p class=\"note\">Values in the JSON's units: seconds, US dollars, joules; "
               "rent: the accelerators at their price per hour; own: the cluster's capital cost over its lifetime "
               "plus energy at the PUE.</p></section>\n");
}

static void string_list(FILE *f, json_t *list)
{
    json_t *s;
    size_t i;
    fprintf(f, "<ul>\n");
    json_array_foreach(list, i, s) {
        fprintf(f, "<li>");
        text(f, json_string_value(s));
        fprintf(f, "</li>\n");
    }
    fprintf(f, "</ul>\n");
}

static int page(FILE *f, const scenario *sc, const run_result *r, json_t *doc, tt_error *err)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>ttasim: ");
    text(f, sc->name);
    fprintf(f, "</title><style>%s</style></head>\n<body>\n", STYLE);
    header(f, sc, r);
    const char *error = str_at(doc, NULL, "error");
    if (error) {
        fprintf(f, "<p class=\"err\" id=\"error\">The scenario's own point does not run: ");
        text(f, error);
        fprintf(f, "</p>\n");
    }
    fprintf(f, "<div class=\"cols\">\n");
    fields_table(f, doc, "per-step", "Per step", STEP, N_OF(STEP));
    fprintf(f, "<div>\n");
    fields_table(f, doc, "to-target", "To target", TARGET, N_OF(TARGET));
    fields_table(f, doc, "reference", "Published reference", REFERENCE, N_OF(REFERENCE));
    const char *source = str_at(doc, "reference", "source");
    if (source) {
        fprintf(f, "<p class=\"note\">Source: ");
        text(f, source);
        fprintf(f, "</p>\n");
    }
    fprintf(f, "</div>\n");
    fields_table(f, doc, "cost", "Cost and energy", COST, N_OF(COST));
    fields_table(f, doc, "owning", "Owning the cluster", OWNING, N_OF(OWNING));
    fields_table(f, doc, "resilience", "Resilience: failures and checkpoints", RESILIENCE, N_OF(RESILIENCE));
    fprintf(f, "</div>\n");
    const char *unpriced = str_at(doc, "ownership", "unpriced");
    if (unpriced) {
        fprintf(f, "<p class=\"note\">Owning unknown: no purchase price for ");
        text(f, unpriced);
        fprintf(f, ".</p>\n");
    }
    validation(f, r);
    sweep(f, doc);
    fprintf(f, "<section id=\"plots\"><h2>Plots</h2><figure>\n");
    int rc = svg_print(f, sc, r, err);
    if (rc)
        return rc;
    fprintf(f, "</figure></section>\n");
    json_t *notes = json_object_get(doc, "notes"), *assumptions = json_object_get(doc, "assumptions");
    if (json_array_size(notes)) {
        fprintf(f, "<section id=\"notes\"><h2>Notes</h2>\n");
        string_list(f, notes);
        fprintf(f, "</section>\n");
    }
    fprintf(f, "<section id=\"assumptions\"><h2>Assumptions</h2><details><summary>%zu assumptions behind these "
               "numbers, each named with its source or U (unverified)</summary>\n", json_array_size(assumptions));
    string_list(f, assumptions);
    fprintf(f, "</details></section>\n<p class=\"note\">Written by ttasim run --html; the same numbers as "
               "<code>ttasim run --json</code> (each value cell names its JSON key).</p>\n</body></html>\n");
    return TT_OK;
}

int html_write(const char *path, const scenario *sc, const run_result *r, json_t *doc, tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the HTML report", &o, &f, err);
    if (rc == TT_OK && (rc = page(f, sc, r, doc, err)))
        outfile_discard(o);
    return rc ? rc : outfile_commit(o, err);
}
