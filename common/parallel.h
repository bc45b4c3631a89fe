/* parallel.h: independent tasks (sweep points, scenarios) over forked worker
 * processes. Each task fills a fixed-size result; results come back in task
 * order whatever the number of workers, so output is the same for any -j. */
#ifndef TT_PARALLEL_H
#define TT_PARALLEL_H

#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"

/* Runs task `index` and writes its result_bytes into `result` (zeroed first).
 * A task reports its own failures inside its result. */
typedef void (*parallel_task)(void *ctx, size_t index, void *result);

/* Called in the calling process each time a task finishes (done of total). */
typedef void (*parallel_progress)(void *ctx, size_t done, size_t total);

/* The processors this process may run on (its affinity mask), at least 1. */
int parallel_jobs_default(void);

/* Parses a -j value: a whole number from 1 to 1024, or fails with TT_EINPUT. */
int parallel_jobs_parse(const char *text, int *jobs, tt_error *err);

/* Runs tasks 0..n-1, up to `jobs` at a time in forked workers (in this
 * process when jobs <= 1 or n <= 1), into results[i * result_bytes]. Under
 * mpirun the outermost call shares the tasks over the ranks (task i on rank
 * i mod size) and every rank gets every result. Fails with TT_EINTERNAL when
 * a worker cannot start or dies, naming the task. */
int parallel_run(size_t n, int jobs, size_t result_bytes, parallel_task task, parallel_progress progress,
                 void *ctx, void *results, tt_error *err);

/* The run's budgets, shared by every process it forks (parallel workers
 * and theirs): the memory its simulations hold at once and the CPU seconds
 * their platform loads take in all. The first limit given holds for the run;
 * under mpirun it is shared among the ranks on this machine. */

/* The memory budget of the run for a process that may use limit bytes. */
double parallel_memory_budget(double limit);
/* Waits until bytes fit beside the run's other simulations within the
 * budget (bytes alone must fit: check first), then holds them. */
void parallel_memory_hold(double bytes);
void parallel_memory_release(double bytes);
/* Adds a load's estimated CPU seconds to the run's; returns 0, or -1 when
 * the run's total would pass limit (nothing added), with the run's total so
 * far in *so_far. */
int parallel_time_charge(double cpu_s, double limit, double *so_far);

/* Ties this process to its parent (pid parent, read before the fork): it
 * is killed when the parent dies, at once if it already has. Workers,
 * simulations and MPI ranks call it: a killed run leaves no process behind. */
void parallel_die_with(pid_t parent);

/* Under Open MPI's mpirun with more than one rank: MPI_Init (else nothing). */
int parallel_mpi_start(int *argc, char ***argv, tt_error *err);
void parallel_mpi_finish(void);

/* Whether this process writes the outputs: always, but for MPI ranks above 0. */
int parallel_is_writer(void);

#endif
