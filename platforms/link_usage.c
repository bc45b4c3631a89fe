/* link_usage.c: merging and ranking link loads (no SimGrid: plain data). */
#include "platforms/link_usage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int busier_first(const void *a, const void *b)
{
    const link_use *x = a, *y = b;
    if (x->busy_s != y->busy_s)
        return x->busy_s > y->busy_s ? -1 : 1;
    if (x->bytes != y->bytes) /* equally busy: the narrower link first (a NIC before the bundle it feeds) */
        return x->bytes < y->bytes ? -1 : 1;
    return strcmp(x->link.name, y->link.name);
}

void link_usage_sort(link_use *links, int *n)
{
    qsort(links, (size_t)*n, sizeof *links, busier_first);
    if (*n > LINK_USAGE_MAX)
        *n = LINK_USAGE_MAX;
}

/* The slot of class cls, appended empty if new; -1 when LINK_CLASSES_MAX are taken. */
static int class_slot(link_usage *u, const char *cls)
{
    int j = 0;
    while (j < u->n_classes && strcmp(u->classes[j].cls, cls) != 0)
        j++;
    if (j == LINK_CLASSES_MAX)
        return -1;
    if (j == u->n_classes) {
        memset(&u->classes[j], 0, sizeof u->classes[j]);
        snprintf(u->classes[j].cls, sizeof u->classes[j].cls, "%s", cls);
        u->n_classes++;
    }
    return j;
}

void link_usage_add_class(link_usage *u, const char *cls, double bytes, double busy_s)
{
    int j = class_slot(u, cls);
    if (j < 0)
        return;
    u->classes[j].links++;
    u->classes[j].bytes += bytes;
    u->classes[j].busiest_s = fmax(u->classes[j].busiest_s, busy_s);
}

void link_usage_add(link_usage *into, const link_usage *from, double scale)
{
    for (int i = 0; i < from->n_classes; i++) {
        const link_class_use *c = &from->classes[i];
        int j = class_slot(into, c->cls);
        if (j < 0)
            continue;
        into->classes[j].links = into->classes[j].links > c->links ? into->classes[j].links : c->links;
        into->classes[j].bytes += scale * c->bytes;
        into->classes[j].busiest_s = fmax(into->classes[j].busiest_s, scale * c->busiest_s);
    }
    link_use all[2 * LINK_USAGE_MAX];
    int n = into->n;
    memcpy(all, into->top, sizeof *all * (size_t)n);
    for (int i = 0; i < from->n; i++) {
        int j = 0;
        while (j < n && strcmp(all[j].link.name, from->top[i].link.name) != 0)
            j++;
        if (j == n)
            all[n++] = (link_use){from->top[i].link, 0, 0};
        all[j].bytes += scale * from->top[i].bytes;
        all[j].busy_s += scale * from->top[i].busy_s;
    }
    link_usage_sort(all, &n);
    memcpy(into->top, all, sizeof *all * (size_t)n);
    into->n = n;
    for (int j = 0; j < into->n_classes; j++) /* a kept link's merged load is exact */
        for (int i = 0; i < n; i++)
            if (strcmp(all[i].link.cls, into->classes[j].cls) == 0)
                into->classes[j].busiest_s = fmax(into->classes[j].busiest_s, all[i].busy_s);
    if (from->links_used > into->links_used)
        into->links_used = from->links_used;
}
