#include "sim/cli/cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <string.h>

#include "common/error.h"
#include "common/jsonx.h"
#include "common/units.h"

const cli_command *cli_find(const char *name)
{
    for (int i = 0; CLI_COMMANDS[i]; i++)
        if (strcmp(CLI_COMMANDS[i]->name, name) == 0)
            return CLI_COMMANDS[i];
    return NULL;
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ttasim %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: ttasim %s\nTry 'ttasim %s --help'.\n", cmd->usage, cmd->name);
    return TT_EINPUT;
}

int cli_bad_option(const cli_command *cmd, char **argv, int optind_now, int optopt_now,
                   const void *long_options, int missing_arg)
{
    const struct option *opts = long_options;
    const char *word = argv[optind_now - 1];
    if (missing_arg)
        return cli_usage_error(cmd, "option '%s' needs a value", word);
    if (optopt_now && !(word[0] == '-' && word[1] == '-'))
        return cli_usage_error(cmd, "unknown option '-%c'", optopt_now);
    const char *names[64];
    int n = 0;
    for (; opts[n].name && n < 63; n++)
        names[n] = opts[n].name;
    names[n] = NULL;
    char bare[128];
    snprintf(bare, sizeof bare, "%s", word + (word[0] == '-' && word[1] == '-' ? 2 : 0));
    char *eq = strchr(bare, '=');
    if (eq)
        *eq = '\0';
    const char *near = jx_closest(bare, names);
    if (near)
        return cli_usage_error(cmd, "unknown option '%s' (did you mean '--%s'?)", word, near);
    return cli_usage_error(cmd, "unknown option '%s'", word);
}

int cli_int(const cli_command *cmd, const char *opt, const char *text, long lo, long hi, long *out)
{
    tt_error err = {0};
    return units_parse_int(opt, text, lo, hi, out, &err) ? cli_usage_error(cmd, "%s", err.msg) : TT_OK;
}

int cli_choice(const cli_command *cmd, const char *opt, const char *word, const char *const *names, int *out)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(word, names[i]) == 0) {
            *out = i;
            return TT_OK;
        }
    char all[512] = "";
    for (int i = 0; names[i]; i++)
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? ", " : "", names[i]);
    const char *near = jx_closest(word, names);
    return cli_usage_error(cmd, "%s: unknown value '%s'%s%s%s; expected one of: %s", opt, word,
                           near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "", all);
}

void cli_print_json(const json_t *doc, size_t flags)
{
    json_dumpf(doc, stdout, flags);
    fputc('\n', stdout);
}

int cli_report_error(int code, const char *msg)
{
    fprintf(stderr, "ttasim: %s\n", msg);
    return code;
}

int cli_add_set(const cli_command *cmd, char **sets, size_t *n, char *arg)
{
    if (*n == CLI_MAX_SETS)
        return cli_usage_error(cmd, "at most %d --set options", CLI_MAX_SETS);
    if (!strchr(arg, '=') || arg[0] == '=')
        return cli_usage_error(cmd, "--set %s: expected PATH=VALUE (e.g. --set platform.fabric.oversubscription=2)",
                               arg);
    sets[(*n)++] = arg;
    return 0;
}
