#include "platforms/platform.h"

#include <stdlib.h>

struct platform {
    switched_spec spec;
};

platform *platform_new_switched(const switched_spec *spec, tt_error *err)
{
    if (spec->nodes < 1 || spec->accelerators_per_node < 1) {
        tt_error_set(err, TT_EINPUT, "a cluster needs at least one node and one accelerator per node");
        return NULL;
    }
    platform *p = calloc(1, sizeof *p);
    if (!p) {
        tt_error_set(err, TT_EINTERNAL, "out of memory");
        return NULL;
    }
    p->spec = *spec;
    return p;
}

void platform_free(platform *p)
{
    free(p);
}

int platform_ranks(const platform *p)
{
    return p->spec.nodes * p->spec.accelerators_per_node;
}

const char *platform_rank_host(const platform *p, int rank, char *buf, size_t buf_bytes)
{
    (void)p;
    snprintf(buf, buf_bytes, "acc-%d", rank);
    return buf;
}

static int node_of(const platform *p, int rank)
{
    return rank / p->spec.accelerators_per_node;
}

void platform_path(const platform *p, int a, int b, double *latency_s, double *bw_Bps)
{
    const switched_spec *s = &p->spec;
    if (a == b) {
        *latency_s = 0;
        *bw_Bps = 0;
        return;
    }
    *latency_s = 2 * s->intra_latency_s;
    *bw_Bps = s->intra_bw_Bps;
    if (node_of(p, a) != node_of(p, b)) {
        *latency_s += 2 * s->inter_latency_s;
        if (s->inter_bw_Bps < *bw_Bps)
            *bw_Bps = s->inter_bw_Bps;
    }
}

/* Full-duplex links are written as two links, one per direction, so flows in
 * opposite directions never share bandwidth. */
int platform_write_xml(const platform *p, FILE *out, tt_error *err)
{
    const switched_spec *s = &p->spec;
    int n = platform_ranks(p);
    fprintf(out, "<?xml version='1.0'?>\n"
                 "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version=\"4.1\">\n<zone id=\"cluster\" routing=\"Full\">\n");
    for (int r = 0; r < n; r++)
        fprintf(out, "  <host id=\"acc-%d\" speed=\"%.17gf\"/>\n", r, s->accelerator_flops);
    for (int r = 0; r < n; r++)
        for (int d = 0; d < 2; d++)
            fprintf(out, "  <link id=\"acc-%d-%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n", r,
                    d ? "down" : "up", s->intra_bw_Bps, s->intra_latency_s);
    if (s->nodes > 1)
        for (int k = 0; k < s->nodes; k++)
            for (int d = 0; d < 2; d++)
                fprintf(out, "  <link id=\"node-%d-%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n", k,
                        d ? "down" : "up", s->inter_bw_Bps, s->inter_latency_s);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            fprintf(out, "  <route src=\"acc-%d\" dst=\"acc-%d\" symmetrical=\"NO\"><link_ctn id=\"acc-%d-up\"/>", a, b, a);
            if (node_of(p, a) != node_of(p, b))
                fprintf(out, "<link_ctn id=\"node-%d-up\"/><link_ctn id=\"node-%d-down\"/>", node_of(p, a), node_of(p, b));
            fprintf(out, "<link_ctn id=\"acc-%d-down\"/></route>\n", b);
        }
    fprintf(out, "</zone>\n</platform>\n");
    if (ferror(out))
        return tt_error_set(err, TT_EINPUT, "could not write the platform XML");
    return TT_OK;
}
