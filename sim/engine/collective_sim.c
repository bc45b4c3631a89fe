/* collective_sim.c: worker actors that execute schedule steps on SimGrid. */
#include "sim/engine/collective_sim.h"
#include "sim/engine/collective_fluid.h"
#include "sim/engine/nccl_plan.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/exec.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <xbt/dynar.h>

#include "sim/engine/engine.h"
#include "sim/engine/link_tally.h"

/* One step's network flows, merged per (src, dst), indexed both ways. */
typedef struct step_round {
    size_t *send_off; /* ranks + 1: rank r sends mailbox/send_bytes[send_off[r] .. send_off[r+1]) */
    double *send_bytes;
    sg_mailbox_t *mailbox; /* per flow, in send order */
    size_t *recv_off; /* ranks + 1: rank r receives recv_mailbox[recv_off[r] ..) */
    sg_mailbox_t *recv_mailbox;
    double *reduce_bytes; /* ranks: what each rank reduces after receiving */
    int busy;             /* any flow or reduction at all */
    int streamed;         /* the reduction runs alongside the transfers (sched_stage.streamed) */
    int on_host;          /* the ranks work in host memory: reductions on a CPU thread (sched_stage.on_host) */
    int staging;          /* +1 / -1: rank r moves stage_bytes[r] down to its socket / back (sched_stage.staging) */
    double *stage_bytes;  /* ranks, when staging */
    double *recv_bytes;   /* ranks, when on_host: what each receives (its socket's receive thread reads them) */
    const coll_flow *flows; /* the round's flows (send order) while it executes, or NULL */
} step_round;

/* Free-running steps measured when a round's ranks do not finish together. */
#define WINDOW 8

/* The mailbox of the blocks rank src sends rank dst: one per pair, so that
 * blocks of successive steps between two ranks match in order. Open
 * addressing on src * n + dst, created on first use and kept for the group. */
typedef struct pair_slot {
    long key; /* -1: empty */
    sg_mailbox_t mailbox;
} pair_slot;

typedef struct coll_group coll_group;

/* What a worker actor reads through sg_actor_self_get_data(). */
typedef struct worker_arg {
    coll_group *g;
    int rank;
} worker_arg;

struct coll_group {
    const platform *p;
    int n;
    long serial; /* names this group's mailboxes */
    double gamma; /* reduce seconds per byte */
    int *ranks; /* platform rank of each member */
    int *index, index_n; /* group rank of each platform rank below index_n, -1 for none */
    sg_host_t *hosts;   /* of each member */
    link_tally *tally;  /* when counting link bytes: the flows of the timed run */
    double *speed_flops;
    /* host staging (coll_params.staging): each member's accelerator and CPU socket hosts and
     * that socket's rates; hosts[r] follows the worker while it is staged */
    int staged;
    sg_host_t *dev_host, *cpu_host;
    coll_socket *sockets;
    /* the TCP transport's one receive thread per node (Gloo's device loop, shared by every
     * context of the server's one process): when it is next free, a FIFO kept at the node's
     * first member (rx_first[r]) */
    double *rx_free_s;
    int *rx_first;
    double *finish_s; /* each worker's last step end */
    int sync_only;    /* rounds without free-running windows (auto's screening) */
    int classes;      /* a symmetric crossbar: steps by classes of identical flows (execute_classes) */
    coll_group *reps; /* those classes' representatives: ranks 0..COLL_CLASS_RANKS-1 alone, so a
                       * class step does not wake every worker of thousands (created on first use) */
    coll_fluid *fluid; /* coll_fluid_applies: rounds of more than fluid_flows flows solved by components */
    long fluid_flows;
    worker_arg *args;
    sg_actor_t *workers; /* started on the first round SimGrid runs (rounds solved by components need none) */
    int spawned;
    sg_comm_t **comms; /* per worker, comm_cap[r] entries: grown by the controller, never by workers */
    size_t *comm_cap;
    pair_slot *pairs;
    size_t pair_cap, npairs;
    sg_bar_t start, end;
    int quit;
    const step_round *rounds; /* what the workers execute next */
    long nrounds;
    long stride; /* 1: rounds in order; 0: rounds[0] nrounds times */
};

static coll_group *group_create(const platform *p, const int *ranks, int n, long serial);
static void group_destroy(coll_group *g);

/* Frees a round's arrays; the round is then empty (freeing it again is harmless). */
static void round_free(step_round *rd)
{
    free(rd->send_off);
    free(rd->send_bytes);
    free(rd->recv_off);
    free(rd->mailbox);
    free(rd->recv_mailbox);
    free(rd->reduce_bytes);
    free(rd->stage_bytes);
    free(rd->recv_bytes);
    memset(rd, 0, sizeof *rd);
}

static int pairs_grow(coll_group *g)
{
    size_t cap = g->pair_cap ? 2 * g->pair_cap : 64;
    pair_slot *t = malloc(sizeof *t * cap);
    if (!t)
        return -1;
    for (size_t i = 0; i < cap; i++)
        t[i].key = -1;
    for (size_t i = 0; i < g->pair_cap; i++)
        if (g->pairs[i].key >= 0) {
            size_t h = (size_t)g->pairs[i].key & (cap - 1);
            while (t[h].key >= 0)
                h = (h + 1) & (cap - 1);
            t[h] = g->pairs[i];
        }
    free(g->pairs);
    g->pairs = t;
    g->pair_cap = cap;
    return 0;
}

/* NULL when out of memory. */
static sg_mailbox_t pair_mailbox(coll_group *g, int src, int dst)
{
    if (2 * (g->npairs + 1) > g->pair_cap && pairs_grow(g) != 0)
        return NULL;
    long key = (long)src * g->n + dst;
    size_t h = (size_t)key & (g->pair_cap - 1);
    while (g->pairs[h].key >= 0 && g->pairs[h].key != key)
        h = (h + 1) & (g->pair_cap - 1);
    if (g->pairs[h].key < 0) {
        char name[96];
        snprintf(name, sizeof name, "group %ld: blocks %d->%d", g->serial, src, dst);
        g->pairs[h].key = key;
        g->pairs[h].mailbox = sg_mailbox_by_name(name);
        g->npairs++;
    }
    return g->pairs[h].mailbox;
}

/* Grows worker r's comm array to hold nc comms. */
static int comms_reserve(coll_group *g, int r, size_t nc)
{
    if (nc <= g->comm_cap[r])
        return 0;
    sg_comm_t *c = realloc(g->comms[r], sizeof *c * 2 * nc);
    if (!c)
        return -1;
    g->comms[r] = c;
    g->comm_cap[r] = 2 * nc;
    return 0;
}

/* The group rank of platform rank pr, or -1 when it is not a member. */
static int member_of(const coll_group *g, int pr)
{
    if (pr < 0 || pr >= g->index_n)
        return -1;
    return g->index[pr];
}

/* On a rail-optimised fabric, a transfer to another rail first crosses
 * NVLink to the sender node's GPU on the receiver's rail (NCCL's PXN), which
 * sends it on: the transfer becomes a copy to the relay plus the relay's
 * transfer (the reduction, if any, at the receiver). xs holds 2 nx entries.
 * Members are platform ranks 0..n-1 (the controller's groups). */
static size_t relay_cross_rail(const coll_group *g, xfer *xs, size_t nx)
{
    size_t m = nx;
    for (size_t k = 0; k < nx; k++) {
        int pr = xs[k].src != xs[k].dst ? platform_rail_relay(g->p, g->ranks[xs[k].src], g->ranks[xs[k].dst]) : -1;
        int r = member_of(g, pr); /* NCCL relays through a GPU of the communicator only */
        if (r < 0)
            continue;
        xs[m] = xs[k];
        xs[m++].src = r;
        xs[k].dst = r;
        xs[k].op = XFER_COPY;
    }
    return m;
}

/* Indexes a round's flows (sorted by src) both ways; rd->reduce_bytes must
 * be allocated. Returns -1 when out of memory (rd is then freed). */
static int round_index(step_round *rd, coll_group *g, const coll_flow *flows, size_t w)
{
    int n = g->n;
    rd->send_off = calloc((size_t)n + 1, sizeof *rd->send_off);
    rd->recv_off = calloc((size_t)n + 1, sizeof *rd->recv_off);
    rd->send_bytes = malloc(sizeof *rd->send_bytes * (w + 1));
    rd->mailbox = malloc(sizeof *rd->mailbox * (w + 1));
    rd->recv_mailbox = malloc(sizeof *rd->recv_mailbox * (w + 1));
    size_t *fill = malloc(sizeof *fill * (size_t)n);
    if (rd->on_host)
        rd->recv_bytes = calloc((size_t)n, sizeof *rd->recv_bytes);
    if (!rd->reduce_bytes || !rd->send_off || !rd->recv_off || !rd->send_bytes || !rd->mailbox ||
        !rd->recv_mailbox || !fill || (rd->on_host && !rd->recv_bytes))
        goto oom;
    for (size_t k = 0; k < w; k++) {
        rd->send_off[flows[k].src + 1]++;
        rd->recv_off[flows[k].dst + 1]++;
        rd->send_bytes[k] = flows[k].bytes;
        if (rd->recv_bytes)
            rd->recv_bytes[flows[k].dst] += flows[k].bytes;
        if (!(rd->mailbox[k] = pair_mailbox(g, flows[k].src, flows[k].dst)))
            goto oom;
    }
    for (int r = 0; r < n; r++) {
        rd->send_off[r + 1] += rd->send_off[r];
        rd->recv_off[r + 1] += rd->recv_off[r];
    }
    for (int r = 0; r < n; r++)
        if (comms_reserve(g, r, (rd->send_off[r + 1] - rd->send_off[r]) + (rd->recv_off[r + 1] - rd->recv_off[r])))
            goto oom;
    memcpy(fill, rd->recv_off, sizeof *fill * (size_t)n);
    for (size_t k = 0; k < w; k++) /* sorted by src, so each receiver's list is too */
        rd->recv_mailbox[fill[flows[k].dst]++] = rd->mailbox[k];
    free(fill);
    return 0;
oom:
    free(fill);
    round_free(rd);
    return -1;
}

/* Merges a step's transfers into flows (scratch, sorted by src) and each
 * rank's reductions; local copies cost nothing here. Returns the flows, or
 * -1 when out of memory. round_index makes them SimGrid's (a round solved by
 * components needs no mailboxes). */
static long round_flows(step_round *rd, coll_group *g, const schedule *s, const sched_stage *stg, xfer *xs,
                        size_t nx, coll_flow *scratch)
{
    memset(rd, 0, sizeof *rd);
    rd->streamed = stg->streamed;
    rd->on_host = stg->on_host;
    rd->staging = stg->staging;
    if (!stg->on_host) /* NCCL's PXN relay; a host-memory transport (Gloo over TCP) has none */
        nx = relay_cross_rail(g, xs, nx);
    size_t w = schedule_merge_flows(s, xs, nx, scratch);
    rd->reduce_bytes = calloc((size_t)g->n, sizeof *rd->reduce_bytes);
    if (stg->staging)
        rd->stage_bytes = calloc((size_t)g->n, sizeof *rd->stage_bytes);
    if (!rd->reduce_bytes || (stg->staging && !rd->stage_bytes)) {
        round_free(rd);
        return -1;
    }
    rd->busy = w > 0;
    for (size_t k = 0; k < nx; k++) {
        if (xs[k].op == XFER_REDUCE) {
            rd->reduce_bytes[xs[k].dst] += (double)xs[k].len * s->unit_bytes;
            rd->busy = 1;
        }
        if (stg->staging && xs[k].src == xs[k].dst && xs[k].len > 0) { /* a copy across PCIe */
            rd->stage_bytes[xs[k].src] += (double)xs[k].len * s->unit_bytes;
            rd->busy = 1;
        }
    }
    return (long)w;
}

/* After a staging round: where each staged member's worker now is (its flows
 * leave from there: link counts, round_solo's routes). */
static void follow_staging(coll_group *g, const step_round *rd)
{
    for (int r = 0; rd->staging && r < g->n; r++)
        if (rd->stage_bytes[r] > 0)
            g->hosts[r] = rd->staging > 0 ? g->cpu_host[r] : g->dev_host[r];
}

/* round_flows, then round_index: -1 when out of memory (rd is then freed). */
static int round_build(step_round *rd, coll_group *g, const schedule *s, const sched_stage *stg, xfer *xs,
                       size_t nx, coll_flow *scratch)
{
    long w = round_flows(rd, g, s, stg, xs, nx, scratch);
    return w < 0 ? -1 : round_index(rd, g, scratch, (size_t)w);
}

/* Host staging: the rank's block crosses PCIe between its accelerator and
 * its CPU socket's memory, and the worker moves with the data, so that the
 * inter-node flows leave from host memory and its sums run on the CPU. */
static void worker_stage(coll_group *g, const step_round *rd, int r)
{
    if (rd->stage_bytes[r] > 0) {
        sg_host_t to = rd->staging > 0 ? g->cpu_host[r] : g->dev_host[r];
        sg_host_sendto(sg_host_self(), to, rd->stage_bytes[r]);
        sg_actor_set_host(sg_actor_self(), to);
    }
    g->finish_s[r] = simgrid_get_clock();
}

/* Host staging: when the node's receive thread, a FIFO shared by every
 * member on the node, has read the rank's bytes of this step. It reads as
 * they arrive, so its time overlaps the wire's rather than following it. */
static double node_receive(coll_group *g, int r, double bytes)
{
    double *free_s = &g->rx_free_s[g->rx_first[r]];
    *free_s = fmax(*free_s, simgrid_get_clock()) + bytes * g->sockets[r].rx_s_per_byte;
    return *free_s;
}

/* A worker's part of one step: its sends and receives at once, then its
 * reduction, or alongside them when the stage streams. */
static void worker_step(coll_group *g, const step_round *rd, int r)
{
    if (rd->staging) {
        worker_stage(g, rd, r);
        return;
    }
    static char token; /* put_async refuses a NULL payload */
    size_t s0 = rd->send_off[r], s1 = rd->send_off[r + 1];
    size_t q0 = rd->recv_off[r], q1 = rd->recv_off[r + 1];
    size_t nc = (s1 - s0) + (q1 - q0);
    sg_comm_t *comms = g->comms[r];
    void *got = NULL;
    size_t k = 0;
    double flops = rd->on_host ? rd->reduce_bytes[r] * g->sockets[r].reduce_s_per_byte * sg_host_get_speed(g->cpu_host[r])
                               : rd->reduce_bytes[r] * g->gamma * g->speed_flops[r];
    sg_exec_t reduce = rd->streamed && flops > 0 ? sg_actor_exec_init(flops) : NULL;
    if (reduce)
        sg_exec_start(reduce);
    if (rd->on_host && nc) /* from host memory, each step's messages cross the kernel TCP stacks of both ends */
        sg_actor_sleep_for(g->sockets[r].message_s);
    double read_s = rd->on_host && rd->recv_bytes[r] > 0 ? node_receive(g, r, rd->recv_bytes[r]) : 0;
    for (size_t i = s0; i < s1; i++)
        comms[k++] = sg_mailbox_put_async(rd->mailbox[i], &token, (long)llround(rd->send_bytes[i]));
    for (size_t i = q0; i < q1; i++)
        comms[k++] = sg_mailbox_get_async(rd->recv_mailbox[i], &got);
    if (nc)
        sg_comm_wait_all(comms, nc);
    if (read_s > simgrid_get_clock())
        sg_actor_sleep_until(read_s);
    if (reduce)
        sg_exec_wait(reduce);
    else if (flops > 0)
        sg_actor_execute(flops);
    g->finish_s[r] = simgrid_get_clock();
}

/* Waits at the start barrier for rounds to execute, until told to quit. */
static void worker(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const worker_arg *a = sg_actor_self_get_data();
    coll_group *g = a->g;
    sg_actor_daemonize(sg_actor_self());
    for (;;) {
        sg_barrier_wait(g->start);
        if (g->quit)
            break;
        for (long k = 0; k < g->nrounds; k++)
            worker_step(g, &g->rounds[k * g->stride], a->rank);
        sg_barrier_wait(g->end);
    }
}

static void group_free(coll_group *g)
{
    for (int i = 0; g->comms && i < g->n; i++)
        free(g->comms[i]);
    free(g->comms);
    free(g->comm_cap);
    free(g->pairs);
    free(g->args);
    free(g->workers);
    free(g->speed_flops);
    free(g->finish_s);
    free(g->ranks);
    free(g->index);
    free(g->hosts);
    free(g->dev_host);
    free(g->cpu_host);
    free(g->sockets);
    free(g->rx_free_s);
    free(g->rx_first);
    coll_fluid_free(g->fluid);
    free(g);
}

/* A group of members on the hosts of platform ranks ranks[i] (group rank i =
 * ranks[i]), one worker actor each once group_spawn runs. From an actor;
 * NULL when out of memory. */
static coll_group *group_create(const platform *p, const int *ranks, int n, long serial)
{
    coll_group *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->p = p;
    g->n = n;
    g->serial = serial;
    g->speed_flops = calloc((size_t)n, sizeof *g->speed_flops);
    g->ranks = malloc(sizeof *g->ranks * (size_t)n);
    g->finish_s = calloc((size_t)n, sizeof *g->finish_s);
    g->workers = calloc((size_t)n, sizeof *g->workers);
    g->args = calloc((size_t)n, sizeof *g->args);
    g->comms = calloc((size_t)n, sizeof *g->comms);
    g->comm_cap = calloc((size_t)n, sizeof *g->comm_cap);
    g->hosts = calloc((size_t)n, sizeof *g->hosts);
    if (!g->speed_flops || !g->ranks || !g->finish_s || !g->workers || !g->args || !g->comms || !g->comm_cap ||
        !g->hosts) {
        group_free(g);
        return NULL;
    }
    memcpy(g->ranks, ranks, sizeof *g->ranks * (size_t)n);
    for (int i = 0; i < n; i++)
        g->index_n = ranks[i] + 1 > g->index_n ? ranks[i] + 1 : g->index_n;
    if (!(g->index = malloc(sizeof *g->index * (size_t)g->index_n))) {
        group_free(g);
        return NULL;
    }
    for (int i = 0; i < g->index_n; i++)
        g->index[i] = -1;
    for (int i = 0; i < n; i++)
        g->index[ranks[i]] = i;
    g->classes = coll_symmetric_crossbar(p);
    if (coll_fluid_applies(p) && !(g->fluid = coll_fluid_create(g->hosts, n))) {
        group_free(g);
        return NULL;
    }
    g->start = sg_barrier_init((unsigned)n + 1);
    g->end = sg_barrier_init((unsigned)n + 1);
    for (int i = 0; i < n; i++) {
        g->hosts[i] = sim_rank_host(ranks[i]);
        g->speed_flops[i] = sg_host_get_speed(g->hosts[i]);
        g->args[i] = (worker_arg){g, i};
    }
    return g;
}

/* Starts the group's workers: 16,384 actors cost a second of stacks and
 * context switches that a tree solved by components never uses. */
static void group_spawn(coll_group *g)
{
    char name[16];
    for (int i = 0; i < g->n; i++) {
        snprintf(name, sizeof name, "%d", i);
        g->workers[i] = sg_actor_init(name, g->hosts[i]);
        sg_actor_set_data(g->workers[i], &g->args[i]);
        sg_actor_ref(g->workers[i]);
        sg_actor_start(g->workers[i], worker, 0, NULL);
    }
    g->spawned = 1;
}

static double run_rounds(coll_group *g, const step_round *rounds, long nrounds, long stride)
{
    if (!g->spawned)
        group_spawn(g);
    double t0 = simgrid_get_clock();
    g->rounds = rounds;
    g->nrounds = nrounds;
    g->stride = stride;
    sg_barrier_wait(g->start);
    sg_barrier_wait(g->end);
    return simgrid_get_clock() - t0;
}

/* Whether every busy rank of the last round finished together: then no rank
 * can run ahead and identical rounds take exactly the same time. */
static int round_uniform(const coll_group *g, const step_round *rd, double dt)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < g->n; r++)
        if (rd->send_off[r + 1] > rd->send_off[r] || rd->recv_off[r + 1] > rd->recv_off[r] ||
            rd->reduce_bytes[r] > 0) {
            lo = fmin(lo, g->finish_s[r]);
            hi = fmax(hi, g->finish_s[r]);
        }
    return hi - lo <= 1e-9 * dt;
}

static int cmp_link(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const sg_link_t *)a, y = (uintptr_t)*(const sg_link_t *)b;
    return x < y ? -1 : x > y;
}

/* Whether no link carries two of the round's flows (each flow's reverse
 * route counted too: SimGrid's acknowledgement cross-traffic) and every busy
 * rank reduces alike (to 1e-4 of the round's dt, which bounds the error:
 * blocks differ by an element). Then a flow takes its synchronous time whenever it starts, the
 * slowest flow's two ends alternate at the round's pace, and no rank can run
 * ahead: free-running steps take the synchronous round's time (a flat ring
 * on a torus, whose row-crossing flows take two hops). */
static int round_solo(const coll_group *g, const step_round *rd, double dt)
{
    size_t nf = rd->flows ? rd->send_off[g->n] : 0, n = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; nf && r < g->n; r++)
        if (rd->send_off[r + 1] > rd->send_off[r] || rd->recv_off[r + 1] > rd->recv_off[r] ||
            rd->reduce_bytes[r] > 0) {
            lo = fmin(lo, rd->reduce_bytes[r] * g->gamma);
            hi = fmax(hi, rd->reduce_bytes[r] * g->gamma);
        }
    if (hi - lo > 1e-4 * dt)
        return 0;
    xbt_dynar_t route = nf ? xbt_dynar_new(sizeof(sg_link_t), NULL) : NULL;
    sg_link_t *all = NULL;
    size_t cap = 0;
    int ok = route != NULL;
    for (size_t k = 0; ok && k < 2 * nf; k++) {
        const coll_flow *f = &rd->flows[k / 2];
        xbt_dynar_reset(route);
        sg_host_get_route(g->hosts[k % 2 ? f->dst : f->src], g->hosts[k % 2 ? f->src : f->dst], route);
        size_t len = xbt_dynar_length(route);
        if (n + len > cap) {
            cap = 2 * (n + len);
            sg_link_t *grown = realloc(all, sizeof *all * cap);
            ok = grown != NULL;
            all = grown ? grown : all;
        }
        for (size_t i = 0; ok && i < len; i++)
            all[n++] = xbt_dynar_get_as(route, i, sg_link_t);
    }
    if (ok)
        qsort(all, n, sizeof *all, cmp_link);
    for (size_t i = 1; ok && i < n; i++)
        ok = all[i] != all[i - 1];
    free(all);
    if (route)
        xbt_dynar_free(&route);
    return ok;
}

/* An identical stage: one synchronous round; if its ranks finish at
 * different times, ranks ahead would start the next step early, so the
 * remaining steps run free (a few) or the steady-state period is measured on
 * free-running windows of WINDOW and 2 WINDOW steps and extrapolated (the
 * message-level time without simulating every step). */
static void execute_identical(coll_group *g, const sched_stage *stg, const step_round *rd)
{
    double dt = run_rounds(g, rd, 1, 0);
    int rest = stg->steps - 1;
    if (rest < 1)
        return;
    if (g->sync_only || round_uniform(g, rd, dt) || round_solo(g, rd, dt)) {
        sg_actor_sleep_for(dt * rest);
        return;
    }
    if (rest < 3 * WINDOW) { /* few steps: run them all free */
        run_rounds(g, rd, rest, 0);
    } else {
        double t1 = run_rounds(g, rd, WINDOW, 0), t2 = run_rounds(g, rd, 2 * WINDOW, 0);
        double est = t2 + (stg->steps - 2 * WINDOW) * (t2 - t1) / WINDOW;
        double spent = dt + t1 + t2;
        sg_actor_sleep_for(est > spent ? est - spent : 0.0);
    }
}

/* Counts a round's nf flows (scratch, as round_flows left it) on their
 * links, times over. */
static int tally_round(coll_group *g, const coll_flow *scratch, size_t nf, double times)
{
    for (size_t k = 0; g->tally && k < nf; k++)
        if (link_tally_add(g->tally, g->hosts[scratch[k].src], g->hosts[scratch[k].dst], scratch[k].bytes, times))
            return -1;
    return 0;
}

/* On a symmetric crossbar (coll_symmetric_crossbar), a permutation or
 * all-pairs step by representatives of its one class of flows: a permutation
 * as two ranks swapping (any permutation puts one flow and one flow's
 * cross-traffic on every link, as a swap does), all pairs among the first
 * COLL_CLASS_RANKS ranks, each flow carrying what n - 1 flows carry per link.
 * A run of equal steps is one identical stage. Returns the steps from t it
 * accounted for (0: step t is not such a step), -1 when out of memory. */
static int execute_classes(coll_group *g, const schedule *s, int st, int t, xfer *xs, coll_flow *scratch)
{
    const sched_stage *stg = &s->stages[st];
    double fb = 0, red = 0, next = 0, next_red = 0;
    step_pattern k = schedule_step_pattern(s, st, t, &fb, &red);
    if (k == STEP_GENERAL)
        return 0;
    int run = stg->identical ? stg->steps - t : 1;
    while (!stg->identical && t + run < stg->steps &&
           schedule_step_pattern(s, st, t + run, &next, &next_red) == k && next == fb && next_red == red)
        run++;
    if (k == STEP_LOCAL)
        return run;
    /* representatives time the steps; a link count takes every flow of each, as it is */
    for (int u = t; g->tally && u < (stg->identical ? t + 1 : t + run); u++) {
        size_t nx = schedule_step(s, st, u, xs), nf = schedule_merge_flows(s, xs, nx, scratch);
        if (tally_round(g, scratch, nf, stg->identical ? run : 1))
            return -1;
    }
    int n = g->n, m = k == STEP_PERMUTATION ? 2 : n < COLL_CLASS_RANKS ? n : COLL_CLASS_RANKS;
    if (!g->reps && !(g->reps = group_create(g->p, g->ranks, n < COLL_CLASS_RANKS ? n : COLL_CLASS_RANKS,
                                             -1 - g->serial)))
        return -1;
    coll_group *h = g->reps;
    h->gamma = g->gamma;
    h->sync_only = g->sync_only;
    size_t w = (size_t)m * (size_t)(m - 1), f = 0;
    coll_flow *fl = malloc(sizeof *fl * w);
    step_round rd = {.reduce_bytes = calloc((size_t)h->n, sizeof *rd.reduce_bytes)};
    if (!fl || !rd.reduce_bytes) {
        free(fl);
        free(rd.reduce_bytes);
        return -1;
    }
    for (int i = 0; i < m; i++) { /* sorted by src, as round_index wants */
        rd.reduce_bytes[i] = red; /* every rank reduces alike: the representatives stand for all */
        rd.busy |= red > 0;
        for (int j = 0; j < m; j++)
            if (j != i)
                fl[f++] = (coll_flow){i, j, k == STEP_PERMUTATION ? fb : fb * (n - 1) / (m - 1)};
    }
    int rc = round_index(&rd, h, fl, w);
    free(fl);
    if (rc)
        return -1;
    sched_stage same = {.steps = run, .identical = 1};
    execute_identical(h, &same, &rd);
    round_free(&rd);
    return run;
}

/* Whether a round of w flows is solved by components (collective_fluid.h)
 * while the workers sleep: more than g->fluid_flows flows, or a group of
 * more ranks than that (waking every worker for a few flows costs more than
 * their solve). A link count adds up the round's flows whichever solves it. */
static int round_fluid(const coll_group *g, long w)
{
    return g->fluid && !g->staged && g->fluid_flows >= 0 &&
           (w > g->fluid_flows || g->n > g->fluid_flows);
}

/* Sleeps until the last rank's clock, `times` over, and frees the clocks. */
static void sleep_past_clocks(const coll_group *g, double *clock_s, int times)
{
    double hi = 0;
    for (int r = 0; r < g->n; r++)
        hi = fmax(hi, clock_s[r]);
    free(clock_s);
    sg_actor_sleep_for(hi * times);
}

/* A synchronous round solved by components, `steps` times over (a pipelined
 * tree's steady state). Returns -1 when out of memory. */
static int execute_fluid(coll_group *g, const step_round *rd, const coll_flow *flows, size_t nf, int steps)
{
    double *clock_s = calloc((size_t)g->n, sizeof *clock_s);
    if (!clock_s || coll_fluid_round(g->fluid, flows, nf, rd->reduce_bytes, g->gamma, rd->streamed, clock_s)) {
        free(clock_s);
        return -1;
    }
    sleep_past_clocks(g, clock_s, steps);
    return 0;
}

/* Stages [first, last) with every step of every rank materialized and the
 * ranks unsynchronized: each starts its next step when its own transfers and
 * reduction end. */
static int execute_free(coll_group *g, const schedule *s, int first, int last, xfer *xs, coll_flow *scratch)
{
    long total = 0, k = 0, built = 0;
    for (int st = first; st < last; st++)
        total += s->stages[st].steps;
    step_round *rounds = calloc((size_t)total + 1, sizeof *rounds);
    int rc = rounds ? 0 : -1;
    for (int st = first; rc == 0 && st < last; st++)
        for (int t = 0; rc == 0 && t < s->stages[st].steps; t++, k++)
            if ((rc = round_build(&rounds[k], g, s, &s->stages[st], xs, schedule_step(s, st, t, xs), scratch)) ==
                0) {
                built++;
                rc = tally_round(g, scratch, rounds[k].send_off[g->n], 1);
                follow_staging(g, &rounds[k]);
            }
    if (rc == 0)
        run_rounds(g, rounds, total, 1);
    for (k = 0; k < built; k++)
        round_free(&rounds[k]);
    free(rounds);
    return rc;
}

/* A pipelined tree's fill or drain as the pipeline runs it: a rank starts its
 * next step when its own previous one ends, so the time follows the slowest
 * path through the tree, not the slowest edge of every depth (a depth mixes
 * NVLink and network edges). Solved by components with per-rank clocks when
 * any round would be (the flows of one step share links while they overlap),
 * else free-running in SimGrid. Returns -1 when out of memory. */
static int execute_pipeline(coll_group *g, const schedule *s, int st, xfer *xs, coll_flow *scratch)
{
    const sched_stage *stg = &s->stages[st];
    if (!round_fluid(g, (long)s->max_step_xfers))
        return execute_free(g, s, st, st + 1, xs, scratch);
    double *clock_s = calloc((size_t)g->n, sizeof *clock_s);
    int rc = clock_s ? 0 : -1;
    for (int t = 0; rc == 0 && t < stg->steps; t++) {
        step_round rd;
        long w = round_flows(&rd, g, s, stg, xs, schedule_step(s, st, t, xs), scratch);
        rc = w < 0 || tally_round(g, scratch, (size_t)w, 1)
                 ? -1
                 : coll_fluid_round(g->fluid, scratch, (size_t)w, rd.reduce_bytes, g->gamma, stg->streamed, clock_s);
        round_free(&rd);
    }
    if (rc)
        free(clock_s);
    else
        sleep_past_clocks(g, clock_s, 1);
    return rc;
}

static int execute_rounds(coll_group *g, const schedule *s, xfer *xs, coll_flow *scratch)
{
    for (int st = 0; st < s->nstages; st++) {
        const sched_stage *stg = &s->stages[st];
        if (stg->pipelined && !stg->identical) {
            if (execute_pipeline(g, s, st, xs, scratch))
                return -1;
            continue;
        }
        for (int t = 0; t < (stg->identical ? 1 : stg->steps); t++) {
            int done = g->classes && !g->staged ? execute_classes(g, s, st, t, xs, scratch) : 0;
            if (done < 0)
                return -1;
            if (done > 0) {
                t += done - 1;
                continue;
            }
            step_round rd;
            long w = round_flows(&rd, g, s, stg, xs, schedule_step(s, st, t, xs), scratch);
            if (w < 0 || tally_round(g, scratch, (size_t)w, stg->identical ? stg->steps : 1)) {
                round_free(&rd);
                return -1;
            }
            /* A pipelined tree's steady state too, as synchronous rounds: against SimGrid's free-running
             * windows that moved NCCL's tree on 256 to 1,024 DGX A100 ranks by under 0.03 %. Other identical
             * stages keep execute_identical: a ring on a fat tree of KNL nodes runs 1.8 % (64 ranks) to 6 %
             * (256) slower free-running than in lockstep. */
            if (rd.busy && (!stg->identical || stg->pipelined) && round_fluid(g, w)) {
                int rc = execute_fluid(g, &rd, scratch, (size_t)w, stg->identical ? stg->steps : 1);
                round_free(&rd);
                if (rc)
                    return -1;
                continue;
            }
            if (round_index(&rd, g, scratch, (size_t)w))
                return -1;
            rd.flows = scratch;
            if (rd.busy && stg->identical)
                execute_identical(g, stg, &rd);
            else if (rd.busy)
                run_rounds(g, &rd, 1, 1);
            follow_staging(g, &rd);
            round_free(&rd);
        }
    }
    return 0;
}

/* Messages: every step of every rank materialized, ranks run unsynchronized. */
static int execute_messages(coll_group *g, const schedule *s, xfer *xs, coll_flow *scratch)
{
    return execute_free(g, s, 0, s->nstages, xs, scratch);
}

/* From an actor: runs the schedule on the group (its ranks must equal the
 * group size): the simulated seconds it took, or -1 when out of memory. */
static double group_run(coll_group *g, const schedule *s, int messages)
{
    double t0 = simgrid_get_clock();
    if (s->ranks != g->n || s->nstages == 0)
        return 0.0;
    xfer *xs = malloc(sizeof *xs * 2 * (s->max_step_xfers + 1)); /* twice: relay_cross_rail */
    coll_flow *scratch = malloc(sizeof *scratch * 2 * (s->max_step_xfers + 1));
    int rc = -1;
    if (xs && scratch)
        rc = messages ? execute_messages(g, s, xs, scratch) : execute_rounds(g, s, xs, scratch);
    free(xs);
    free(scratch);
    return rc == 0 ? simgrid_get_clock() - t0 : -1.0;
}

/* From an actor: stops the workers and frees the group. */
static void group_destroy(coll_group *g)
{
    if (g->reps)
        group_destroy(g->reps);
    g->quit = 1;
    if (g->spawned)
        sg_barrier_wait(g->start);
    for (int i = 0; g->spawned && i < g->n; i++) {
        sg_actor_join(g->workers[i], -1);
        sg_actor_unref(g->workers[i]);
    }
    sg_barrier_destroy(g->start);
    sg_barrier_destroy(g->end);
    group_free(g);
}

/* ---- Parent side: a batch of requests in one simulation ---- */

typedef struct batch {
    const platform *p;
    const coll_request *reqs;
    int nreq;
    coll_result *res;
    int oom; /* a request ran out of memory in the simulation */
} batch;

/* auto ranks the candidates by their estimate, a lower bound on their
 * simulated time, and simulates them in that order until the next bound
 * exceeds the best simulated time: no later candidate can win, so it picks
 * what simulating all would. Those whose simulation cost (coll_estimate_s)
 * exceeds AUTO_SIM_COST are left out (trees and recursive doubling over
 * thousands of ranks of a torus would take minutes); with none affordable,
 * the cheapest. */
#define AUTO_SIM_COST 300000L

/* 0 built, 1 the algorithm does not apply, -1 out of memory. */
static int build_for(const coll_request *rq, coll_algo algo, schedule *s)
{
    coll_params prm = rq->params;
    tt_error err = {0}; /* schedule_build checks that algo applies */
    prm.algo = algo;
    if (schedule_build(&prm, (size_t)llround(prm.bytes), 1.0, s, &err) == TT_OK) {
        schedule_replicate(s, rq->replicas);
        return 0;
    }
    return err.code == TT_EINTERNAL ? -1 : 1;
}

/* Host staging: each member's CPU socket and its rates
 * (coll_staging_socket), found on the group's first staged request.
 * Returns -1 when out of memory or the socket is missing (coll_simulate
 * checked the platform first). */
static int group_stage_setup(coll_group *g)
{
    if (g->cpu_host)
        return 0;
    g->dev_host = malloc(sizeof *g->dev_host * (size_t)g->n);
    g->cpu_host = malloc(sizeof *g->cpu_host * (size_t)g->n);
    g->sockets = malloc(sizeof *g->sockets * (size_t)g->n);
    g->rx_free_s = calloc((size_t)g->n, sizeof *g->rx_free_s);
    g->rx_first = malloc(sizeof *g->rx_first * (size_t)g->n);
    int ok = g->dev_host && g->cpu_host && g->sockets && g->rx_free_s && g->rx_first;
    int per_node = platform_ranks_per_node(g->p);
    for (int r = 0; ok && r < g->n; r++) {
        tt_error err = {0};
        if (coll_staging_socket(g->p, g->ranks[r], &g->sockets[r], &err) ||
            !(g->cpu_host[r] = sg_host_by_name(g->sockets[r].host)))
            return -1;
        g->dev_host[r] = g->hosts[r];
        /* members of a node are consecutive: all share the first one's thread, whichever socket stages them */
        g->rx_first[r] = r > 0 && g->ranks[r - 1] / per_node == g->ranks[r] / per_node ? g->rx_first[r - 1] : r;
    }
    return ok ? 0 : -1;
}

/* The request's algorithm, or auto's choice: candidates whose bound can
 * still win are screened with synchronous rounds, then the fastest runs
 * with the requested executor. time_s is NaN when no candidate
 * could be simulated; *oom is set when memory ran out. */
static coll_result run_request(coll_group *g, const coll_request *rq, int *oom)
{
    coll_algo cand[16];
    double est[16];
    long cost[16];
    int nc = 1, order[16], best = -1, cheapest = -1, built = 0;
    g->staged = rq->params.staging == STAGING_HOST;
    if (g->staged && group_stage_setup(g)) {
        *oom = 1;
        return (coll_result){.time_s = NAN, .algo = rq->params.algo};
    }
    cand[0] = rq->params.algo;
    if (rq->params.algo == ALGO_AUTO)
        nc = coll_algos_for(rq->params.op, cand, 16);
    for (int c = 0; c < nc; c++) {
        schedule s;
        est[c] = INFINITY;
        cost[c] = -1;
        order[c] = c;
        if ((built = build_for(rq, cand[c], &s)) == 0) {
            est[c] = coll_estimate_s(g->p, g->ranks, &s, rq->reduce_s_per_byte, &cost[c]);
            schedule_free(&s);
        }
        if (built < 0 || est[c] < 0) {
            *oom = 1;
            return (coll_result){.time_s = NAN, .algo = rq->params.algo};
        }
        if (cost[c] >= 0 && (cheapest < 0 || cost[c] < cost[cheapest]))
            cheapest = c;
    }
    for (int c = 0; nc > 1 && c < nc; c++)
        if (cost[c] > AUTO_SIM_COST && c != cheapest)
            est[c] = INFINITY;
    for (int i = 1; i < nc; i++) /* insertion sort by estimate, stable */
        for (int j = i; j > 0 && est[order[j]] < est[order[j - 1]]; j--) {
            int tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    g->gamma = rq->reduce_s_per_byte;
    g->fluid_flows = rq->fluid_flows ? rq->fluid_flows : COLL_FLUID_FLOWS;
    if (nc == 1) {
        best = isfinite(est[0]) ? 0 : -1;
    } else {
        double best_s = INFINITY;
        g->sync_only = 1;
        for (int i = 0; i < nc && isfinite(est[order[i]]); i++) {
            /* The estimate bounds a synchronous simulation from below: past the
             * best simulated time no later candidate can win. */
            if (est[order[i]] > best_s * (1 + 1e-9))
                break;
            schedule s;
            if ((built = build_for(rq, cand[order[i]], &s)) != 0) {
                *oom |= built < 0;
                continue;
            }
            double t = group_run(g, &s, 0);
            schedule_free(&s);
            *oom |= t < 0;
            if (t >= 0 && t < best_s) {
                best_s = t;
                best = order[i];
            }
        }
        g->sync_only = 0;
    }
    coll_result r = {.time_s = NAN, .algo = rq->params.algo};
    schedule s;
    if (!*oom && best >= 0 && (built = build_for(rq, cand[best], &s)) == 0) {
        g->tally = rq->links ? link_tally_create() : NULL;
        double t = rq->links && !g->tally ? -1 : group_run(g, &s, rq->messages);
        schedule_free(&s);
        if (t >= 0)
            r = (coll_result){.time_s = t, .algo = cand[best]};
        if (g->tally && link_tally_finish(g->tally, g->p, &r.links))
            t = -1;
        g->tally = NULL;
        *oom |= t < 0;
    }
    *oom |= built < 0;
    return r;
}

/* Runs the batch's requests in order, one group of workers per rank count. */
static void controller(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    batch *b = sg_actor_self_get_data();
    coll_group *g = NULL;
    long groups = 0;
    for (int i = 0; i < b->nreq && !b->oom; i++) {
        const coll_request *rq = &b->reqs[i];
        int n = rq->params.ranks * (rq->replicas > 1 ? rq->replicas : 1);
        int *ranks = malloc(sizeof *ranks * (size_t)n);
        if (!ranks) {
            b->oom = 1;
            break;
        }
        for (int r = 0; r < n; r++)
            ranks[r] = rq->members ? rq->members[r] : r;
        if (!g || g->n != n || memcmp(g->ranks, ranks, sizeof *ranks * (size_t)n)) { /* another communicator */
            if (g)
                group_destroy(g);
            if (!(g = group_create(b->p, ranks, n, groups++)))
                b->oom = 1;
        }
        free(ranks);
        if (g)
            b->res[i] = run_request(g, rq, &b->oom);
    }
    if (g)
        group_destroy(g);
}

static int batch_setup(void *arg, tt_error *err)
{
    batch *b = arg;
    char host[64];
    platform_rank_host(b->p, 0, host, sizeof host);
    sg_actor_t a = sg_actor_init("collective-controller", sg_host_by_name(host));
    sg_actor_set_data(a, b);
    sg_actor_start(a, controller, 0, NULL);
    return TT_OK;
}

static int batch_collect(void *arg, void *result, tt_error *err)
{
    batch *b = arg;
    if (b->oom)
        return tt_error_set(err, TT_EINTERNAL, "out of memory while simulating %d collective(s) on platform %s",
                            b->nreq, platform_name(b->p));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    for (int i = 0; i < b->nreq; i++)
        b->res[i].peak_rss_bytes = (double)ru.ru_maxrss * 1024.0;
    memcpy(result, b->res, sizeof *b->res * (size_t)b->nreq);
    return TT_OK;
}

/* A request's members: each a rank of the platform, none twice. */
static int members_check(const platform *p, const coll_request *rq, tt_error *err)
{
    int n = rq->params.ranks * (rq->replicas > 1 ? rq->replicas : 1), total = platform_ranks(p);
    if (!rq->members)
        return TT_OK;
    unsigned char *seen = calloc((size_t)total, 1);
    if (!seen)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    int rc = TT_OK;
    for (int r = 0; r < n && rc == TT_OK; r++) {
        int m = rq->members[r];
        if (m < 0 || m >= total || seen[m])
            rc = tt_error_set(err, TT_EINPUT, "%s: member %d of the communicator is rank %d: %s", coll_op_name(rq->params.op),
                              r, m, m < 0 || m >= total ? "not a rank of the platform" : "already a member");
        else
            seen[m] = 1;
    }
    free(seen);
    return rc;
}

int coll_simulate(const platform *p, network_model net, const coll_request *reqs, int nreq,
                  coll_result *out, tt_error *err)
{
    for (int i = 0; i < nreq; i++) {
        const coll_params *prm = &reqs[i].params;
        const char *why;
        int copies = reqs[i].replicas > 1 ? reqs[i].replicas : 1;
        if (prm->ranks > platform_ranks(p) || prm->ranks < 1 || (long)prm->ranks * copies > platform_ranks(p))
            return tt_error_set(err, TT_EINPUT, "%s on %d ranks%s: the platform has %d accelerators",
                                coll_op_name(prm->op), prm->ranks, copies > 1 ? " per copy" : "", platform_ranks(p));
        int rc = members_check(p, &reqs[i], err);
        if (rc)
            return rc;
        if (prm->algo != ALGO_AUTO && prm->algo != ALGO_NCCL && !coll_algo_applies(prm, &why))
            return tt_error_set(err, TT_EINPUT, "%s with %s on %d ranks: %s", coll_op_name(prm->op),
                                coll_algo_name(prm->algo), prm->ranks, why);
        if ((rc = coll_staging_check(p, prm, err)) || (rc = nccl_plan_check(p, prm, reqs[i].members, err)))
            return rc;
    }
    coll_result *res = calloc((size_t)nreq + 1, sizeof *res);
    coll_request *run = malloc(sizeof *run * ((size_t)nreq + 1));
    nccl_timing *timing = calloc((size_t)nreq + 1, sizeof *timing);
    char (*names)[24] = calloc((size_t)nreq + 1, sizeof *names);
    if (!res || !run || !timing || !names) {
        free(res);
        free(run);
        free(timing);
        free(names);
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    }
    for (int i = 0; i < nreq; i++) { /* nccl: what NCCL runs, or the fabric's native schedule */
        run[i] = reqs[i];
        nccl_resolve(p, run[i].members, &run[i].params, &run[i].reduce_s_per_byte, &timing[i], names[i],
                     sizeof names[i]);
        res[i].time_s = NAN;
    }
    batch b = {p, run, nreq, res, 0};
    sim_job job = {p, net, batch_setup, batch_collect, &b, out, sizeof *out * (size_t)nreq};
    int rc = sim_run(&job, err);
    for (int i = 0; rc == TT_OK && i < nreq; i++) {
        out[i].time_s = nccl_timing_total_s(&timing[i], out[i].time_s);
        memcpy(out[i].nccl, names[i], sizeof out[i].nccl);
    }
    free(res);
    free(run);
    free(timing);
    free(names);
    for (int i = 0; rc == TT_OK && i < nreq; i++)
        if (isnan(out[i].time_s))
            rc = tt_error_set(err, TT_EINTERNAL, "request %d (%s) could not be simulated", i,
                              coll_op_name(reqs[i].params.op));
    return rc;
}
