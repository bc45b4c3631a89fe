/* link_tally.c: per-link byte counts of the flows a simulation posts. */
#include "sim/engine/link_tally.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>

/* A link's slot is kept in its SimGrid user data (index + 1): no lookup. A
 * folded link's count for the link it stands for (owner >= 0) has a slot of
 * its own, added once (link_tally_add_link). */
struct link_tally {
    sg_link_t *link;
    long *owner; /* platform_owner_index, -1: the link itself */
    double *bytes;
    size_t n, cap;
    xbt_dynar_t route;
};

link_tally *link_tally_create(void)
{
    link_tally *t = calloc(1, sizeof *t);
    if (t)
        t->route = xbt_dynar_new(sizeof(sg_link_t), NULL);
    return t;
}

/* A new slot for link l standing for owner; -1 when out of memory. */
static long slot_new(link_tally *t, sg_link_t l, long owner)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        sg_link_t *nl = realloc(t->link, sizeof *nl * cap);
        if (nl)
            t->link = nl;
        long *no = realloc(t->owner, sizeof *no * cap);
        if (no)
            t->owner = no;
        double *nb = realloc(t->bytes, sizeof *nb * cap);
        if (nb)
            t->bytes = nb;
        if (!nl || !no || !nb)
            return -1;
        t->cap = cap;
    }
    t->link[t->n] = l;
    t->owner[t->n] = owner;
    t->bytes[t->n] = 0;
    return (long)t->n++;
}

static long slot_of(link_tally *t, sg_link_t l)
{
    intptr_t k = (intptr_t)sg_link_get_data(l);
    if (k > 0)
        return (long)k - 1;
    long slot = slot_new(t, l, -1);
    if (slot >= 0)
        sg_link_set_data(l, (void *)(intptr_t)(slot + 1));
    return slot;
}

int link_tally_add_link(link_tally *t, sg_link_t l, long owner, double bytes)
{
    long k = owner < 0 ? slot_of(t, l) : slot_new(t, l, owner);
    if (k < 0)
        return -1;
    t->bytes[k] += bytes;
    return 0;
}

int link_tally_add(link_tally *t, sg_host_t src, sg_host_t dst, double bytes, double times)
{
    if (bytes <= 0 || src == dst)
        return 0;
    xbt_dynar_reset(t->route);
    sg_host_get_route(src, dst, t->route);
    for (unsigned long i = 0; i < xbt_dynar_length(t->route); i++)
        if (link_tally_add_link(t, xbt_dynar_get_as(t->route, i, sg_link_t), -1, bytes * times))
            return -1;
    return 0;
}

int link_tally_finish(link_tally *t, const platform *p, link_usage *out)
{
    memset(out, 0, sizeof *out);
    link_use *all = calloc(t->n + 1, sizeof *all);
    int n = 0;
    for (size_t i = 0; all && i < t->n; i++) {
        sg_link_set_data(t->link[i], NULL);
        if (t->bytes[i] <= 0)
            continue;
        double bw = sg_link_get_bandwidth(t->link[i]);
        char name[sizeof all[n].link.name];
        platform_owner_link_name(p, sg_link_get_name(t->link[i]), t->owner[i], name, sizeof name);
        platform_link_describe(p, name, &all[n].link);
        all[n].bytes = t->bytes[i];
        all[n].busy_s = bw > 0 ? t->bytes[i] / bw : 0;
        link_usage_add_class(out, all[n].link.cls, all[n].bytes, all[n].busy_s);
        n++;
    }
    out->links_used = n;
    if (all) {
        link_usage_sort(all, &n);
        memcpy(out->top, all, sizeof *all * (size_t)n);
        out->n = n;
    }
    free(all);
    xbt_dynar_free(&t->route);
    free(t->link);
    free(t->owner);
    free(t->bytes);
    free(t);
    return all ? 0 : -1;
}
