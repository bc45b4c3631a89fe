#include "sim/report/plot.h"

#include <math.h>
#include <string.h>

#include "sim/report/xml.h"

const char *const PLOT_COLORS[PLOT_N_COLORS] = {"#4878d0", "#ee854a", "#6acc64", "#d65f5f",
                                                "#956cb4", "#8c613c", "#dc7ec0", "#797979"};

#define TICK_FONT 11.0
#define TITLE_FONT 13.0

double plot_text_w(size_t n, double px)
{
    return 0.6 * px * (double)n;
}

void plot_nice_axis(double max, double *step, double *top)
{
    if (!(max > 0) || !isfinite(max))
        max = 1;
    static const double mult[] = {1, 2, 2.5, 5, 10};
    double mag = pow(10, floor(log10(max / 6)));
    for (int i = 0; i < 5; i++) {
        *step = mult[i] * mag;
        if (ceil(max / *step - 1e-9) <= 6)
            break;
    }
    *top = ceil(max / *step - 1e-9) * *step;
}

/* A tick value with as many decimals as the step needs (0.25 -> 2), never 1e+03 style. */
static void tick_text(double v, double step, char *buf, size_t n)
{
    int dec = 0;
    while (dec < 6 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-6 * step * pow(10, dec))
        dec++;
    snprintf(buf, n, "%.*f", dec, v);
}

static void panel_open(plot_panel *p, FILE *f, double x0, double y0, double w, double h, const char *title)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->x0 = x0;
    p->y0 = y0;
    p->w = w;
    p->h = h;
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" font-weight=\"bold\">", x0, y0 - 12, TITLE_FONT);
    xml_write_text(f, title);
    fprintf(f, "</text>\n");
}

static void tick(const plot_panel *p, double v, double step)
{
    double y = plot_y(p, v);
    char t[32];
    tick_text(v, step, t, sizeof t);
    fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", p->x0, y,
            p->x0 + p->w, y);
    fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" text-anchor=\"end\">%s</text>\n", p->x0 - 5,
            y + 4, TICK_FONT, t);
}

static void panel_frame(plot_panel *p, const char *ylabel)
{
    FILE *f = p->f;
    double x0 = p->x0, y0 = p->y0, w = p->w, h = p->h;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", x0, y0,
            w, h);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\">",
            x0 - 48, y0 + h / 2, TICK_FONT + 1, x0 - 48, y0 + h / 2);
    xml_write_text(f, ylabel);
    fprintf(f, "</text>\n");
}

void plot_panel_begin(plot_panel *p, FILE *f, double x0, double y0, double w, double h, const char *title,
                      const char *ylabel, double ymax_data)
{
    panel_open(p, f, x0, y0, w, h, title);
    double step;
    plot_nice_axis(ymax_data, &step, &p->ymax);
    for (int i = 0; step * i <= p->ymax + 1e-9 * p->ymax; i++)
        tick(p, step * i, step);
    panel_frame(p, ylabel);
}

void plot_panel_begin_log(plot_panel *p, FILE *f, double x0, double y0, double w, double h, const char *title,
                          const char *ylabel, double ymin_data, double ymax_data)
{
    static const double mult[] = {1, 2, 5};
    panel_open(p, f, x0, y0, w, h, title);
    double lo = pow(10, floor(log10(ymin_data))), hi = pow(10, ceil(log10(ymax_data)));
    p->ymin = lo;
    p->ymax = hi;
    for (double d = lo; d < hi * 1.5; d *= 10)
        for (int i = 0; i < 3 && d * mult[i] <= hi * (1 + 1e-9); i++)
            tick(p, d * mult[i], d * mult[i]);
    panel_frame(p, ylabel);
}

double plot_x(const plot_panel *p, size_t i)
{
    return p->x0 + p->w * ((double)i + 0.5) / (double)(p->n_x ? p->n_x : 1);
}

double plot_y(const plot_panel *p, double v)
{
    if (p->ymin > 0) /* logarithmic: a value at or below the bottom sits on it */
        return p->y0 + p->h - p->h * log(fmax(v, p->ymin) / p->ymin) / log(p->ymax / p->ymin);
    return p->y0 + p->h - p->h * v / p->ymax;
}

void plot_x_categories(plot_panel *p, size_t n, const char *const *labels, const char *xlabel)
{
    p->n_x = n;
    double slot = p->w / (double)(n ? n : 1);
    size_t longest = 1;
    for (size_t i = 0; i < n; i++)
        longest = strlen(labels[i]) > longest ? strlen(labels[i]) : longest;
    double need = plot_text_w(longest, TICK_FONT) + 6;
    int slant = need > slot;
    /* slanted labels still need a line height apart: thin them out */
    size_t every = slant ? (size_t)ceil((TICK_FONT + 3) * 1.5 / slot) : 1;
    if (every < 1)
        every = 1;
    for (size_t i = 0; i < n; i += every) {
        double x = plot_x(p, i), y = p->y0 + p->h + 15;
        fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", x, p->y0 + p->h, x,
                p->y0 + p->h + 4);
        if (slant)
            fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" text-anchor=\"end\" "
                          "transform=\"rotate(-35 %.1f %.1f)\">", x + 3, y, TICK_FONT, x + 3, y);
        else
            fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" text-anchor=\"middle\">", x, y, TICK_FONT);
        xml_write_text(p->f, labels[i]);
        fprintf(p->f, "</text>\n");
    }
    double below = slant ? plot_text_w(longest, TICK_FONT) * 0.6 + 22 : 34;
    fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" text-anchor=\"middle\">", p->x0 + p->w / 2,
            p->y0 + p->h + below, TICK_FONT + 1);
    xml_write_text(p->f, xlabel);
    fprintf(p->f, "</text>\n");
}

static void x_tick(const plot_panel *p, double v, double step)
{
    double x = plot_xv(p, v);
    char t[32];
    tick_text(v, step, t, sizeof t);
    fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", x, p->y0, x,
            p->y0 + p->h);
    fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" text-anchor=\"middle\">%s</text>\n", x,
            p->y0 + p->h + 15, TICK_FONT, t);
}

void plot_x_numeric(plot_panel *p, double xmin_data, double xmax_data, const char *xlabel)
{
    static const double mult[] = {1, 2, 5};
    double step;
    if (xmin_data > 0) {
        p->xmin = pow(10, floor(log10(xmin_data)));
        p->xmax = pow(10, ceil(log10(xmax_data)));
        for (double d = p->xmin; d < p->xmax * 1.5; d *= 10)
            for (int i = 0; i < 3 && d * mult[i] <= p->xmax * (1 + 1e-9); i++)
                x_tick(p, d * mult[i], d * mult[i]);
    } else {
        plot_nice_axis(xmax_data, &step, &p->xmax);
        for (int i = 0; step * i <= p->xmax + 1e-9 * p->xmax; i++)
            x_tick(p, step * i, step);
    }
    fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" text-anchor=\"middle\">", p->x0 + p->w / 2,
            p->y0 + p->h + 34, TICK_FONT + 1);
    xml_write_text(p->f, xlabel);
    fprintf(p->f, "</text>\n");
}

double plot_xv(const plot_panel *p, double v)
{
    if (p->xmin > 0)
        return p->x0 + p->w * log(fmax(v, p->xmin) / p->xmin) / log(p->xmax / p->xmin);
    return p->x0 + p->w * v / p->xmax;
}

void plot_line(const plot_panel *p, size_t n, const size_t *xs, const double *ys, const int *marked,
               const char *color, int dashed)
{
    for (size_t i = 1; i < n; i++) {
        if (isnan(ys[i - 1]) || isnan(ys[i]))
            continue;
        int dash = dashed || (marked && (marked[i] || marked[i - 1]));
        fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                plot_x(p, xs[i - 1]), plot_y(p, ys[i - 1]), plot_x(p, xs[i]), plot_y(p, ys[i]), color,
                dash ? " stroke-dasharray=\"5 4\"" : "");
    }
    for (size_t i = 0; i < n; i++)
        if (!isnan(ys[i]))
            fprintf(p->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                    plot_x(p, xs[i]), plot_y(p, ys[i]), marked && marked[i] ? "white" : color, color);
}

void plot_band(const plot_panel *p, size_t n, const size_t *xs, const double *lo, const double *hi,
               const char *color)
{
    for (size_t i = 1; i < n; i++) { /* one quadrilateral per segment, so a NaN only drops its segments */
        if (isnan(lo[i - 1]) || isnan(lo[i]) || isnan(hi[i - 1]) || isnan(hi[i]))
            continue;
        fprintf(p->f, "<polygon fill=\"%s\" fill-opacity=\"0.2\" stroke=\"none\" points=\"%.1f,%.1f %.1f,%.1f "
                      "%.1f,%.1f %.1f,%.1f\"/>\n",
                color, plot_x(p, xs[i - 1]), plot_y(p, hi[i - 1]), plot_x(p, xs[i]), plot_y(p, hi[i]),
                plot_x(p, xs[i]), plot_y(p, lo[i]), plot_x(p, xs[i - 1]), plot_y(p, lo[i - 1]));
    }
}

void plot_stack(const plot_panel *p, size_t slot, double dx, double bw, size_t n_parts, const double *parts,
                const char *const *colors, const char *top_text)
{
    double x = plot_x(p, slot) + dx - bw / 2, base = 0;
    for (size_t k = 0; k < n_parts; k++) {
        if (parts[k] > 0)
            fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"/>\n", x,
                    plot_y(p, base + parts[k]), bw, plot_y(p, base) - plot_y(p, base + parts[k]), colors[k]);
        base += parts[k] > 0 ? parts[k] : 0;
    }
    if (top_text)
        fprintf(p->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n", x + bw / 2,
                plot_y(p, base) - 3, top_text);
}

double plot_legend(FILE *f, double x, double y, double w, size_t n, const char *const *names,
                   const char *const *colors, int lines)
{
    double cx = x, row = 0, line_h = 17;
    for (size_t i = 0; i < n; i++) {
        double ew = 22 + plot_text_w(strlen(names[i]), TICK_FONT) + 14;
        if (cx > x && cx + ew > x + w) {
            cx = x;
            row++;
        }
        double cy = y + row * line_h;
        if (lines)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n", cx,
                    cy - 4, cx + 16, cy - 4, colors[i]);
        else
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", cx + 2, cy - 10,
                    colors[i]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\">", cx + 22, cy, TICK_FONT);
        xml_write_text(f, names[i]);
        fprintf(f, "</text>\n");
        cx += ew;
    }
    return (row + 1) * line_h;
}
