/* A platform as a SimGrid 4.1 XML document.
 * Flat platforms (tori, one-accelerator nodes) are one <cluster>: SimGrid
 * routes TORUS / FAT_TREE / FLAT clusters in closed form, so 4,096 hosts load
 * in milliseconds. Other platforms are a Floyd zone holding one Full zone per
 * node (explicit routes, computed in platform.c) and the fabric as a cluster
 * of node ports. Links are SPLITDUPLEX: the two directions never share. */
#include "platforms/platform.h"

#include "platforms/platform_impl.h"

static void cluster_topology(const platform *p, FILE *out)
{
    if (p->fabric == FABRIC_TORUS) {
        fprintf(out, " topology=\"TORUS\" topo_parameters=\"");
        for (int d = 0; d < p->ndims; d++)
            fprintf(out, "%s%d", d ? "," : "", p->dims[d]);
        fprintf(out, "\"");
    } else if ((p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL) && p->levels > 1) {
        /* levels;down per level;up per level;parallel links per level */
        fprintf(out, " topology=\"FAT_TREE\" topo_parameters=\"%d;", p->levels);
        for (int l = 0; l < p->levels; l++)
            fprintf(out, "%s%d", l ? "," : "", p->down[l]);
        fprintf(out, ";");
        for (int l = 0; l < p->levels; l++)
            fprintf(out, "%s%d", l ? "," : "", p->up[l]);
        fprintf(out, ";");
        for (int l = 0; l < p->levels; l++)
            fprintf(out, "%s1", l ? "," : "");
        fprintf(out, "\"");
    } else {
        fprintf(out, " topology=\"FLAT\"");
    }
}

/* Hosts in the cluster: a fat tree has all its ports, used or not. */
static long cluster_hosts(const platform *p, int members)
{
    if ((p->fabric == FABRIC_FATTREE || p->fabric == FABRIC_RAIL) && p->levels > 1) {
        long m = 1;
        for (int l = 0; l < p->levels; l++)
            m *= p->down[l];
        return m;
    }
    return members;
}

static void write_cluster(const platform *p, FILE *out, const char *id, const char *prefix,
                          int members, double speed_flops, double bw_Bps)
{
    fprintf(out, "<cluster id=\"%s\" prefix=\"%s\" suffix=\"\" radical=\"0-%ld\" speed=\"%.17gf\" "
                 "bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"",
            id, prefix, cluster_hosts(p, members) - 1, speed_flops, bw_Bps, p->fab_lat_s);
    cluster_topology(p, out);
    fprintf(out, "/>\n");
}

static int is_host(const platform *p, int c)
{
    return p->comp[c].dev->kind != DEVICE_SWITCH;
}

static double host_speed(const platform *p, int c)
{
    double f = p->comp[c].dev->peak_flops[DTYPE_FP32];
    return f > 0 ? f : 1; /* NICs compute nothing; SimGrid wants a speed */
}

/* The links from u to v along u's routing tree, in travel order. */
static void write_path(const platform *p, int k, int u, int v, FILE *out)
{
    int n = p->ncomp, hops = p->nhops[(size_t)u * n + v];
    int seq[256];
    int x = v;
    for (int i = hops - 1; i >= 0; i--) {
        seq[i] = x;
        x = p->nnext[(size_t)u * n + x];
    }
    int from = u;
    for (int i = 0; i < hops; i++) {
        int l = p->nvia[(size_t)u * n + seq[i]];
        fprintf(out, "<link_ctn id=\"n%d-l%d\" direction=\"%s\"/>", k, l, p->link[l].a == from ? "UP" : "DOWN");
        from = seq[i];
    }
}

static void write_node(const platform *p, int k, FILE *out)
{
    int n = p->ncomp, gw = p->nodes > 1;
    fprintf(out, "<zone id=\"n%d\" routing=\"Full\">\n", k);
    for (int c = 0; c < n; c++) {
        if (is_host(p, c))
            fprintf(out, " <host id=\"n%d-%s\" speed=\"%.17gf\"/>\n", k, p->comp[c].name, host_speed(p, c));
        else
            fprintf(out, " <router id=\"n%d-%s\"/>\n", k, p->comp[c].name);
    }
    if (gw)
        fprintf(out, " <router id=\"n%d-gw\"/>\n", k);
    for (int l = 0; l < p->nlink; l++)
        fprintf(out, " <link id=\"n%d-l%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                k, l, p->link[l].bw_Bps * p->link[l].count, p->link[l].latency_s);
    if (gw)
        for (int j = 0; j < p->natt; j++)
            fprintf(out, " <link id=\"n%d-up%d\" bandwidth=\"%.17gBps\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                    k, j, p->att_uplink_Bps[j]);
    for (int u = 0; u < n; u++) {
        if (!is_host(p, u))
            continue;
        for (int v = 0; v < n; v++)
            if (v != u && is_host(p, v)) {
                fprintf(out, " <route src=\"n%d-%s\" dst=\"n%d-%s\" symmetrical=\"NO\">", k, p->comp[u].name, k,
                        p->comp[v].name);
                write_path(p, k, u, v, out);
                fprintf(out, "</route>\n");
            }
        if (!gw)
            continue;
        int j = p->comp_att[u], x = p->att[j];
        fprintf(out, " <route src=\"n%d-%s\" dst=\"n%d-gw\" symmetrical=\"NO\">", k, p->comp[u].name, k);
        write_path(p, k, u, x, out);
        fprintf(out, "<link_ctn id=\"n%d-up%d\" direction=\"UP\"/></route>\n", k, j);
        fprintf(out, " <route src=\"n%d-gw\" dst=\"n%d-%s\" symmetrical=\"NO\"><link_ctn id=\"n%d-up%d\" direction=\"DOWN\"/>",
                k, k, p->comp[u].name, k, j);
        write_path(p, k, x, u, out);
        fprintf(out, "</route>\n");
    }
    fprintf(out, "</zone>\n");
}

int platform_write_xml(const platform *p, FILE *out, tt_error *err)
{
    fprintf(out, "<?xml version='1.0'?>\n"
                 "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<!-- ttasim platform %s: %d nodes, %d accelerators -->\n"
                 "<platform version=\"4.1\">\n",
            p->name, p->nodes, platform_ranks(p));
    if (p->flat) {
        double bw = p->fabric == FABRIC_TORUS ? p->fab_bw_Bps : p->port_bw_Bps;
        write_cluster(p, out, "fabric", "acc-", platform_ranks(p), platform_device(p, 0)->peak_flops[DTYPE_FP32], bw);
    } else if (p->nodes == 1) {
        write_node(p, 0, out);
    } else {
        /* Floyd over nodes + fabric: the route between two nodes enters the
         * fabric at one port and leaves it at the other. */
        fprintf(out, "<zone id=\"world\" routing=\"Floyd\">\n");
        for (int k = 0; k < p->nodes; k++)
            write_node(p, k, out);
        write_cluster(p, out, "fabric", "port-", p->nodes, 1, p->port_bw_Bps);
        for (int k = 0; k < p->nodes; k++)
            fprintf(out, "<link id=\"n%d-port\" bandwidth=\"%.17gBps\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                    k, p->port_bw_Bps);
        for (int k = 0; k < p->nodes; k++)
            fprintf(out,
                    "<zoneRoute src=\"n%d\" dst=\"fabric\" gw_src=\"n%d-gw\" gw_dst=\"port-%d\" symmetrical=\"NO\">"
                    "<link_ctn id=\"n%d-port\" direction=\"UP\"/></zoneRoute>\n"
                    "<zoneRoute src=\"fabric\" dst=\"n%d\" gw_src=\"port-%d\" gw_dst=\"n%d-gw\" symmetrical=\"NO\">"
                    "<link_ctn id=\"n%d-port\" direction=\"DOWN\"/></zoneRoute>\n",
                    k, k, k, k, k, k, k, k);
        fprintf(out, "</zone>\n");
    }
    fprintf(out, "</platform>\n");
    if (ferror(out))
        return tt_error_set(err, TT_EINPUT, "could not write the platform XML");
    return TT_OK;
}
