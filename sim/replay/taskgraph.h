/* taskgraph.h: a training step as a graph of tasks, the shape of an MLCommons
 * Chakra execution trace: per rank, compute kernels on its compute stream,
 * collectives on its communication stream, host work on its host stream,
 * each task after the tasks it depends on. A generator per parallel
 * strategy builds it (step_data.c: data parallelism, DLRM's tables); one
 * scheduler times it. No simulator: durations are given (kernels from the
 * per-op model, collectives from SimGrid).
 *
 * Streams run their tasks in the order they were added. A compute or host
 * task starts when its stream's previous task ends and its dependencies are
 * done. A collective starts on the next of its rank's communication
 * contexts in turn (Caffe2's cyclic contexts; one context is one stream),
 * once that context's previous collective ended and its dependencies are
 * done; the tasks of one collective on several ranks start together; its
 * bytes (wire_s) queue behind those of the rank's collectives in flight, its
 * latencies overlap theirs. */
#ifndef TT_TASKGRAPH_H
#define TT_TASKGRAPH_H

#include <stddef.h>

#include "common/error.h"

/* TG_SEND: point-to-point sends between pipeline stages, beside the collectives.
 * TG_SIDE: a second compute stream (HugeCTR's embedding stream). */
typedef enum { TG_COMPUTE, TG_COMM, TG_HOST, TG_SEND, TG_SIDE, TG_STREAMS } tg_stream;

/* What a task's time counts as in a step's breakdown. TG_SHARED: side stream
 * kernels whose share of the device compute stream tasks already carry (the
 * generator's), counted once there. */
typedef enum { TG_KERNEL, TG_OPTIMIZER, TG_COLLECTIVE, TG_HOST_WORK, TG_SHARED } tg_kind;

typedef struct taskgraph taskgraph;

/* A graph of `ranks` ranks whose communication streams have `contexts`
 * contexts each (<= 1: one). NULL when out of memory. */
taskgraph *tg_create(int ranks, int contexts);
void tg_free(taskgraph *g);

/* Adds a task on rank's stream: its kind, duration and, for a collective,
 * the seconds its bytes hold the links (<= 0 or > dur: all of it) and its
 * id (the tasks of one collective on several ranks share it; -1: this rank's
 * alone). Returns its index, or -1 when out of memory. */
long tg_add(taskgraph *g, int rank, tg_stream stream, tg_kind kind, double dur_s, double wire_s, long coll);

/* Task `task` starts only after task `after` ended (-1: no-op). 0, or -1
 * when out of memory. */
int tg_after(taskgraph *g, long task, long after);

/* Marks task as collective `tag` of the step's list (step_coll: what an
 * export names its type, size and communicator by; untagged: -1). */
void tg_tag(taskgraph *g, long task, int tag);

/* Times every task. TT_EINPUT when the dependencies form a cycle or a
 * collective's tasks cannot all start (naming the task). */
int tg_schedule(taskgraph *g, tt_error *err);

/* After tg_schedule: a task's start and end; a rank's end (its last task's). */
double tg_start_s(const taskgraph *g, long task);
double tg_end_s(const taskgraph *g, long task);
double tg_rank_end_s(const taskgraph *g, int rank);

/* A rank's breakdown after tg_schedule: seconds of its tasks of a kind
 * (collectives: their durations, overlapped or not; TG_SHARED: none), and
 * the compute stream's waits on host tasks and on the others (exposed
 * communication: a side stream's kernels wait on its collectives). */
typedef struct tg_breakdown {
    double kernel_s, optimizer_s, collective_s, host_s;
    double exposed_comm_s, host_wait_s;
} tg_breakdown;
void tg_rank_breakdown(const taskgraph *g, int rank, tg_breakdown *out);

/* The graph as built, for an export (sim/replay/chakra.h), after
 * tg_schedule: a task and its n_after dependencies, the k-th by tg_task_after
 * (ascending). */
typedef struct tg_task_info {
    int rank, tag;
    tg_stream stream;
    tg_kind kind;
    double dur_s, wire_s; /* wire_s: dur_s when its bytes hold the links all along */
    int n_after;
} tg_task_info;
long tg_tasks(const taskgraph *g);
int tg_ranks(const taskgraph *g);
int tg_contexts(const taskgraph *g);
void tg_task_of(const taskgraph *g, long task, tg_task_info *out);
long tg_task_after(const taskgraph *g, long task, int k);

#endif
