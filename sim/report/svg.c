#include "sim/report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/outfile.h"
#include "sim/report/xml.h"

#define PANEL_W 440
#define PANEL_H 280
#define MARGIN_L 70
#define MARGIN_B 50
#define MARGIN_T 30

typedef struct panel {
    FILE *f;
    double x0, y0; /* panel's top-left corner */
    double w, h;   /* plot area */
} panel;

static void panel_begin(panel *p, FILE *f, int col, int row, const char *title, const char *ylabel,
                        const char *xlabel)
{
    p->f = f;
    p->x0 = col * PANEL_W + MARGIN_L;
    p->y0 = 40 + row * PANEL_H + MARGIN_T;
    p->w = PANEL_W - MARGIN_L - 20;
    p->h = PANEL_H - MARGIN_T - MARGIN_B;
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">%s</text>\n", p->x0, p->y0 - 10, title);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n",
            p->x0, p->y0, p->w, p->h);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n",
            p->x0 + p->w / 2, p->y0 + p->h + 38, xlabel);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" transform=\"rotate(-90 %.1f %.1f)\" "
               "text-anchor=\"middle\">%s</text>\n",
            p->x0 - 55, p->y0 + p->h / 2, p->x0 - 55, p->y0 + p->h / 2, ylabel);
}

static void y_ticks(const panel *p, double ymax)
{
    for (int i = 0; i <= 4; i++) {
        double v = ymax * i / 4, y = p->y0 + p->h - p->h * i / 4;
        fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.3g</text>\n",
                p->x0 - 4, y + 3, v);
    }
}

typedef struct series {
    size_t n;
    const run_point *pts;
    int by_nodes; /* x = nodes, else global batch */
} series;

static double xval(const series *s, size_t i)
{
    return s->by_nodes ? s->pts[i].nodes : (double)s->pts[i].global_batch;
}

static double xpos(const panel *p, const series *s, size_t i)
{
    double lo = xval(s, 0), hi = xval(s, 0);
    for (size_t k = 1; k < s->n; k++) {
        lo = fmin(lo, xval(s, k));
        hi = fmax(hi, xval(s, k));
    }
    if (hi <= lo)
        return p->x0 + p->w / 2;
    return p->x0 + 20 + (p->w - 40) * log(xval(s, i) / lo) / log(hi / lo); /* log axis */
}

static void line_panel(panel *p, const series *s, double (*get)(const run_point *), const char *color)
{
    double ymax = 0;
    for (size_t i = 0; i < s->n; i++)
        ymax = fmax(ymax, get(&s->pts[i]));
    ymax = ymax > 0 ? ymax * 1.1 : 1;
    y_ticks(p, ymax);
    fprintf(p->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
    for (size_t i = 0; i < s->n; i++)
        fprintf(p->f, "%.1f,%.1f ", xpos(p, s, i), p->y0 + p->h - p->h * get(&s->pts[i]) / ymax);
    fprintf(p->f, "\"/>\n");
    for (size_t i = 0; i < s->n; i++) {
        double x = xpos(p, s, i);
        fprintf(p->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x,
                p->y0 + p->h - p->h * get(&s->pts[i]) / ymax, color);
        fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%.6g</text>\n", x,
                p->y0 + p->h + 14, xval(s, i));
    }
}

static double get_tta_h(const run_point *p) { return p->time_to_accuracy_s / 3600; }
static double get_cost(const run_point *p) { return p->total.usd; }
static double get_eff(const run_point *p) { return p->scaling_efficiency > 0 ? p->scaling_efficiency : p->step.mfu; }

static void bars_panel(panel *p, const series *s)
{
    static const char *const colors[] = {"#4878d0", "#ee854a", "#6acc64", "#d65f5f"};
    static const char *const names[] = {"compute", "exposed comm", "optimizer", "host embeddings"};
    double ymax = 0;
    for (size_t i = 0; i < s->n; i++)
        ymax = fmax(ymax, s->pts[i].step.time_s);
    ymax = ymax > 0 ? ymax * 1.1 : 1;
    y_ticks(p, ymax);
    double slot = p->w / (double)s->n, bw = fmin(slot * 0.7, 60);
    for (size_t i = 0; i < s->n; i++) {
        const step_result *r = &s->pts[i].step;
        double parts[4] = {r->compute_s, r->exposed_comm_s, r->optimizer_s, r->host_embedding_s};
        double x = p->x0 + slot * (i + 0.5) - bw / 2, base = p->y0 + p->h;
        for (int k = 0; k < 4; k++) {
            double hh = p->h * parts[k] / ymax;
            base -= hh;
            fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"/>\n", x, base,
                    bw, hh, colors[k]);
        }
        fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%.6g</text>\n",
                x + bw / 2, p->y0 + p->h + 14, xval(s, i));
    }
    for (int k = 0; k < 4; k++)
        fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%s</text>\n",
                p->x0 + 8 + 90 * k, p->y0 + 6, colors[k], p->x0 + 22 + 90 * k, p->y0 + 15, names[k]);
}

int svg_write(const char *path, const scenario *sc, const run_result *r, tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the SVG file", &o, &f, err);
    if (rc)
        return rc;
    series s = {r->n_points ? r->n_points : 1, r->n_points ? r->points : &r->base, 0};
    s.by_nodes = sc->n_sweep_nodes > 1 && sc->n_sweep_batch <= 1;
    const char *xlabel = s.by_nodes ? "nodes" : "global batch";
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            2 * PANEL_W, 2 * PANEL_H + 50);
    fprintf(f, "<text x=\"20\" y=\"24\" font-size=\"15\">");
    xml_write_text(f, sc->name);
    fprintf(f, ": %s, %s</text>\n", r->platform, r->model);
    panel p;
    panel_begin(&p, f, 0, 0, "step time breakdown (s)", "seconds per step", xlabel);
    bars_panel(&p, &s);
    panel_begin(&p, f, 1, 0, "time to accuracy (h)", "hours", xlabel);
    line_panel(&p, &s, get_tta_h, "#4878d0");
    panel_begin(&p, f, 0, 1, "cost to accuracy (USD)", "USD", xlabel);
    line_panel(&p, &s, get_cost, "#d65f5f");
    panel_begin(&p, f, 1, 1, s.by_nodes ? "scaling efficiency" : "MFU", s.by_nodes ? "efficiency" : "MFU", xlabel);
    line_panel(&p, &s, get_eff, "#6acc64");
    fprintf(f, "</svg>\n");
    return outfile_commit(o, err);
}
