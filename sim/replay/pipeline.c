/* pipeline.c: Megatron-Core's 1F1B and interleaved 1F1B schedules as tasks
 * (pipeline.h). */
#include "sim/replay/pipeline.h"

#include <stdlib.h>

struct pipeline {
    int stages, chunks, micro_batches;
    long *task; /* [stage][chunk][mb][backward]: its first and last compute task, then its send (-1: none) */
};

static long *slot(const pipeline *pl, int stage, int chunk, int mb, int backward)
{
    return &pl->task[((((size_t)stage * pl->chunks + chunk) * pl->micro_batches + mb) * 2 + backward) * 3];
}

long pipeline_task(const pipeline *pl, int stage, int chunk, int mb, int backward)
{
    return slot(pl, stage, chunk, mb, backward)[1];
}

long pipeline_piece(const pipeline *pl, int stage, int chunk, int k)
{
    return slot(pl, stage, chunk, pl->micro_batches - 1, 1)[0] + k; /* the pieces are added one after another */
}

void pipeline_free(pipeline *pl)
{
    if (pl) {
        free(pl->task);
        free(pl);
    }
}

/* The k-th forward (or backward) of a stage in Megatron's interleaved order:
 * micro-batches in groups of `stages`, each group through every chunk in
 * turn (backward: the last chunk first). */
static void virtual_of(const pipeline *pl, int k, int backward, int *chunk, int *mb)
{
    int group = pl->stages * pl->chunks, in_group = k % group;
    *chunk = in_group / pl->stages;
    if (backward)
        *chunk = pl->chunks - 1 - *chunk;
    *mb = k / group * pl->stages + in_group % pl->stages;
}

/* A forward or backward of stage s, and its send to the next virtual stage
 * (the previous one, backward) on the stage's communication stream. */
static int add_pass(taskgraph *g, pipeline *pl, const pipeline_shape *sh, int s, int k, int backward)
{
    int chunk, mb, last = pl->stages * pl->chunks - 1;
    virtual_of(pl, k, backward, &chunk, &mb);
    int v = chunk * pl->stages + s;
    long *t = slot(pl, s, chunk, mb, backward);
    int pieces = backward && mb == pl->micro_batches - 1 && sh->pieces ? sh->pieces[v] : 1;
    double dur = backward ? sh->backward_s[v] : sh->forward_s[v];
    for (int piece = 0; piece < pieces; piece++) {
        long i = tg_add(g, s, TG_COMPUTE, TG_KERNEL, dur / pieces, 0, -1);
        if (i < 0)
            return -1;
        t[0] = piece ? t[0] : i;
        t[1] = i;
    }
    t[2] = -1;
    if (!(backward ? v > 0 : v < last))
        return 0;
    t[2] = tg_add(g, s, TG_SEND, TG_COLLECTIVE, sh->send_s, 0, -1);
    return t[2] < 0 || tg_after(g, t[2], t[1]) ? -1 : 0;
}

/* Stage s's passes in its schedule's order: warmup forwards, then one
 * forward and one backward in turn, then the remaining backwards. */
static int add_stage(taskgraph *g, pipeline *pl, const pipeline_shape *sh, int s)
{
    int total = pl->micro_batches * pl->chunks;
    int warmup = pl->chunks == 1 ? pl->stages - s - 1 : (pl->stages - s - 1) * 2 + (pl->chunks - 1) * pl->stages;
    if (warmup > total)
        warmup = total;
    int rc = 0, fwd = 0, bwd = 0;
    for (int i = 0; !rc && i < warmup; i++)
        rc = add_pass(g, pl, sh, s, fwd++, 0);
    for (int i = 0; !rc && i < total - warmup; i++)
        rc = add_pass(g, pl, sh, s, fwd++, 0) || add_pass(g, pl, sh, s, bwd++, 1);
    for (int i = 0; !rc && i < warmup; i++)
        rc = add_pass(g, pl, sh, s, bwd++, 1);
    return rc;
}

/* Each pass after what it receives: the previous virtual stage's send
 * (backward: the next one's; the last virtual stage's backward, its own forward). */
static int add_receives(taskgraph *g, pipeline *pl, int v, int mb)
{
    int p = pl->stages, last = p * pl->chunks - 1;
    long fwd = slot(pl, v % p, v / p, mb, 0)[0], bwd = slot(pl, v % p, v / p, mb, 1)[0];
    return (v > 0 && tg_after(g, fwd, slot(pl, (v - 1) % p, (v - 1) / p, mb, 0)[2])) ||
           tg_after(g, bwd, v < last ? slot(pl, (v + 1) % p, (v + 1) / p, mb, 1)[2] : slot(pl, v % p, v / p, mb, 0)[1]);
}

pipeline *pipeline_build(taskgraph *g, const pipeline_shape *sh, tt_error *err)
{
    if (sh->stages < 1 || sh->chunks < 1 || sh->micro_batches < 1) {
        tt_error_set(err, TT_EINPUT, "a pipeline needs at least one stage, chunk and micro-batch (%d, %d, %d)",
                     sh->stages, sh->chunks, sh->micro_batches);
        return NULL;
    }
    if (sh->chunks > 1 && sh->micro_batches % sh->stages) {
        tt_error_set(err, TT_EINPUT, "the interleaved schedule needs micro-batches (%d) a multiple of the pipeline "
                     "stages (%d), as Megatron-Core does; change the global batch or the virtual stages",
                     sh->micro_batches, sh->stages);
        return NULL;
    }
    pipeline *pl = calloc(1, sizeof *pl);
    size_t n = (size_t)sh->stages * sh->chunks * sh->micro_batches * 2;
    if (!pl || !(pl->task = malloc(sizeof *pl->task * 3 * n))) {
        free(pl);
        tt_error_set(err, TT_EINTERNAL, "out of memory for a pipeline of %zu tasks", n);
        return NULL;
    }
    pl->stages = sh->stages;
    pl->chunks = sh->chunks;
    pl->micro_batches = sh->micro_batches;
    int rc = 0, vs = sh->stages * sh->chunks;
    for (int st = 0; !rc && st < sh->stages; st++)
        rc = add_stage(g, pl, sh, st);
    for (int v = 0; !rc && v < vs; v++)
        for (int mb = 0; !rc && mb < sh->micro_batches; mb++)
            rc = add_receives(g, pl, v, mb);
    if (rc) {
        pipeline_free(pl);
        tt_error_set(err, TT_EINTERNAL, "out of memory for a pipeline of %zu tasks", n);
        return NULL;
    }
    return pl;
}
