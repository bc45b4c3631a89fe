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

void compare_file_name(const scenario *sc, char *out, size_t n)
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
            compare_file_name(runs[k].sc, e->short_name, sizeof e->short_name);
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

/* The points' times to accuracy and costs (NaN for a point that did not run). */
static void values_of(const table *t, double *time_s, double *cost_usd)
{
    for (size_t i = 0; i < t->n; i++) {
        int ok = !t->e[i].p->error[0];
        time_s[i] = ok ? t->e[i].p->time_to_accuracy_s : NAN;
        cost_usd[i] = ok ? cost_of_entry(t, &t->e[i]) : NAN;
    }
}

typedef struct purchase {
    double time_s[MAX_ENTRIES], cost_usd[MAX_ENTRIES];
    size_t front[MAX_ENTRIES]; /* the Pareto front's points, fastest first */
    size_t n_front;
    long cheapest, fastest; /* within the deadline, within the budget (-1: none, or no limit) */
} purchase;

static void search(const table *t, const pareto_limits *lim, purchase *s)
{
    values_of(t, s->time_s, s->cost_usd);
    s->n_front = pareto_front(s->time_s, s->cost_usd, t->n, s->front);
    s->cheapest = lim && lim->deadline_s > 0 ? pareto_cheapest_within(s->time_s, s->cost_usd, t->n, lim->deadline_s)
                                             : -1;
    s->fastest = lim && lim->budget_usd > 0 ? pareto_fastest_within(s->time_s, s->cost_usd, t->n, lim->budget_usd)
                                            : -1;
}

/* "llm-b200: oversubscription=2, 128 nodes" */
static void point_name(const entry *e, char *out, size_t n)
{
    snprintf(out, n, "%s, %d nodes", e->series, e->p->nodes);
}

/* A verdict's name for a point: its series, with its node count when node
 * counts are swept beside the batch on the x axis (a series has several
 * points at one batch then). */
static void verdict_name(const table *t, const entry *e, char *out, size_t n)
{
    if (t->by_batch && t->by_nodes)
        point_name(e, out, n);
    else
        snprintf(out, n, "%s", e->series);
}

/* "within the deadline of 3 days: cheapest NAME (43.47 h, $18.2k)" */
static void pick_text(FILE *out, const table *t, const purchase *s, long pick, const char *limit, const char *value,
                      const char *best)
{
    char tta[24], usd[24], name[300];
    fprintf(out, "within %s of %s: ", limit, value);
    if (pick < 0) {
        fprintf(out, "no point\n");
        return;
    }
    point_name(&t->e[pick], name, sizeof name);
    fprintf(out, "%s %s (%s, %s)\n", best, name, human_duration(s->time_s[pick], tta, sizeof tta),
            human_usd(s->cost_usd[pick], usd, sizeof usd));
}

static void purchase_text(FILE *out, const table *t, const pareto_limits *lim)
{
    purchase *s = calloc(1, sizeof *s);
    if (!s)
        return;
    search(t, lim, s);
    char tta[24], usd[24], name[300];
    fprintf(out, "\npareto front: time to accuracy against %s cost (%zu of %zu points; none is both faster and "
                 "cheaper)\n", t->owned ? "owning" : "renting", s->n_front, t->n);
    for (size_t k = 0; k < s->n_front; k++) {
        size_t i = s->front[k];
        point_name(&t->e[i], name, sizeof name);
        fprintf(out, "  %12s %10s  %s\n", human_duration(s->time_s[i], tta, sizeof tta),
                human_usd(s->cost_usd[i], usd, sizeof usd), name);
    }
    char lim_s[24];
    if (lim && lim->deadline_s > 0)
        pick_text(out, t, s, s->cheapest, "the deadline", human_duration(lim->deadline_s, lim_s, sizeof lim_s),
                  "cheapest");
    if (lim && lim->budget_usd > 0)
        pick_text(out, t, s, s->fastest, "the budget", human_usd(lim->budget_usd, lim_s, sizeof lim_s), "fastest");
    free(s);
}

int compare_limits_missed(const compare_run *runs, size_t n, const pareto_limits *lim, char *msg, size_t msg_bytes)
{
    if (!lim || (lim->deadline_s <= 0 && lim->budget_usd <= 0))
        return 0;
    table *t = calloc(1, sizeof *t);
    purchase *s = calloc(1, sizeof *s);
    int missed = 0;
    if (t && s) {
        collect(runs, n, t);
        search(t, lim, s);
        char a[24], b[24];
        if (lim->deadline_s > 0 && s->cheapest < 0)
            missed = snprintf(msg, msg_bytes, "no point reaches the target within the deadline of %s",
                              human_duration(lim->deadline_s, a, sizeof a)) > 0;
        else if (lim->budget_usd > 0 && s->fastest < 0)
            missed = snprintf(msg, msg_bytes, "no point reaches the target within the budget of %s",
                              human_usd(lim->budget_usd, b, sizeof b)) > 0;
    }
    free(t);
    free(s);
    return missed;
}

void compare_text(FILE *out, const compare_run *runs, size_t n, const pareto_limits *lim)
{
    table *t = calloc(1, sizeof *t); /* hundreds of entries: not on the stack */
    if (!t)
        return;
    collect(runs, n, t);
    fprintf(out, "compare %zu scenarios\n", n);
    for (size_t k = 0; k < n; k++) {
        char sn[64];
        compare_file_name(runs[k].sc, sn, sizeof sn);
        fprintf(out, "  %-26s %s (%s%s, %d nodes, %s)\n", sn, runs[k].sc->name,
                runs[k].sc->n_sets ? "named before --set; " : "", runs[k].r->platform, runs[k].r->base.nodes,
                runs[k].r->model);
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
        char fastest[300], cheapest[300], name[300];
        verdict_name(t, v.fastest, fastest, sizeof fastest);
        verdict_name(t, v.cheapest, cheapest, sizeof cheapest);
        fprintf(out, "  %sfastest %s (%s), cheapest %s (%s)\n", at, fastest,
                human_duration(v.fastest->p->time_to_accuracy_s, tta, sizeof tta), cheapest,
                human_usd(cost_of_entry(t, v.cheapest), usd, sizeof usd));
        for (size_t i = 0; i < t->n; i++) {
            const entry *e = &t->e[i];
            if (e->x != xs[g] || e == v.fastest || e->p->error[0])
                continue;
            explanation x = explain(e, v.fastest);
            char ds[24], dp[24];
            verdict_name(t, e, name, sizeof name);
            if (x.dstep_s > 0 && x.dpart_s > 0)
                fprintf(out, "    %s: %.3gx the time; its step is %s longer, %s +%s (%.0f %% of it)\n", name,
                        x.ratio, human_duration(x.dstep_s, ds, sizeof ds), x.part,
                        human_duration(x.dpart_s, dp, sizeof dp), 100 * x.dpart_s / x.dstep_s);
            else
                fprintf(out, "    %s: %.3gx the time (%.6g steps to target against %.6g)\n", name, x.ratio,
                        e->p->steps_to_target, v.fastest->p->steps_to_target);
        }
    }
    purchase_text(out, t, lim);
    free(t);
}

/* An entry as the purchase search names it in JSON. */
static json_t *point_json(const entry *e, double time_s, double cost_usd)
{
    return json_pack("{s:s, s:i, s:o, s:o}", "series", e->series, "nodes", e->p->nodes, "time_to_accuracy_s",
                     jx_real_or_null(time_s), "cost_usd", jx_real_or_null(cost_usd));
}

static json_t *purchase_json(const table *t, const pareto_limits *lim)
{
    purchase *s = calloc(1, sizeof *s);
    if (!s)
        return json_null();
    search(t, lim, s);
    json_t *front = json_array();
    for (size_t k = 0; k < s->n_front; k++)
        json_array_append_new(front, point_json(&t->e[s->front[k]], s->time_s[s->front[k]], s->cost_usd[s->front[k]]));
    json_t *o = json_pack("{s:o}", "pareto_front", front);
    if (lim && lim->deadline_s > 0) {
        json_object_set_new(o, "deadline_s", json_real(lim->deadline_s));
        json_object_set_new(o, "cheapest_within_deadline",
                            s->cheapest < 0 ? json_null()
                                            : point_json(&t->e[s->cheapest], s->time_s[s->cheapest],
                                                         s->cost_usd[s->cheapest]));
    }
    if (lim && lim->budget_usd > 0) {
        json_object_set_new(o, "budget_usd", json_real(lim->budget_usd));
        json_object_set_new(o, "fastest_within_budget",
                            s->fastest < 0 ? json_null()
                                           : point_json(&t->e[s->fastest], s->time_s[s->fastest],
                                                        s->cost_usd[s->fastest]));
    }
    free(s);
    return o;
}

json_t *compare_json(const compare_run *runs, size_t n, const pareto_limits *lim)
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
    json_object_set_new(doc, "purchase", purchase_json(t, lim));
    free(t);
    return doc;
}
