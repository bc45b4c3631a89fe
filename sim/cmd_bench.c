/* ttasim bench TARGET: measured speed of this machine's run, one target per area. */
#include <stdio.h>
#include <string.h>

#include "sim/bench_sim.h"
#include "sim/cli.h"

extern const cli_command cmd_bench;

static const struct bench_target {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the target's name */
    const char *summary;
} TARGETS[] = {
    {"sim", bench_sim_main, "collective executor: 100 MB ring allreduce at 256-4096 ranks"},
    {NULL, NULL, NULL},
};

static void bench_help(FILE *out)
{
    fprintf(out, "ttasim bench TARGET [options]  (ttasim bench TARGET --help for its options)\n\n");
    for (int i = 0; TARGETS[i].name; i++)
        fprintf(out, "  %-8s %s\n", TARGETS[i].name, TARGETS[i].summary);
}

static int bench_main(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error(&cmd_bench, "missing the target");
    for (int i = 0; TARGETS[i].name; i++)
        if (strcmp(argv[1], TARGETS[i].name) == 0)
            return TARGETS[i].run(argc - 1, argv + 1);
    if (strcmp(argv[1], "--help") == 0) {
        bench_help(stdout);
        return 0;
    }
    return cli_usage_error(&cmd_bench, "unknown target '%s'", argv[1]);
}

const cli_command cmd_bench = {
    "bench", "measured speed of this machine's run", "bench sim [--json]", bench_main, bench_help,
};
