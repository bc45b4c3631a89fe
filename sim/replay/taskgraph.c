/* taskgraph.c: tasks, dependencies and the scheduler (taskgraph.h). */
#include "sim/replay/taskgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TG_MAX_CONTEXTS 64

typedef struct tg_task {
    int rank;
    tg_stream stream;
    tg_kind kind;
    double dur_s, wire_s;
    long coll;
    int tag;
    long coll_head, coll_next; /* the first task of its collective and the next one (-1: last) */
    long next;      /* the next task of the same rank and stream (-1: last) */
    long first_dep; /* into the sorted dependency pairs (after tg_schedule starts) */
    int n_dep;
    int done;
    double start_s, end_s;
    double wait_s; /* compute stream: idle before it, waiting on a dependency */
    tg_kind waited; /* that dependency's kind */
} tg_task;

/* Sorted by task first, after second: a task's afters are contiguous (tg_task_of). */
typedef struct tg_dep {
    long task, after;
} tg_dep;

/* A rank's streams: their queues (first task not yet timed), the compute and
 * host streams' ends, the contexts of its communication stream. */
typedef struct tg_rank {
    long head[TG_STREAMS], tail[TG_STREAMS];
    double free_s[TG_STREAMS];
    double slot_free_s[TG_MAX_CONTEXTS];
    double wire_free_s;
    long launched;
} tg_rank;

struct taskgraph {
    int ranks, contexts;
    tg_task *task;
    long n, cap, timed;
    tg_dep *dep;
    long n_dep, dep_cap;
    tg_rank *rank;
};

taskgraph *tg_create(int ranks, int contexts)
{
    taskgraph *g = calloc(1, sizeof *g);
    if (!g || ranks < 1 || !(g->rank = calloc((size_t)ranks, sizeof *g->rank))) {
        free(g);
        return NULL;
    }
    g->ranks = ranks;
    g->contexts = contexts < 1 ? 1 : contexts > TG_MAX_CONTEXTS ? TG_MAX_CONTEXTS : contexts;
    for (int r = 0; r < ranks; r++)
        for (int s = 0; s < TG_STREAMS; s++)
            g->rank[r].head[s] = g->rank[r].tail[s] = -1;
    return g;
}

void tg_free(taskgraph *g)
{
    if (!g)
        return;
    free(g->task);
    free(g->dep);
    free(g->rank);
    free(g);
}

long tg_add(taskgraph *g, int rank, tg_stream stream, tg_kind kind, double dur_s, double wire_s, long coll)
{
    if (g->n == g->cap) {
        long cap = g->cap ? 2 * g->cap : 64;
        tg_task *t = realloc(g->task, sizeof *t * (size_t)cap);
        if (!t)
            return -1;
        g->task = t;
        g->cap = cap;
    }
    long i = g->n++;
    g->task[i] = (tg_task){.rank = rank, .stream = stream, .kind = kind, .dur_s = dur_s,
                           .wire_s = wire_s > 0 && wire_s < dur_s ? wire_s : dur_s, .coll = coll, .tag = -1, .next = -1};
    tg_rank *r = &g->rank[rank];
    if (r->tail[stream] >= 0)
        g->task[r->tail[stream]].next = i;
    else
        r->head[stream] = i;
    r->tail[stream] = i;
    return i;
}

int tg_after(taskgraph *g, long task, long after)
{
    if (after < 0)
        return 0;
    if (g->n_dep == g->dep_cap) {
        long cap = g->dep_cap ? 2 * g->dep_cap : 64;
        tg_dep *d = realloc(g->dep, sizeof *d * (size_t)cap);
        if (!d)
            return -1;
        g->dep = d;
        g->dep_cap = cap;
    }
    g->dep[g->n_dep++] = (tg_dep){task, after};
    return 0;
}

void tg_tag(taskgraph *g, long task, int tag)
{
    if (task >= 0)
        g->task[task].tag = tag;
}

static int cmp_dep(const void *a, const void *b)
{
    const tg_dep *x = a, *y = b;
    return x->task < y->task ? -1 : x->task > y->task ? 1 : (x->after > y->after) - (x->after < y->after);
}

/* When a task's dependencies are all timed: the latest end and its kind; -1 if one is not. */
static double ready_s(const taskgraph *g, const tg_task *t, tg_kind *kind)
{
    double ready = 0;
    *kind = TG_KERNEL;
    for (long k = t->first_dep; k < t->first_dep + t->n_dep; k++) {
        const tg_task *a = &g->task[g->dep[k].after];
        if (!a->done)
            return -1;
        if (a->end_s > ready) {
            ready = a->end_s;
            *kind = a->kind;
        }
    }
    return ready;
}

/* A compute or host task: after its stream's previous one and its dependencies. */
static void run_task(taskgraph *g, tg_task *t, double ready, tg_kind kind)
{
    tg_rank *r = &g->rank[t->rank];
    double free_s = r->free_s[t->stream];
    t->start_s = fmax(ready, free_s);
    if (t->stream == TG_COMPUTE && ready > free_s) {
        t->wait_s = ready - free_s;
        t->waited = kind;
    }
    t->end_s = t->start_s + t->dur_s;
    r->free_s[t->stream] = t->end_s;
}

/* The tasks of a collective (each at its rank's head with its dependencies
 * timed): they start together, each rank's on its next context, its bytes
 * queued behind that rank's collectives in flight. -1 if one is not ready. */
static int run_collective(taskgraph *g, long head)
{
    double start = 0;
    for (long i = head; i >= 0; i = g->task[i].coll_next) {
        tg_task *t = &g->task[i];
        tg_kind kind;
        double ready = ready_s(g, t, &kind);
        tg_rank *r = &g->rank[t->rank];
        if (ready < 0 || r->head[TG_COMM] != i)
            return -1;
        start = fmax(start, fmax(ready, r->slot_free_s[r->launched % g->contexts]));
    }
    for (long i = head; i >= 0; i = g->task[i].coll_next) {
        tg_task *t = &g->task[i];
        tg_rank *r = &g->rank[t->rank];
        double *slot = &r->slot_free_s[r->launched++ % g->contexts];
        r->wire_free_s = fmax(r->wire_free_s, start) + t->wire_s;
        t->start_s = start;
        t->end_s = fmax(start + t->dur_s, r->wire_free_s);
        *slot = t->end_s;
        t->done = 1;
        g->timed++;
        r->head[TG_COMM] = t->next;
    }
    return 0;
}

static int cmp_coll(const void *a, const void *b)
{
    const long *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Sorts the dependencies by task and chains each collective's tasks. */
static int tg_index(taskgraph *g)
{
    /* A graph without dependencies (a trace of lone nodes) has no array: qsort needs one. */
    if (g->n_dep > 1)
        qsort(g->dep, (size_t)g->n_dep, sizeof *g->dep, cmp_dep);
    long *pair = malloc(sizeof *pair * 2 * (size_t)(g->n + 1)), m = 0;
    if (!pair)
        return -1;
    for (long i = 0, k = 0; i < g->n; i++) {
        tg_task *t = &g->task[i];
        t->first_dep = k;
        while (k < g->n_dep && g->dep[k].task == i)
            k++;
        t->n_dep = (int)(k - t->first_dep);
        t->coll_head = i;
        t->coll_next = -1;
        if (t->coll >= 0) {
            pair[2 * m] = t->coll;
            pair[2 * m++ + 1] = i;
        }
    }
    if (m > 1)
        qsort(pair, (size_t)m, 2 * sizeof *pair, cmp_coll);
    for (long k = 1; k < m; k++)
        if (pair[2 * k] == pair[2 * k - 2]) {
            g->task[pair[2 * k - 1]].coll_next = pair[2 * k + 1];
            g->task[pair[2 * k + 1]].coll_head = g->task[pair[2 * k - 1]].coll_head;
        }
    free(pair);
    return 0;
}

int tg_schedule(taskgraph *g, tt_error *err)
{
    if (tg_index(g))
        return tt_error_set(err, TT_EINTERNAL, "out of memory scheduling a task graph of %ld tasks", g->n);
    while (g->timed < g->n) {
        long before = g->timed;
        for (int rk = 0; rk < g->ranks; rk++)
            for (int s = 0; s < TG_STREAMS; s++) {
                long i;
                while ((i = g->rank[rk].head[s]) >= 0) {
                    tg_task *t = &g->task[i];
                    tg_kind kind;
                    double ready = ready_s(g, t, &kind);
                    if (ready < 0 || (s == TG_COMM && run_collective(g, t->coll_head)))
                        break;
                    if (s != TG_COMM) {
                        run_task(g, t, ready, kind);
                        t->done = 1;
                        g->timed++;
                        g->rank[rk].head[s] = t->next;
                    }
                }
            }
        if (g->timed == before)
            return tt_error_set(err, TT_EINPUT, "task graph: %ld of %ld tasks cannot start (a dependency cycle, or "
                                "a collective whose tasks wait on each other)", g->n - g->timed, g->n);
    }
    return TT_OK;
}

double tg_start_s(const taskgraph *g, long task)
{
    return g->task[task].start_s;
}

double tg_end_s(const taskgraph *g, long task)
{
    return g->task[task].end_s;
}

double tg_rank_end_s(const taskgraph *g, int rank)
{
    double end = 0;
    for (long i = 0; i < g->n; i++)
        if (g->task[i].rank == rank)
            end = fmax(end, g->task[i].end_s);
    return end;
}

void tg_rank_breakdown(const taskgraph *g, int rank, tg_breakdown *out)
{
    memset(out, 0, sizeof *out);
    for (long i = 0; i < g->n; i++) {
        const tg_task *t = &g->task[i];
        if (t->rank != rank || t->kind == TG_SHARED)
            continue;
        *(t->kind == TG_KERNEL      ? &out->kernel_s
          : t->kind == TG_OPTIMIZER ? &out->optimizer_s
          : t->kind == TG_COLLECTIVE ? &out->collective_s
                                    : &out->host_s) += t->dur_s;
        if (t->wait_s > 0)
            *(t->waited == TG_HOST_WORK ? &out->host_wait_s : &out->exposed_comm_s) += t->wait_s;
    }
}

long tg_tasks(const taskgraph *g)
{
    return g->n;
}

int tg_ranks(const taskgraph *g)
{
    return g->ranks;
}

int tg_contexts(const taskgraph *g)
{
    return g->contexts;
}

void tg_task_of(const taskgraph *g, long task, tg_task_info *out)
{
    const tg_task *t = &g->task[task];
    *out = (tg_task_info){.rank = t->rank, .tag = t->tag, .stream = t->stream, .kind = t->kind,
                          .dur_s = t->dur_s, .wire_s = t->wire_s, .n_after = t->n_dep};
}

long tg_task_after(const taskgraph *g, long task, int k)
{
    return g->dep[g->task[task].first_dep + k].after;
}
