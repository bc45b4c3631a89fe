/* link_usage.c: merging and ranking link loads (no SimGrid: plain data). */
#include "platforms/link_usage.h"

#include <stdlib.h>
#include <string.h>

static int busier_first(const void *a, const void *b)
{
    const link_use *x = a, *y = b;
    if (x->busy_s != y->busy_s)
        return x->busy_s > y->busy_s ? -1 : 1;
    return strcmp(x->link.name, y->link.name);
}

void link_usage_sort(link_use *links, int *n)
{
    qsort(links, (size_t)*n, sizeof *links, busier_first);
    if (*n > LINK_USAGE_MAX)
        *n = LINK_USAGE_MAX;
}

void link_usage_add(link_usage *into, const link_usage *from, double scale)
{
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
    if (from->links_used > into->links_used)
        into->links_used = from->links_used;
}
