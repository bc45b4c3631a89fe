#include "sim/cli/shard.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/infile.h"
#include "common/jsonx.h"
#include "common/outfile.h"
#include "common/units.h"
#include "sim/cli/provenance.h"
#include "sim/cli/shard_record.h"
#include "sim/report/resultsdb.h"

#define SHARD_FORMAT "ttasim-shard"
#define SHARD_MAX 100000
#define CHECKSUM_KEY ",\"checksum\":\""
#define HEX64 (PROVENANCE_HEX_BYTES - 1)

int shard_parse(const char *text, int *index, int *count, tt_error *err)
{
    const char *slash = strchr(text, '/');
    char first[32];
    long i = -1, n = 0;
    tt_error ignored = {0};
    if (slash && (size_t)(slash - text) < sizeof first) {
        snprintf(first, sizeof first, "%.*s", (int)(slash - text), text);
        if (units_parse_int("N", slash + 1, 1, SHARD_MAX, &n, &ignored) != TT_OK ||
            units_parse_int("I", first, 0, n - 1, &i, &ignored) != TT_OK)
            i = -1;
    }
    if (i < 0)
        return tt_error_set(err, TT_EINPUT, "--shard '%s': expected I/N, shard I of N counted from 0 "
                            "(0 <= I < N <= %d), e.g. --shard $SLURM_ARRAY_TASK_ID/16", text, SHARD_MAX);
    *index = (int)i;
    *count = (int)n;
    return TT_OK;
}

/* The commands that write shards, and how their shards are merged. */
static const char *const MERGES[][2] = {{"run", "'ttasim merge SCENARIO SHARD...'"},
                                        {"plan", "'ttasim plan SCENARIO --merge SHARD...' and the options the "
                                                 "shards were run with"}};

/* The run a shard belongs to: the build, the scenario file's bytes and its
 * --set values (each with its terminating NUL). */
static int run_digest(const shard_origin *o, char out[HEX64 + 1], tt_error *err)
{
    char *text;
    size_t len;
    int rc = infile_read(o->scenario_path, INFILE_JSON_MAX_BYTES, &text, &len, err);
    if (rc)
        return rc;
    uint64_t b = provenance_build(), h = infile_fnv(INFILE_FNV_START, &b, sizeof b);
    h = infile_fnv(h, text, len);
    free(text);
    for (size_t i = 0; i < o->n_sets; i++)
        h = infile_fnv(h, o->sets[i], strlen(o->sets[i]) + 1);
    provenance_hex(h, out);
    return TT_OK;
}

int shard_write(FILE *f, const shard_origin *o, int shard, int shards, const point_outcome *records,
                size_t n_points, tt_error *err)
{
    char digest[HEX64 + 1], build[HEX64 + 1];
    int rc = run_digest(o, digest, err);
    if (rc)
        return rc;
    provenance_hex(provenance_build(), build);
    json_t *before = provenance_inputs(0, err), *during = before ? provenance_inputs(1, err) : NULL, *recs = json_array();
    if (!before || !during) {
        json_decref(before);
        json_decref(recs);
        return err->code;
    }
    for (size_t i = 0; recs && i < n_points; i++)
        if (records[i].present && json_array_append_new(recs, shard_record_json(&records[i], i)))
            json_decref(recs), recs = NULL;
    json_t *doc = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:o, s:o, s:o*}", "format",
                            SHARD_FORMAT, "version", SHARD_SCHEMA_VERSION, "command", o->command, "options",
                            o->options, "build", build, "scenario", o->scenario_path, "run_fnv1a64", digest, "shard",
                            shard, "shards", shards, "points", (json_int_t)n_points, "inputs", before,
                            "point_inputs", during, "records", recs);
    char *text = doc && json_object_size(doc) == 13 ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(doc);
    if (!text)
        return tt_error_set(err, TT_EINPUT, "%s: out of memory writing the shard document; free some memory",
                            o->scenario_path);
    /* the checksum covers every byte before it, the document less its closing brace */
    size_t len = strlen(text) - 1;
    char sum[HEX64 + 1];
    provenance_hex(infile_fnv(INFILE_FNV_START, text, len), sum);
    if (fwrite(text, 1, len, f) != len || fprintf(f, CHECKSUM_KEY "%s\"}\n", sum) < 0 || fflush(f) != 0)
        rc = tt_error_set(err, TT_EINPUT, "cannot write the shard document to standard output: %s; the shard is "
                          "incomplete: run it again with room for it", strerror(errno));
    free(text);
    return rc;
}

/* ---- merge ---- */

typedef struct shard_doc {
    const char *file;
    json_t *doc; /* inputs and point_inputs are checked after the merge's own point */
} shard_doc;

struct shard_set {
    const shard_origin *o; /* the merge's: it outlives the set */
    size_t n;
    shard_doc *d;
};

void shard_set_free(shard_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        json_decref(s->d[i].doc);
    free(s->d);
    free(s);
}

static int not_a_shard(const shard_origin *o, const char *file, const char *why, tt_error *err)
{
    return tt_error_set(err, TT_EINPUT, "%s: %s; give the file 'ttasim %s SCENARIO --shard I/N' wrote", file, why,
                        o->command);
}

/* The file's bytes against the checksum that ends them, then its JSON. */
static int load_checked(const shard_origin *o, const char *file, json_t **doc, tt_error *err)
{
    char *text;
    size_t len;
    int rc = infile_read(file, INFILE_JSON_MAX_BYTES, &text, &len, err);
    if (rc)
        return rc;
    size_t tail = strlen(CHECKSUM_KEY) + HEX64 + 2, end = len;
    if (end > 0 && text[end - 1] == '\n')
        end--;
    const char *key = end >= tail ? text + end - tail : NULL;
    uint64_t want = 0;
    char sum[HEX64 + 1];
    if (!key || strncmp(key, CHECKSUM_KEY, strlen(CHECKSUM_KEY)) != 0 || text[end - 2] != '"' || text[end - 1] != '}')
        rc = not_a_shard(o, file, "it does not end with the shard's checksum", err);
    if (rc == TT_OK) {
        want = infile_fnv(INFILE_FNV_START, text, (size_t)(key - text));
        provenance_hex(want, sum);
        if (memcmp(key + strlen(CHECKSUM_KEY), sum, HEX64) != 0)
            rc = tt_error_set(err, TT_EINPUT, "%s: $.checksum: the file's bytes do not match the checksum it was "
                              "written with: it was changed or cut short after 'ttasim %s --shard' wrote it; run "
                              "that shard again", file, o->command);
    }
    if (rc == TT_OK) {
        json_error_t je;
        *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
        if (!*doc)
            rc = tt_error_set(err, TT_EINPUT, "%s:%d:%d: invalid JSON: %s; give the file 'ttasim %s --shard I/N' "
                              "wrote", file, je.line, je.column, je.text, o->command);
    }
    free(text);
    return rc;
}

/* A shard of another command: how that command's shards are merged. */
static int other_command(const shard_origin *o, const char *file, const char *command, tt_error *err)
{
    for (size_t i = 0; i < sizeof MERGES / sizeof *MERGES; i++)
        if (strcmp(command, MERGES[i][0]) == 0)
            return tt_error_set(err, TT_EINPUT, "%s: $.command: a shard of 'ttasim %s', not of 'ttasim %s'; merge it "
                                "with %s", file, command, o->command, MERGES[i][1]);
    return not_a_shard(o, file, "$.command: not a command that writes shards", err);
}

/* The document's header: this schema, command, options, build and run; its place among the shards. */
static int check_header(const shard_origin *o, const char *file, json_t *doc, const char *digest, size_t n_points,
                        long *shard, long *shards, tt_error *err)
{
    static const char *const keys[] = {"format", "version", "command", "options", "build", "scenario", "run_fnv1a64",
                                       "shard", "shards", "points", "inputs", "point_inputs", "records", "checksum",
                                       NULL};
    jx_obj r;
    const char *format = "", *command = "", *options = "", *build = "", *run = "", *scen = "";
    long version = 0, points = 0;
    char mine[HEX64 + 1];
    provenance_hex(provenance_build(), mine);
    int rc;
    if ((rc = jx_root(&r, file, doc, err)) || (rc = jx_string(&r, "format", 1, &format)))
        return rc;
    if (strcmp(format, SHARD_FORMAT) != 0)
        return not_a_shard(o, file, "$.format: not \"" SHARD_FORMAT "\"", err);
    if ((rc = jx_int(&r, "version", 1, 1, 1L << 30, &version)))
        return rc;
    if (version != SHARD_SCHEMA_VERSION)
        return tt_error_set(err, TT_EINPUT, "%s: $.version: shard schema %ld, this ttasim reads schema %d (its fields "
                            "may mean something else); run the shards again with this ttasim", file, version,
                            SHARD_SCHEMA_VERSION);
    if ((rc = jx_check_keys(&r, keys)) || (rc = jx_string(&r, "command", 1, &command)) ||
        (rc = jx_string(&r, "options", 1, &options)))
        return rc;
    if (strcmp(command, o->command) != 0)
        return other_command(o, file, command, err);
    if (strcmp(options, o->options) != 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.options: its 'ttasim %s' ran with \"%s\", this merge with \"%s\": "
                            "its results are of another search; merge with the shards' options, or run every shard "
                            "again with these", file, o->command, options, o->options);
    if ((rc = jx_string(&r, "build", 1, &build)) ||
        (rc = jx_string(&r, "run_fnv1a64", 1, &run)) || (rc = jx_string(&r, "scenario", 1, &scen)) ||
        (rc = jx_int(&r, "shards", 1, 1, SHARD_MAX, shards)) || (rc = jx_int(&r, "shard", 1, 0, *shards - 1, shard)) ||
        (rc = jx_int(&r, "points", 1, 0, 1L << 40, &points)))
        return rc;
    if (strcmp(build, mine) != 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.build: written by another ttasim build (%s, this one is %s); merge "
                            "with the ttasim that ran the shards, or run them again", file, build, mine);
    if (strcmp(run, digest) != 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.run_fnv1a64: the shard was run on another version of the "
                            "scenario or with other --set values; run every shard again on this one", file);
    if ((size_t)points != n_points)
        return tt_error_set(err, TT_EINPUT, "%s: $.points: %ld, this 'ttasim %s' has %zu; run every shard again with "
                            "this ttasim", file, points, o->command, n_points);
    return TT_OK;
}

/* One shard file's records into their places: each point of this shard
 * (i mod shards == shard), once. */
static int read_records(const shard_origin *o, const char *file, json_t *doc, long shard, long shards,
                        size_t n_points, point_outcome *records, tt_error *err)
{
    json_t *recs = json_object_get(doc, "records");
    if (!json_is_array(recs))
        return not_a_shard(o, file, "$.records: expected a list of points", err);
    for (size_t k = 0; k < json_array_size(recs); k++) {
        json_t *rec = json_array_get(recs, k), *pv = json_object_get(rec, "point");
        char where[48];
        snprintf(where, sizeof where, "$.records[%zu]", k);
        json_int_t i = json_integer_value(pv);
        if (!json_is_integer(pv) || i < 0 || (size_t)i >= n_points || i % shards != shard)
            return tt_error_set(err, TT_EINPUT, "%s: %s.point: expected a point of shard %ld of %ld (i mod %ld = "
                                "%ld, below %zu)", file, where, shard, shards, shards, shard, n_points);
        if (records[i].present)
            return tt_error_set(err, TT_EINPUT, "%s: %s: point %lld is also in an earlier shard; give each shard "
                                "once", file, where, (long long)i);
        int rc = shard_record_read(rec, file, where, &records[i], err);
        if (rc)
            return rc;
    }
    return TT_OK;
}

int shard_set_read(char *const *files, size_t nfiles, const shard_origin *o, size_t n_points, void *records,
                   shard_set **out, tt_error *err)
{
    char digest[HEX64 + 1];
    *out = NULL;
    memset(records, 0, n_points * sizeof(point_outcome));
    shard_set *s = calloc(1, sizeof *s);
    if (!s || !(s->d = calloc(nfiles + 1, sizeof *s->d))) {
        free(s);
        return tt_error_set(err, TT_EINPUT, "out of memory reading %zu shards; free some memory", nfiles);
    }
    s->o = o;
    int rc = run_digest(o, digest, err);
    long first_shards = 0;
    char *seen = calloc(SHARD_MAX, 1);
    if (rc == TT_OK && !seen)
        rc = tt_error_set(err, TT_EINPUT, "out of memory reading the shards; free some memory");
    for (size_t i = 0; rc == TT_OK && i < nfiles; i++) {
        shard_doc *d = &s->d[s->n++];
        long shard = 0, shards = 0;
        d->file = files[i];
        if ((rc = load_checked(o, d->file, &d->doc, err)) ||
            (rc = check_header(o, d->file, d->doc, digest, n_points, &shard, &shards, err)))
            break;
        if (first_shards && shards != first_shards)
            rc = tt_error_set(err, TT_EINPUT, "%s: $.shards: %ld, %s says %ld; merge the shards of one run", d->file,
                              shards, files[0], first_shards);
        else if (seen[shard]++)
            rc = tt_error_set(err, TT_EINPUT, "%s: $.shard: shard %ld of %ld is given twice; give each shard once",
                              d->file, shard, shards);
        else
            rc = read_records(o, d->file, d->doc, shard, shards, n_points, records, err);
        first_shards = shards;
    }
    free(seen);
    if (rc) {
        shard_set_free(s);
        return rc;
    }
    *out = s;
    return TT_OK;
}

/* An "inputs" entry: path, size, checksum. */
static int entry(const shard_doc *d, const char *list, size_t k, const char **path, json_int_t *bytes,
                 uint64_t *fnv, tt_error *err)
{
    json_t *e = json_array_get(json_object_get(d->doc, list), k);
    const char *h = json_string_value(json_object_get(e, "fnv1a64"));
    *path = json_string_value(json_object_get(e, "path"));
    *bytes = json_integer_value(json_object_get(e, "bytes"));
    char *end = NULL;
    if (h && strlen(h) == HEX64)
        *fnv = strtoull(h, &end, 16);
    if (!*path || !json_is_integer(json_object_get(e, "bytes")) || !end || *end || json_object_size(e) != 3)
        return tt_error_set(err, TT_EINPUT, "%s: $.%s[%zu]: expected {\"path\", \"bytes\", \"fnv1a64\"}", d->file, list,
                            k);
    return TT_OK;
}

/* Whether this process read a file with these bytes (by checksum, wherever
 * it was: a copy of the shards' folder is the same data); *changed when it
 * read the same path with other bytes. */
static int merge_read(const char *path, uint64_t fnv, int *changed)
{
    infile_entry e;
    int found = 0;
    *changed = 0;
    for (size_t i = 0; i < infile_count(); i++)
        if (infile_get(i, &e)) {
            found |= e.fnv == fnv;
            *changed |= e.fnv && e.fnv != fnv && strcmp(e.path, path) == 0;
        }
    return found;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The checksums of a shard's "inputs", sorted: what its run read before its
 * points, wherever it was. NULL with err set on a malformed list. */
static uint64_t *input_sums(const shard_set *s, const shard_doc *d, size_t *n, tt_error *err)
{
    json_t *list = json_object_get(d->doc, "inputs");
    *n = json_array_size(list);
    uint64_t *sums = calloc(*n + 1, sizeof *sums);
    if (!json_is_array(list) || !json_is_array(json_object_get(d->doc, "point_inputs")) || !sums) {
        free(sums);
        return not_a_shard(s->o, d->file, "$.inputs: expected lists of the files its run read", err), NULL;
    }
    for (size_t k = 0; k < *n; k++) {
        const char *path;
        json_int_t bytes;
        if (entry(d, "inputs", k, &path, &bytes, &sums[k], err)) {
            free(sums);
            return NULL;
        }
    }
    qsort(sums, *n, sizeof *sums, cmp_u64);
    return sums;
}

int shard_set_check_inputs(const shard_set *s, tt_error *err)
{
    size_t n0 = 0;
    uint64_t *first = s->n ? input_sums(s, &s->d[0], &n0, err) : NULL;
    int rc = s->n && !first ? TT_EINPUT : TT_OK;
    for (size_t i = 0; rc == TT_OK && i < s->n; i++) {
        const shard_doc *d = &s->d[i];
        size_t n;
        uint64_t *sums = input_sums(s, d, &n, err);
        if (!sums)
            rc = TT_EINPUT;
        else if (n != n0 || memcmp(sums, first, n * sizeof *sums) != 0)
            rc = tt_error_set(err, TT_EINPUT, "%s: $.inputs: its run read other data than %s's before its points "
                              "(other files, or a file changed between the runs); run every shard on the same "
                              "files", d->file, s->d[0].file);
        free(sums);
        for (size_t k = 0; rc == TT_OK && k < n; k++) {
            const char *path;
            json_int_t bytes;
            uint64_t fnv;
            int changed;
            if ((rc = entry(d, "inputs", k, &path, &bytes, &fnv, err)) == TT_OK && !merge_read(path, fnv, &changed))
                rc = tt_error_set(err, TT_EINPUT, "%s: $.inputs[%zu]: its run read %s, %s; merge on the files the "
                                  "shards ran on, or run them again", d->file, k, path,
                                  changed ? "which has changed since" : "and this merge read no file with its bytes "
                                  "(it was run on other files)");
        }
        json_t *later = json_object_get(d->doc, "point_inputs");
        for (size_t k = 0; rc == TT_OK && k < json_array_size(later); k++) {
            const char *path;
            json_int_t bytes;
            uint64_t fnv;
            int changed;
            char *text;
            size_t len;
            if ((rc = entry(d, "point_inputs", k, &path, &bytes, &fnv, err)) || merge_read(path, fnv, &changed))
                continue;
            tt_error why = {0};
            int same = infile_read(path, INFILE_MAX_BYTES, &text, &len, &why) == TT_OK &&
                       infile_fnv(INFILE_FNV_START, text, len) == fnv;
            free(text);
            if (!same)
                rc = tt_error_set(err, TT_EINPUT, "%s: $.point_inputs[%zu]: its points read %s, which has changed "
                                  "since (or is gone); run the shards again", d->file, k, path);
        }
    }
    free(first);
    return rc;
}

int shard_check_outputs(const scenario *sc, char *const *shards, size_t n_shards, const char *const *outs,
                        size_t n_outs, const char *db, tt_error *err)
{
    size_t cap = SCENARIO_MAX_PHASES + 3 + n_shards;
    const char **inputs = calloc(cap, sizeof *inputs), **what = calloc(cap, sizeof *what);
    if (!inputs || !what) {
        free(inputs);
        free(what);
        return tt_error_set(err, TT_EINPUT, "%s: out of memory; free some memory", sc->path);
    }
    size_t n = scenario_inputs(sc, inputs, what, SCENARIO_MAX_PHASES + 3);
    for (size_t i = 0; i < n_shards; i++, n++) {
        inputs[n] = shards[i];
        what[n] = "a shard";
    }
    int rc = outfile_check_distinct(outs, n_outs, inputs, what, n, err);
    if (rc == TT_OK && db)
        rc = resultsdb_check_path(db, inputs, what, n, err);
    free(inputs);
    free(what);
    return rc;
}
