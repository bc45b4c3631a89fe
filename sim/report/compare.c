#include "sim/report/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "sim/report/human.h"
#include "sim/report/report.h"

#define MAX_ENTRIES 512

/* One point of one run, with the series it belongs to and its x value. */
typedef struct entry {
    const compare_run *run;
    const run_point *p;
    char short_name[64]; /* the scenario file's name without .json: short and unique in a table */
    char series[200];
    double x;
} entry;

static void short_name(const scenario *sc, char *out, size_t n)
{
    const char *slash = strrchr(sc->path, '/'), *base = slash ? slash + 1 : sc->path;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0)
        len -= 5;
    if (len >= n)
        len = n - 1;
    memcpy(out, base, len);
    out[len] = '\0';
}

typedef struct table {
    size_t n;
    entry e[MAX_ENTRIES];
    int by_batch, by_nodes, owned;
} table;

static void collect(const compare_run *runs, size_t n, table *t)
{
    memset(t, 0, sizeof *t);
    long b0 = -1;
    int n0 = -1;
    for (size_t k = 0; k < n; k++) {
        const run_result *r = runs[k].r;
        size_t np = r->n_points ? r->n_points : 1;
        for (size_t i = 0; i < np && t->n < MAX_ENTRIES; i++) {
            entry *e = &t->e[t->n++];
            e->run = &runs[k];
            e->p = r->n_points ? &r->points[i] : &r->base;
            short_name(runs[k].sc, e->short_name, sizeof e->short_name);
            char series[sizeof e->series];
            snprintf(series, sizeof series, "%s%s%s", e->short_name, e->p->label[0] ? ": " : "", e->p->label);
            memcpy(e->series, series, sizeof series);
            t->by_batch |= b0 >= 0 && e->p->global_batch != b0;
            t->by_nodes |= n0 >= 0 && e->p->nodes != n0;
            b0 = e->p->global_batch;
            n0 = e->p->nodes;
        }
    }
    t->owned = 1;
    for (size_t i = 0; i < t->n; i++) {
        entry *e = &t->e[i];
        e->x = t->by_batch ? (double)e->p->global_batch : t->by_nodes ? e->p->nodes : 0;
        if (!e->p->error[0])
            t->owned &= e->p->bill.total_usd > 0;
    }
}

static double cost_of_entry(const table *t, const entry *e)
{
    return t->owned ? e->p->total.owned_usd : e->p->total.usd;
}

/* The x values in first-seen order. */
static size_t groups(const table *t, double *xs)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        size_t k = 0;
        while (k < n && xs[k] != t->e[i].x)
            k++;
        if (k == n)
            xs[n++] = t->e[i].x;
    }
    return n;
}

typedef struct verdict {
    const entry *fastest, *cheapest;
} verdict;

static verdict judge(const table *t, double x)
{
    verdict v = {NULL, NULL};
    for (size_t i = 0; i < t->n; i++) {
        const entry *e = &t->e[i];
        if (e->x != x || e->p->error[0])
            continue;
        if (!v.fastest || e->p->time_to_accuracy_s < v.fastest->p->time_to_accuracy_s)
            v.fastest = e;
        if (!v.cheapest || cost_of_entry(t, e) < cost_of_entry(t, v.cheapest))
            v.cheapest = e;
    }
    return v;
}

/* Why e is slower than the fastest f: the step part that grew most, or the
 * steps to target when the step is not longer. The bottleneck link class
 * (issue 11's per-link loads) belongs here once runs report it. */
typedef struct explanation {
    double ratio;      /* e's time to accuracy over f's */
    double dstep_s;    /* step time difference */
    const char *part;  /* the part of the step that explains most of it */
    double dpart_s;
} explanation;

static explanation explain(const entry *e, const entry *f)
{
    explanation x = {e->p->time_to_accuracy_s / f->p->time_to_accuracy_s, e->p->step.time_s - f->p->step.time_s,
                     "steps to target", 0};
    const step_result *a = &e->p->step, *b = &f->p->step;
    const struct {
        const char *name;
        double d;
    } parts[] = {{"exposed communication", a->exposed_comm_s - b->exposed_comm_s},
                 {"compute", a->compute_s - b->compute_s},
                 {"optimizer", a->optimizer_s - b->optimizer_s},
                 {"host embeddings", a->host_embedding_s - b->host_embedding_s}};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (parts[i].d > x.dpart_s) {
            x.part = parts[i].name;
            x.dpart_s = parts[i].d;
        }
    return x;
}

void compare_text(FILE *out, const compare_run *runs, size_t n)
{
    table *t = calloc(1, sizeof *t); /* hundreds of entries: not on the stack */
    if (!t)
        return;
    collect(runs, n, t);
    fprintf(out, "compare %zu scenarios\n", n);
    for (size_t k = 0; k < n; k++) {
        char sn[64];
        short_name(runs[k].sc, sn, sizeof sn);
        fprintf(out, "  %-26s %s (%s, %d nodes, %s)\n", sn, runs[k].sc->name, runs[k].r->platform,
                runs[k].r->base.nodes, runs[k].r->model);
        const cost_bill *b = &runs[k].r->base.bill;
        char capex[24], sw[24], cab[24];
        if (b->total_usd > 0)
            fprintf(out, "  %-26s capex %s: %ld fabric switches %s, %ld fabric cables %s\n", "",
                    human_usd(b->total_usd, capex, sizeof capex), b->fabric_switches,
                    human_usd(b->switches_usd, sw, sizeof sw), b->fabric_cables, human_usd(b->cables_usd, cab, sizeof cab));
    }
    fprintf(out, "\n");
    report_table_header(out, 1);
    int extrapolated = 0;
    for (size_t i = 0; i < t->n; i++) {
        report_table_row(out, t->e[i].short_name, t->e[i].p);
        extrapolated |= t->e[i].p->extrapolated && !t->e[i].p->error[0];
    }
    fprintf(out, "%s%s", REPORT_TABLE_NOTE, extrapolated ? REPORT_EXTRAPOLATED_NOTE : "");
    double xs[MAX_ENTRIES];
    size_t ng = groups(t, xs);
    fprintf(out, "\nverdict (cheapest by %s cost)\n", t->owned ? "owning" : "renting");
    for (size_t g = 0; g < ng; g++) {
        verdict v = judge(t, xs[g]);
        char at[64] = "", tta[24], usd[24];
        if (t->by_batch || t->by_nodes)
            snprintf(at, sizeof at, "at %s %.0f: ", t->by_batch ? "global batch" : "nodes", xs[g]);
        if (!v.fastest) {
            fprintf(out, "  %sno scenario runs\n", at);
            continue;
        }
        fprintf(out, "  %sfastest %s (%s), cheapest %s (%s)\n", at, v.fastest->series,
                human_duration(v.fastest->p->time_to_accuracy_s, tta, sizeof tta), v.cheapest->series,
                human_usd(cost_of_entry(t, v.cheapest), usd, sizeof usd));
        for (size_t i = 0; i < t->n; i++) {
            const entry *e = &t->e[i];
            if (e->x != xs[g] || e == v.fastest || e->p->error[0])
                continue;
            explanation x = explain(e, v.fastest);
            char ds[24], dp[24];
            if (x.dstep_s > 0 && x.dpart_s > 0)
                fprintf(out, "    %s: %.3gx the time; its step is %s longer, %s +%s (%.0f %% of it)\n", e->series,
                        x.ratio, human_duration(x.dstep_s, ds, sizeof ds), x.part,
                        human_duration(x.dpart_s, dp, sizeof dp), 100 * x.dpart_s / x.dstep_s);
            else
                fprintf(out, "    %s: %.3gx the time (%.6g steps to target against %.6g)\n", e->series, x.ratio,
                        e->p->steps_to_target, v.fastest->p->steps_to_target);
        }
    }
    free(t);
}

json_t *compare_json(const compare_run *runs, size_t n)
{
    table *t = calloc(1, sizeof *t); /* hundreds of entries: not on the stack */
    if (!t)
        return NULL;
    collect(runs, n, t);
    json_t *doc = json_object(), *scen = json_array(), *verdicts = json_array();
    for (size_t k = 0; k < n; k++)
        json_array_append_new(scen, report_json(runs[k].sc, runs[k].r));
    json_object_set_new(doc, "scenarios", scen);
    json_object_set_new(doc, "x", json_string(t->by_batch ? "global_batch" : t->by_nodes ? "nodes" : "none"));
    json_object_set_new(doc, "cheapest_by", json_string(t->owned ? "owning" : "renting"));
    double xs[MAX_ENTRIES];
    size_t ng = groups(t, xs);
    for (size_t g = 0; g < ng; g++) {
        verdict v = judge(t, xs[g]);
        json_t *o = json_pack("{s:o}", "x", json_real(xs[g]));
        json_object_set_new(o, "fastest", v.fastest ? json_string(v.fastest->series) : json_null());
        json_object_set_new(o, "cheapest", v.cheapest ? json_string(v.cheapest->series) : json_null());
        json_t *why = json_array();
        for (size_t i = 0; v.fastest && i < t->n; i++) {
            const entry *e = &t->e[i];
            if (e->x != xs[g] || e == v.fastest || e->p->error[0])
                continue;
            explanation x = explain(e, v.fastest);
            json_array_append_new(why, json_pack("{s:s, s:o, s:o, s:s, s:o, s:n}", "series", e->series,
                                                 "time_ratio", jx_real_or_null(x.ratio), "step_time_diff_s",
                                                 jx_real_or_null(x.dstep_s), "mostly", x.part, "part_diff_s",
                                                 jx_real_or_null(x.dpart_s), "bottleneck_link_class"));
        }
        json_object_set_new(o, "slower", why);
        json_array_append_new(verdicts, o);
    }
    json_object_set_new(doc, "verdicts", verdicts);
    free(t);
    return doc;
}
