#include "sim/engine/engine.h"

#include "config.h"

#include "common/fdio.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>

#include "common/parallel.h"
#include "common/scratch.h"
#include "common/units.h"

#ifdef TT_COVERAGE
void __gcov_dump(void); /* libgcov: _exit skips the atexit writer of the counters */
#endif

/* Where the child is, in memory shared with the parent: SimGrid aborts the
 * process on a malformed platform or a missing route, and the parent then
 * names what was being done. */
typedef struct child_progress {
    volatile int stage;
    volatile int from_rank, to_rank; /* STAGE_ROUTE */
} child_progress;

enum { STAGE_START, STAGE_LOAD, STAGE_ROUTE, STAGE_RUN };

static int no_route(const platform *p, const char *xml, int a, int b, tt_error *err)
{
    char ha[256], hb[256];
    return tt_error_set(err, TT_EINPUT, "%s: SimGrid has no route from host \"%s\" (rank %d) to host \"%s\" (rank %d); "
                        "add the route to the XML (every rank must reach every other)", xml,
                        platform_rank_host(p, a, ha, sizeof ha), a, platform_rank_host(p, b, hb, sizeof hb), b);
}

static sg_host_t *rank_host; /* the child's rank -> host, filled by check_rank_hosts */

/* The nodes a job loads: the platform's, or the fewer it asks for. */
static int job_nodes(const sim_job *job)
{
    int all = platform_nodes(job->platform);
    return job->nodes > 0 && job->nodes < all ? job->nodes : all;
}

sg_host_t sim_rank_host(int rank)
{
    return rank_host[rank];
}

static int by_host_name(const void *a, const void *b)
{
    return strcmp(sg_host_get_name(*(const sg_host_t *)a), sg_host_get_name(*(const sg_host_t *)b));
}

/* Every rank's host must be in the loaded platform (a user's rank_hosts file
 * may name one their XML lacks); with a user's XML, the routes between ranks
 * platform_route_pair lists must have a link (SimGrid would abort the run
 * on an empty one). The
 * hosts are found by bisection in one sorted list: sg_host_by_name searches
 * zone by zone, which over thousands of nodes' zones was quadratic. */
static int check_rank_hosts(const platform *p, int nodes, const char *xml, child_progress *pr, tt_error *err)
{
    int n = platform_ranks_per_node(p) * nodes;
    size_t nh = sg_host_count();
    sg_host_t *all = sg_host_list(), *h = rank_host = malloc(sizeof *h * (size_t)n);
    char name[256];
    if (!h || !all) {
        free(all);
        return tt_error_set(err, TT_EINTERNAL, "out of memory in the simulation process");
    }
    qsort(all, nh, sizeof *all, by_host_name);
    for (int r = 0; r < n; r++) {
        size_t lo = 0, hi = nh;
        platform_rank_host(p, r, name, sizeof name);
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (strcmp(sg_host_get_name(all[mid]), name) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nh || strcmp(sg_host_get_name(all[lo]), name) != 0) {
            free(all);
            return tt_error_set(err, TT_EINPUT, "%s: rank %d's host \"%s\" (platform %s's rank_hosts) is not a host of "
                                "this SimGrid XML; fix the rank_hosts file or add the host to the XML",
                                xml, r, name, platform_name(p));
        }
        h[r] = all[lo];
    }
    free(all);
    pr->stage = STAGE_ROUTE;
    if (platform_user_xml(p))
        simgrid_run_until(0.0); /* seals the platform: Floyd and others compute their routes then */
    xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
    int rc = TT_OK, a, b;
    for (long k = 0; rc == TT_OK && platform_user_xml(p) && platform_route_pair(n, k, &a, &b); k++)
        if (h[a] != h[b]) {
            pr->from_rank = a;
            pr->to_rank = b;
            xbt_dynar_reset(links);
            sg_host_get_route(h[a], h[b], links);
            if (xbt_dynar_is_empty(links))
                rc = no_route(p, xml, a, b, err);
        }
    xbt_dynar_free(&links);
    return rc; /* rank_host lives as long as the child */
}

/* A torus side of 2: the cable SimGrid routes a pair over carries its twin's
 * share too (platform_paired_link). */
static void pair_torus_links(const platform *p)
{
    char name[96];
    for (long k = 0; platform_paired_link(p, k, name, sizeof name); k++) {
        sg_link_t l = sg_link_by_name(name);
        if (l)
            sg_link_set_bandwidth(l, 2 * sg_link_get_bandwidth(l));
    }
}

/* A multi-pod torus: the pods' dimension is the data-centre network, at its
 * own rate and latency (platform_dcn_link). */
static void set_dcn_links(const platform *p, network_model net)
{
    char name[96];
    double bw, lat;
    for (long k = 0; platform_dcn_link(p, net, k, name, sizeof name, &bw, &lat); k++) {
        sg_link_t l = sg_link_by_name(name);
        if (l) {
            sg_link_set_bandwidth(l, bw);
            sg_link_set_latency(l, lat);
        }
    }
}

/* Sends the parent a tt_error, then on success the result. The network
 * model's --cfg words come from platforms/network.c. */
static void child_main(const sim_job *job, const char *xml_path, const char *xml_name, child_progress *pr, int fd)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = "ttasim";
    argv[argc++] = "--log=root.thresh:warning";
    argc += network_simgrid_args(job->platform, job->network, (const char **)argv + argc, 12);
#ifdef TT_SANITIZERS
    /* ASan cannot follow SimGrid's raw stack switching (false reports); threads it can. */
    argv[argc++] = "--cfg=contexts/factory:thread";
#endif
    argv[argc] = NULL;
    simgrid_init(&argc, argv);
    pr->stage = STAGE_LOAD;
    simgrid_load_platform(xml_path);
    pair_torus_links(job->platform);
    set_dcn_links(job->platform, job->network);
    tt_error err = {0};
    char *buf = calloc(1, job->result_bytes ? job->result_bytes : 1);
    if (!buf)
        tt_error_set(&err, TT_EINTERNAL, "out of memory in the simulation process");
    if (err.code == TT_OK && check_rank_hosts(job->platform, job_nodes(job), xml_name, pr, &err) == TT_OK) {
        pr->stage = STAGE_RUN;
        if (job->setup(job->arg, &err) == TT_OK) {
            simgrid_run();
            job->collect(job->arg, buf, &err);
        }
    }
    int bad = fdio_write_all(fd, &err, sizeof err) ||
              (err.code == TT_OK && fdio_write_all(fd, buf, job->result_bytes));
    free(buf);
    close(fd);
#ifdef TT_COVERAGE
    __gcov_dump();
#endif
    _exit(bad ? 3 : 0);
}

/* The platform XML in a file unlinked as soon as it exists: the child
 * reads it through the descriptor it inherits, so no signal, crash or kill
 * can leave it behind. Returns the descriptor, or -1 with err set. */
static int write_platform_xml(const platform *p, network_model net, int nodes, tt_error *err)
{
    int fd = scratch_open("platform file", err);
    if (fd < 0)
        return -1;
    int keep = dup(fd);
    FILE *f = keep < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        close(fd);
        if (keep >= 0)
            close(keep);
        return tt_error_set(err, TT_EINTERNAL, "cannot write the temporary platform file: %s", strerror(errno)), -1;
    }
    int rc = platform_write_xml_nodes(p, net, nodes, f, err);
    if (fclose(f) != 0 && rc == TT_OK)
        rc = tt_error_set(err, TT_EINTERNAL, "cannot write the temporary platform file: %s; set TMPDIR "
                          "to a directory with space", strerror(errno));
    if (rc != TT_OK) {
        close(keep);
        return -1;
    }
    return keep;
}

/* The child died: a user's XML that SimGrid could not load or route is an
 * input error naming their file; anything else is ours. */
static int child_failure(const sim_job *job, const child_progress *pr, int status, tt_error *err)
{
    const platform *p = job->platform;
    const char *user = platform_user_xml(p);
    if (user && pr->stage == STAGE_LOAD)
        return tt_error_set(err, TT_EINPUT, "%s: SimGrid cannot load this platform XML (its message is above); fix "
                            "the file (SimGrid's platform DTD: simgrid.dtd, version 4.1)", user);
    char a[256], b[256];
    if (user && pr->stage == STAGE_ROUTE) /* Floyd, Dijkstra: abort instead of returning no link */
        return tt_error_set(err, TT_EINPUT, "%s: SimGrid failed to route host \"%s\" (rank %d) to host \"%s\" "
                            "(rank %d) (its message is above); check the XML's routes (every rank must reach "
                            "every other)", user, platform_rank_host(p, pr->from_rank, a, sizeof a), pr->from_rank,
                            platform_rank_host(p, pr->to_rank, b, sizeof b), pr->to_rank);
    if (user && pr->stage == STAGE_RUN) /* past the checked routes: one the run took */
        return tt_error_set(err, TT_EINPUT, "%s: SimGrid stopped the simulation on this platform XML (its message is "
                            "above), most likely on a route between two ranks that is missing; check the XML's routes "
                            "(every rank must reach every other)", user);
    return tt_error_set(err, TT_EINTERNAL, "the simulation process failed (%s %d%s) on platform %s; free some "
                        "memory, set a lower --max-memory or use fewer nodes if it ran out of memory",
                        WIFSIGNALED(status) ? "signal" : "exit status",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                        WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? ": killed from outside, often by the "
                        "kernel when memory runs out" : "", platform_name(p));
}

static int no_actors(void *arg, tt_error *err);

static double max_memory_bytes; /* 0: what the machine lets this process have */
static double max_load_s = SIM_DEFAULT_MAX_LOAD_S;
static int quiet;

/* A simulation estimated to take at least this many CPU seconds says so on
 * stderr before it starts: a long run is then expected, not suspected hung. */
#define SIM_ANNOUNCE_S 20.0

void sim_set_quiet(int q)
{
    quiet = q;
}

void sim_set_max_memory(double bytes)
{
    max_memory_bytes = bytes;
}

void sim_set_max_load_time(double seconds)
{
    max_load_s = seconds;
}

double sim_max_load_time(void)
{
    return max_load_s;
}

/* A number read from a one-line file (cgroup limits); -1 if absent or "max". */
static double read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    double v = -1;
    if (f && fscanf(f, "%lf", &v) != 1)
        v = -1;
    if (f)
        fclose(f);
    return v;
}

/* The cgroup's inactive page cache (memory.stat "inactive_file"); 0 if absent. */
static double cgroup_inactive_file_bytes(void)
{
    FILE *f = fopen("/sys/fs/cgroup/memory.stat", "r");
    char line[256];
    double v = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "inactive_file %lf", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

double sim_memory_limit(const char **source)
{
    if (max_memory_bytes > 0)
        return *source = "--max-memory", max_memory_bytes;
    double limit = INFINITY, kib;
    *source = "no limit found";
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1 && kib * 1024 < limit)
            limit = kib * 1024, *source = "MemAvailable in /proc/meminfo";
    if (f)
        fclose(f);
    double max = read_number("/sys/fs/cgroup/memory.max"), used = read_number("/sys/fs/cgroup/memory.current");
    used -= cgroup_inactive_file_bytes(); /* page cache the kernel reclaims first is room, as MemAvailable counts it */
    if (max > 0 && max - (used > 0 ? used : 0) < limit)
        limit = max - (used > 0 ? used : 0),
        *source = "the cgroup's room (memory.max less memory.current, inactive page cache aside)";
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < limit)
        limit = (double)rl.rlim_cur, *source = "RLIMIT_AS (ulimit -v)";
    return limit;
}

/* Refuses, before anything is written, a platform whose load estimate does
 * not fit the run's budgets (parallel.h): memory, with what fits, and CPU
 * seconds in all, with what it takes. *hold: the bytes to hold while it runs. */
static int check_estimate(const sim_job *job, double *hold, tt_error *err)
{
    const platform *p = job->platform;
    platform_load_cost c;
    double actors = job->setup == no_actors ? 0 : 1, before;
    platform_estimate(p, job_nodes(job), actors, &c);
    const char *source;
    double limit = parallel_memory_budget(sim_memory_limit(&source)), cpu_s = c.cpu_s + job->run_cpu_s;
    *hold = c.memory_bytes;
    /* one simulation, load and rounds, against the limit; the loads alone charged across the run (a
     * check of every shipped scenario runs hundreds of simulations) */
    if (c.memory_bytes <= limit && cpu_s <= max_load_s && parallel_time_charge(c.cpu_s, max_load_s, &before) == 0) {
        if (!quiet && cpu_s >= SIM_ANNOUNCE_S)
            fprintf(stderr, "ttasim: simulating on %d nodes of %s (%d accelerators%s): about %.0f CPU seconds "
                    "(estimate: %.0f to load the platform, %.0f for the collectives' rounds)\n", platform_nodes(p),
                    platform_name(p), platform_ranks(p), job_nodes(job) < platform_nodes(p) ? ", folded" : "",
                    cpu_s, c.cpu_s, job->run_cpu_s);
        return TT_OK;
    }
    if (c.memory_bytes <= limit && cpu_s > max_load_s && job->run_cpu_s <= 0)
        return tt_error_set(err, TT_EINPUT, "platform %s with %d nodes (%d accelerators) would take about %.3g CPU "
                            "seconds to load into SimGrid (%.0f hosts, %.0f zones), more than --max-time %g; use "
                            "fewer nodes, or set --max-time SECONDS (platforms/README.md, \"Load estimate\")",
                            platform_name(p), platform_nodes(p), platform_ranks(p), c.cpu_s, c.hosts, c.zones,
                            max_load_s);
    if (c.memory_bytes <= limit && cpu_s > max_load_s)
        return tt_error_set(err, TT_EINPUT, "platform %s with %d nodes (%d accelerators) would take about %.3g CPU "
                            "seconds to simulate (%.3g to load into SimGrid: %.0f hosts, %.0f zones; %.3g for the "
                            "collectives' rounds), more than --max-time %g; use fewer nodes, or set --max-time "
                            "SECONDS (platforms/README.md, \"Load estimate\")", platform_name(p), platform_nodes(p),
                            platform_ranks(p), cpu_s, c.cpu_s, c.hosts, c.zones, job->run_cpu_s, max_load_s);
    if (c.memory_bytes <= limit)
        return tt_error_set(err, TT_EINPUT, "platform %s with %d nodes: this run's simulations would take about "
                            "%.3g CPU seconds to load their platforms in all (%.3g so far, %.3g this one), more than "
                            "--max-time %g; run fewer points (sweep or --shard), or set --max-time SECONDS",
                            platform_name(p), platform_nodes(p), before + c.cpu_s, before, c.cpu_s, max_load_s);
    int fit = platform_estimate_max_nodes(p, actors, limit);
    char fewer[96] = "", need[32], have[32];
    if (fit > 0)
        snprintf(fewer, sizeof fewer, "at most %d nodes (--nodes or platform.nodes), ", fit);
    return tt_error_set(err, TT_EINPUT, "platform %s with %d nodes (%d accelerators) needs an estimated %sB "
                        "to load into SimGrid (%.0f hosts, %.0f links, %.0f routes, %.0f zones; about %.3g CPU "
                        "seconds), more than the %sB this run's simulations may use (%s); use %sfewer ranks, or "
                        "set --max-memory SIZE if the estimate is too high for your machine (platforms/README.md, "
                        "\"Load estimate\")", platform_name(p), platform_nodes(p), platform_ranks(p),
                        units_format_bytes(c.memory_bytes, need, sizeof need), c.hosts, c.links, c.routes, c.zones,
                        c.cpu_s, units_format_bytes(limit, have, sizeof have), source, fewer);
}

int sim_run(const sim_job *job, tt_error *err)
{
    const char *user = platform_user_xml(job->platform);
    int xfd = -1;
    double hold;
    if (check_estimate(job, &hold, err) != TT_OK)
        return err->code;
    /* a user's XML too: SimGrid gets a checked copy (user_xml.c), by a name
     * that does not end in .so (which it would load as code) */
    char xml_path[64];
    if ((xfd = write_platform_xml(job->platform, job->network, job_nodes(job), err)) < 0)
        return err->code;
    snprintf(xml_path, sizeof xml_path, "/proc/self/fd/%d", xfd);
    /* the run's simulations together stay within its memory (-j workers wait their turn) */
    parallel_memory_hold(hold);
    child_progress *pr = mmap(NULL, sizeof *pr, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int pfd[2] = {-1, -1};
    if (pr == MAP_FAILED || pipe(pfd) != 0) {
        int e = errno;
        if (pr != MAP_FAILED)
            munmap(pr, sizeof *pr);
        if (xfd >= 0)
            close(xfd);
        parallel_memory_release(hold);
        return tt_error_set(err, TT_EINTERNAL, "cannot start a simulation: %s; free some memory", strerror(e));
    }
    pr->stage = STAGE_START;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    int fork_errno = errno;
    if (pid == 0) {
        parallel_die_with(parent); /* a simulation nobody reads is waste */
        close(pfd[0]);
        child_main(job, xml_path, user ? user : "the generated platform XML", pr, pfd[1]);
    }
    close(pfd[1]);
    tt_error child_err = {0};
    size_t got = 0;
    if (pid > 0) {
        got = fdio_read_all(pfd[0], &child_err, sizeof child_err);
        if (got == sizeof child_err && child_err.code == TT_OK)
            got += fdio_read_all(pfd[0], job->result, job->result_bytes);
    }
    close(pfd[0]);
    if (xfd >= 0)
        close(xfd);
    int status = 0, rc = TT_OK;
    if (pid < 0)
        rc = tt_error_set(err, TT_EINTERNAL, "cannot start a simulation process: %s; free some memory or use "
                          "fewer jobs (-j)", strerror(fork_errno));
    else
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    parallel_memory_release(hold);
    if (rc == TT_OK && got >= sizeof child_err && child_err.code != TT_OK) {
        child_err.msg[sizeof child_err.msg - 1] = '\0';
        rc = tt_error_set(err, child_err.code, "%s", child_err.msg);
    } else if (rc == TT_OK && (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
                               got != sizeof child_err + job->result_bytes)) {
        rc = child_failure(job, pr, status, err);
    }
    munmap(pr, sizeof *pr);
    return rc;
}

static int no_actors(void *arg, tt_error *err)
{
    (void)arg;
    return TT_OK;
}

static int count_hosts(void *arg, void *result, tt_error *err)
{
    (void)arg;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double *out = result;
    out[0] = (double)sg_host_count();
    out[1] = (double)ru.ru_maxrss * 1024.0;
    return TT_OK;
}

int sim_host_count(const platform *p, long *hosts, double *peak_rss_bytes, tt_error *err)
{
    double out[2] = {0, 0};
    sim_job job = {p, NETWORK_IDEAL, no_actors, count_hosts, NULL, out, sizeof out, 0, 0};
    int rc = sim_run(&job, err);
    *hosts = (long)out[0];
    *peak_rss_bytes = out[1];
    return rc;
}
