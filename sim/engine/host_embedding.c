/* host_embedding.c: embedding rows between CPU sockets and accelerators on SimGrid. */
#include "sim/engine/host_embedding.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include "sim/engine/engine.h"

#define HOST_NAME_BYTES 64

/* One node's endpoints: sockets 0..S-1, then accelerators S..S+A-1. Two
 * rounds per load (rows forward, gradients backward), each all flows at once. */
typedef struct flow_set {
    int n_sockets, n_acc;
    char (*host)[HOST_NAME_BYTES]; /* S + A SimGrid host names */
    const step_host_load *loads;
    int n_loads;
    sg_bar_t round_end;
    double *round_s; /* 2 per load */
} flow_set;

static sg_mailbox_t pair_mailbox(const flow_set *f, int backward, int socket, int acc)
{
    char name[2 * HOST_NAME_BYTES + 16];
    if (backward)
        snprintf(name, sizeof name, "gradients %s->%s", f->host[f->n_sockets + acc], f->host[socket]);
    else
        snprintf(name, sizeof name, "rows %s->%s", f->host[socket], f->host[f->n_sockets + acc]);
    return sg_mailbox_by_name(name);
}

/* An endpoint sends to (or receives from) every peer of the other side at
 * once, then waits at the round's barrier; endpoint 0 times the rounds. */
static void endpoint(int argc, char **argv)
{
    (void)argc;
    static char token; /* put_async refuses a NULL payload */
    flow_set *f = NULL;
    sscanf(argv[1], "%p", (void **)&f);
    int me = atoi(argv[2]), is_socket = me < f->n_sockets;
    int peers = is_socket ? f->n_acc : f->n_sockets;
    sg_comm_t *comms = malloc(sizeof *comms * (size_t)peers);
    void *got = NULL;
    double t_prev = simgrid_get_clock();
    for (int k = 0; k < 2 * f->n_loads; k++) {
        int backward = k % 2;
        const step_host_load *l = &f->loads[k / 2];
        double bytes = (backward ? l->grad_rows_bytes : l->rows_bytes) / f->n_sockets;
        for (int j = 0; j < peers; j++) {
            int socket = is_socket ? me : j, acc = is_socket ? j : me - f->n_sockets;
            sg_mailbox_t mb = pair_mailbox(f, backward, socket, acc);
            comms[j] = is_socket != backward ? sg_mailbox_put_async(mb, &token, (long)llround(bytes))
                                             : sg_mailbox_get_async(mb, &got);
        }
        sg_comm_wait_all(comms, (size_t)peers);
        sg_barrier_wait(f->round_end);
        if (me == 0) {
            f->round_s[k] = simgrid_get_clock() - t_prev;
            t_prev = simgrid_get_clock();
        }
    }
    free(comms);
}

static void flows_setup(void *arg)
{
    flow_set *f = arg;
    int n = f->n_sockets + f->n_acc;
    f->round_end = sg_barrier_init((unsigned)n);
    char fp[32], id[16];
    snprintf(fp, sizeof fp, "%p", (void *)f);
    for (int i = 0; i < n; i++) {
        snprintf(id, sizeof id, "%d", i);
        char *argv[] = {"embedding-endpoint", fp, id, NULL};
        sg_actor_create(id, sg_host_by_name(f->host[i]), endpoint, 3, argv);
    }
}

static void flows_collect(void *arg, void *result)
{
    flow_set *f = arg;
    memcpy(result, f->round_s, sizeof *f->round_s * 2 * (size_t)f->n_loads);
    sg_barrier_destroy(f->round_end);
}

/* The node's sockets and accelerators, each socket routed to each accelerator. */
static int node_endpoints(const platform *p, flow_set *f, const device_info ***socket_dev, tt_error *err)
{
    int s = platform_node_components(p, DEVICE_CPU, NULL, NULL, 0);
    int a = platform_node_components(p, DEVICE_ACCELERATOR, NULL, NULL, 0);
    if (s == 0 || a == 0)
        return tt_error_set(err, TT_EINPUT, "embedding tables in host memory need CPU sockets in the node, and "
                            "platform %s has none; use \"accelerators\"", platform_name(p));
    const char **names = malloc(sizeof *names * (size_t)(s + a));
    const device_info **devs = malloc(sizeof *devs * (size_t)(s + a));
    platform_node_components(p, DEVICE_CPU, names, devs, s);
    platform_node_components(p, DEVICE_ACCELERATOR, names + s, devs + s, a);
    int rc = TT_OK;
    for (int i = 0; rc == TT_OK && i < s; i++)
        if (devs[i]->mem_Bps <= 0)
            rc = tt_error_set(err, TT_EINPUT, "the CPU socket %s (%s) of platform %s has no mem_Bps in its device "
                              "definition: the embedding lookups need its memory bandwidth", names[i],
                              devs[i]->name, platform_name(p));
    for (int i = 0; rc == TT_OK && i < s; i++)
        for (int j = s; rc == TT_OK && j < s + a; j++) {
            double lat, bw;
            if (platform_component_path(p, names[i], names[j], &lat, &bw) < 0 ||
                platform_component_path(p, names[j], names[i], &lat, &bw) < 0)
                rc = tt_error_set(err, TT_EINPUT, "platform %s has no route between CPU socket %s and accelerator "
                                  "%s for embedding rows; link them (PCIe) or use \"accelerators\"",
                                  platform_name(p), names[i], names[j]);
        }
    f->n_sockets = s;
    f->n_acc = a;
    f->host = calloc((size_t)(s + a), sizeof *f->host);
    for (int i = 0; i < s + a; i++)
        platform_component_host(p, 0, names[i], f->host[i], HOST_NAME_BYTES);
    free(names);
    *socket_dev = devs;
    return rc;
}

int host_embedding_time(const platform *p, network_model net, const step_host_load *loads, int n,
                        host_emb_time *out, tt_error *err)
{
    flow_set f = {0};
    const device_info **dev = NULL;
    int rc = node_endpoints(p, &f, &dev, err);
    double *round_s = calloc(2 * (size_t)n + 1, sizeof *round_s);
    int rows = 0;
    for (int k = 0; k < n; k++)
        rows |= loads[k].rows_bytes > 0 || loads[k].grad_rows_bytes > 0;
    if (rc == TT_OK && rows) { /* a workload without tables moves nothing */
        f.loads = loads;
        f.n_loads = n;
        f.round_s = round_s;
        sim_job job = {p, net, flows_setup, flows_collect, &f, round_s, sizeof *round_s * 2 * (size_t)n};
        rc = sim_run(&job, err);
    }
    for (int k = 0; rc == TT_OK && k < n; k++) {
        host_emb_time *o = &out[k];
        memset(o, 0, sizeof *o);
        o->forward_transfer_s = round_s[2 * k];
        o->backward_transfer_s = round_s[2 * k + 1];
        /* each socket serves its share of every accelerator's rows */
        for (int s = 0; s < f.n_sockets; s++) {
            double Bps = dev[s]->mem_Bps * dev[s]->mem_efficiency * f.n_sockets / f.n_acc;
            o->lookup_s = fmax(o->lookup_s, loads[k].lookup_bytes / Bps);
            o->update_s = fmax(o->update_s, loads[k].update_bytes / Bps);
        }
        o->forward_s = fmax(o->forward_transfer_s, o->lookup_s);
        o->backward_s = fmax(o->backward_transfer_s, o->update_s);
    }
    free(round_s);
    free(f.host);
    free(dev);
    return rc;
}
