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
    /* rows[s * A + a]: socket s -> accelerator a; gradients[s * A + a] the way back */
    sg_mailbox_t *rows, *gradients;
    struct endpoint_arg *args; /* S + A */
    sg_comm_t *comms;          /* max(S, A) per endpoint, endpoint-major */
} flow_set;

/* What an endpoint actor reads through sg_actor_self_get_data(). */
typedef struct endpoint_arg {
    flow_set *f;
    int me;
} endpoint_arg;

/* An endpoint sends to (or receives from) every peer of the other side at
 * once, then waits at the round's barrier; endpoint 0 times the rounds. */
static void endpoint(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    static char token; /* put_async refuses a NULL payload */
    const endpoint_arg *a = sg_actor_self_get_data();
    flow_set *f = a->f;
    int me = a->me, is_socket = me < f->n_sockets;
    int peers = is_socket ? f->n_acc : f->n_sockets;
    sg_comm_t *comms = f->comms + (size_t)me * (size_t)(f->n_sockets > f->n_acc ? f->n_sockets : f->n_acc);
    void *got = NULL;
    double t_prev = simgrid_get_clock();
    for (int k = 0; k < 2 * f->n_loads; k++) {
        int backward = k % 2;
        const step_host_load *l = &f->loads[k / 2];
        double bytes = (backward ? l->grad_rows_bytes : l->rows_bytes) / f->n_sockets;
        for (int j = 0; j < peers; j++) {
            int socket = is_socket ? me : j, acc = is_socket ? j : me - f->n_sockets;
            sg_mailbox_t mb = (backward ? f->gradients : f->rows)[socket * f->n_acc + acc];
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
}

static void flows_free(flow_set *f)
{
    free(f->rows);
    free(f->gradients);
    free(f->args);
    free(f->comms);
}

static int flows_setup(void *arg, tt_error *err)
{
    flow_set *f = arg;
    int n = f->n_sockets + f->n_acc, pairs = f->n_sockets * f->n_acc;
    int peers = f->n_sockets > f->n_acc ? f->n_sockets : f->n_acc;
    f->rows = malloc(sizeof *f->rows * (size_t)pairs);
    f->gradients = malloc(sizeof *f->gradients * (size_t)pairs);
    f->args = malloc(sizeof *f->args * (size_t)n);
    f->comms = malloc(sizeof *f->comms * (size_t)n * (size_t)peers);
    if (!f->rows || !f->gradients || !f->args || !f->comms) {
        flows_free(f);
        return tt_error_set(err, TT_EINTERNAL, "out of memory simulating embedding rows on %d endpoints", n);
    }
    char name[2 * HOST_NAME_BYTES + 16];
    for (int s = 0; s < f->n_sockets; s++)
        for (int a = 0; a < f->n_acc; a++) {
            const char *sh = f->host[s], *ah = f->host[f->n_sockets + a];
            snprintf(name, sizeof name, "rows %s->%s", sh, ah);
            f->rows[s * f->n_acc + a] = sg_mailbox_by_name(name);
            snprintf(name, sizeof name, "gradients %s->%s", ah, sh);
            f->gradients[s * f->n_acc + a] = sg_mailbox_by_name(name);
        }
    f->round_end = sg_barrier_init((unsigned)n);
    for (int i = 0; i < n; i++) {
        f->args[i] = (endpoint_arg){f, i};
        snprintf(name, sizeof name, "%d", i);
        sg_actor_t act = sg_actor_init(name, sg_host_by_name(f->host[i]));
        sg_actor_set_data(act, &f->args[i]);
        sg_actor_start(act, endpoint, 0, NULL);
    }
    return TT_OK;
}

static int flows_collect(void *arg, void *result, tt_error *err)
{
    flow_set *f = arg;
    memcpy(result, f->round_s, sizeof *f->round_s * 2 * (size_t)f->n_loads);
    sg_barrier_destroy(f->round_end);
    flows_free(f);
    return TT_OK;
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
    f->host = calloc((size_t)(s + a), sizeof *f->host);
    *socket_dev = devs;
    if (!names || !devs || !f->host) {
        free(names);
        return tt_error_set(err, TT_EINTERNAL, "out of memory listing the %d components of platform %s", s + a,
                            platform_name(p));
    }
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
    for (int i = 0; i < s + a; i++)
        platform_component_host(p, 0, names[i], f->host[i], HOST_NAME_BYTES);
    free(names);
    return rc;
}

int host_embedding_time(const platform *p, network_model net, const step_host_load *loads, int n,
                        host_emb_time *out, tt_error *err)
{
    flow_set f = {0};
    const device_info **dev = NULL;
    int rc = node_endpoints(p, &f, &dev, err);
    double *round_s = calloc(2 * (size_t)n + 1, sizeof *round_s);
    if (rc == TT_OK && !round_s)
        rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
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
