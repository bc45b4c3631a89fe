/* The subcommands ttasim registers: only ones that do something real. */
#include "sim/cli.h"

extern const cli_command cmd_run;
extern const cli_command cmd_check;
extern const cli_command cmd_train;
extern const cli_command cmd_platform;

const cli_command *const CLI_COMMANDS[] = {
    &cmd_run,
    &cmd_check,
    &cmd_train,
    &cmd_platform,
    NULL,
};
