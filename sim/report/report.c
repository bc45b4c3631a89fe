#include "sim/report/report.h"

#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "common/outfile.h"
#include "common/vocab.h"
#include "sim/report/human.h"
#include "sim/report/links.h"
#include "sim/report/scaling.h"

static json_t *num(double x)
{
    return jx_real_or_null(x);
}

/* The plan a point's tables run under: one plan, or "mix" of per-group plans. */
static const char *plan_name(const run_point *p)
{
    return p->mix.n_groups > 0 ? "mix" : SHARDING_NAMES[p->plan];
}

/* The precision gradients are kept and reduced in: fp8 runs (Transformer
 * Engine) keep them in bf16 (dtype_stored). */
static const char *gradient_name(const scenario *sc, const run_result *r)
{
    const char *name = sc->gradient_precision ? sc->gradient_precision : r->precision;
    tt_dtype t;
    tt_error err = {0};
    return dtype_parse(name, &t, &err) == TT_OK ? dtype_name(dtype_stored(t)) : name;
}

/* embedding.groups[]: each table group's plan, its tables and its share of
 * the memory and the collectives. */
static json_t *groups_json(const run_point *p)
{
    json_t *a = json_array();
    for (int g = 0; g < p->mix.n_groups; g++) {
        const sharding_cost *c = &p->groups[g];
        json_array_append_new(
            a, json_pack("{s:o, s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "max_rows",
                         p->mix.max_rows[g] > 0 ? num(p->mix.max_rows[g]) : json_null(), "plan",
                         SHARDING_NAMES[p->mix.plan[g]], "tables", p->group_tables[g], "lookups", num(c->lookups),
                         "hot_rows", num(c->hot_rows), "alltoall_bytes", num(c->alltoall_bytes),
                         "reduce_scatter_bytes", num(c->reduce_scatter_bytes), "allgather_bytes",
                         num(c->allgather_bytes), "allreduce_bytes", num(c->allreduce_bytes), "params_bytes",
                         num(c->params_bytes), "optimizer_bytes", num(c->optimizer_bytes)));
    }
    return a;
}

/* What owning the cluster costs at this point (capex by component, its
 * share and the energy per step and to accuracy, the lifetime's TCO). */
static json_t *ownership_json(const run_point *p)
{
    const cost_bill *b = &p->bill;
    json_t *o = json_pack("{s:{s:o, s:o, s:o, s:o, s:o, s:o}, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o}",
                          "capex_usd", "accelerators", num(b->accelerators_usd), "servers", num(b->servers_usd),
                          "nics", num(b->nics_usd), "fabric_switches", num(b->switches_usd), "cables",
                          num(b->cables_usd), "total", num(b->total_usd), "fabric_switch_ports",
                          (json_int_t)b->fabric_switch_ports, "fabric_switches", (json_int_t)b->fabric_switches,
                          "fabric_cables", (json_int_t)b->fabric_cables,
                          "it_power_other_w", num(b->other_w), "per_step_usd", num(p->per_step.owned_usd),
                          "to_accuracy_usd", num(p->total.owned_usd), "to_accuracy_capex_usd",
                          num(p->total.capex_usd), "to_accuracy_energy_usd", num(p->total.energy_usd), "tco_usd",
                          num(p->tco_usd));
    if (b->missing[0])
        json_object_set_new(o, "unpriced", json_string(b->missing));
    return o;
}

/* Interruptions, checkpoints and goodput (resilience.h). */
static json_t *resilience_json(const resilience_result *r)
{
    json_t *by = json_object();
    for (int c = 0; c < RES_COMPONENTS; c++)
        json_object_set_new(by, RESILIENCE_COMPONENT_NAMES[c], num(r->per_day[c]));
    json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                          "interruptions_per_day", num(r->interruptions_per_day), "interruptions_per_day_by_component",
                          by, "mtbf_s", num(r->mtbf_s), "interruptions", num(r->interruptions), "checkpoint_bytes",
                          num(r->checkpoint_bytes), "checkpoint_write_s", num(r->checkpoint_write_s),
                          "checkpoint_read_s", num(r->checkpoint_read_s), "checkpoint_interval_s",
                          num(r->checkpoint_interval_s), "storage_write_Bps", num(r->write_Bps), "storage_read_Bps",
                          num(r->read_Bps), "restart_s", num(r->restart_s), "goodput", num(r->goodput),
                          "goodput_p10", num(r->goodput_p10), "goodput_p90", num(r->goodput_p90), "lost_cost_usd",
                          num(r->lost_usd), "lost_energy_j", num(r->lost_energy_j), "lost_owned_usd",
                          num(r->lost_owned_usd));
    return o;
}

static json_t *point_json(const run_point *p)
{
    if (p->error[0]) /* did not run: what it was and why */
        return json_pack("{s:s, s:s, s:i, s:I, s:s}", "label", p->label, "platform", p->platform, "nodes", p->nodes,
                         "global_batch", (json_int_t)p->global_batch, "error", p->error);
    const step_result *s = &p->step;
    const step_memory *m = &s->memory;
    json_t *step = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o}}",
                             "time_s", num(s->time_s), "compute_s", num(s->compute_s), "comm_s",
                             num(s->comm_s), "exposed_comm_s", num(s->exposed_comm_s), "optimizer_s",
                             num(s->optimizer_s), "host_embedding_s", num(s->host_embedding_s),
                             "idle_s", num(s->idle_s), "mfu", num(s->mfu),
                             "samples_per_s", num(p->samples_per_s), "model_flops", num(s->model_flops),
                             "memory", "params_bytes", num(m->params_bytes), "gradients_bytes",
                             num(m->gradients_bytes), "optimizer_bytes", num(m->optimizer_bytes),
                             "activations_bytes", num(m->activations_bytes), "total_bytes",
                             num(m->total_bytes));
    if (p->parallel[LAYOUT_DATA] > 0) { /* model parallelism: its layout and what Megatron users read */
        json_object_set_new(step, "tp_comm_s", num(s->tp_comm_s));
        json_object_set_new(step, "bubble_s", num(s->bubble_s));
    }
    if (p->parallel[LAYOUT_CONTEXT] > 1)
        json_object_set_new(step, "cp_comm_s", num(s->cp_comm_s));
    if (p->parallel[LAYOUT_EXPERT] > 1)
        json_object_set_new(step, "ep_comm_s", num(s->ep_comm_s));
    if (s->input_s > 0) { /* a host input pipeline (workload.input) */
        json_object_set_new(step, "input_s", num(s->input_s));
        json_object_set_new(step, "input_wait_s", num(s->input_wait_s));
    }
    json_t *o = json_pack("{s:i, s:i, s:I, s:i, s:i, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o}}",
                          "nodes", p->nodes, "ranks", p->ranks, "global_batch", (json_int_t)p->global_batch,
                          "micro_batch", p->micro_batch, "accumulation", p->accumulation, "step", step,
                          "steps_to_target", num(p->steps_to_target), "extrapolated", p->extrapolated,
                          "epochs", num(p->epochs), "evaluation_s", num(p->eval_s), "time_to_accuracy_s",
                          num(p->time_to_accuracy_s), "cost_usd", num(p->total.usd), "energy_j",
                          num(p->total.energy_j), "per_step", "cost_usd", num(p->per_step.usd),
                          "energy_j", num(p->per_step.energy_j));
    if (p->parallel[LAYOUT_DATA] > 0) {
        json_object_set_new(o, "parallel",
                            json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:b}", "tensor", p->parallel[LAYOUT_TENSOR],
                                      "pipeline", p->parallel[LAYOUT_PIPELINE], "context", p->parallel[LAYOUT_CONTEXT],
                                      "expert", p->parallel[LAYOUT_EXPERT], "data", p->parallel[LAYOUT_DATA],
                                      "virtual_stages", p->chunks, "sequence_parallel", p->sequence_parallel));
        json_object_set_new(o, "tokens_per_s", num(p->samples_per_s * p->tokens_per_sample));
        json_object_set_new(o, "model_tflops_per_gpu", num(s->model_flops / s->time_s / 1e12));
        json_object_set_new(o, "memory", json_pack("{s:o}", "per_rank_bytes", num(m->total_bytes)));
    }
    /* the band: 10th and 90th percentiles of the steps to target and what follows from them */
    json_object_set_new(o, "target_not_reached_in_profile", json_boolean(p->failed_batch > 0));
    json_object_set_new(o, "steps_to_target_p10", num(p->steps_p10));
    json_object_set_new(o, "steps_to_target_p90", num(p->steps_p90));
    json_object_set_new(o, "time_to_accuracy_p10_s", num(p->time_to_accuracy_p10_s));
    json_object_set_new(o, "time_to_accuracy_p90_s", num(p->time_to_accuracy_p90_s));
    json_object_set_new(o, "cost_usd_p10", num(p->total_p10.usd));
    json_object_set_new(o, "cost_usd_p90", num(p->total_p90.usd));
    json_object_set_new(o, "energy_j_p10", num(p->total_p10.energy_j));
    json_object_set_new(o, "energy_j_p90", num(p->total_p90.energy_j));
    if (report_has_tokens(p)) { /* a language model's tokens to the target, its batch schedule's phases summed */
        json_object_set_new(o, "tokens_to_target", num(p->samples_to_target * p->tokens_per_sample));
        json_object_set_new(o, "tokens_to_target_p10", num(p->samples_p10 * p->tokens_per_sample));
        json_object_set_new(o, "tokens_to_target_p90", num(p->samples_p90 * p->tokens_per_sample));
    }
    if (p->host.forward_s > 0)
        json_object_set_new(o, "host_embedding",
                            json_pack("{s:o, s:o, s:o, s:o}", "forward_transfer_s", num(p->host.forward_transfer_s),
                                      "lookup_s", num(p->host.lookup_s), "backward_transfer_s",
                                      num(p->host.backward_transfer_s), "update_s", num(p->host.update_s)));
    json_object_set_new(step, "compute_bytes", num(s->compute_bytes));
    if (p->res.straggler_s > 0) /* resilience.stragglers: the wait for the slowest device, in idle_s */
        json_object_set_new(step, "straggler_s", num(p->res.straggler_s));
    if (p->res.on) {
        json_object_set_new(o, "resilience", resilience_json(&p->res));
        json_object_set_new(o, "time_to_accuracy_with_failures_s", num(p->res.time_s));
        json_object_set_new(o, "time_to_accuracy_with_failures_p10_s", num(p->res.time_p10_s));
        json_object_set_new(o, "time_to_accuracy_with_failures_p90_s", num(p->res.time_p90_s));
        json_object_set_new(o, "cost_usd_with_failures", num(p->total.usd + p->res.lost_usd));
        json_object_set_new(o, "energy_j_with_failures", num(p->total.energy_j + p->res.lost_energy_j));
    }
    if (p->cpu_ranks) /* each socket's step and what the collectives put on UPI */
        json_object_set_new(o, "cpu_ranks",
                            json_pack("{s:{s:o, s:o, s:o}, s:o}", "per_socket", "compute_s", num(s->compute_s),
                                      "flops", num(s->model_flops), "bytes", num(s->compute_bytes),
                                      "upi_bytes_per_step", num(p->upi_bytes)));
    if (p->n_tables > 0) {
        const sharding_cost *c = &p->tables;
        json_object_set_new(o, "embedding",
                            json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "plan",
                                      plan_name(p), "tables", (json_int_t)p->n_tables, "lookups",
                                      num(c->lookups), "unique_rows", num(c->unique_rows), "hot_rows",
                                      num(c->hot_rows), "hot_lookup_share", num(c->hot_lookup_share),
                                      "alltoall_bytes", num(c->alltoall_bytes), "reduce_scatter_bytes",
                                      num(c->reduce_scatter_bytes), "allgather_bytes", num(c->allgather_bytes),
                                      "allreduce_bytes", num(c->allreduce_bytes), "id_bytes", num(c->id_bytes),
                                      "id_s", num(c->id_s), "params_bytes", num(c->params_bytes), "optimizer_bytes",
                                      num(c->optimizer_bytes)));
        if (p->mix.n_groups > 0)
            json_object_set_new(json_object_get(o, "embedding"), "groups", groups_json(p));
    }
    if (p->scaling_efficiency > 0)
        json_object_set_new(o, "scaling_efficiency", num(p->scaling_efficiency));
    json_object_set_new(o, "ownership", ownership_json(p));
    json_object_set_new(o, "platform", json_string(p->platform));
    if (p->label[0])
        json_object_set_new(o, "label", json_string(p->label));
    return o;
}

json_t *report_json(const scenario *sc, const run_result *r)
{
    json_t *doc = json_pack("{s:s, s:s}", "scenario", sc->name, "scenario_file", sc->path);
    json_object_set_new(doc, "platform", json_pack("{s:s, s:s, s:o, s:o, s:o}", "name", r->platform,
                                                   "accelerator", r->accelerator, "price_per_h_usd",
                                                   num(r->price_per_h_usd), "busy_w", num(r->busy_w),
                                                   "idle_w", num(r->idle_w)));
    json_object_set_new(doc, "workload", json_pack("{s:s, s:s, s:s, s:s}", "model", r->model, "precision",
                                                   r->precision, "gradient_precision",
                                                   gradient_name(sc, r),
                                                   "optimizer", r->optimizer));
    json_object_set_new(doc, "collectives", json_pack("{s:s, s:s, s:b}", "allreduce", r->allreduce,
                                                      "alltoall", r->alltoall, "overlap", sc->overlap));
    json_t *conv = json_pack("{s:s, s:s}", "source", r->convergence, "target", r->target);
    if (r->has_recipe)
        json_object_set_new(conv, "recipe",
                            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "optimizer", r->recipe.optimizer,
                                      "hyperparameters", r->recipe.hyperparameters, "schedule", r->recipe.schedule,
                                      "warmup", r->recipe.warmup, "regularisation", r->recipe.regularisation,
                                      "precision", r->recipe.precision));
    json_object_set_new(doc, "convergence", conv);
    json_t *base = point_json(&r->base);
    json_object_update(doc, base);
    json_decref(base);
    if (sc->ref_step_time_s > 0 || sc->ref_time_s > 0 || sc->ref_steps > 0 || sc->ref_interruptions_per_day > 0) {
        json_t *ref = json_object();
        if (sc->ref_step_time_s > 0) {
            json_object_set_new(ref, "step_time_s", num(sc->ref_step_time_s));
            json_object_set_new(ref, "step_time_ratio", num(r->base.step.time_s / sc->ref_step_time_s));
        }
        if (sc->ref_time_s > 0) {
            json_object_set_new(ref, "time_s", num(sc->ref_time_s));
            json_object_set_new(ref, "time_ratio", num(r->base.time_to_accuracy_s / sc->ref_time_s));
        }
        if (sc->ref_steps > 0)
            json_object_set_new(ref, "steps", num(sc->ref_steps));
        if (sc->ref_interruptions_per_day > 0) {
            json_object_set_new(ref, "interruptions_per_day", num(sc->ref_interruptions_per_day));
            json_object_set_new(ref, "interruptions_ratio",
                                num(r->base.res.interruptions_per_day / sc->ref_interruptions_per_day));
        }
        if (sc->ref_source)
            json_object_set_new(ref, "source", json_string(sc->ref_source));
        json_object_set_new(doc, "reference", ref);
    }
    json_t *as = json_array();
    for (size_t i = 0; i < r->n_assumptions; i++)
        json_array_append_new(as, json_string(r->assumptions[i]));
    json_object_set_new(doc, "assumptions", as);
    json_t *notes = json_array();
    for (int i = 0; i < r->n_notes; i++)
        json_array_append_new(notes, json_string(r->notes[i]));
    json_object_set_new(doc, "notes", notes);
    if (r->links_shown)
        json_object_set_new(doc, "links", links_report_json(&r->links, r->base.step.time_s, "step", r->links_shown));
    if (r->n_points) {
        json_t *pts = json_array();
        for (size_t i = 0; i < r->n_points; i++)
            json_array_append_new(pts, point_json(&r->points[i]));
        json_object_set_new(doc, "sweep", pts);
    }
    scaling_row rows[SCENARIO_MAX_SWEEP];
    size_t n = scaling_rows(r, rows, SCENARIO_MAX_SWEEP);
    json_t *scaling = n ? json_array() : NULL;
    for (size_t k = 0; k < n; k++) {
        const run_point *p = rows[k].best;
        json_t *row = json_pack("{s:i, s:i, s:I, s:o}", "nodes", p->nodes, "ranks", p->ranks, "global_batch",
                                (json_int_t)p->global_batch, "time_to_accuracy_s", num(p->time_to_accuracy_s));
        /* the first size has no size before it: its ratios are null */
        json_object_update_new(row, json_pack("{s:o, s:o, s:o, s:o, s:s}", "speedup",
                                              k ? num(rows[k].speedup) : json_null(), "efficiency",
                                              k ? num(rows[k].efficiency) : json_null(), "tokens_ratio",
                                              k ? num(rows[k].tokens_ratio) : json_null(), "rank_time_ratio",
                                              k ? num(rows[k].rank_time_ratio) : json_null(), "limited_by",
                                              k ? scaling_limit(&rows[k]) : "-"));
        json_array_append_new(scaling, row);
    }
    if (scaling)
        json_object_set_new(doc, "scaling", scaling);
    return doc;
}

int report_lookup(json_t *doc, const char *path, double *out)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *v = doc;
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save)) {
        char *br = strchr(tok, '[');
        if (br)
            *br = '\0';
        v = json_object_get(v, tok);
        while (br && v) {
            char *end;
            long i = strtol(br + 1, &end, 10);
            if (*end != ']')
                return 0;
            v = json_array_get(v, (size_t)i);
            br = strchr(end, '[');
        }
    }
    if (!json_is_number(v))
        return 0;
    *out = json_number_value(v);
    return 1;
}

int report_has_tokens(const run_point *p)
{
    return !p->error[0] && p->samples_to_target > 0 && p->tokens_per_sample > 0;
}

void report_table_header(FILE *out, int with_name)
{
    if (with_name)
        fprintf(out, "%-26s ", "scenario");
    fprintf(out, "%-30s %5s %6s %7s %5s %10s %10s %10s %6s %9s %10s %21s %9s %9s %9s\n", "point", "nodes", "ranks",
            "batch", "micro", "step", "compute", "exposed", "MFU", "steps", "TTA", "TTA p10-p90", "rent", "own",
            "energy");
}

/* "platform.fabric.oversubscription=2, workload.x=1" -> "oversubscription=2, x=1": tables are narrow. */
static void short_label(const char *label, char *out, size_t n)
{
    size_t used = 0;
    const char *seg = label;
    while (*seg && used + 1 < n) {
        const char *eq = strchr(seg, '='), *end = strstr(seg, ", ");
        const char *dot = NULL;
        for (const char *c = seg; eq && c < eq; c++)
            dot = *c == '.' ? c : dot;
        const char *from = dot ? dot + 1 : seg, *to = end ? end + 2 : seg + strlen(seg);
        used += (size_t)snprintf(out + used, n - used, "%.*s", (int)(to - from), from);
        seg = to;
    }
    out[used < n ? used : n - 1] = '\0';
}

void report_table_row(FILE *out, const char *name, const run_point *p)
{
    char step[24], comp[24], exp[24], tta[24], rent[24], own[24], label[40], lo[24], hi[24], band[50];
    if (name)
        fprintf(out, "%-26.26s ", name);
    if (p->label[0])
        short_label(p->label, label, sizeof label);
    else
        snprintf(label, sizeof label, "%s", p->platform);
    if (p->error[0]) {
        fprintf(out, "%-30.30s %5d %6s %7ld  does not run: %s\n", label, p->nodes, "", p->global_batch, p->error);
        return;
    }
    snprintf(band, sizeof band, "%s-%s", human_duration(p->time_to_accuracy_p10_s, lo, sizeof lo),
             human_duration(p->time_to_accuracy_p90_s, hi, sizeof hi));
    fprintf(out, "%-30.30s %5d %6d %7ld %5d %10s %10s %10s %5.1f%% %8.4g%s %10s %21s %9s %9s %6.4g kWh\n", label,
            p->nodes, p->ranks, p->global_batch, p->micro_batch, human_duration(p->step.time_s, step, sizeof step),
            human_duration(p->step.compute_s, comp, sizeof comp),
            human_duration(p->step.exposed_comm_s, exp, sizeof exp), 100 * p->step.mfu, p->steps_to_target,
            p->extrapolated ? "*" : " ", human_duration(p->time_to_accuracy_s, tta, sizeof tta), band,
            human_usd(p->total.usd, rent, sizeof rent),
            p->bill.total_usd > 0 ? human_usd(p->total.owned_usd, own, sizeof own) : "?",
            p->total.energy_j / 3.6e6);
}

/* A language model's sweep: tokens per step and to the target beside the steps. */
static void report_tokens(FILE *out, const run_result *r)
{
    int any = 0;
    for (size_t i = 0; i < r->n_points; i++)
        any |= report_has_tokens(&r->points[i]);
    if (!any)
        return;
    fprintf(out, "\n%-30s %5s %12s %10s %11s %23s\n", "point", "nodes", "batch tokens", "steps", "tokens",
            "tokens p10-p90");
    for (size_t i = 0; i < r->n_points; i++) {
        const run_point *p = &r->points[i];
        if (!report_has_tokens(p))
            continue;
        char label[40], band[40];
        if (p->label[0])
            short_label(p->label, label, sizeof label);
        else
            snprintf(label, sizeof label, "%s", p->platform);
        snprintf(band, sizeof band, "%.4g-%.4g", p->samples_p10 * p->tokens_per_sample,
                 p->samples_p90 * p->tokens_per_sample);
        fprintf(out, "%-30.30s %5d %12.4g %10.6g %11.4g %23s\n", label, p->nodes,
                (double)p->global_batch * p->tokens_per_sample, p->steps_to_target,
                p->samples_to_target * p->tokens_per_sample, band);
    }
}

/* A sweep over node counts: the fastest point at each and what limits the
 * speedup from one size to the next (scaling.h). */
static void report_scaling(FILE *out, const run_result *r)
{
    scaling_row rows[SCENARIO_MAX_SWEEP];
    size_t n = scaling_rows(r, rows, SCENARIO_MAX_SWEEP);
    if (!n)
        return;
    fprintf(out, "\nscaling: the fastest batch at each size; against the size before, the speedup, its share of "
                 "the ideal\n(the ranks' ratio) and what took the rest: more tokens to the target (data efficiency) "
                 "or more\naccelerator time per sample (communication, bubbles, smaller work per rank)\n");
    fprintf(out, "%5s %6s %7s %12s %8s %8s %8s %10s  %s\n", "nodes", "ranks", "batch", "TTA", "speedup", "of ideal",
            "tokens", "rank time", "limited by");
    for (size_t k = 0; k < n; k++) {
        const run_point *p = rows[k].best;
        char tta[24];
        human_duration(p->time_to_accuracy_s, tta, sizeof tta);
        if (k == 0) {
            fprintf(out, "%5d %6d %7ld %12s %8s %8s %8s %10s  %s\n", p->nodes, p->ranks, p->global_batch, tta, "-",
                    "-", "-", "-", "-");
            continue;
        }
        fprintf(out, "%5d %6d %7ld %12s %7.2fx %7.0f%% %7.2fx %9.2fx  %s\n", p->nodes, p->ranks, p->global_batch,
                tta, rows[k].speedup, 100 * rows[k].efficiency, rows[k].tokens_ratio, rows[k].rank_time_ratio,
                scaling_limit(&rows[k]));
    }
}

static void report_sweep(FILE *out, const run_result *r)
{
    if (!r->n_points)
        return;
    int extrapolated = 0;
    fprintf(out, "\nsweep\n");
    report_table_header(out, 0);
    for (size_t i = 0; i < r->n_points; i++) {
        report_table_row(out, NULL, &r->points[i]);
        extrapolated |= r->points[i].extrapolated && !r->points[i].error[0];
    }
    fprintf(out, "%s", REPORT_TABLE_NOTE);
    if (extrapolated)
        fprintf(out, "%s", REPORT_EXTRAPOLATED_NOTE);
    report_tokens(out, r);
    report_scaling(out, r);
}

/* Two lines: what interrupts the run and what it costs (resilience.h). */
static void report_failures(FILE *out, const run_point *b)
{
    const resilience_result *r = &b->res;
    char t[32], lo[32], hi[32], every[32], mtbf[32], usd[24];
    if (!r->on)
        return;
    fprintf(out, "  with failures: %.4g interruptions a day (MTBF %s), checkpoint %.4g GB in %.4g s every %s, "
                 "restart %.4g s + read %.4g s\n",
            r->interruptions_per_day, human_duration(r->mtbf_s, mtbf, sizeof mtbf), r->checkpoint_bytes / 1e9,
            r->checkpoint_write_s, human_duration(r->checkpoint_interval_s, every, sizeof every), r->restart_s,
            r->checkpoint_read_s);
    fprintf(out, "    goodput %.1f %% (p10-p90 %.1f-%.1f %%): to accuracy %s (band %s-%s), %.4g interruptions, %s more rent\n",
            100 * r->goodput, 100 * r->goodput_p10, 100 * r->goodput_p90, human_duration(r->time_s, t, sizeof t),
            human_duration_as(r->time_p10_s, r->time_s, lo, sizeof lo),
            human_duration_as(r->time_p90_s, r->time_s, hi, sizeof hi), r->interruptions,
            human_usd(r->lost_usd, usd, sizeof usd));
}

static void report_ownership(FILE *out, const run_point *b)
{
    const cost_bill *c = &b->bill;
    char a[24], v[24], n[24], w[24], k[24], tot[24], own[24], step[24], tco[24];
    if (c->missing[0]) {
        fprintf(out, "  owning: unknown (no purchase price for %s)\n", c->missing);
        return;
    }
    fprintf(out, "  owning: capex %s (accelerators %s, servers %s, NICs %s, fabric switches %ld %s, cables %ld %s)\n"
                 "          to accuracy %s, per step %s, TCO over the lifetime %s\n",
            human_usd(c->total_usd, tot, sizeof tot), human_usd(c->accelerators_usd, a, sizeof a),
            human_usd(c->servers_usd, v, sizeof v), human_usd(c->nics_usd, n, sizeof n), c->fabric_switches,
            human_usd(c->switches_usd, w, sizeof w), c->fabric_cables, human_usd(c->cables_usd, k, sizeof k),
            human_usd(b->total.owned_usd, own, sizeof own), human_usd(b->per_step.owned_usd, step, sizeof step),
            human_usd(b->tco_usd, tco, sizeof tco));
}

void report_text(FILE *out, const scenario *sc, const run_result *r, int all_assumptions)
{
    const run_point *b = &r->base;
    char t[32];
    fprintf(out, "scenario      %s (%s)\n", sc->name, sc->path);
    fprintf(out, "platform      %s, %d nodes, %d x %s\n", r->platform, b->nodes, b->ranks, r->accelerator);
    const int *par = b->parallel;
    fprintf(out, "workload      %s, %s, optimizer %s, global batch %ld = %d %sranks x %d x %d %s\n", r->model,
            r->precision, r->optimizer, b->global_batch, par[LAYOUT_DATA] ? par[LAYOUT_DATA] : b->ranks,
            par[LAYOUT_DATA] ? "data-parallel " : "", b->micro_batch, b->accumulation,
            par[LAYOUT_DATA] ? "micro-batches" : "accumulation");
    if (par[LAYOUT_DATA])
        fprintf(out, "parallel      tensor %d%s x pipeline %d (%s) x data %d, Megatron-LM's order: tensor groups "
                     "innermost\n", par[LAYOUT_TENSOR], b->sequence_parallel ? " (sequence parallel)" : "",
                par[LAYOUT_PIPELINE], b->chunks > 1 ? "interleaved 1F1B" : "1F1B", par[LAYOUT_DATA]);
    if (sc->zero >= 3)
        fprintf(out, "collectives   ZeRO-3: each block's parameters gathered before its forward and backward, its %s "
                     "gradients reduce-scattered (%s), alltoall %s\n",
                gradient_name(sc, r), r->allreduce, r->alltoall);
    else if (sc->zero)
        fprintf(out, "collectives   reduce-scatter %s (%s gradients, %s), parameters all-gathered %s (ZeRO-%d), "
                     "alltoall %s\n", r->allreduce, gradient_name(sc, r),
                sc->overlap ? "overlapping the backward" : "after the backward",
                sc->overlap_param_gather ? "during the next forward" : "after the optimizer", sc->zero, r->alltoall);
    else
        fprintf(out, "collectives   allreduce %s (%s gradients, %s), alltoall %s\n", r->allreduce,
                gradient_name(sc, r),
                sc->overlap ? "overlapping the backward" : "after the backward", r->alltoall);
    if (b->n_tables > 0 && b->plan == SHARD_HOST)
        fprintf(out, "embeddings    %zu tables host%s: in the CPU sockets' memory (per micro-step below)\n", b->n_tables,
                sc->sharding == SHARD_AUTO ? " (auto: the fastest that fits)" : "");
    else if (b->n_tables > 0)
        fprintf(out, "embeddings    %zu tables %s%s: per rank per micro-step %.4g lookups, %.4g distinct rows "
                     "updated; alltoall %.4g MB, reduce-scatter %.4g MB, all-gather %.4g MB, "
                     "replicated rows' allreduce %.4g MB\n",
                b->n_tables, plan_name(b),
                sc->sharding == SHARD_AUTO && b->mix.n_groups == 0 ? " (auto: the fastest that fits)" : "",
                b->tables.lookups, b->tables.unique_rows, b->tables.alltoall_bytes / 1e6,
                b->tables.reduce_scatter_bytes / 1e6, b->tables.allgather_bytes / 1e6, b->tables.allreduce_bytes / 1e6);
    for (int g = 0; b->n_tables > 0 && g < b->mix.n_groups; g++) {
        const sharding_cost *c = &b->groups[g];
        char rows[48] = "the rest";
        if (b->mix.max_rows[g] > 0)
            snprintf(rows, sizeof rows, "rows <= %.4g", b->mix.max_rows[g]);
        fprintf(out, "  group %d     %s: %d tables %s%s; memory %.4g GB per rank, alltoall %.4g MB, reduce-scatter "
                     "%.4g MB, allreduce %.4g MB\n",
                g + 1, rows, b->group_tables[g], SHARDING_NAMES[b->mix.plan[g]],
                sc->shard_mix.plan[g] == SHARD_AUTO ? " (auto)" : "", (c->params_bytes + c->optimizer_bytes) / 1e9,
                c->alltoall_bytes / 1e6, c->reduce_scatter_bytes / 1e6, c->allreduce_bytes / 1e6);
    }
    if (b->n_tables > 0 && b->plan != SHARD_HOST)
        fprintf(out, "              ids: %.4g MB per rank before the lookups, %s (%.3f ms)\n", b->tables.id_bytes / 1e6,
                sc->embedding_ids == IDS_ALLTOALL ? "by the input alltoall" : "read on each rank", b->tables.id_s * 1e3);
    if (b->n_tables > 0 && b->plan == SHARD_HYBRID)
        fprintf(out, "              hybrid: %.4g hottest rows replicated, %.1f %% of the lookups\n", b->tables.hot_rows,
                100 * b->tables.hot_lookup_share);
    fprintf(out, "convergence   %s; target %s\n", r->convergence, r->target);
    if (r->has_recipe && all_assumptions) /* the profile's whole recipe is an assumption of the steps to target */
        fprintf(out, "recipe        %s: %s; schedule %s; warm-up %s; %s; %s\n", r->recipe.optimizer,
                r->recipe.hyperparameters, r->recipe.schedule, r->recipe.warmup, r->recipe.regularisation,
                r->recipe.precision);
    else if (r->has_recipe) {
        const char *h = r->recipe.hyperparameters;
        int cut = 90;
        while (cut > 0 && (size_t)cut < strlen(h) && (h[cut] & 0xC0) == 0x80) /* not inside a UTF-8 character */
            cut--;
        fprintf(out, "recipe        %s: %.*s%s\n", r->recipe.optimizer, cut, h,
                strlen(h) > (size_t)cut ? "... (--assumptions: the whole recipe)" : "");
    }
    fputc('\n', out);
    if (b->error[0]) {
        fprintf(out, "the scenario's own point does not run: %s\n", b->error);
        report_sweep(out, r);
        return;
    }
    const struct {
        const char *name;
        double s;
    } rows[] = {{"step.time_s", b->step.time_s}, {"step.compute_s", b->step.compute_s},
                {"step.comm_s", b->step.comm_s}, {"step.exposed_comm_s", b->step.exposed_comm_s},
                {"step.optimizer_s", b->step.optimizer_s}, {"step.host_embedding_s", b->step.host_embedding_s},
                {"step.idle_s", b->step.idle_s}, {"step.tp_comm_s", b->step.tp_comm_s},
                {"step.bubble_s", b->step.bubble_s}};
    fprintf(out, "per step                      seconds\n");
    for (size_t i = 0; i < sizeof rows / sizeof *rows - (par[LAYOUT_DATA] ? 0 : 2); i++)
        if (rows[i].s != 0 || strcmp(rows[i].name, "step.host_embedding_s")) /* no host tables: no row */
            fprintf(out, "  %-22s %12.6g  %12s%s\n", rows[i].name, rows[i].s, human_duration(rows[i].s, t, sizeof t),
                i == 6   ? "   (no compute: exposed comm + host waits)"
                : i == 7 ? "   (tensor-parallel collectives, blocking)"
                : i == 8 ? "   (pipeline stages waiting on each other)"
                         : "");
    if (par[LAYOUT_CONTEXT] > 1)
        fprintf(out, "  %-22s %12.6g  %12s   (context-parallel ring beyond the attention it overlaps)\n",
                "step.cp_comm_s", b->step.cp_comm_s, human_duration(b->step.cp_comm_s, t, sizeof t));
    if (par[LAYOUT_EXPERT] > 1)
        fprintf(out, "  %-22s %12.6g  %12s   (MoE dispatch and combine alltoalls, blocking)\n", "step.ep_comm_s",
                b->step.ep_comm_s, human_duration(b->step.ep_comm_s, t, sizeof t));
    if (b->step.input_s > 0)
        fprintf(out, "  %-22s %12.6g  %12s   (host input pipeline for the node's images; waited %.6g s)\n",
                "step.input_s", b->step.input_s, human_duration(b->step.input_s, t, sizeof t), b->step.input_wait_s);
    if (b->host.forward_s > 0)
        fprintf(out, "    per micro-step: rows to the accelerators %.4g s over PCIe/UPI (DRAM lookups %.4g s), "
                     "gradient rows back %.4g s (sparse update in DRAM %.4g s)\n",
                b->host.forward_transfer_s, b->host.lookup_s, b->host.backward_transfer_s, b->host.update_s);
    if (b->cpu_ranks)
        fprintf(out, "    per socket: compute %s, %.4g FLOPs, %.4g bytes of DRAM traffic; UPI: %.4g bytes per step "
                     "(the collectives' messages, once per UPI link crossed)\n",
                human_duration(b->step.compute_s, t, sizeof t), b->step.model_flops, b->step.compute_bytes, b->upi_bytes);
    char c1[48], c2[48], c3[48];
    fprintf(out, "  MFU %.1f %%, %s samples/s, memory %.3g GB per device "
                 "(params %.3g, grads %.3g, optimizer %.3g, activations %.3g)\n\n",
            100 * b->step.mfu, human_count(b->samples_per_s, c1, sizeof c1), b->step.memory.total_bytes / 1e9,
            b->step.memory.params_bytes / 1e9, b->step.memory.gradients_bytes / 1e9,
            b->step.memory.optimizer_bytes / 1e9, b->step.memory.activations_bytes / 1e9);
    fprintf(out, "to target     %s steps (10th-90th percentile %s-%s)%s%s", human_count(b->steps_to_target, c1, sizeof c1),
            human_count(b->steps_p10, c2, sizeof c2), human_count(b->steps_p90, c3, sizeof c3),
            b->extrapolated ? ", extrapolated beyond the profile's points" : "",
            b->failed_batch > 0 ? ", where the profile's runs did NOT reach the target" : "");
    if (b->epochs > 0)
        fprintf(out, ", %.4g epochs", b->epochs);
    if (report_has_tokens(b))
        fprintf(out, "\n              %.4g tokens (10th-90th percentile %.4g-%.4g), %.4g tokens a step",
                b->samples_to_target * b->tokens_per_sample, b->samples_p10 * b->tokens_per_sample,
                b->samples_p90 * b->tokens_per_sample, (double)b->global_batch * b->tokens_per_sample);
    char lo[32], hi[32];
    fprintf(out, "\n  time_to_accuracy_s %.6g (%s; band %s-%s)%s\n", b->time_to_accuracy_s,
            human_duration(b->time_to_accuracy_s, t, sizeof t),
            human_duration_as(b->time_to_accuracy_p10_s, b->time_to_accuracy_s, lo, sizeof lo),
            human_duration_as(b->time_to_accuracy_p90_s, b->time_to_accuracy_s, hi, sizeof hi),
            b->eval_s > 0 ? ", evaluation included" : "");
    fprintf(out, "  cost_usd %.6g (renting the accelerators; band %.4g-%.4g), energy_j %.6g (%.4g kWh at the meter, "
                 "band %.4g-%.4g); per step $%.4g, %.4g J\n", b->total.usd, b->total_p10.usd, b->total_p90.usd,
            b->total.energy_j, b->total.energy_j / 3.6e6, b->total_p10.energy_j / 3.6e6,
            b->total_p90.energy_j / 3.6e6, b->per_step.usd, b->per_step.energy_j);
    report_failures(out, b);
    report_ownership(out, b);
    if (sc->ref_step_time_s > 0 || sc->ref_time_s > 0 || sc->ref_interruptions_per_day > 0) {
        fprintf(out, "\nreference     %s\n", sc->ref_source ? sc->ref_source : "");
        if (sc->ref_interruptions_per_day > 0)
            fprintf(out, "  interruptions a day: predicted %.4g, published %.4g, ratio %.3f\n",
                    b->res.interruptions_per_day, sc->ref_interruptions_per_day,
                    b->res.interruptions_per_day / sc->ref_interruptions_per_day);
        if (sc->ref_step_time_s > 0)
            fprintf(out, "  step time: predicted %.4g s, published %.4g s, ratio %.3f\n", b->step.time_s,
                    sc->ref_step_time_s, b->step.time_s / sc->ref_step_time_s);
        if (sc->ref_time_s > 0)
            fprintf(out, "  total time: predicted %s, published %s, ratio %.3f\n",
                    human_duration(b->time_to_accuracy_s, t, sizeof t),
                    human_duration(sc->ref_time_s, (char[32]){0}, 32), b->time_to_accuracy_s / sc->ref_time_s);
    }
    if (r->links_shown) {
        fprintf(out, "\nlinks of one step\n");
        links_report_text(out, &r->links, r->base.step.time_s, "step", r->links_shown);
    }
    report_sweep(out, r);
    if (r->n_notes)
        fprintf(out, "\nnotes\n");
    for (int i = 0; i < r->n_notes; i++)
        fprintf(out, "  - %s\n", r->notes[i]);
    if (r->n_assumptions && all_assumptions) {
        fprintf(out, "\nassumptions\n");
        for (size_t i = 0; i < r->n_assumptions; i++)
            fprintf(out, "  - %s\n", r->assumptions[i]);
    } else if (r->n_assumptions) {
        fprintf(out, "\nassumptions  %zu behind these numbers, each named with its source or U (unverified): "
                     "--assumptions lists them\n", r->n_assumptions);
    }
}

static void csv_text(FILE *f, const char *text)
{
    fputc('"', f);
    for (const char *c = text; *c; c++) /* RFC 4180: a quote inside a field is doubled */
        fputs(*c == '"' ? "\"\"" : (char[2]){*c, 0}, f);
    fputc('"', f);
}

static void csv_header(FILE *f)
{
    fprintf(f, "scenario,point,platform,nodes,ranks,global_batch,micro_batch,accumulation,step_time_s,compute_s,comm_s,"
               "exposed_comm_s,optimizer_s,host_embedding_s,idle_s,mfu,samples_per_s,memory_bytes,steps_to_target,"
               "extrapolated,time_to_accuracy_s,cost_usd,energy_j,capex_usd,owned_to_accuracy_usd,tco_usd,"
               "steps_to_target_p10,steps_to_target_p90,time_to_accuracy_p10_s,time_to_accuracy_p90_s,cost_usd_p10,"
               "cost_usd_p90,energy_j_p10,energy_j_p90,error\n");
}

static void csv_row(FILE *f, const char *name, const run_point *p)
{
    csv_text(f, name);
    fputc(',', f);
    csv_text(f, p->label);
    fputc(',', f);
    csv_text(f, p->platform);
    if (p->error[0]) {
        fprintf(f, ",%d,,%ld,,,,,,,,,,,,,,,,,,,,,,,,,,,,,", p->nodes, p->global_batch);
        csv_text(f, p->error);
        fputc('\n', f);
        return;
    }
    fprintf(f, ",%d,%d,%ld,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.9g,%.6g,%.9g,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,"
               "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,\n",
            p->nodes, p->ranks, p->global_batch, p->micro_batch, p->accumulation, p->step.time_s, p->step.compute_s,
            p->step.comm_s, p->step.exposed_comm_s, p->step.optimizer_s, p->step.host_embedding_s, p->step.idle_s,
            p->step.mfu, p->samples_per_s, p->step.memory.total_bytes, p->steps_to_target, p->extrapolated,
            p->time_to_accuracy_s, p->total.usd, p->total.energy_j, p->bill.total_usd, p->total.owned_usd, p->tco_usd,
            p->steps_p10, p->steps_p90, p->time_to_accuracy_p10_s, p->time_to_accuracy_p90_s, p->total_p10.usd,
            p->total_p90.usd, p->total_p10.energy_j, p->total_p90.energy_j);
}

int report_csv_runs(const char *path, const char *const *names, const run_result *const *rs, size_t n,
                    tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the CSV file", &o, &f, err);
    if (rc)
        return rc;
    csv_header(f);
    for (size_t k = 0; k < n; k++) {
        size_t np = rs[k]->n_points ? rs[k]->n_points : 1;
        for (size_t i = 0; i < np; i++)
            csv_row(f, names[k], rs[k]->n_points ? &rs[k]->points[i] : &rs[k]->base);
    }
    return outfile_commit(o, err);
}

int report_csv(const char *path, const scenario *sc, const run_result *r, tt_error *err)
{
    const char *name = sc->name;
    return report_csv_runs(path, &name, &r, 1, err);
}
