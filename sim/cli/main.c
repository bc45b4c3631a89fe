/* ttasim: how long, and at what cost, a model takes to reach its target
 * accuracy on a cluster, at a batch size. This file only dispatches. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

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
                 "refuses one that will not fit or load in time (exit 2, with the estimate and what to change):\n"
                 "  --max-memory SIZE  the memory a simulation may use (\"4G\", \"512Mi\"); default the\n"
                 "                     least of MemAvailable, the cgroup's room and ulimit -v\n"
                 "  --max-time S       the CPU seconds loading a platform may take (default 3600)\n"
                 "\nRun 'ttasim COMMAND --help' for a command's options.\n"
                 "Exit status: 0 success, 1 an expectation or target not met, 2 usage or input error.\n");
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

/* Under mpirun every rank runs the command, sharing its points or scenarios;
 * rank 0 alone prints and writes, so the bytes are a serial run's. */
int main(int argc, char **argv)
{
    tt_error err = {0};
    if (parallel_mpi_start(&argc, &argv, &err))
        return cli_report_error(err.code, err.msg);
    if (!parallel_is_writer() && (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)))
        return TT_EINTERNAL;
    int rc = dispatch(argc, argv);
    fflush(NULL);
    parallel_mpi_finish();
    return rc;
}

static int dispatch(int argc, char **argv)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_terminate;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
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
