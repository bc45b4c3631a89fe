/* collective_staging.c: which host memory a rank's collective stages through
 * (coll_params.staging = STAGING_HOST) and how fast a CPU thread sums there. */
#include "sim/engine/collective_sim.h"

#include <string.h>

#include "platforms/device.h"

/* A node has at most this many CPU sockets (Zion has 8). */
#define MAX_SOCKETS 16

/* The rank's component in its node template ("gpu3" of host "n0-gpu3"). */
static const char *rank_component(const platform *p, int rank, char *buf, size_t buf_bytes)
{
    char host[64];
    platform_rank_host(p, rank, host, sizeof host);
    const char *dash = strchr(host, '-');
    snprintf(buf, buf_bytes, "%s", dash ? dash + 1 : host);
    return buf;
}

int coll_staging_socket(const platform *p, int rank, coll_socket *out, tt_error *err)
{
    const char *names[MAX_SOCKETS];
    const device_info *devs[MAX_SOCKETS];
    int s = platform_node_components(p, DEVICE_CPU, names, devs, MAX_SOCKETS), best = -1, best_hops = 0;
    if (s > MAX_SOCKETS)
        s = MAX_SOCKETS;
    if (s == 0 || platform_rank_kind(p) != DEVICE_ACCELERATOR)
        return tt_error_set(err, TT_EINPUT, "host staging needs CPU sockets in the node of platform %s (its "
                            "accelerators' buffers are copied to a socket's memory); add a \"cpu\" component "
                            "and its PCIe links to the node, or use staging \"device\"",
                            platform_name(p));
    char comp[48];
    rank_component(p, rank, comp, sizeof comp);
    for (int i = 0; i < s; i++) { /* the nearest socket, the first in file order on a tie */
        double lat, bw;
        int hops = platform_component_path(p, comp, names[i], &lat, &bw);
        if (hops > 0 && (best < 0 || hops < best_hops)) {
            best = i;
            best_hops = hops;
        }
    }
    if (best < 0)
        return tt_error_set(err, TT_EINPUT, "host staging: platform %s has no route from %s to a CPU socket of its "
                            "node; link them (PCIe) in the node's \"links\", or use staging \"device\"",
                            platform_name(p), comp);
    if (devs[best]->thread_mem_Bps <= 0)
        return tt_error_set(err, TT_EINPUT, "host staging sums on one thread of CPU socket %s, whose device %s has "
                            "no thread_mem_Bps (what one thread streams); give it in the device's definition",
                            names[best], devs[best]->name);
    if (devs[best]->tcp_message_s <= 0)
        return tt_error_set(err, TT_EINPUT, "host staging sends every step's messages through the kernel TCP stack "
                            "of CPU socket %s, whose device %s has no tcp_message_s (its one-way cost of a message); "
                            "give it in the device's definition",
                            names[best], devs[best]->name);
    if (devs[best]->tcp_rx_Bps <= 0)
        return tt_error_set(err, TT_EINPUT, "host staging receives every message through the one I/O thread of the "
                            "TCP transport on CPU socket %s, whose device %s has no tcp_rx_Bps (what that thread "
                            "reads); give it in the device's definition",
                            names[best], devs[best]->name);
    platform_component_host(p, rank / platform_ranks_per_node(p), names[best], out->host, sizeof out->host);
    /* the sum reads both operands and writes one: 3 bytes per byte reduced, as on the device */
    out->reduce_s_per_byte = 3.0 / devs[best]->thread_mem_Bps;
    out->message_s = devs[best]->tcp_message_s;
    out->rx_s_per_byte = 1.0 / devs[best]->tcp_rx_Bps;
    return TT_OK;
}

int coll_staging_check(const platform *p, const coll_params *prm, tt_error *err)
{
    if (prm->staging == STAGING_DEVICE)
        return TT_OK;
    if (prm->algo != ALGO_HIER || prm->op != OP_ALLREDUCE)
        return tt_error_set(err, TT_EINPUT, "host staging is hier allreduce's (%s %s asked): it stages the node's "
                            "reduced vector for the inter-node phase; use the hier allreduce",
                            coll_op_name(prm->op), coll_algo_name(prm->algo));
    coll_socket sock;
    int rc = TT_OK, n = platform_ranks_per_node(p);
    for (int r = 0; rc == TT_OK && r < n; r++)
        rc = coll_staging_socket(p, r, &sock, err);
    return rc;
}
