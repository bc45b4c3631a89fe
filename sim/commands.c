/* The subcommands ttasim registers: only ones that do something real. */
#include "sim/cli.h"

extern const cli_command cmd_run;
extern const cli_command cmd_model;
extern const cli_command cmd_bench;
extern const cli_command cmd_trace;

const cli_command *const CLI_COMMANDS[] = {
    &cmd_run,
    &cmd_model,
    &cmd_bench,
    &cmd_trace,
    NULL,
};
