#include "common/parallel.h"

#include "config.h"

#include "common/fdio.h"
#include "common/infile.h"
#include "common/units.h"

#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define PARALLEL_MAX_JOBS 1024

#ifdef TT_COVERAGE
void __gcov_dump(void); /* libgcov: a worker's _exit skips the atexit writer of the counters */
#endif

/* MPI: this process's rank among the mpirun's (size 1 without mpirun), and
 * how deep in parallel_run calls we are: only the outermost shares its tasks
 * over the ranks (a task that runs parallel_run again keeps its tasks here). */
static int g_rank, g_size = 1, g_depth;

int parallel_jobs_default(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int parallel_jobs_parse(const char *text, int *jobs, tt_error *err)
{
    long v;
    int rc = units_parse_int("-j (parallel jobs)", text, 1, PARALLEL_MAX_JOBS, &v, err);
    if (rc == TT_OK)
        *jobs = (int)v;
    return rc;
}

void parallel_die_with(pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        raise(SIGKILL);
}

typedef struct worker {
    pid_t pid;
    int cmd_fd, res_fd; /* parent's ends: task indices out, results in */
    size_t task;        /* the task it runs; SIZE_MAX when idle */
} worker;

/* A worker: reads task indices until its command pipe closes, answers each with its result. */
static void worker_main(int cmd_fd, int res_fd, pid_t parent, size_t result_bytes, parallel_task task,
                        void *ctx)
{
    parallel_die_with(parent); /* an interrupted run leaves no workers behind */
    char *buf = malloc(result_bytes ? result_bytes : 1);
    size_t index;
    while (buf && fdio_read_all(cmd_fd, &index, sizeof index) == sizeof index) {
        memset(buf, 0, result_bytes);
        task(ctx, index, buf);
        fflush(NULL);
        if (fdio_write_all(res_fd, buf, result_bytes))
            _exit(3);
    }
#ifdef TT_COVERAGE
    __gcov_dump();
#endif
    _exit(buf ? 0 : 3);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Forks worker w; the child closes the other workers' pipes so each sees EOF when the parent closes its own. */
static int start_worker(worker *ws, int w, size_t result_bytes, parallel_task task, void *ctx, tt_error *err)
{
    int cmd[2], res[2];
    if (pipe(cmd) != 0)
        return tt_error_set(err, TT_EINTERNAL, "cannot start a parallel worker: pipe: %s", strerror(errno));
    if (pipe(res) != 0) {
        close(cmd[0]);
        close(cmd[1]);
        return tt_error_set(err, TT_EINTERNAL, "cannot start a parallel worker: pipe: %s", strerror(errno));
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(cmd[0]);
        close(cmd[1]);
        close(res[0]);
        close(res[1]);
        return tt_error_set(err, TT_EINTERNAL, "cannot start a parallel worker: fork: %s; run with -j 1",
                            strerror(errno));
    }
    if (pid == 0) {
        for (int i = 0; i < w; i++) {
            close(ws[i].cmd_fd);
            close(ws[i].res_fd);
        }
        close(cmd[1]);
        close(res[0]);
        worker_main(cmd[0], res[1], parent, result_bytes, task, ctx);
    }
    close(cmd[0]);
    close(res[1]);
    ws[w] = (worker){pid, cmd[1], res[0], SIZE_MAX};
    return TT_OK;
}

static int send_task(worker *wk, size_t index, tt_error *err)
{
    wk->task = index;
    if (fdio_write_all(wk->cmd_fd, &index, sizeof index))
        return tt_error_set(err, TT_EINTERNAL, "a parallel worker stopped taking tasks (task %zu)", index);
    return TT_OK;
}

/* The worker's result pipe closed early: it died running its task. */
static int worker_died(worker *wk, tt_error *err)
{
    int status = 0;
    close_fd(&wk->cmd_fd);
    while (waitpid(wk->pid, &status, 0) < 0 && errno == EINTR)
        ;
    wk->pid = 0;
    return tt_error_set(err, TT_EINTERNAL, "a parallel worker died running task %zu (%s %d%s); run with -j 1 "
                        "to see the failure in this process, or with fewer jobs or a lower --max-memory if the "
                        "system ran out of memory", wk->task, WIFSIGNALED(status) ? "signal" : "exit status",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                        WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? ": killed from outside, often by the "
                        "kernel when memory runs out" : "");
}

/* The budgets in memory shared with the forked processes; amounts in whole
 * bytes and milliseconds, updated with atomic operations. */
typedef struct budget {
    long long mem_total, mem_held, cpu_ms;
} budget;
static budget *g_budget;

static budget *budget_get(void)
{
    if (!g_budget) {
        void *m = mmap(NULL, sizeof *g_budget, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        g_budget = m == MAP_FAILED ? calloc(1, sizeof *g_budget) : m; /* unshared: still this process's budget */
    }
    return g_budget;
}

double parallel_memory_budget(double limit)
{
    budget *b = budget_get();
    if (!b)
        return limit;
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); /* ranks on this machine share its memory */
    double share = g_size > 1 && local && atoi(local) > 1 ? limit / atoi(local) : limit;
    long long want = share < 9e18 ? (long long)share : (long long)9e18, none = 0;
    __atomic_compare_exchange_n(&b->mem_total, &none, want > 0 ? want : 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return (double)__atomic_load_n(&b->mem_total, __ATOMIC_ACQUIRE);
}

void parallel_memory_hold(double bytes)
{
    budget *b = budget_get();
    long long want = (long long)bytes;
    if (!b || want <= 0)
        return;
    for (;;) {
        long long held = __atomic_load_n(&b->mem_held, __ATOMIC_ACQUIRE);
        /* alone it always fits (the caller checked): nothing else to wait for */
        if ((held == 0 || held + want <= b->mem_total) &&
            __atomic_compare_exchange_n(&b->mem_held, &held, held + want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return;
        usleep(10000);
    }
}

void parallel_memory_release(double bytes)
{
    budget *b = budget_get();
    if (b && (long long)bytes > 0)
        __atomic_sub_fetch(&b->mem_held, (long long)bytes, __ATOMIC_ACQ_REL);
}

int parallel_time_charge(double cpu_s, double limit, double *so_far)
{
    budget *b = budget_get();
    *so_far = b ? (double)__atomic_load_n(&b->cpu_ms, __ATOMIC_ACQUIRE) / 1000 : 0;
    if (!b || !(cpu_s <= limit)) /* alone past the limit (or not a number) */
        return !b && cpu_s <= limit ? 0 : -1;
    long long add = cpu_s * 1000 < 9e15 ? (long long)(cpu_s * 1000 + 0.5) : (long long)9e15;
    for (;;) {
        long long used = __atomic_load_n(&b->cpu_ms, __ATOMIC_ACQUIRE);
        *so_far = (double)used / 1000;
        if ((double)used / 1000 + cpu_s > limit)
            return -1;
        if (__atomic_compare_exchange_n(&b->cpu_ms, &used, used + add, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 0;
    }
}

int parallel_mpi_start(int *argc, char ***argv, tt_error *err)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE"); /* set by Open MPI's mpirun */
    if (!size || atoi(size) <= 1)
        return TT_OK;
    /* a rank dies with the mpirun (or daemon) that started it, killed or
     * not, and its workers and simulations with it (each dies with its parent) */
    parallel_die_with(getppid());
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return tt_error_set(err, TT_EINTERNAL, "MPI_Init failed under mpirun (%s ranks)", size);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    return TT_OK;
}

void parallel_mpi_finish(void)
{
    int started = 0;
    MPI_Initialized(&started);
    if (started)
        MPI_Finalize();
}

int parallel_is_writer(void)
{
    return g_rank == 0;
}

/* Every rank filled its own tasks' results and left the others zero: a
 * bitwise OR over the ranks gives everyone every result. The ranks also
 * agree on failure: the lowest failing rank's, named on all of them. */
static int mpi_combine(char *results, size_t bytes, int rc, tt_error *err)
{
    for (size_t off = 0; off < bytes; off += INT_MAX / 2) {
        size_t len = bytes - off < INT_MAX / 2 ? bytes - off : INT_MAX / 2;
        MPI_Allreduce(MPI_IN_PLACE, results + off, (int)len, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
    }
    int bad = rc ? g_rank : INT_MAX;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (bad != INT_MAX && rc == TT_OK)
        return tt_error_set(err, TT_EINTERNAL, "MPI rank %d could not run its tasks; run without mpirun to see "
                            "why", bad);
    return rc;
}

/* Tasks own[0..n) over nw forked workers, each given the next task as it finishes one. */
static int run_workers(const size_t *own, size_t n, int nw, size_t result_bytes, parallel_task task,
                       parallel_progress progress, void *ctx, char *results, worker *ws, struct pollfd *pfd,
                       tt_error *err)
{
    int rc = TT_OK, started = 0;
    size_t next = 0, done = 0;
    for (; rc == TT_OK && started < nw; started++) {
        rc = start_worker(ws, started, result_bytes, task, ctx, err);
        if (rc == TT_OK)
            rc = send_task(&ws[started], own[next++], err);
    }
    if (rc)
        return rc;
    while (done < n) {
        int np = 0;
        for (int w = 0; w < nw; w++)
            if (ws[w].task != SIZE_MAX)
                pfd[np++] = (struct pollfd){ws[w].res_fd, POLLIN, 0};
        if (poll(pfd, (nfds_t)np, -1) < 0) {
            if (errno == EINTR)
                continue;
            return tt_error_set(err, TT_EINTERNAL, "poll: %s", strerror(errno));
        }
        for (int w = 0, k = 0; w < nw; w++) {
            if (ws[w].task == SIZE_MAX)
                continue;
            if (!pfd[k++].revents)
                continue;
            char *dst = results + ws[w].task * result_bytes;
            if (fdio_read_all(ws[w].res_fd, dst, result_bytes) != result_bytes)
                return worker_died(&ws[w], err);
            ws[w].task = SIZE_MAX;
            done++;
            if (progress)
                progress(ctx, done, n);
            if (next < n) {
                if ((rc = send_task(&ws[w], own[next++], err)))
                    return rc;
            } else {
                close_fd(&ws[w].cmd_fd); /* no more work: the worker exits */
            }
        }
    }
    return TT_OK;
}

/* Tasks own[0..m) here: in this process with one job, else over forked workers. */
static int run_local(const size_t *own, size_t m, int jobs, size_t result_bytes, parallel_task task,
                     parallel_progress progress, void *ctx, char *out, tt_error *err)
{
    if (jobs <= 1 || m <= 1) {
        for (size_t k = 0; k < m; k++) {
            task(ctx, own[k], out + own[k] * result_bytes);
            if (progress)
                progress(ctx, k + 1, m);
        }
        return TT_OK;
    }
    int nw = (size_t)jobs < m ? jobs : (int)m;
    worker *ws = calloc((size_t)nw, sizeof *ws);
    struct pollfd *pfd = calloc((size_t)nw, sizeof *pfd);
    if (!ws || !pfd) {
        free(ws);
        free(pfd);
        return tt_error_set(err, TT_EINTERNAL, "out of memory starting %d workers; free some memory or use "
                            "fewer jobs (-j)", nw);
    }
    for (int w = 0; w < nw; w++)
        ws[w] = (worker){0, -1, -1, SIZE_MAX};
    int rc = run_workers(own, m, nw, result_bytes, task, progress, ctx, out, ws, pfd, err);
    for (int w = 0; w < nw; w++) {
        close_fd(&ws[w].cmd_fd);
        close_fd(&ws[w].res_fd);
        if (ws[w].pid <= 0)
            continue;
        if (rc != TT_OK)
            kill(ws[w].pid, SIGKILL);
        while (waitpid(ws[w].pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    free(ws);
    free(pfd);
    return rc;
}

int parallel_run(size_t n, int jobs, size_t result_bytes, parallel_task task, parallel_progress progress,
                 void *ctx, void *results, tt_error *err)
{
    char *out = results;
    int share = g_size > 1 && g_depth == 0; /* over the MPI ranks: task i on rank i mod size */
    /* the files the tasks read count for the run (outputs never replace
     * one), apart from those read before them (infile.h) */
    if (g_depth == 0 && (infile_share(err) != TT_OK || !budget_get()))
        return err->code ? err->code : tt_error_set(err, TT_EINTERNAL, "out of memory for the run's budgets");
    if (g_depth == 0)
        infile_next_phase();
    size_t *own = malloc(sizeof *own * (n + 1)), m = 0;
    if (!own)
        return tt_error_set(err, TT_EINTERNAL, "out of memory listing %zu tasks; free some memory", n);
    for (size_t i = 0; i < n; i++)
        if (!share || (int)(i % (size_t)g_size) == g_rank)
            own[m++] = i;
    memset(out, 0, n * result_bytes);
    g_depth++;
    int rc = run_local(own, m, jobs, result_bytes, task, progress, ctx, out, err);
    g_depth--;
    free(own);
    if (share)
        rc = mpi_combine(out, n * result_bytes, rc, err);
    return rc;
}
