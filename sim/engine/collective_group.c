/* collective_group.c: a communicator's worker actors, one per member, and
 * the rounds of flows and reductions they execute on SimGrid. */
#include "sim/engine/collective_group.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include "sim/engine/engine.h"

/* Frees a round's arrays; the round is then empty (freeing it again is harmless). */
void coll_round_free(step_round *rd)
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

/* platform_rail_relay(a, b), asked once per pair of places in a node (none
 * inside a node): a frontier step asks it for hundreds of thousands of
 * transfers. */
static int rail_relay(coll_group *g, int a, int b)
{
    int n = platform_ranks_per_node(g->p);
    if (n > 0 && a / n == b / n)
        return -1;
    if (n > 0 && !g->relay && (g->relay = malloc(sizeof *g->relay * (size_t)n * (size_t)n)))
        for (int i = 0; i < n * n; i++)
            g->relay[i] = -2;
    if (n <= 0 || !g->relay)
        return platform_rail_relay(g->p, a, b);
    int *t = &g->relay[(a % n) * n + b % n];
    if (*t == -2) {
        int r = platform_rail_relay(g->p, a, b);
        *t = r < 0 ? -1 : r % n;
    }
    return *t < 0 ? -1 : a / n * n + *t;
}

/* On a rail-optimised fabric, a transfer to another rail first crosses
 * NVLink to the sender node's GPU on the receiver's rail (NCCL's PXN), which
 * sends it on: the transfer becomes a copy to the relay plus the relay's
 * transfer (the reduction, if any, at the receiver). xs holds 2 nx entries.
 * The relay must be a member of the group. */
static size_t relay_cross_rail(coll_group *g, xfer *xs, size_t nx)
{
    size_t m = nx;
    for (size_t k = 0; k < nx; k++) {
        int pr = xs[k].src != xs[k].dst ? rail_relay(g, g->ranks[xs[k].src], g->ranks[xs[k].dst]) : -1;
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
int coll_round_index(step_round *rd, coll_group *g, const coll_flow *flows, size_t w)
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
    coll_round_free(rd);
    return -1;
}

/* Merges a step's transfers into flows (scratch, sorted by src) and each
 * rank's reductions; local copies cost nothing here. Returns the flows, or
 * -1 when out of memory. coll_round_index makes them SimGrid's (a round solved by
 * components needs no mailboxes). */
long coll_round_flows(step_round *rd, coll_group *g, const schedule *s, const sched_stage *stg, xfer *xs,
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
        coll_round_free(rd);
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
void coll_group_follow_staging(coll_group *g, const step_round *rd)
{
    for (int r = 0; rd->staging && r < g->n; r++)
        if (rd->stage_bytes[r] > 0)
            g->hosts[r] = rd->staging > 0 ? g->cpu_host[r] : g->dev_host[r];
}

/* coll_round_flows, then coll_round_index: -1 when out of memory (rd is then freed). */
int coll_round_build(step_round *rd, coll_group *g, const schedule *s, const sched_stage *stg, xfer *xs,
                     size_t nx, coll_flow *scratch)
{
    long w = coll_round_flows(rd, g, s, stg, xs, nx, scratch);
    return w < 0 ? -1 : coll_round_index(rd, g, scratch, (size_t)w);
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
    free(g->relay);
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
coll_group *coll_group_create(const platform *p, const int *ranks, int n, long serial, int fold)
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
    g->fold = fold;
    if (coll_fluid_applies(p) && !(g->fluid = coll_fluid_create(g->hosts, n, fold ? p : NULL, g->ranks))) {
        group_free(g);
        return NULL;
    }
    g->start = sg_barrier_init((unsigned)n + 1);
    g->end = sg_barrier_init((unsigned)n + 1);
    for (int i = 0; i < n; i++) {
        g->hosts[i] = sim_rank_host(fold ? platform_fold_rank(p, ranks[i], ranks[i]) : ranks[i]);
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

double coll_group_run_rounds(coll_group *g, const step_round *rounds, long nrounds, long stride)
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

/* From an actor: stops the workers and frees the group. */
void coll_group_destroy(coll_group *g)
{
    if (g->reps)
        coll_group_destroy(g->reps);
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

/* Host staging: each member's CPU socket and its rates
 * (coll_staging_socket), found on the group's first staged request.
 * Returns -1 when out of memory or the socket is missing (coll_simulate
 * checked the platform first). */
int coll_group_stage_setup(coll_group *g)
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
