/* The subcommands ttasim registers: only ones that do something real. */
#include "sim/cli.h"

extern const cli_command cmd_run;
extern const cli_command cmd_check;
extern const cli_command cmd_collective;
extern const cli_command cmd_bench;

const cli_command *const CLI_COMMANDS[] = {
    &cmd_run,
    &cmd_check,
    &cmd_collective,
    &cmd_bench,
    NULL,
};
