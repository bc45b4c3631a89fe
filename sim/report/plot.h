/* plot.h: the pieces of a chart in SVG that every figure of ttasim shares:
 * panels with round ticks (1, 2, 2.5, 5 x 10^k) from zero, category x axes
 * whose labels never collide (thinned, then slanted), lines with markers
 * (hollow and dashed where a point is marked, e.g. extrapolated), stacked
 * bars, and legends laid out in rows outside the data. */
#ifndef TT_PLOT_H
#define TT_PLOT_H

#include <stddef.h>
#include <stdio.h>

/* Distinct colours for series and bar parts (colour-blind friendly). */
extern const char *const PLOT_COLORS[];
#define PLOT_N_COLORS 8

typedef struct plot_panel {
    FILE *f;
    double x0, y0, w, h; /* plot area, SVG pixels */
    double ymax;         /* top of the y axis, in the data's (scaled) unit */
    double ymin;         /* bottom of a logarithmic y axis (0: linear from 0) */
    size_t n_x;          /* x categories */
    double xmax;         /* a numeric x axis's right end (plot_x_numeric), in the data's (scaled) unit */
    double xmin;         /* its left end when logarithmic (0: linear from 0) */
} plot_panel;

/* Width of a text of n characters at font size px (for layout, approximate). */
double plot_text_w(size_t n, double px);

/* Round axis: a tick step and a top (a multiple of it) holding max with at most 6 ticks. */
void plot_nice_axis(double max, double *step, double *top);

/* A panel: its frame, title above and y label; the y axis from 0 to a round
 * top over ymax_data (in the axis's unit), with grid lines and tick labels. */
void plot_panel_begin(plot_panel *p, FILE *f, double x0, double y0, double w, double h, const char *title,
                      const char *ylabel, double ymax_data);

/* The same with a logarithmic y axis over [ymin_data, ymax_data] (both > 0),
 * ticks at 1, 2 and 5 x 10^k: for values spanning orders of magnitude. */
void plot_panel_begin_log(plot_panel *p, FILE *f, double x0, double y0, double w, double h, const char *title,
                          const char *ylabel, double ymin_data, double ymax_data);

/* The x axis: n categories (equal slots) and their labels, then the axis label. */
void plot_x_categories(plot_panel *p, size_t n, const char *const *labels, const char *xlabel);

/* A numeric x axis from 0 to a round right end over xmax_data (in the
 * axis's unit), or logarithmic over [xmin_data, xmax_data] when xmin_data
 * > 0 (ticks at 1, 2 and 5 x 10^k): ticks, grid lines and the axis label;
 * plot_xv places values. */
void plot_x_numeric(plot_panel *p, double xmin_data, double xmax_data, const char *xlabel);
double plot_xv(const plot_panel *p, double v);

/* Centre of x slot i. */
double plot_x(const plot_panel *p, size_t i);
double plot_y(const plot_panel *p, double v);

/* A line over slots xs[i] with values ys[i] (NaN: no point); marked[i]
 * draws a hollow marker and a dashed segment into it. */
void plot_line(const plot_panel *p, size_t n, const size_t *xs, const double *ys, const int *marked,
               const char *color, int dashed);

/* A shaded band between lo[i] and hi[i] over slots xs[i] (NaN: a gap ends it). */
void plot_band(const plot_panel *p, size_t n, const size_t *xs, const double *lo, const double *hi,
               const char *color);

/* One stacked bar in slot i, at offset dx (pixels) from its centre, width bw. */
void plot_stack(const plot_panel *p, size_t slot, double dx, double bw, size_t n_parts, const double *parts,
                const char *const *colors, const char *top_text);

/* A legend in rows from (x, y) within width w: a swatch (a line when `lines`)
 * and a name per entry; returns the height used. */
double plot_legend(FILE *f, double x, double y, double w, size_t n, const char *const *names,
                   const char *const *colors, int lines);

#endif
