#include "sim/replay.h"

#include <stdio.h>
#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include "sim/engine.h"

typedef struct replay_state {
    const platform *p;
    const schedule *s;
    double finish_s; /* latest rank finish, child side */
} replay_state;

static replay_state *g_replay; /* the child's only simulation */

static sg_mailbox_t block_mailbox(int src, int dst)
{
    char name[64];
    snprintf(name, sizeof name, "block:%d->%d", src, dst);
    return sg_mailbox_by_name(name);
}

/* One rank: per step, post its sends and receives, then wait for all of them. */
static void rank_actor(int argc, char **argv)
{
    (void)argc;
    int rank = atoi(argv[1]);
    const schedule *s = g_replay->s;
    static char token; /* put_async refuses a NULL payload */
    sg_comm_t *comms = malloc(sizeof *comms * 2 * (size_t)s->ranks);
    void *got = NULL;
    for (int st = 0; st < s->steps; st++) {
        size_t nc = 0;
        for (size_t k = s->step_begin[st]; k < s->step_begin[st + 1]; k++) {
            const transfer *t = &s->xfers[k];
            if (t->src == rank)
                comms[nc++] = sg_mailbox_put_async(block_mailbox(t->src, t->dst), &token, (long)t->bytes);
            if (t->dst == rank)
                comms[nc++] = sg_mailbox_get_async(block_mailbox(t->src, t->dst), &got);
        }
        sg_comm_wait_all(comms, nc);
    }
    free(comms);
    double now = simgrid_get_clock();
    if (now > g_replay->finish_s)
        g_replay->finish_s = now;
}

static void setup(void *arg)
{
    g_replay = arg;
    for (int r = 0; r < g_replay->s->ranks; r++) {
        char host[64], rank[16];
        platform_rank_host(g_replay->p, r, host, sizeof host);
        snprintf(rank, sizeof rank, "%d", r);
        char *argv[] = {"rank", rank, NULL};
        sg_actor_create(rank, sg_host_by_name(host), rank_actor, 2, argv);
    }
}

static void collect(void *arg, void *result)
{
    *(double *)result = ((replay_state *)arg)->finish_s;
}

int replay_schedule(const platform *p, network_model net, const schedule *s,
                    double *time_s, tt_error *err)
{
    if (s->ranks > platform_ranks(p))
        return tt_error_set(err, TT_EINPUT, "the schedule has %d ranks but the platform only %d accelerators",
                            s->ranks, platform_ranks(p));
    replay_state st = {p, s, 0.0};
    sim_job job = {p, net, setup, collect, &st, time_s, sizeof *time_s};
    return sim_run(&job, err);
}
