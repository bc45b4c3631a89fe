/* resultsdb.h: a study kept as data. '--db FILE' (run, check, compare, plan)
 * appends one invocation to an SQLite database: a row in "runs" (command,
 * command line, build, start), the files it read in "inputs" (path, size,
 * checksum) and every point of every scenario in "points" (scenario, --set
 * overrides, the point's JSON output whole). Schema and example queries:
 * doc/results-db.md. One process writes, after the simulations, in point
 * order, in one transaction: the same study under any -j or mpirun -n gives
 * the same rows but for the run's start, process and command line. */
#ifndef TT_RESULTSDB_H
#define TT_RESULTSDB_H

#include <jansson.h>
#include <stddef.h>

#include "common/error.h"

/* The schema's version, in the database's user_version: a database of
 * another version is refused, never altered. */
#define RESULTSDB_SCHEMA_VERSION 1

/* The invocation: one row of "runs" and its "inputs". */
typedef struct resultsdb_run {
    const char *command;  /* "run", "check", "compare", "plan", "merge" */
    int argc;             /* the whole command line, argv[0] the command */
    char *const *argv;
    char *const *sets;    /* its --set PATH=VALUE options, applied to every scenario */
    size_t n_sets;
    const char *version;  /* ttasim --version */
    const char *build;    /* the executable's checksum (sim/cli/provenance.h) */
    const json_t *inputs; /* [{"path", "bytes", "fnv1a64"}]: every file the run read */
} resultsdb_run;

/* One scenario's report: the document its command prints with --json. The
 * row of point NULL holds the document less its list of points; point i
 * holds element i of that list. */
typedef struct resultsdb_report {
    const char *scenario;   /* its path as given */
    const char *name;       /* its "name" */
    const json_t *doc;
    const char *points_key; /* "sweep", "layouts"; NULL: the document is one point */
} resultsdb_report;

/* Refuses (TT_EINPUT) a database path that is not a regular file or a new
 * one (a directory, a FIFO, a device, a symbolic link to one or to nothing),
 * or that names one of the inputs (what[i] names inputs[i]) or a file the
 * run read (common/outfile.h). Called before the simulations, and again
 * when writing. */
int resultsdb_check_path(const char *path, const char *const *inputs, const char *const *what, size_t n_inputs,
                         tt_error *err);

/* Appends the invocation and its reports, all or nothing. A database
 * another process is writing is waited for (RESULTSDB_BUSY_S). Errors
 * (TT_EINPUT) name the file, what SQLite said and what to do. */
#define RESULTSDB_BUSY_S 60
int resultsdb_append(const char *path, const resultsdb_run *run, const resultsdb_report *reports, size_t n,
                     tt_error *err);

#endif
