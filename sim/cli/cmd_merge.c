/* ttasim merge SCENARIO.json SHARD.json... [--json] [--csv F] [--svg F] [--html F]: the
 * reports of a sweep run as shards ('ttasim run --shard I/N'), the same bytes
 * as 'ttasim run' of the whole scenario. */
#include <stdio.h>

#include "sim/cli/cli.h"
#include "sim/cli/cmd_run.h"
#include "sim/cli/db_cli.h"

extern const cli_command cmd_merge;

static void merge_help(FILE *out)
{
    fprintf(out,
            "Puts the shards of a sweep back together: every point is taken from the\n"
            "shard that ran it (written by 'ttasim run SCENARIO --shard I/N', one per\n"
            "task of a batch job array), the scenario's own point is run again, and the\n"
            "reports are those 'ttasim run SCENARIO' prints and writes, byte for byte.\n\n"
            "  --json      print one JSON document on stdout\n"
            "  --csv F     write one CSV row per point to F\n"
            "  --svg F     write plots to F\n"
            "  --html F    write the HTML report to F (ttasim run --help)\n"
            "  --out-dir D write the scenario's \"outputs\" under D\n"
            DB_CLI_HELP
            "  --assumptions  list every assumption behind the numbers in the text report\n"
            "  --help      this text\n\n"
            "A point in no shard, a point in two, a shard of another version of the\n"
            "scenario, of another ttasim build or schema, one run on other files (another\n"
            "folder, a trace changed since), or a shard changed by a single byte is an\n"
            "input error (exit 2) naming the file. Exit status 1 when a bound in the\n"
            "scenario's \"expect\" is violated. The shards of 'ttasim plan --shard I/N'\n"
            "are merged by 'ttasim plan SCENARIO --merge SHARD...' (ttasim plan --help).\n\n"
            "Slurm, for example:\n"
            "  sbatch --array=0-15 --wrap 'ttasim run s.json --shard $SLURM_ARRAY_TASK_ID/16 \\\n"
            "      > shard-$SLURM_ARRAY_TASK_ID.json'\n"
            "  ttasim merge s.json shard-*.json\n");
}

static int merge_main(int argc, char **argv)
{
    return run_command(&cmd_merge, argc, argv, 1);
}

const cli_command cmd_merge = {
    "merge", "the reports of a sweep run as shards (ttasim run --shard I/N)",
    "merge SCENARIO.json SHARD.json... [--json] [--csv F] [--svg F] [--html F] [--out-dir D] [--db FILE]\n"
    "           [--assumptions]", merge_main,
    merge_help,
};
