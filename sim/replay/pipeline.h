/* pipeline.h: a pipeline-parallel schedule as a task graph, as Megatron-Core
 * runs it (schedules.py): `stages` ranks, each holding `chunks` model chunks
 * (virtual stages: chunk c of stage s is virtual stage c x stages + s),
 * `micro_batches` micro-batches through all of them. One chunk: 1F1B (stage
 * s runs stages - s - 1 forwards, then one forward and one backward in turn,
 * then the remaining backwards). Several: the interleaved 1F1B schedule,
 * micro-batches taken in groups of `stages` per chunk. Activations go to the
 * next virtual stage and gradients to the previous one as a task on the
 * sender's communication stream; the receiver waits for it. */
#ifndef TT_PIPELINE_H
#define TT_PIPELINE_H

#include "common/error.h"
#include "sim/replay/taskgraph.h"

typedef struct pipeline_shape {
    int stages, chunks, micro_batches;
    /* per virtual stage (chunks x stages of them): one micro-batch's forward
     * and backward through it, and its compute tasks' kind breakdown is
     * the caller's (they are TG_KERNEL tasks) */
    const double *forward_s, *backward_s;
    double send_s; /* one micro-batch's activations (or their gradients) to the next stage */
    const int *pieces; /* per virtual stage, >= 1 (NULL: 1) */
} pipeline_shape;

typedef struct pipeline pipeline;

/* Adds the schedule's tasks to g (a graph of at least `stages` ranks, rank
 * s running stage s) and returns it, or NULL: TT_EINPUT when the shape is
 * not one Megatron runs (interleaving needs micro-batches a multiple of the
 * stages), TT_EINTERNAL when out of memory. */
pipeline *pipeline_build(taskgraph *g, const pipeline_shape *shape, tt_error *err);
void pipeline_free(pipeline *pl);

/* The compute task of micro-batch mb through chunk `chunk` of stage `stage`,
 * forward (backward 0) or backward. */
long pipeline_task(const pipeline *pl, int stage, int chunk, int mb, int backward);

/* Piece k of the last micro-batch's backward through a chunk of a stage. */
long pipeline_piece(const pipeline *pl, int stage, int chunk, int k);

#endif
