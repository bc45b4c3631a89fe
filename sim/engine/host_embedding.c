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
#include "sim/engine/link_tally.h"

#define HOST_NAME_BYTES 64

/* What the simulation sends back: its rounds' times and, when asked, the
 * links its flows crossed. */
typedef struct host_result {
    link_usage links;
    double round_s[]; /* 2 per load */
} host_result;

/* Every node's endpoints: the sockets of nodes 0..N-1 (node-major), then
 * their accelerators. Two rounds per load (rows forward, gradients
 * backward), each all flows at once. */
typedef struct flow_set {
    const platform *p;
    int n_sockets, n_acc; /* of all nodes */
    char (*host)[HOST_NAME_BYTES]; /* S + A SimGrid host names */
    const step_host_load *loads;
    int n_loads;
    const double *link_weight; /* per load: its micro-steps in the link report (NULL: no report) */
    int tally_failed;          /* out of memory counting the links */
    host_result *result;
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

/* Counts every flow of every round on its route (SimGrid's, in the running
 * simulation: routes exist once it runs), load k's weighted link_weight[k].
 * Returns -1 when out of memory. */
static int tally_links(flow_set *f)
{
    link_tally *t = link_tally_create();
    int rc = t ? 0 : -1;
    for (int k = 0; rc == 0 && k < 2 * f->n_loads; k++) {
        const step_host_load *l = &f->loads[k / 2];
        double bytes = (k % 2 ? l->grad_rows_bytes : l->rows_bytes) / f->n_sockets;
        for (int s = 0; rc == 0 && s < f->n_sockets; s++)
            for (int a = 0; rc == 0 && a < f->n_acc; a++) {
                sg_host_t hs = sg_host_by_name(f->host[s]), ha = sg_host_by_name(f->host[f->n_sockets + a]);
                rc = link_tally_add(t, k % 2 ? ha : hs, k % 2 ? hs : ha, bytes, f->link_weight[k / 2]);
            }
    }
    if (t && link_tally_finish(t, f->p, &f->result->links))
        rc = -1;
    return rc;
}

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
    if (me == 0 && f->link_weight && tally_links(f))
        f->tally_failed = 1;
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
    if (f->tally_failed) {
        sg_barrier_destroy(f->round_end);
        flows_free(f);
        return tt_error_set(err, TT_EINTERNAL, "out of memory counting the embedding rows' links");
    }
    memcpy(result, f->result, sizeof *f->result + sizeof *f->result->round_s * 2 * (size_t)f->n_loads);
    sg_barrier_destroy(f->round_end);
    flows_free(f);
    return TT_OK;
}

/* Every node's sockets and accelerators, each socket routed to each
 * accelerator of its node (the fabric joins the nodes). socket_dev: one
 * node's S socket devices. */
static int node_endpoints(const platform *p, flow_set *f, const device_info ***socket_dev, tt_error *err)
{
    int nodes = platform_nodes(p);
    int s = platform_node_components(p, DEVICE_CPU, NULL, NULL, 0);
    int a = platform_node_components(p, DEVICE_ACCELERATOR, NULL, NULL, 0);
    if (s == 0 || a == 0)
        return tt_error_set(err, TT_EINPUT, "embedding tables in host memory need CPU sockets in the node, and "
                            "platform %s has none; use \"accelerators\"", platform_name(p));
    const char **names = malloc(sizeof *names * (size_t)(s + a));
    const device_info **devs = malloc(sizeof *devs * (size_t)(s + a));
    f->host = calloc((size_t)(s + a) * (size_t)nodes, sizeof *f->host);
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
    f->n_sockets = s * nodes;
    f->n_acc = a * nodes;
    for (int k = 0; k < nodes; k++) {
        for (int i = 0; i < s; i++)
            platform_component_host(p, k, names[i], f->host[k * s + i], HOST_NAME_BYTES);
        for (int i = 0; i < a; i++)
            platform_component_host(p, k, names[s + i], f->host[f->n_sockets + k * a + i], HOST_NAME_BYTES);
    }
    free(names);
    return rc;
}

int host_embedding_time(const platform *p, network_model net, const step_host_load *loads, int n,
                        const double *link_weight, host_emb_time *out, link_usage *links, tt_error *err)
{
    flow_set f = {.p = p};
    const device_info **dev = NULL;
    int rc = node_endpoints(p, &f, &dev, err);
    size_t result_bytes = sizeof(host_result) + sizeof(double) * (2 * (size_t)n + 1);
    host_result *res = calloc(1, result_bytes);
    if (rc == TT_OK && !res)
        rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
    double *round_s = res ? res->round_s : NULL;
    int rows = 0;
    for (int k = 0; k < n; k++)
        rows |= loads[k].rows_bytes > 0 || loads[k].grad_rows_bytes > 0;
    if (rc == TT_OK && rows) { /* a workload without tables moves nothing */
        f.loads = loads;
        f.n_loads = n;
        f.round_s = round_s;
        f.link_weight = links ? link_weight : NULL;
        f.result = res;
        sim_job job = {p, net, flows_setup, flows_collect, &f, res, result_bytes, 0, 0};
        rc = sim_run(&job, err);
    }
    if (rc == TT_OK && links)
        *links = res->links;
    for (int k = 0; rc == TT_OK && k < n; k++) {
        host_emb_time *o = &out[k];
        memset(o, 0, sizeof *o);
        o->forward_transfer_s = round_s[2 * k];
        o->backward_transfer_s = round_s[2 * k + 1];
        /* each socket serves its share of every accelerator's rows */
        for (int s = 0; s < f.n_sockets / platform_nodes(p); s++) { /* nodes are alike */
            double Bps = dev[s]->mem_Bps * dev[s]->mem_efficiency * f.n_sockets / f.n_acc;
            o->lookup_s = fmax(o->lookup_s, loads[k].lookup_bytes / Bps);
            o->update_s = fmax(o->update_s, loads[k].update_bytes / Bps);
        }
        o->forward_s = fmax(o->forward_transfer_s, o->lookup_s);
        o->backward_s = fmax(o->backward_transfer_s, o->update_s);
    }
    free(res);
    free(f.host);
    free(dev);
    return rc;
}
