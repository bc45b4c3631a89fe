/* cli.h: the ttasim subcommands and the helpers they share. */
#ifndef TT_CLI_H
#define TT_CLI_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *usage; /* one line after "usage: ttasim " */
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    void (*help)(FILE *out);
} cli_command;

/* The registered commands, NULL-terminated (sim/commands.c). */
extern const cli_command *const CLI_COMMANDS[];

const cli_command *cli_find(const char *name);

/* Prints "ttasim CMD: message" and the usage line to stderr; returns 2. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* For getopt_long's '?' and ':' returns: names the bad option, suggests the
 * closest long option, and returns 2. */
int cli_bad_option(const cli_command *cmd, char **argv, int optind_now, int optopt_now,
                   const void *long_options, int missing_arg);

struct json_t;
/* Prints a command's --json document on stdout: json_dumpf flags, then a newline. */
void cli_print_json(const struct json_t *doc, size_t flags);

/* Prints an error from a lower layer as "ttasim: message" and returns its code. */
int cli_report_error(int code, const char *msg);

#endif
