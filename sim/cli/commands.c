/* The subcommands ttasim registers: only ones that do something real.
 * One line each (this file merges with git's union driver, see .gitattributes). */
#include "sim/cli/cli.h"

extern const cli_command cmd_run;
extern const cli_command cmd_check;
extern const cli_command cmd_train;
extern const cli_command cmd_trace;
extern const cli_command cmd_model;
extern const cli_command cmd_platform;
extern const cli_command cmd_bench;
extern const cli_command cmd_collective;
extern const cli_command cmd_merge;
extern const cli_command cmd_profile;
extern const cli_command cmd_calibrate;
extern const cli_command cmd_compare;
extern const cli_command cmd_plan;

const cli_command *const CLI_COMMANDS[] = {
    &cmd_run,
    &cmd_check,
    &cmd_train,
    &cmd_trace,
    &cmd_model,
    &cmd_platform,
    &cmd_bench,
    &cmd_collective,
    &cmd_merge,
    &cmd_profile,
    &cmd_calibrate,
    &cmd_compare,
    &cmd_plan,
    NULL,
};
