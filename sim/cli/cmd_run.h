/* cmd_run.h: 'ttasim run' and 'ttasim merge' share their options and reports. */
#ifndef TT_CMD_RUN_H
#define TT_CMD_RUN_H

#include "sim/cli/cli.h"

/* Runs `cmd` (argv[0] its name): merge takes SCENARIO SHARD... and runs no sweep point itself. */
int run_command(const cli_command *cmd, int argc, char **argv, int merge);

#endif
