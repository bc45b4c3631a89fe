#include "sim/report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outfile.h"
#include "common/stats.h"
#include "sim/report/human.h"
#include "sim/report/plot.h"
#include "sim/report/xml.h"

#define FIG_W 1000
#define PLOT_W 380
#define PLOT_H 220
#define COL2_X 580
#define LEFT_X 80
#define MAX_SERIES 24
#define MAX_SLOTS 64
#define TITLE_FONT 17
#define LOG_SPAN 30 /* a line panel whose values span more than this ratio gets a log y axis */

typedef enum { X_BATCH, X_NODES, X_SERIES } x_kind;

typedef struct series {
    char name[200];
    size_t n;
    const run_point *pts[MAX_SLOTS];
    size_t slot[MAX_SLOTS];
} series;

typedef struct figure {
    size_t n_series, n_slots;
    series s[MAX_SERIES];
    x_kind x;
    double slot_value[MAX_SLOTS];
    char slot_label[MAX_SLOTS][32];
    int owned;        /* cost panel: owning (every point priced) or renting */
    int extrapolated; /* a point's steps come from the fit beyond its profile */
} figure;

static size_t run_points(const run_result *r, const run_point **pts)
{
    *pts = r->n_points ? r->points : &r->base;
    return r->n_points ? r->n_points : 1;
}

static double x_of(const figure *fig, const run_point *p, size_t series_i)
{
    return fig->x == X_BATCH ? (double)p->global_batch : fig->x == X_NODES ? p->nodes : (double)series_i;
}

/* "64K" for 65,536 (batches are powers of two), else the plain count. */
static void count_label(double v, char *buf, size_t n)
{
    long x = (long)v;
    if (x >= 1024 && x % 1024 == 0)
        snprintf(buf, n, "%ldK", x / 1024);
    else
        snprintf(buf, n, "%ld", x);
}

/* A sweep point's label ("a=1, b=x") without the part the x axis shows:
 * points that differ only there are one series (one line across the axis). */
static void series_label(const char *label, const char *drop, char *out, size_t n)
{
    size_t used = 0, dl = drop ? strlen(drop) : 0;
    out[0] = '\0';
    while (*label) {
        const char *end = strstr(label, ", ");
        size_t len = end ? (size_t)(end - label) : strlen(label);
        if (!(dl && len > dl && strncmp(label, drop, dl) == 0 && label[dl] == '='))
            used += (size_t)snprintf(out + used, used < n ? n - used : 0, "%s%.*s", used ? ", " : "", (int)len, label);
        label += len + (end ? 2 : 0);
    }
}

static void add_point(figure *fig, const char *run, const run_point *p, int several_runs, const char *drop,
                      int by_nodes)
{
    char name[200], label[sizeof p->label + 32];
    series_label(p->label, drop, label, sizeof label);
    if (by_nodes) /* batch on the x axis and node counts swept too: a line per cluster size */
        snprintf(label + strlen(label), sizeof label - strlen(label), "%s%d nodes x %d", label[0] ? ", " : "",
                 p->nodes, p->nodes ? p->ranks / p->nodes : 0);
    if (several_runs)
        snprintf(name, sizeof name, "%s%s%s", run, label[0] ? ": " : "", label);
    else
        snprintf(name, sizeof name, "%s", label[0] ? label : run);
    size_t i = 0;
    while (i < fig->n_series && strcmp(fig->s[i].name, name) != 0)
        i++;
    if (i == MAX_SERIES)
        return;
    if (i == fig->n_series) {
        snprintf(fig->s[i].name, sizeof fig->s[i].name, "%s", name);
        fig->n_series++;
    }
    if (fig->s[i].n < MAX_SLOTS)
        fig->s[i].pts[fig->s[i].n++] = p;
}

static void build(figure *fig, const svg_run *runs, size_t n)
{
    memset(fig, 0, sizeof *fig);
    double b0 = -1, n0 = -1;
    int batch_varies = 0, nodes_varies = 0;
    for (size_t k = 0; k < n; k++) {
        const run_point *pts;
        size_t np = run_points(runs[k].r, &pts);
        for (size_t i = 0; i < np; i++) {
            batch_varies |= b0 >= 0 && pts[i].global_batch != b0;
            nodes_varies |= n0 >= 0 && pts[i].nodes != n0;
            b0 = (double)pts[i].global_batch;
            n0 = pts[i].nodes;
        }
    }
    fig->x = batch_varies ? X_BATCH : nodes_varies ? X_NODES : X_SERIES;
    const char *drop = fig->x == X_BATCH ? "workload.global_batch" : fig->x == X_NODES ? "platform.nodes" : NULL;
    for (size_t k = 0; k < n; k++) {
        const run_point *pts;
        size_t np = run_points(runs[k].r, &pts);
        for (size_t i = 0; i < np; i++)
            add_point(fig, runs[k].name, &pts[i], n > 1, drop, batch_varies && nodes_varies);
    }
    fig->owned = 1;
    for (size_t i = 0; i < fig->n_series; i++)
        for (size_t j = 0; j < fig->s[i].n; j++) {
            const run_point *p = fig->s[i].pts[j];
            double v = x_of(fig, p, i);
            size_t k = 0;
            while (k < fig->n_slots && fig->slot_value[k] != v)
                k++;
            if (k == fig->n_slots && k < MAX_SLOTS)
                fig->slot_value[fig->n_slots++] = v;
            if (!p->error[0]) {
                fig->owned &= p->bill.total_usd > 0;
                fig->extrapolated |= p->extrapolated;
            }
        }
    qsort(fig->slot_value, fig->n_slots, sizeof *fig->slot_value, stats_cmp_double);
    for (size_t k = 0; k < fig->n_slots; k++) {
        if (fig->x == X_SERIES) /* one point per series: the slot is the series */
            snprintf(fig->slot_label[k], sizeof fig->slot_label[k], "%c  %.24s", (char)('A' + k), fig->s[k].name);
        else
            count_label(fig->slot_value[k], fig->slot_label[k], sizeof fig->slot_label[k]);
    }
    for (size_t i = 0; i < fig->n_series; i++)
        for (size_t j = 0; j < fig->s[i].n; j++) {
            double v = x_of(fig, fig->s[i].pts[j], i);
            for (size_t k = 0; k < fig->n_slots; k++)
                if (fig->slot_value[k] == v)
                    fig->s[i].slot[j] = k;
        }
}

typedef double (*metric)(const run_point *p, int owned);
static double m_tta(const run_point *p, int owned) { (void)owned; return p->time_to_accuracy_s; }
static double m_cost(const run_point *p, int owned) { return owned ? p->total.owned_usd : p->total.usd; }
/* the band of the steps to target: 10th and 90th percentiles */
static double m_tta_p10(const run_point *p, int owned) { (void)owned; return p->time_to_accuracy_p10_s; }
static double m_tta_p90(const run_point *p, int owned) { (void)owned; return p->time_to_accuracy_p90_s; }
static double m_cost_p10(const run_point *p, int owned) { return owned ? p->total_p10.owned_usd : p->total_p10.usd; }
static double m_cost_p90(const run_point *p, int owned) { return owned ? p->total_p90.owned_usd : p->total_p90.usd; }
static double m_mfu(const run_point *p, int owned) { (void)owned; return 100 * p->step.mfu; }
static double m_eff(const run_point *p, int owned) { (void)owned; return 100 * p->scaling_efficiency; }

static double min_of(const figure *fig, metric m)
{
    double mn = INFINITY;
    for (size_t i = 0; i < fig->n_series; i++)
        for (size_t j = 0; j < fig->s[i].n; j++)
            if (!fig->s[i].pts[j]->error[0])
                mn = fmin(mn, m(fig->s[i].pts[j], fig->owned));
    return mn;
}

static double max_of(const figure *fig, metric m)
{
    double mx = 0;
    for (size_t i = 0; i < fig->n_series; i++)
        for (size_t j = 0; j < fig->s[i].n; j++)
            if (!fig->s[i].pts[j]->error[0])
                mx = fmax(mx, m(fig->s[i].pts[j], fig->owned));
    return mx;
}

static const char *const *slot_labels(const figure *fig, const char **out)
{
    for (size_t k = 0; k < fig->n_slots; k++)
        out[k] = fig->slot_label[k];
    return out;
}

static const char *x_label(const figure *fig)
{
    return fig->x == X_BATCH ? "global batch (samples)" : fig->x == X_NODES ? "nodes" : "";
}

/* One line per series of metric m scaled by 1/scale; with lo and hi, each line's
 * band shaded behind it. */
static void lines_panel(FILE *f, const figure *fig, double x0, double y0, const char *title, const char *ylabel,
                        metric m, metric lo, metric hi, double scale)
{
    plot_panel p;
    const char *labels[MAX_SLOTS];
    double top = max_of(fig, hi ? hi : m) / scale, bottom = min_of(fig, lo ? lo : m) / scale;
    if (bottom > 0 && top / bottom > LOG_SPAN) { /* orders of magnitude: a log axis keeps the small ones readable */
        char logl[96];
        snprintf(logl, sizeof logl, "%s, log scale", ylabel);
        plot_panel_begin_log(&p, f, x0, y0, PLOT_W, PLOT_H, title, logl, bottom, top);
    } else {
        plot_panel_begin(&p, f, x0, y0, PLOT_W, PLOT_H, title, ylabel, top);
    }
    plot_x_categories(&p, fig->n_slots, slot_labels(fig, labels), x_label(fig));
    for (size_t i = 0; i < fig->n_series && lo && hi; i++) {
        const series *s = &fig->s[i];
        double ylo[MAX_SLOTS], yhi[MAX_SLOTS];
        for (size_t j = 0; j < s->n; j++) {
            ylo[j] = s->pts[j]->error[0] ? NAN : lo(s->pts[j], fig->owned) / scale;
            yhi[j] = s->pts[j]->error[0] ? NAN : hi(s->pts[j], fig->owned) / scale;
        }
        plot_band(&p, s->n, s->slot, ylo, yhi, PLOT_COLORS[i % PLOT_N_COLORS]);
    }
    for (size_t i = 0; i < fig->n_series; i++) {
        const series *s = &fig->s[i];
        double ys[MAX_SLOTS];
        int marked[MAX_SLOTS];
        for (size_t j = 0; j < s->n; j++) {
            ys[j] = s->pts[j]->error[0] ? NAN : m(s->pts[j], fig->owned) / scale;
            marked[j] = s->pts[j]->extrapolated;
        }
        plot_line(&p, s->n, s->slot, ys, marked, PLOT_COLORS[i % PLOT_N_COLORS], 0);
    }
}

static void bars_panel(FILE *f, const figure *fig, double x0, double y0)
{
    static const char *const parts_names[] = {"compute", "exposed communication", "optimizer", "host embeddings"};
    static const char *const parts_colors[] = {"#4878d0", "#ee854a", "#6acc64", "#d65f5f"};
    double mx = 0;
    for (size_t i = 0; i < fig->n_series; i++)
        for (size_t j = 0; j < fig->s[i].n; j++)
            mx = fmax(mx, fig->s[i].pts[j]->error[0] ? 0 : fig->s[i].pts[j]->step.time_s);
    const char *unit;
    double unit_s;
    human_time_unit(mx, &unit, &unit_s);
    char ylabel[64];
    snprintf(ylabel, sizeof ylabel, "time per step (%s)", unit);
    plot_panel p;
    const char *labels[MAX_SLOTS];
    plot_panel_begin(&p, f, x0, y0, PLOT_W, PLOT_H, "Step time breakdown", ylabel, mx / unit_s);
    plot_x_categories(&p, fig->n_slots, slot_labels(fig, labels), x_label(fig));
    /* series side by side in each slot, lettered when there are several */
    double slot_w = PLOT_W / (double)(fig->n_slots ? fig->n_slots : 1);
    size_t per_slot = fig->x == X_SERIES ? 1 : fig->n_series;
    double bw = fmin(40, slot_w * 0.8 / (double)per_slot);
    for (size_t i = 0; i < fig->n_series; i++)
        for (size_t j = 0; j < fig->s[i].n; j++) {
            const run_point *pt = fig->s[i].pts[j];
            double dx = per_slot > 1 ? ((double)i - (per_slot - 1) / 2.0) * bw : 0;
            char letter[4];
            snprintf(letter, sizeof letter, "%c", (char)('A' + i));
            if (pt->error[0]) {
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"#d65f5f\" text-anchor=\"middle\">n/a</text>\n",
                        plot_x(&p, fig->s[i].slot[j]) + dx, y0 + PLOT_H - 4);
                continue;
            }
            double parts[4] = {pt->step.compute_s / unit_s, pt->step.exposed_comm_s / unit_s,
                               pt->step.optimizer_s / unit_s, pt->step.host_embedding_s / unit_s};
            plot_stack(&p, fig->s[i].slot[j], dx, bw * 0.9, 4, parts, parts_colors,
                       per_slot > 1 ? letter : NULL);
        }
    plot_legend(f, x0, y0 + PLOT_H + 62, PLOT_W, 4, parts_names, parts_colors, 0);
}

/* Where a title too wide for w pixels goes on to a second line (after the
 * last ", ", ": " or space that fits), 0 when it fits. Bold text runs wider. */
static size_t title_wrap(const char *title, double w)
{
    size_t n = strlen(title), cut = 0;
    if (1.1 * plot_text_w(n, TITLE_FONT) <= w)
        return 0;
    for (size_t i = 1; i < n && 1.1 * plot_text_w(i, TITLE_FONT) <= w; i++)
        if (title[i - 1] == ' ')
            cut = i;
    return cut;
}

/* The points' series letters, placed so that no two overlap: the letters of
 * points drawn on one another (within a marker) share one label, "AB", each in
 * its colour; a label that would cover another tries the point's other sides,
 * and stays upper right when all are taken. Points off the plot are NAN. */
static void point_letters(FILE *f, const plot_panel *p, const double *x, const double *y, const size_t *who,
                          size_t n)
{
    enum { MAX_POINTS = MAX_SERIES * MAX_SLOTS };
    static const double dx[] = {5, 5, -5, -5, 5, -5}, dy[] = {-5, 13, -5, 13, -16, -16}; /* baseline offsets */
    static const int right_aligned[] = {0, 0, 1, 1, 0, 1};
    const double char_w = 7, font_h = 10; /* font-size 10: a capital is at most 7 wide, 10 high */
    size_t owner[MAX_POINTS], n_labels = 0;
    char letters[MAX_POINTS][MAX_SERIES + 1];
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(x[k]) || !isfinite(y[k]))
            continue;
        size_t g = 0;
        while (g < n_labels && hypot(x[owner[g]] - x[k], y[owner[g]] - y[k]) >= 8)
            g++;
        if (g == n_labels) {
            owner[n_labels] = k;
            letters[n_labels++][0] = '\0';
        }
        char a = (char)('A' + who[k]);
        if (!strchr(letters[g], a) && strlen(letters[g]) < MAX_SERIES)
            strncat(letters[g], &a, 1);
    }
    double bx[MAX_POINTS], by[MAX_POINTS], bw[MAX_POINTS]; /* placed labels' boxes: left, top, width */
    for (size_t g = 0; g < n_labels; g++) {
        double w = char_w * (double)strlen(letters[g]), px = x[owner[g]], py = y[owner[g]];
        size_t side = 0, sides = sizeof dx / sizeof *dx;
        for (; side < sides; side++) {
            double left = right_aligned[side] ? px + dx[side] - w : px + dx[side], top = py + dy[side] - font_h;
            int free = left >= p->x0 && left + w <= p->x0 + p->w && top >= p->y0 - font_h;
            for (size_t h = 0; free && h < g; h++)
                free = left >= bx[h] + bw[h] || left + w <= bx[h] || top >= by[h] + font_h || top + font_h <= by[h];
            if (free)
                break;
        }
        side = side == sides ? 0 : side;
        bx[g] = right_aligned[side] ? px + dx[side] - w : px + dx[side];
        by[g] = py + dy[side] - font_h;
        bw[g] = w;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", bx[g], py + dy[side]);
        for (const char *l = letters[g]; *l; l++)
            fprintf(f, "<tspan fill=\"%s\">%c</tspan>", PLOT_COLORS[(size_t)(*l - 'A') % PLOT_N_COLORS], *l);
        fprintf(f, "</text>\n");
    }
}

/* Every point's cost against its time to accuracy, in its series' colour and
 * letter; the Pareto front joined (fastest to cheapest); the deadline and the
 * budget dashed, the cheapest point within the one and the fastest within the
 * other ringed. */
static void pareto_panel(FILE *f, const figure *fig, const pareto_limits *lim, double x0, double y0)
{
    size_t n = 0;
    double t[MAX_SERIES * MAX_SLOTS] = {0}, c[MAX_SERIES * MAX_SLOTS] = {0}, tmin = INFINITY, tmax = 0, cmax = 0;
    size_t who[MAX_SERIES * MAX_SLOTS], front[MAX_SERIES * MAX_SLOTS];
    for (size_t i = 0; i < fig->n_series; i++)
        for (size_t j = 0; j < fig->s[i].n; j++, n++) {
            const run_point *p = fig->s[i].pts[j];
            t[n] = p->error[0] ? NAN : m_tta(p, fig->owned);
            c[n] = p->error[0] ? NAN : m_cost(p, fig->owned);
            who[n] = i;
            tmax = isfinite(t[n]) ? fmax(tmax, t[n]) : tmax;
            tmin = isfinite(t[n]) && t[n] > 0 ? fmin(tmin, t[n]) : tmin;
            cmax = isfinite(c[n]) ? fmax(cmax, c[n]) : cmax;
        }
    size_t n_front = pareto_front(t, c, n, front);
    long cheapest = lim && lim->deadline_s > 0 ? pareto_cheapest_within(t, c, n, lim->deadline_s) : -1;
    long fastest = lim && lim->budget_usd > 0 ? pareto_fastest_within(t, c, n, lim->budget_usd) : -1;
    if (lim && lim->deadline_s > 0) {
        tmax = fmax(tmax, lim->deadline_s);
        tmin = fmin(tmin, lim->deadline_s);
    }
    if (lim && lim->budget_usd > 0)
        cmax = fmax(cmax, lim->budget_usd);
    const char *unit;
    double unit_s, cscale = cmax >= 2e6 ? 1e6 : cmax >= 2e3 ? 1e3 : 1;
    human_time_unit(tmax, &unit, &unit_s);
    char ylabel[64], xlabel[64];
    snprintf(ylabel, sizeof ylabel, "USD%s", cscale == 1e6 ? " (millions)" : cscale == 1e3 ? " (thousands)" : "");
    int logx = isfinite(tmin) && tmax / tmin > LOG_SPAN / 3.0;
    snprintf(xlabel, sizeof xlabel, "time to accuracy (%s)%s", unit, logx ? ", log scale" : "");
    plot_panel p;
    plot_panel_begin(&p, f, x0, y0, COL2_X + PLOT_W - LEFT_X, PLOT_H,
                     fig->owned ? "Cost (owning) against time to accuracy: the Pareto front joined"
                                : "Cost (renting) against time to accuracy: the Pareto front joined",
                     ylabel, cmax / cscale);
    plot_x_numeric(&p, logx ? tmin / unit_s : 0, tmax / unit_s, xlabel);
    for (size_t k = 1; k < n_front; k++) {
        size_t a = front[k - 1], b = front[k];
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-width=\"1.5\"/>\n",
                plot_xv(&p, t[a] / unit_s), plot_y(&p, c[a] / cscale), plot_xv(&p, t[b] / unit_s),
                plot_y(&p, c[b] / cscale));
    }
    if (lim && lim->deadline_s > 0)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c03030\" stroke-dasharray=\"6 4\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#c03030\" text-anchor=\"end\">deadline</text>\n",
                plot_xv(&p, lim->deadline_s / unit_s), y0, plot_xv(&p, lim->deadline_s / unit_s), y0 + PLOT_H,
                plot_xv(&p, lim->deadline_s / unit_s) - 4, y0 + 14);
    if (lim && lim->budget_usd > 0)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c03030\" stroke-dasharray=\"6 4\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#c03030\" text-anchor=\"end\">budget</text>\n",
                x0, plot_y(&p, lim->budget_usd / cscale), x0 + p.w, plot_y(&p, lim->budget_usd / cscale),
                x0 + p.w - 4, plot_y(&p, lim->budget_usd / cscale) - 4);
    double x[MAX_SERIES * MAX_SLOTS], y[MAX_SERIES * MAX_SLOTS];
    for (size_t k = 0; k < n; k++) {
        x[k] = y[k] = NAN;
        if (!isfinite(t[k]) || !isfinite(c[k]))
            continue;
        x[k] = plot_xv(&p, t[k] / unit_s);
        y[k] = plot_y(&p, c[k] / cscale);
        if ((long)k == cheapest || (long)k == fastest)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"10\" fill=\"none\" stroke=\"#c03030\" stroke-width=\"2\"/>\n",
                    x[k], y[k]);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", x[k], y[k],
                PLOT_COLORS[who[k] % PLOT_N_COLORS]);
    }
    point_letters(f, &p, x, y, who, n);
}

int svg_print_runs(FILE *f, const char *title, const svg_run *runs, size_t n, const pareto_limits *lim,
                   tt_error *err)
{
    figure *fig = calloc(1, sizeof *fig);
    if (!fig)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    build(fig, runs, n);
    /* the series legend first, so its height places the panels */
    char *legend_buf = NULL;
    size_t legend_len = 0;
    FILE *lf = open_memstream(&legend_buf, &legend_len);
    const char *names[MAX_SERIES], *colors[MAX_SERIES];
    char named[MAX_SERIES][220];
    for (size_t i = 0; i < fig->n_series; i++) {
        snprintf(named[i], sizeof named[i], "%c  %s", (char)('A' + i), fig->s[i].name);
        names[i] = named[i];
        colors[i] = PLOT_COLORS[i % PLOT_N_COLORS];
    }
    size_t wrap = title_wrap(title, FIG_W - 48);
    double y = wrap ? 78 : 56;
    y += plot_legend(lf, 24, y, FIG_W - 48, fig->n_series, names, colors, 1);
    if (fig->extrapolated) {
        fprintf(lf, "<circle cx=\"32\" cy=\"%.1f\" r=\"4\" fill=\"white\" stroke=\"#555\" stroke-width=\"2\"/>"
                    "<text x=\"46\" y=\"%.1f\" font-size=\"11\">hollow marker, dashed line: steps to target "
                    "extrapolated beyond the convergence profile's measured batches</text>\n", y - 4, y);
        y += 17;
    }
    fclose(lf);
    double top = y + 40, row2 = top + PLOT_H + 130, row3 = row2 + PLOT_H + 100;
    double height = (n > 1 ? row3 : row2) + PLOT_H + 80;
    /* the viewBox lets a page scale the figure to its width (the HTML report) */
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            FIG_W, height, FIG_W, height);
    fprintf(f, "<text x=\"24\" y=\"30\" font-size=\"%d\" font-weight=\"bold\">", TITLE_FONT);
    char first[512];
    snprintf(first, sizeof first, "%.*s", (int)(wrap ? wrap : strlen(title)), title);
    xml_write_text(f, first);
    if (wrap) {
        fprintf(f, "</text>\n<text x=\"24\" y=\"52\" font-size=\"%d\" font-weight=\"bold\">", TITLE_FONT);
        xml_write_text(f, title + wrap);
    }
    fprintf(f, "</text>\n");
    fwrite(legend_buf, 1, legend_len, f);
    free(legend_buf);
    bars_panel(f, fig, LEFT_X, top);
    const char *unit;
    double unit_s;
    human_time_unit(max_of(fig, m_tta_p90), &unit, &unit_s);
    char ylabel[64];
    snprintf(ylabel, sizeof ylabel, "time to accuracy (%s)", unit);
    lines_panel(f, fig, COL2_X, top, "Time to accuracy (shaded: 10th-90th percentile)", ylabel, m_tta, m_tta_p10,
                m_tta_p90, unit_s);
    double cmax = max_of(fig, m_cost_p90), cscale = cmax >= 2e6 ? 1e6 : cmax >= 2e3 ? 1e3 : 1;
    snprintf(ylabel, sizeof ylabel, "USD%s", cscale == 1e6 ? " (millions)" : cscale == 1e3 ? " (thousands)" : "");
    lines_panel(f, fig, LEFT_X, row2,
                fig->owned ? "Cost to accuracy, owning (capex share + energy)" : "Cost to accuracy, renting",
                ylabel, m_cost, m_cost_p10, m_cost_p90, cscale);
    int eff = fig->x == X_NODES && n == 1 && max_of(fig, m_eff) > 0;
    lines_panel(f, fig, COL2_X, row2, eff ? "Scaling efficiency" : "MFU",
                eff ? "throughput per rank vs the first point (%)" : "model FLOPs utilisation (%)", eff ? m_eff : m_mfu, NULL, NULL, 1);
    if (n > 1)
        pareto_panel(f, fig, lim, LEFT_X, row3);
    fprintf(f, "</svg>\n");
    free(fig);
    return TT_OK;
}

int svg_write_runs(const char *path, const char *title, const svg_run *runs, size_t n, const pareto_limits *lim,
                   tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the SVG file", &o, &f, err);
    if (rc == TT_OK && (rc = svg_print_runs(f, title, runs, n, lim, err)))
        outfile_discard(o);
    return rc ? rc : outfile_commit(o, err);
}

int svg_print(FILE *f, const scenario *sc, const run_result *r, tt_error *err)
{
    char title[512];
    snprintf(title, sizeof title, "%s: %s, %s", sc->name, r->platform, r->model);
    svg_run run = {sc->name, r};
    return svg_print_runs(f, title, &run, 1, NULL, err);
}

int svg_write(const char *path, const scenario *sc, const run_result *r, tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the SVG file", &o, &f, err);
    if (rc == TT_OK && (rc = svg_print(f, sc, r, err)))
        outfile_discard(o);
    return rc ? rc : outfile_commit(o, err);
}
