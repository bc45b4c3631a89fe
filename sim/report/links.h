/* links.h: the `--links N` report: the N busiest links of a collective or
 * of a training step, and the bottleneck class (the class of the busiest). */
#ifndef TT_LINKS_H
#define TT_LINKS_H

#include <jansson.h>
#include <stdio.h>

#include "platforms/link_usage.h"

/* interval_s: what utilisation is measured over (the collective's or the
 * step's time); what names it ("collective", "step"). */
void links_report_text(FILE *out, const link_usage *u, double interval_s, const char *what, int n);
/* {"over", "interval_s", "links_used", "bottleneck": {class, from, to,
 * utilisation} or null, "classes": [{class, links, bytes,
 * busiest_utilisation}], "links": [{class, from, to, link, bytes, busy_s,
 * utilisation}]} */
json_t *links_report_json(const link_usage *u, double interval_s, const char *what, int n);

#endif
