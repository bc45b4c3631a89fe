/* cli.h: the ttasim subcommands and the helpers they share. */
#ifndef TT_CLI_H
#define TT_CLI_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *usage; /* after "usage: ttasim ": every option --help names (doc/ttasim.1's SYNOPSIS
                        * is generated from it); longer ones go on indented lines */
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    void (*help)(FILE *out);
} cli_command;

/* The registered commands, NULL-terminated (sim/cli/commands.c). */
extern const cli_command *const CLI_COMMANDS[];

const cli_command *cli_find(const char *name);

/* Prints "ttasim CMD: message" and the usage line to stderr; returns 2. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* For getopt_long's '?' and ':' returns: names the bad option, suggests the
 * closest long option, and returns 2. */
int cli_bad_option(const cli_command *cmd, char **argv, int optind_now, int optopt_now,
                   const void *long_options, int missing_arg);

/* text as a whole number from lo to hi (units_parse_int) into *out, else a
 * usage error (2) naming opt. */
int cli_int(const cli_command *cmd, const char *opt, const char *text, long lo, long hi, long *out);

/* word as one of names (NULL-terminated): its index in *out, else a usage
 * error (2) naming opt, the closest name and every name. */
int cli_choice(const cli_command *cmd, const char *opt, const char *word, const char *const *names, int *out);

/* Collects one --set PATH=VALUE (at most SCENARIO_MAX_SETS, 32); a usage
 * error (2) past that. The strings are argv's. */
int cli_add_set(const cli_command *cmd, char **sets, size_t *n, char *arg);
#define CLI_MAX_SETS 32
#define CLI_SET_HELP \
    "  --set PATH=VALUE  change one value of the scenario, repeatable: a dotted path\n" \
    "              into the scenario (workload.global_batch=16K), the platform's\n" \
    "              fabric (platform.fabric.oversubscription=2) or a device\n" \
    "              (devices.h100-sxm5-80gb.purchase.price_usd=25000); VALUE is JSON or text\n"

struct json_t;
/* Prints a command's --json document on stdout: json_dumpf flags, then a newline. */
void cli_print_json(const struct json_t *doc, size_t flags);

/* Prints an error from a lower layer as "ttasim: message" and returns its code. */
int cli_report_error(int code, const char *msg);

#endif
