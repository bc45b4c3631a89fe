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

/* The network model's --cfg words come from platforms/network.c. */
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
    job->setup(job->arg);
    simgrid_run();
    char *buf = calloc(1, job->result_bytes ? job->result_bytes : 1);
    job->collect(job->arg, buf);
    size_t off = 0;
    while (off < job->result_bytes) {
        ssize_t w = write(fd, buf + off, job->result_bytes - off);
        if (w <= 0)
            _exit(3);
        off += (size_t)w;
    }
    free(buf);
    close(fd);
    _exit(0);
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
    size_t off = 0;
    char *out = job->result;
    while (off < job->result_bytes) {
        ssize_t r = read(pfd[0], out + off, job->result_bytes - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        off += (size_t)r;
    }
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    unlink(xml_path);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || off != job->result_bytes)
        return tt_error_set(err, TT_EINTERNAL, "the simulation process failed (%s %d)",
                            WIFSIGNALED(status) ? "signal" : "exit status",
                            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return TT_OK;
}

static void no_actors(void *arg)
{
    (void)arg;
}

static void count_hosts(void *arg, void *result)
{
    (void)arg;
    *(long *)result = (long)sg_host_count();
}

int sim_host_count(const platform *p, long *hosts, tt_error *err)
{
    sim_job job = {p, NETWORK_IDEAL, no_actors, count_hosts, NULL, hosts, sizeof *hosts};
    return sim_run(&job, err);
}
