#include "sim/report/resultsdb.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/outfile.h"
#include "sim/replay/override.h"

/* "ttdb" in the header's application_id: a database another program made is
 * refused, not mixed with ours. */
#define RESULTSDB_APP_ID 0x74746462
/* Numbers as 'ttasim --json' prints them: a value read back equals the report's. */
#define RESULTSDB_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(12))

static const char SCHEMA[] =
    "CREATE TABLE runs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  command TEXT NOT NULL,\n"
    "  argv TEXT NOT NULL,\n"
    "  cwd TEXT NOT NULL,\n"
    "  version TEXT NOT NULL,\n"
    "  build TEXT NOT NULL,\n"
    "  started TEXT NOT NULL,\n"
    "  pid INTEGER NOT NULL\n"
    ");\n"
    "CREATE TABLE inputs (\n"
    "  run INTEGER NOT NULL REFERENCES runs(id),\n"
    "  path TEXT NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  fnv1a64 TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE points (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run INTEGER NOT NULL REFERENCES runs(id),\n"
    "  scenario TEXT NOT NULL,\n"
    "  scenario_fnv1a64 TEXT,\n"
    "  name TEXT NOT NULL,\n"
    "  point INTEGER,\n"
    "  overrides TEXT NOT NULL,\n"
    "  output TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX inputs_run ON inputs(run);\n"
    "CREATE INDEX points_run ON points(run, name, point);\n"
    /* keys as dotted paths ("step.time_s"), as expect and --set name them */
    "CREATE VIEW point_values AS\n"
    "  SELECT p.id AS point_id, p.run, p.name, p.point, replace(substr(t.fullkey, 3), '\"', '') AS key,\n"
    "         t.atom AS value\n"
    "  FROM points AS p, json_tree(p.output) AS t WHERE t.type NOT IN ('object', 'array');\n";

typedef struct db {
    sqlite3 *h;
    const char *path;
    tt_error *err;
} db;

/* An SQLite failure as the user can act on it; nothing was added. */
static int db_fail(const db *d, const char *doing, int rc)
{
    const char *why = d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return tt_error_set(d->err, TT_EINPUT, "%s: cannot %s: another process held the database for %d s (%s); "
                            "run again when it has finished; nothing was added", d->path, doing, RESULTSDB_BUSY_S,
                            why);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return tt_error_set(d->err, TT_EINPUT, "%s: cannot %s: %s; give a new file or a database 'ttasim --db' "
                            "wrote", d->path, doing, why);
    case SQLITE_FULL:
        return tt_error_set(d->err, TT_EINPUT, "%s: cannot %s: %s; free some disk space and run again; nothing "
                            "was added", d->path, doing, why);
    default:
        return tt_error_set(d->err, TT_EINPUT, "%s: cannot %s: %s (SQLite error %d); give a writable path in a "
                            "writable directory; nothing was added", d->path, doing, why, rc);
    }
}

static int exec(const db *d, const char *sql, const char *doing)
{
    int rc = sqlite3_exec(d->h, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? TT_OK : db_fail(d, doing, rc);
}

/* One integer a query returns (a pragma, a count). */
static int query_int(const db *d, const char *sql, long long *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->h, sql, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? TT_OK : db_fail(d, "read the database's header", rc);
}

/* Ours, of this schema (*is_new 0), or empty (*is_new 1): never another program's. */
static int identify(const db *d, int *is_new)
{
    long long app = 0, version = 0, objects = 0;
    int rc;
    *is_new = 0;
    if ((rc = query_int(d, "PRAGMA application_id", &app)) || (rc = query_int(d, "PRAGMA user_version", &version)) ||
        (rc = query_int(d, "SELECT count(*) FROM sqlite_schema", &objects)))
        return rc;
    if (app == RESULTSDB_APP_ID && version == RESULTSDB_SCHEMA_VERSION)
        return TT_OK;
    if (app == RESULTSDB_APP_ID)
        return tt_error_set(d->err, TT_EINPUT, "%s: a results database of schema %lld, this ttasim writes schema %d "
                            "(doc/results-db.md); give a new file", d->path, version, RESULTSDB_SCHEMA_VERSION);
    if (app != 0 || objects != 0)
        return tt_error_set(d->err, TT_EINPUT, "%s: an SQLite database that ttasim did not write; give a new file "
                            "or one 'ttasim --db' wrote", d->path);
    *is_new = 1;
    return TT_OK;
}

static int ensure_schema(const db *d)
{
    int is_new, rc = identify(d, &is_new);
    if (rc || !is_new)
        return rc;
    char sql[sizeof SCHEMA + 128];
    snprintf(sql, sizeof sql, "%sPRAGMA application_id = %d;\nPRAGMA user_version = %d;\n", SCHEMA, RESULTSDB_APP_ID,
             RESULTSDB_SCHEMA_VERSION);
    return exec(d, sql, "create the tables");
}

/* A statement's text parameter: a NUL-terminated copy SQLite makes. */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

/* Runs a prepared insert once, then resets it for the next row. */
static int step_insert(const db *d, sqlite3_stmt *st, const char *doing)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? TT_OK : db_fail(d, doing, rc);
}

static char *dump(const json_t *v)
{
    return json_dumps(v, RESULTSDB_JSON_FLAGS | JSON_ENCODE_ANY);
}

static int add_run(const db *d, const resultsdb_run *run, sqlite3_int64 *id)
{
    json_t *argv = json_array();
    for (int i = 0; argv && i < run->argc; i++)
        if (json_array_append_new(argv, json_string(run->argv[i])))
            json_decref(argv), argv = NULL;
    char *argv_text = argv ? dump(argv) : NULL, cwd[PATH_MAX], started[32];
    json_decref(argv);
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "?");
    time_t now = time(NULL);
    struct tm utc;
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &utc));
    sqlite3_stmt *st = NULL;
    int rc = argv_text ? sqlite3_prepare_v2(d->h, "INSERT INTO runs (command, argv, cwd, version, build, started, "
                                            "pid) VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL)
                       : SQLITE_NOMEM;
    if (rc == SQLITE_OK && ((rc = bind_text(st, 1, run->command)) || (rc = bind_text(st, 2, argv_text)) ||
                            (rc = bind_text(st, 3, cwd)) || (rc = bind_text(st, 4, run->version)) ||
                            (rc = bind_text(st, 5, run->build)) || (rc = bind_text(st, 6, started)) ||
                            (rc = sqlite3_bind_int64(st, 7, (sqlite3_int64)getpid()))) == SQLITE_OK)
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(d->h);
    sqlite3_finalize(st);
    free(argv_text);
    *id = sqlite3_last_insert_rowid(d->h);
    return rc == SQLITE_OK ? TT_OK : db_fail(d, "add the run", rc);
}

static int add_inputs(const db *d, const resultsdb_run *run, sqlite3_int64 id)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->h, "INSERT INTO inputs (run, path, bytes, fnv1a64) VALUES (?, ?, ?, ?)", -1, &st,
                                NULL);
    if (rc != SQLITE_OK)
        return db_fail(d, "add the run's inputs", rc);
    size_t i;
    json_t *e;
    int bad = TT_OK;
    json_array_foreach(run->inputs, i, e) {
        if ((rc = sqlite3_bind_int64(st, 1, id)) ||
            (rc = bind_text(st, 2, json_string_value(json_object_get(e, "path")))) ||
            (rc = sqlite3_bind_int64(st, 3, (sqlite3_int64)json_integer_value(json_object_get(e, "bytes")))) ||
            (rc = bind_text(st, 4, json_string_value(json_object_get(e, "fnv1a64"))))) {
            bad = db_fail(d, "add the run's inputs", rc);
            break;
        }
        if ((bad = step_insert(d, st, "add the run's inputs")))
            break;
    }
    sqlite3_finalize(st);
    return bad;
}

/* The checksum the run read the scenario with, from its inputs (by real path). */
static const char *scenario_sum(const resultsdb_run *run, const char *scenario)
{
    char real[PATH_MAX];
    if (!realpath(scenario, real))
        return NULL;
    size_t i;
    json_t *e;
    json_array_foreach(run->inputs, i, e)
        if (strcmp(json_string_value(json_object_get(e, "path")), real) == 0)
            return json_string_value(json_object_get(e, "fnv1a64"));
    return NULL;
}

/* The --set options as {"PATH": value}, each value as the scenario read it. */
static char *overrides_text(const resultsdb_run *run, tt_error *err)
{
    json_t *o = json_object();
    int rc = o ? TT_OK : tt_error_set(err, TT_EINTERNAL, "out of memory");
    for (size_t i = 0; rc == TT_OK && i < run->n_sets; i++) {
        char *path = NULL;
        json_t *v = NULL;
        if ((rc = override_parse(run->sets[i], &path, &v, err)) == TT_OK && json_object_set_new(o, path, v))
            rc = tt_error_set(err, TT_EINTERNAL, "out of memory"); /* v went with the failed set */
        else if (rc)
            json_decref(v);
        free(path);
    }
    char *text = rc == TT_OK ? dump(o) : NULL;
    json_decref(o);
    if (rc == TT_OK && !text)
        tt_error_set(err, TT_EINTERNAL, "out of memory");
    return text;
}

/* One row of "points": point < 0 is NULL, the scenario's own. */
static int add_point(const db *d, sqlite3_stmt *st, sqlite3_int64 run, const resultsdb_report *r, const char *sum,
                     const char *overrides, long long point, const json_t *output)
{
    char *text = dump(output);
    if (!text)
        return tt_error_set(d->err, TT_EINTERNAL, "out of memory");
    int rc;
    if ((rc = sqlite3_bind_int64(st, 1, run)) || (rc = bind_text(st, 2, r->scenario)) || (rc = bind_text(st, 3, sum)) ||
        (rc = bind_text(st, 4, r->name)) ||
        (rc = point < 0 ? sqlite3_bind_null(st, 5) : sqlite3_bind_int64(st, 5, point)) ||
        (rc = bind_text(st, 6, overrides)) || (rc = bind_text(st, 7, text))) {
        free(text);
        return db_fail(d, "add a point", rc);
    }
    free(text);
    return step_insert(d, st, "add a point");
}

static int add_report(const db *d, sqlite3_stmt *st, sqlite3_int64 run, const resultsdb_run *rr,
                      const resultsdb_report *r, const char *overrides)
{
    const char *sum = scenario_sum(rr, r->scenario);
    json_t *list = r->points_key ? json_object_get(r->doc, r->points_key) : NULL;
    json_t *own = list ? json_copy((json_t *)r->doc) : json_incref((json_t *)r->doc);
    if (!own)
        return tt_error_set(d->err, TT_EINTERNAL, "out of memory");
    if (list)
        json_object_del(own, r->points_key);
    int rc = add_point(d, st, run, r, sum, overrides, -1, own);
    json_decref(own);
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        if (rc)
            break;
        rc = add_point(d, st, run, r, sum, overrides, (long long)i, e);
    }
    return rc;
}

static int add_all(const db *d, const resultsdb_run *run, const resultsdb_report *reports, size_t n)
{
    sqlite3_int64 id = 0;
    int rc;
    if ((rc = ensure_schema(d)) || (rc = add_run(d, run, &id)) || (rc = add_inputs(d, run, id)))
        return rc;
    char *overrides = overrides_text(run, d->err);
    if (!overrides)
        return d->err->code;
    sqlite3_stmt *st = NULL;
    int src = sqlite3_prepare_v2(d->h, "INSERT INTO points (run, scenario, scenario_fnv1a64, name, point, "
                                 "overrides, output) VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL);
    rc = src == SQLITE_OK ? TT_OK : db_fail(d, "add the points", src);
    for (size_t k = 0; rc == TT_OK && k < n; k++)
        rc = add_report(d, st, id, run, &reports[k], overrides);
    sqlite3_finalize(st);
    free(overrides);
    return rc;
}

/* Where SQLite opens the database: the real path of an existing regular
 * file, else the path of a new one. */
static int target(const char *path, char *out, size_t cap, tt_error *err)
{
    struct stat ls, st;
    if (lstat(path, &ls) != 0) {
        if (errno != ENOENT)
            return tt_error_set(err, TT_EINPUT, "%s: cannot use as the results database: %s", path, strerror(errno));
        snprintf(out, cap, "%s", path);
        return TT_OK;
    }
    if (stat(path, &st) != 0)
        return tt_error_set(err, TT_EINPUT, "%s: cannot use as the results database: a symbolic link to %s; give the "
                            "path of the file itself", path, errno == ENOENT ? "a missing file" : strerror(errno));
    if (!S_ISREG(st.st_mode))
        return tt_error_set(err, TT_EINPUT, "%s: cannot use as the results database: %s, not a regular file; give "
                            "the path of a new file or of a database 'ttasim --db' wrote", path,
                            S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                            : S_ISCHR(st.st_mode) ? "a character device" : "a special file");
    if (!realpath(path, out))
        return tt_error_set(err, TT_EINPUT, "%s: cannot use as the results database: %s", path, strerror(errno));
    return TT_OK;
}

/* Opens real (target()'s) with flags; a writer holding it is waited for. */
static int db_open(db *d, const char *real, int flags)
{
    /* the name's symbolic link, if any, was resolved: one appearing since is refused */
    int src = sqlite3_open_v2(real, &d->h, flags | SQLITE_OPEN_NOFOLLOW, NULL);
    if (src == SQLITE_OK && (src = sqlite3_busy_timeout(d->h, RESULTSDB_BUSY_S * 1000)) == SQLITE_OK)
        src = sqlite3_extended_result_codes(d->h, 1);
    return src == SQLITE_OK ? TT_OK : db_fail(d, "open the database", src);
}

/* target(), then not a file the run reads or read. */
static int check(const char *path, char *real, size_t cap, const char *const *inputs, const char *const *what,
                 size_t n_inputs, tt_error *err)
{
    int rc = target(path, real, cap, err);
    return rc ? rc : outfile_check_distinct(&path, 1, inputs, what, n_inputs, err);
}

int resultsdb_check_path(const char *path, const char *const *inputs, const char *const *what, size_t n_inputs,
                         tt_error *err)
{
    char real[PATH_MAX];
    int rc = check(path, real, sizeof real, inputs, what, n_inputs, err);
    if (rc)
        return rc;
    struct stat st;
    if (stat(real, &st) != 0) { /* a new file: its directory must take it */
        char *dir = strdup(real);
        rc = !dir ? tt_error_set(err, TT_EINTERNAL, "out of memory")
           : access(dirname(dir), W_OK | X_OK) != 0
               ? tt_error_set(err, TT_EINPUT, "%s: cannot create the results database: %s: %s; give a path in a "
                              "writable directory", path, dir, strerror(errno))
               : TT_OK;
        free(dir);
        return rc;
    }
    /* an existing file: ttasim's database, before any simulation is spent on it */
    db d = {NULL, path, err};
    int is_new;
    if ((rc = db_open(&d, real, SQLITE_OPEN_READONLY)) == TT_OK)
        rc = identify(&d, &is_new);
    sqlite3_close(d.h); /* read only: nothing to lose */
    return rc;
}

int resultsdb_append(const char *path, const resultsdb_run *run, const resultsdb_report *reports, size_t n,
                     tt_error *err)
{
    char real[PATH_MAX];
    db d = {NULL, path, err};
    int rc = check(path, real, sizeof real, NULL, NULL, 0, err); /* the run has read more files since */
    if (rc)
        return rc;
    rc = db_open(&d, real, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    /* IMMEDIATE: the write lock first, so a concurrent writer waits here, not halfway */
    if (rc == TT_OK && (rc = exec(&d, "BEGIN IMMEDIATE", "start writing")) == TT_OK) {
        rc = add_all(&d, run, reports, n);
        if (rc == TT_OK)
            rc = exec(&d, "COMMIT", "commit the run");
        if (rc)
            sqlite3_exec(d.h, "ROLLBACK", NULL, NULL, NULL); /* already failing: the first error is the one to tell */
    }
    int src = sqlite3_close(d.h);
    if (rc == TT_OK && src != SQLITE_OK)
        rc = db_fail(&d, "close the database", src);
    return rc;
}
