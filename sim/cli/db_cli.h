/* db_cli.h: '--db FILE', shared by run, merge, check, compare and plan: the
 * invocation's reports appended to a results database (sim/report/resultsdb.h)
 * with the run's provenance (this build, the files it read). */
#ifndef TT_DB_CLI_H
#define TT_DB_CLI_H

#include <stddef.h>

#include "common/error.h"
#include "sim/cli/cli.h"
#include "sim/report/resultsdb.h"

#define DB_CLI_HELP                                                                        \
    "  --db FILE   append every point, with the command line, the build, the files\n"    \
    "              read and their checksums, to the SQLite database FILE (created if\n"   \
    "              new; schema and queries: doc/results-db.md)\n"

/* A command's --db: the file, its command line and --set options. */
typedef struct db_cli {
    const char *path; /* NULL: no --db */
    int argc;         /* argv[0] the command's name */
    char **argv;
    char *const *sets;
    size_t n_sets;
} db_cli;

/* Appends the reports to d->path; nothing without --db, or in a process
 * that does not write outputs (an MPI rank above 0). */
int db_cli_append(const db_cli *d, const resultsdb_report *reports, size_t n, tt_error *err);

#endif
