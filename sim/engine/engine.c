#include "sim/engine/engine.h"

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/engine.h>
#include <simgrid/host.h>

#ifdef TT_COVERAGE
void __gcov_dump(void); /* libgcov: _exit skips the atexit writer of the counters */
#endif

/* Writes all of buf to fd; -1 on error. */
static int write_all(int fd, const void *buf, size_t bytes)
{
    for (size_t off = 0; off < bytes;) {
        ssize_t w = write(fd, (const char *)buf + off, bytes - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* Reads up to bytes from fd; returns how many were read. */
static size_t read_all(int fd, void *buf, size_t bytes)
{
    size_t off = 0;
    while (off < bytes) {
        ssize_t r = read(fd, (char *)buf + off, bytes - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        off += (size_t)r;
    }
    return off;
}

/* Sends the parent a tt_error, then on success the result. The network
 * model's --cfg words come from platforms/network.c. */
static void child_main(const sim_job *job, const char *xml_path, int fd)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = "ttasim";
    argv[argc++] = "--log=root.thresh:warning";
    argc += network_simgrid_args(job->network, (const char **)argv + argc, 12);
#ifdef TT_SANITIZERS
    /* ASan cannot follow SimGrid's raw stack switching (false reports); threads it can. */
    argv[argc++] = "--cfg=contexts/factory:thread";
#endif
    argv[argc] = NULL;
    simgrid_init(&argc, argv);
    simgrid_load_platform(xml_path);
    tt_error err = {0};
    char *buf = calloc(1, job->result_bytes ? job->result_bytes : 1);
    if (!buf)
        tt_error_set(&err, TT_EINTERNAL, "out of memory in the simulation process");
    if (err.code == TT_OK && job->setup(job->arg, &err) == TT_OK) {
        simgrid_run();
        job->collect(job->arg, buf, &err);
    }
    int bad = write_all(fd, &err, sizeof err) || (err.code == TT_OK && write_all(fd, buf, job->result_bytes));
    free(buf);
    close(fd);
#ifdef TT_COVERAGE
    __gcov_dump();
#endif
    _exit(bad ? 3 : 0);
}

int sim_run(const sim_job *job, tt_error *err)
{
    char xml_path[] = "/tmp/ttasim-platform-XXXXXX";
    int xfd = mkstemp(xml_path);
    if (xfd < 0)
        return tt_error_set(err, TT_EINTERNAL, "cannot create a temporary platform file: %s", strerror(errno));
    FILE *xf = fdopen(xfd, "w");
    int rc = platform_write_xml(job->platform, xf, err);
    if (fclose(xf) != 0 && rc == TT_OK)
        rc = tt_error_set(err, TT_EINTERNAL, "cannot write %s", xml_path);
    if (rc != TT_OK) {
        unlink(xml_path);
        return rc;
    }
    int pfd[2];
    if (pipe(pfd) != 0) {
        unlink(xml_path);
        return tt_error_set(err, TT_EINTERNAL, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        unlink(xml_path);
        return tt_error_set(err, TT_EINTERNAL, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(pfd[0]);
        child_main(job, xml_path, pfd[1]);
    }
    close(pfd[1]);
    tt_error child_err = {0};
    size_t got = read_all(pfd[0], &child_err, sizeof child_err);
    if (got == sizeof child_err && child_err.code == TT_OK)
        got += read_all(pfd[0], job->result, job->result_bytes);
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    unlink(xml_path);
    if (got >= sizeof child_err && child_err.code != TT_OK) {
        child_err.msg[sizeof child_err.msg - 1] = '\0';
        return tt_error_set(err, child_err.code, "%s", child_err.msg);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != sizeof child_err + job->result_bytes)
        return tt_error_set(err, TT_EINTERNAL, "the simulation process failed (%s %d)",
                            WIFSIGNALED(status) ? "signal" : "exit status",
                            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return TT_OK;
}

static int no_actors(void *arg, tt_error *err)
{
    (void)arg;
    return TT_OK;
}

static int count_hosts(void *arg, void *result, tt_error *err)
{
    (void)arg;
    *(long *)result = (long)sg_host_count();
    return TT_OK;
}

int sim_host_count(const platform *p, long *hosts, tt_error *err)
{
    sim_job job = {p, NETWORK_IDEAL, no_actors, count_hosts, NULL, hosts, sizeof *hosts};
    return sim_run(&job, err);
}
