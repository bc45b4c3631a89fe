#include "sim/report/report.h"

#include <stdlib.h>
#include <string.h>

#include "common/outfile.h"

static json_t *num(double x)
{
    return json_real(x);
}

static json_t *point_json(const run_point *p)
{
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
    json_t *o = json_pack("{s:i, s:i, s:I, s:i, s:i, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o}}",
                          "nodes", p->nodes, "ranks", p->ranks, "global_batch", (json_int_t)p->global_batch,
                          "micro_batch", p->micro_batch, "accumulation", p->accumulation, "step", step,
                          "steps_to_target", num(p->steps_to_target), "extrapolated", p->extrapolated,
                          "epochs", num(p->epochs), "evaluation_s", num(p->eval_s), "time_to_accuracy_s",
                          num(p->time_to_accuracy_s), "cost_usd", num(p->total.usd), "energy_j",
                          num(p->total.energy_j), "per_step", "cost_usd", num(p->per_step.usd),
                          "energy_j", num(p->per_step.energy_j));
    if (p->host.forward_s > 0)
        json_object_set_new(o, "host_embedding",
                            json_pack("{s:o, s:o, s:o, s:o}", "forward_transfer_s", num(p->host.forward_transfer_s),
                                      "lookup_s", num(p->host.lookup_s), "backward_transfer_s",
                                      num(p->host.backward_transfer_s), "update_s", num(p->host.update_s)));
    if (p->scaling_efficiency > 0)
        json_object_set_new(o, "scaling_efficiency", num(p->scaling_efficiency));
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
                                                   sc->gradient_precision ? sc->gradient_precision : r->precision,
                                                   "optimizer", r->optimizer));
    json_object_set_new(doc, "collectives", json_pack("{s:s, s:s, s:b}", "allreduce", r->allreduce,
                                                      "alltoall", r->alltoall, "overlap", sc->overlap));
    json_object_set_new(doc, "convergence", json_pack("{s:s, s:s}", "source", r->convergence, "target",
                                                      r->target));
    json_t *base = point_json(&r->base);
    json_object_update(doc, base);
    json_decref(base);
    if (sc->ref_step_time_s > 0 || sc->ref_time_s > 0 || sc->ref_steps > 0) {
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
        if (sc->ref_source)
            json_object_set_new(ref, "source", json_string(sc->ref_source));
        json_object_set_new(doc, "reference", ref);
    }
    json_t *as = json_array();
    for (size_t i = 0; i < r->n_assumptions; i++)
        json_array_append_new(as, json_string(r->assumptions[i]));
    json_object_set_new(doc, "assumptions", as);
    if (r->n_points) {
        json_t *pts = json_array();
        for (size_t i = 0; i < r->n_points; i++)
            json_array_append_new(pts, point_json(&r->points[i]));
        json_object_set_new(doc, "sweep", pts);
    }
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

static const char *human_time(double s, char *buf, size_t n)
{
    if (s < 120)
        snprintf(buf, n, "%.4g s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.4g min", s / 60);
    else if (s < 3 * 86400)
        snprintf(buf, n, "%.4g h", s / 3600);
    else
        snprintf(buf, n, "%.4g days", s / 86400);
    return buf;
}

static void table_row(FILE *out, const run_point *p)
{
    char tta[32];
    fprintf(out, "%6d %7d %8ld %6d %9.4f %9.4f %9.4f %9.4f %9.4f %6.1f%% %10.4g %10s %11.4g %11.4g\n",
            p->nodes, p->ranks, p->global_batch, p->micro_batch, p->step.time_s, p->step.compute_s,
            p->step.comm_s, p->step.exposed_comm_s, p->step.optimizer_s, 100 * p->step.mfu,
            p->steps_to_target, human_time(p->time_to_accuracy_s, tta, sizeof tta), p->total.usd,
            p->total.energy_j / 3.6e6);
}

void report_text(FILE *out, const scenario *sc, const run_result *r)
{
    const run_point *b = &r->base;
    char t[32];
    fprintf(out, "scenario      %s (%s)\n", sc->name, sc->path);
    fprintf(out, "platform      %s, %d nodes, %d x %s\n", r->platform, b->nodes, b->ranks, r->accelerator);
    fprintf(out, "workload      %s, %s, optimizer %s, global batch %ld = %d ranks x %d x %d accumulation\n",
            r->model, r->precision, r->optimizer, b->global_batch, b->ranks, b->micro_batch, b->accumulation);
    fprintf(out, "collectives   allreduce %s (%s gradients, %s), alltoall %s\n", r->allreduce,
            sc->gradient_precision ? sc->gradient_precision : r->precision,
            sc->overlap ? "overlapping the backward" : "after the backward", r->alltoall);
    fprintf(out, "convergence   %s; target %s\n\n", r->convergence, r->target);
    fprintf(out, "per step                      seconds\n");
    fprintf(out, "  step.time_s            %12.6f\n", b->step.time_s);
    fprintf(out, "  step.compute_s         %12.6f\n", b->step.compute_s);
    fprintf(out, "  step.comm_s            %12.6f\n", b->step.comm_s);
    fprintf(out, "  step.exposed_comm_s    %12.6f\n", b->step.exposed_comm_s);
    fprintf(out, "  step.optimizer_s       %12.6f\n", b->step.optimizer_s);
    fprintf(out, "  step.host_embedding_s  %12.6f\n", b->step.host_embedding_s);
    fprintf(out, "  step.idle_s            %12.6f   (no compute: exposed comm + host waits)\n", b->step.idle_s);
    if (b->host.forward_s > 0)
        fprintf(out, "    per micro-step: rows to the accelerators %.4g s over PCIe/UPI (DRAM lookups %.4g s), "
                     "gradient rows back %.4g s (sparse update in DRAM %.4g s)\n",
                b->host.forward_transfer_s, b->host.lookup_s, b->host.backward_transfer_s, b->host.update_s);
    fprintf(out, "  MFU %.1f %%, %.4g samples/s, memory %.3g GB per device "
                 "(params %.3g, grads %.3g, optimizer %.3g, activations %.3g)\n\n",
            100 * b->step.mfu, b->samples_per_s, b->step.memory.total_bytes / 1e9,
            b->step.memory.params_bytes / 1e9, b->step.memory.gradients_bytes / 1e9,
            b->step.memory.optimizer_bytes / 1e9, b->step.memory.activations_bytes / 1e9);
    fprintf(out, "to target     %.6g steps%s", b->steps_to_target, b->extrapolated ? " (extrapolated by the fit)" : "");
    if (b->epochs > 0)
        fprintf(out, ", %.4g epochs", b->epochs);
    fprintf(out, "\n  time_to_accuracy_s %.6g (%s)%s\n", b->time_to_accuracy_s,
            human_time(b->time_to_accuracy_s, t, sizeof t), b->eval_s > 0 ? ", evaluation included" : "");
    fprintf(out, "  cost_usd %.6g, energy_j %.6g (%.4g kWh); per step $%.4g, %.4g J\n", b->total.usd,
            b->total.energy_j, b->total.energy_j / 3.6e6, b->per_step.usd, b->per_step.energy_j);
    if (sc->ref_step_time_s > 0 || sc->ref_time_s > 0) {
        fprintf(out, "\nreference     %s\n", sc->ref_source ? sc->ref_source : "");
        if (sc->ref_step_time_s > 0)
            fprintf(out, "  step time: predicted %.4g s, published %.4g s, ratio %.3f\n", b->step.time_s,
                    sc->ref_step_time_s, b->step.time_s / sc->ref_step_time_s);
        if (sc->ref_time_s > 0)
            fprintf(out, "  total time: predicted %s, published %s, ratio %.3f\n",
                    human_time(b->time_to_accuracy_s, t, sizeof t),
                    human_time(sc->ref_time_s, (char[32]){0}, 32), b->time_to_accuracy_s / sc->ref_time_s);
    }
    if (r->n_points) {
        fprintf(out, "\nsweep\n %5s %7s %8s %6s %9s %9s %9s %9s %9s %7s %10s %10s %11s %11s\n", "nodes",
                "ranks", "batch", "micro", "step_s", "compute", "comm", "exposed", "optim", "MFU", "steps",
                "TTA", "cost_usd", "energy_kWh");
        for (size_t i = 0; i < r->n_points; i++)
            table_row(out, &r->points[i]);
    }
    if (r->n_assumptions) {
        fprintf(out, "\nassumptions\n");
        for (size_t i = 0; i < r->n_assumptions; i++)
            fprintf(out, "  - %s\n", r->assumptions[i]);
    }
}

int report_csv(const char *path, const scenario *sc, const run_result *r, tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the CSV file", &o, &f, err);
    if (rc)
        return rc;
    fprintf(f, "scenario,nodes,ranks,global_batch,micro_batch,accumulation,step_time_s,compute_s,comm_s,"
               "exposed_comm_s,optimizer_s,host_embedding_s,idle_s,mfu,samples_per_s,memory_bytes,steps_to_target,"
               "extrapolated,time_to_accuracy_s,cost_usd,energy_j\n");
    size_t n = r->n_points ? r->n_points : 1;
    for (size_t i = 0; i < n; i++) {
        const run_point *p = r->n_points ? &r->points[i] : &r->base;
        fputc('"', f);
        for (const char *c = sc->name; *c; c++) /* RFC 4180: a quote inside a field is doubled */
            fputs(*c == '"' ? "\"\"" : (char[2]){*c, 0}, f);
        fprintf(f, "\",%d,%d,%ld,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.9g,%.6g,%.9g,%d,%.9g,%.9g,%.9g\n",
                p->nodes, p->ranks, p->global_batch, p->micro_batch, p->accumulation,
                p->step.time_s, p->step.compute_s, p->step.comm_s, p->step.exposed_comm_s,
                p->step.optimizer_s, p->step.host_embedding_s, p->step.idle_s, p->step.mfu, p->samples_per_s,
                p->step.memory.total_bytes, p->steps_to_target, p->extrapolated, p->time_to_accuracy_s,
                p->total.usd, p->total.energy_j);
    }
    return outfile_commit(o, err);
}
