/* ttasim: how long, and at what cost, a model takes to reach its target
 * accuracy on a cluster, at a batch size. This file only dispatches. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/jsonx.h"
#include "common/outfile.h"
#include "common/parallel.h"
#include "common/units.h"
#include "config.h"
#include "sim/cli/cli.h"
#include "sim/engine/engine.h"

static void global_help(FILE *out)
{
    fprintf(out,
            "usage: ttasim [--help] [--version] COMMAND [ARGS] [--max-memory SIZE] [--max-time S]\n\n"
            "Predicts per-step cost and time-to-accuracy of data-parallel training on\n"
            "simulated clusters (SimGrid), with a real training core (OpenBLAS).\n\n"
            "Commands:\n");
    for (int i = 0; CLI_COMMANDS[i]; i++)
        fprintf(out, "  %-12s %s\n", CLI_COMMANDS[i]->name, CLI_COMMANDS[i]->summary);
    fprintf(out, "\nEvery command that simulates estimates a platform's memory before building it and\n"
                 "refuses one that will not fit or run in time (exit 2, with the estimate and what to change);\n"
                 "one estimated to take long says so on stderr first:\n"
                 "  --max-memory SIZE  the memory the run's simulations may use at once, all -j workers\n"
                 "                     together (\"4G\", \"512Mi\"); default the least of MemAvailable,\n"
                 "                     the cgroup's room and ulimit -v\n"
                 "  --max-time S       the CPU seconds one simulation may take (its platform's load\n"
                 "                     and collective rounds), and the run's platform loads in all\n"
                 "                     (default %d)\n"
                 "\nRun 'ttasim COMMAND --help' for a command's options.\n"
                 "Exit status: 0 success, 1 an expectation or target not met, 2 usage or input error.\n",
            SIM_DEFAULT_MAX_LOAD_S);
}

/* An interrupted command leaves no half-written output behind: the
 * temporary files go, then the signal takes its default course. */
static void on_terminate(int sig)
{
    outfile_remove_pending();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int dispatch(int argc, char **argv);

/* --max-memory SIZE and --max-time SECONDS (or =VALUE) anywhere on the line
 * apply to every command's simulations: taken out of argv before the
 * command parses it. */
static int take_limits(int *argc, char **argv)
{
    static const char *const opt[2] = {"--max-memory", "--max-time"};
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *v = NULL;
        int which = -1;
        for (int k = 0; k < 2 && which < 0; k++) {
            size_t len = strlen(opt[k]);
            if (strcmp(argv[i], opt[k]) == 0) {
                if (i + 1 >= *argc)
                    return fprintf(stderr, "ttasim: %s needs a value (\"%s\")\n", opt[k], k ? "600" : "4G"), TT_EINPUT;
                which = k;
                v = argv[++i];
            } else if (strncmp(argv[i], opt[k], len) == 0 && argv[i][len] == '=') {
                which = k;
                v = argv[i] + len + 1;
            }
        }
        if (which < 0) {
            argv[out++] = argv[i];
            continue;
        }
        double x;
        const char *why = NULL;
        int bad = (which ? units_parse_seconds(v, &x, &why) : units_parse_bytes(v, &x, &why)) != 0 || x <= 0;
        if (bad)
            return fprintf(stderr, "ttasim: %s %s: expected a positive %s%s%s\n", opt[which], v,
                           which ? "number of seconds (\"600\", \"1.5\")" : "size in bytes (\"4G\", \"512Mi\")",
                           why ? ": " : "", why ? why : ""), TT_EINPUT;
        if (which)
            sim_set_max_load_time(x);
        else
            sim_set_max_memory(x);
    }
    argv[out] = NULL;
    *argc = out;
    return TT_OK;
}

/* A closed standard descriptor would be taken by the first file opened (an
 * output's temporary file would get the report): each gets /dev/null, read
 * only, so writes to it fail and are reported. */
static void hold_standard_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int n = open("/dev/null", O_RDONLY);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
}

/* Everything printed must have arrived: a full disk or a closed pipe under
 * the report is an error (exit 2), never a truncated document and exit 0. */
static int close_stdout(int rc)
{
    int failed = ferror(stdout), e = 0;
    errno = 0;
    if (fflush(stdout) != 0) /* a buffer that did not go out is written again: the reason comes back */
        e = errno ? errno : EIO;
    else if (failed)
        e = EIO;
    if (fclose(stdout) != 0 && !e)
        e = errno ? errno : EIO;
    if (!e)
        return rc;
    fprintf(stderr, "ttasim: cannot write standard output: %s; the output is incomplete\n", strerror(e));
    return TT_EINPUT;
}

/* Under mpirun every rank runs the command, sharing its points or scenarios;
 * rank 0 alone prints and writes, so the bytes are a serial run's. The exit
 * status is 0, 1 or 2 whatever happens: an internal failure (memory, disk,
 * a process killed) is reported with what to change and exits 2. */
int main(int argc, char **argv)
{
    tt_error err = {0};
    hold_standard_fds();
    if (parallel_mpi_start(&argc, &argv, &err))
        return cli_report_error(TT_EINPUT, err.msg);
    if (!parallel_is_writer() && (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)))
        return TT_EINPUT;
    int rc = dispatch(argc, argv);
    rc = close_stdout(rc);
    fflush(NULL);
    parallel_mpi_finish();
    return rc == TT_OK || rc == TT_EFAIL ? rc : TT_EINPUT;
}

static int dispatch(int argc, char **argv)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_terminate;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    /* a closed pipe and a file size limit are write errors (EPIPE, EFBIG),
     * reported with exit 2, not signals that kill the run mid-write */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    if (take_limits(&argc, argv) != TT_OK)
        return TT_EINPUT;
    if (argc < 2) {
        global_help(stderr);
        return TT_EINPUT;
    }
    const char *word = argv[1];
    if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0 || strcmp(word, "help") == 0) {
        global_help(stdout);
        return TT_OK;
    }
    if (strcmp(word, "--version") == 0 || strcmp(word, "-V") == 0) {
        printf("ttasim %s\n", PACKAGE_VERSION);
        return TT_OK;
    }
    const cli_command *cmd = cli_find(word);
    if (!cmd) {
        const char *names[64];
        int n = 0;
        for (; CLI_COMMANDS[n] && n < 63; n++)
            names[n] = CLI_COMMANDS[n]->name;
        names[n] = NULL;
        const char *near = word[0] == '-' ? NULL : jx_closest(word, names);
        fprintf(stderr, "ttasim: unknown %s '%s'%s%s%s\nusage: ttasim [--help] [--version] COMMAND [ARGS]\n",
                word[0] == '-' ? "option" : "command", word, near ? " (did you mean '" : "",
                near ? near : "", near ? "'?)" : "");
        return TT_EINPUT;
    }
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: ttasim %s\n\n", cmd->usage);
            cmd->help(stdout);
            return TT_OK;
        }
    return cmd->run(argc - 1, argv + 1);
}
