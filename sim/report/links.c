/* links.c: the busiest links as text and JSON (links.h). */
#include "sim/report/links.h"

static double utilisation(const link_use *l, double interval_s)
{
    return interval_s > 0 ? l->busy_s / interval_s : 0;
}

void links_report_text(FILE *out, const link_usage *u, double interval_s, const char *what, int n)
{
    n = n < u->n ? n : u->n;
    if (u->n == 0) {
        fprintf(out, "links           none carried data in the %s\n", what);
        return;
    }
    const link_use *b = &u->top[0];
    fprintf(out, "bottleneck      %s (%s -> %s, %.1f %% busy over the %s of %.6g us)\n", b->link.cls, b->link.from,
            b->link.to, 100 * utilisation(b, interval_s), what, interval_s * 1e6);
    fprintf(out, "  %-12s %6s %14s %10s\n", "class", "links", "bytes", "busiest");
    for (int i = 0; i < u->n_classes; i++)
        fprintf(out, "  %-12s %6ld %14.6g %9.1f%%\n", u->classes[i].cls, u->classes[i].links, u->classes[i].bytes,
                interval_s > 0 ? 100 * u->classes[i].busiest_s / interval_s : 0);
    fprintf(out, "busiest links   %d of %ld that carried data (per direction; busy = bytes / the link's rate, its "
            "payload rate when calibrated)\n", n, u->links_used);
    fprintf(out, "  %-12s %-22s %-22s %14s %12s %7s\n", "class", "from", "to", "bytes", "busy(us)", "util");
    for (int i = 0; i < n; i++) {
        const link_use *l = &u->top[i];
        fprintf(out, "  %-12s %-22s %-22s %14.6g %12.4f %6.1f%%\n", l->link.cls, l->link.from, l->link.to, l->bytes,
                l->busy_s * 1e6, 100 * utilisation(l, interval_s));
    }
}

json_t *links_report_json(const link_usage *u, double interval_s, const char *what, int n)
{
    n = n < u->n ? n : u->n;
    json_t *list = json_array();
    for (int i = 0; i < n; i++) {
        const link_use *l = &u->top[i];
        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f}", "class", l->link.cls, "from",
                                              l->link.from, "to", l->link.to, "link", l->link.name, "bytes",
                                              l->bytes, "busy_s", l->busy_s, "utilisation",
                                              utilisation(l, interval_s)));
    }
    json_t *bottleneck = json_null();
    if (u->n > 0)
        bottleneck = json_pack("{s:s, s:s, s:s, s:f}", "class", u->top[0].link.cls, "from", u->top[0].link.from,
                               "to", u->top[0].link.to, "utilisation", utilisation(&u->top[0], interval_s));
    json_t *classes = json_array();
    for (int i = 0; i < u->n_classes; i++)
        json_array_append_new(classes, json_pack("{s:s, s:I, s:f, s:f}", "class", u->classes[i].cls, "links",
                                                 (json_int_t)u->classes[i].links, "bytes", u->classes[i].bytes,
                                                 "busiest_utilisation",
                                                 interval_s > 0 ? u->classes[i].busiest_s / interval_s : 0));
    return json_pack("{s:s, s:f, s:I, s:o, s:o, s:o}", "over", what, "interval_s", interval_s, "links_used",
                     (json_int_t)u->links_used, "bottleneck", bottleneck, "classes", classes, "links", list);
}
