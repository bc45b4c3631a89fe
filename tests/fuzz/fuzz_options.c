/* Command-line option lists: the input is the words after "ttasim", one per
 * line, given to the commands that only read and print (model, platform list
 * and show): getopt, sizes, rates, model options, the did-you-mean hints. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "tests/fuzz/fuzz_input.h"

enum { MAX_WORDS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_input_text(data, size), *argv[MAX_WORDS + 1];
    int argc = 0;
    for (char *w = strtok(text, "\n"); w && argc < MAX_WORDS; w = strtok(NULL, "\n"))
        argv[argc++] = w;
    argv[argc] = NULL;
    const cli_command *cmd = argc ? cli_find(argv[0]) : NULL;
    int safe = cmd && (strcmp(cmd->name, "model") == 0 || strcmp(cmd->name, "platform") == 0);
    /* platform export/check write files and run SimGrid: not parsers */
    for (int i = 1; safe && i < argc; i++)
        if (strcmp(argv[i], "export") == 0 || strcmp(argv[i], "check") == 0)
            safe = 0;
    if (safe) {
        /* The commands set optind = 1, which keeps glibc's pointer into the
         * previous run's words (ttasim runs one command per process): reset it. */
        char *none[] = {"fuzz", NULL};
        optind = 0;
        getopt(1, none, "");
        cmd->run(argc, argv);
    }
    free(text);
    return 0;
}
