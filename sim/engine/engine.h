/* engine.h: one SimGrid simulation in a child process.
 * SimGrid allows one engine per process, so each simulation forks: the child
 * loads the platform, creates actors, runs, and sends its result back. A
 * user's XML that SimGrid cannot load or route is TT_EINPUT naming the file;
 * the child dies with its parent and no temporary file outlives sim_run. */
#ifndef TT_ENGINE_H
#define TT_ENGINE_H

#include <stddef.h>

#include "common/error.h"
#include "platforms/platform.h"

typedef struct sim_job {
    const platform *platform;
    network_model network;
    /* In the child: create the actors; after the run, fill result (result_bytes).
     * An error either returns travels to the parent as sim_run's error. */
    int (*setup)(void *arg, tt_error *err);
    int (*collect)(void *arg, void *result, tt_error *err);
    void *arg;
    void *result; /* filled in the parent with result_bytes from collect */
    size_t result_bytes;
    int nodes; /* the platform's first nodes loaded (platform_fold_nodes); 0: all */
    double run_cpu_s; /* the estimated CPU seconds of the simulation beyond the load (collective rounds) */
} sim_job;

/* Refuses (TT_EINPUT, before the platform is written) a simulation whose
 * estimate (platform_estimate's load, plus run_cpu_s) exceeds the run's
 * memory or time; says on stderr what one expected to take long will
 * take (unless sim_set_quiet). */
int sim_run(const sim_job *job, tt_error *err);
/* No estimate line on stderr (--quiet). */
void sim_set_quiet(int quiet);

/* The memory a simulation may take: bytes set by --max-memory (0: unset),
 * else the least of MemAvailable, the cgroup's room and RLIMIT_AS; source
 * names where the limit came from. */
void sim_set_max_memory(double bytes);
/* The estimated CPU seconds one simulation (its platform's load and
 * collective rounds) may take, and the run's platform loads in all: a typo
 * in a size is refused at once, not after an hour (default 300). */
#define SIM_DEFAULT_MAX_LOAD_S 300
void sim_set_max_load_time(double seconds);
double sim_max_load_time(void);

/* In the simulation process, from a job's setup on: rank's SimGrid host
 * (sg_host_t), looked up once for every rank when the platform loaded (the
 * ranks of the nodes loaded). */
struct s4u_Host *sim_rank_host(int rank);
double sim_memory_limit(const char **source);

/* Loads the platform into SimGrid (in a child) and counts its hosts; the
 * child's peak resident set is what the load estimate is checked against. */
int sim_host_count(const platform *p, long *hosts, double *peak_rss_bytes, tt_error *err);

#endif
