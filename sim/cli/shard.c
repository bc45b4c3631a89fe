#include "sim/cli/shard.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define SHARD_FORMAT "ttasim-shard"
#define SHARD_MAX 100000

int shard_parse(const char *text, int *index, int *count, tt_error *err)
{
    char *end;
    errno = 0;
    long i = strtol(text, &end, 10), n = 0;
    if (!errno && end != text && *end == '/') {
        const char *rest = end + 1;
        n = strtol(rest, &end, 10);
        if (end == rest || *end)
            n = 0;
    }
    if (errno || n < 1 || n > SHARD_MAX || i < 0 || i >= n)
        return tt_error_set(err, TT_EINPUT, "--shard '%s': expected I/N, shard I of N counted from 0 "
                            "(0 <= I < N <= %d), e.g. --shard $SLURM_ARRAY_TASK_ID/16", text, SHARD_MAX);
    *index = (int)i;
    *count = (int)n;
    return TT_OK;
}

/* The scenario file's bytes and its --set values, hashed (FNV-1a): shards
 * of another version of it are refused. */
static int scenario_digest(const char *path, char *const *sets, size_t n_sets, char out[17], tt_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tt_error_set(err, TT_EINPUT, "%s: cannot read: %s", path, strerror(errno));
    uint64_t h = 1469598103934665603ULL;
    int c;
    while ((c = getc(f)) != EOF)
        h = (h ^ (uint64_t)(unsigned char)c) * 1099511628211ULL;
    fclose(f);
    for (size_t i = 0; i < n_sets; i++)
        for (const char *p = sets[i]; p == sets[i] || p[-1]; p++) /* each value with its terminating NUL */
            h = (h ^ (uint64_t)(unsigned char)*p) * 1099511628211ULL;
    snprintf(out, 17, "%016" PRIx64, h);
    return TT_OK;
}

/* A record of zeros is a point no shard ran. */
static int record_empty(const unsigned char *rec, size_t rb)
{
    return !rec[0] && !memcmp(rec, rec + 1, rb - 1);
}

int shard_write(FILE *f, const char *scenario_path, char *const *sets, size_t n_sets, const run_options *opt,
                const run_result *r, tt_error *err)
{
    char digest[17];
    int rc = scenario_digest(scenario_path, sets, n_sets, digest, err);
    if (rc)
        return rc;
    size_t rb = run_record_bytes();
    json_t *recs = json_object();
    char *hex = malloc(2 * rb + 1);
    for (size_t i = 0; hex && i < r->n_records; i++) {
        const unsigned char *rec = (const unsigned char *)r->records + i * rb;
        if (record_empty(rec, rb)) /* not this shard's point */
            continue;
        for (size_t k = 0; k < rb; k++)
            snprintf(hex + 2 * k, 3, "%02x", rec[k]);
        char key[24];
        snprintf(key, sizeof key, "%zu", i);
        json_object_set_new(recs, key, json_string(hex));
    }
    free(hex);
    json_t *doc = json_pack("{s:s, s:i, s:s, s:s, s:i, s:i, s:I, s:I, s:o}", "format", SHARD_FORMAT, "version", 1,
                            "scenario", scenario_path, "scenario_fnv1a64", digest, "shard", opt->shard, "shards",
                            opt->shards, "points", (json_int_t)r->n_records, "record_bytes", (json_int_t)rb,
                            "records", recs);
    if (!doc || json_dumpf(doc, f, JSON_INDENT(1)) != 0 || fputc('\n', f) == EOF || fflush(f) != 0)
        rc = tt_error_set(err, TT_EINTERNAL, "cannot write the shard document: %s", strerror(errno));
    json_decref(doc);
    return rc;
}

static int hex_value(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One shard file's records into their places; a point given twice is refused. */
static int read_one(const char *file, const char *digest, size_t n_points, unsigned char *records, int *shards,
                    tt_error *err)
{
    json_error_t je;
    json_t *doc = json_load_file(file, 0, &je);
    if (!doc)
        return tt_error_set(err, TT_EINPUT, "%s:%d:%d: %s; give the file 'ttasim run --shard I/N' wrote", file,
                            je.line, je.column, je.text);
    const char *format = "", *sdigest = "";
    json_int_t shard = -1, of = 0, points = -1, rb = 0;
    json_t *recs = NULL;
    int rc = TT_OK;
    if (json_unpack(doc, "{s:s, s:s, s:I, s:I, s:I, s:I, s:o}", "format", &format, "scenario_fnv1a64", &sdigest,
                    "shard", &shard, "shards", &of, "points", &points, "record_bytes", &rb, "records", &recs) ||
        strcmp(format, SHARD_FORMAT) != 0 || !json_is_object(recs))
        rc = tt_error_set(err, TT_EINPUT, "%s: $: not a shard document (\"format\": \"%s\" with shard, shards, "
                          "points, record_bytes, records); give the file 'ttasim run --shard I/N' wrote",
                          file, SHARD_FORMAT);
    else if (strcmp(sdigest, digest) != 0)
        rc = tt_error_set(err, TT_EINPUT, "%s: $.scenario_fnv1a64: the shard was run on another version of the "
                          "scenario or with other --set values; run every shard again on this one", file);
    else if ((size_t)rb != run_record_bytes())
        rc = tt_error_set(err, TT_EINPUT, "%s: $.record_bytes: %lld, this ttasim's records are %zu bytes: the "
                          "shard was written by another build; merge with the ttasim that ran the shards",
                          file, (long long)rb, run_record_bytes());
    else if ((size_t)points != n_points)
        rc = tt_error_set(err, TT_EINPUT, "%s: $.points: %lld, the scenario's sweep has %zu", file,
                          (long long)points, n_points);
    else if (*shards && of != *shards)
        rc = tt_error_set(err, TT_EINPUT, "%s: $.shards: %lld, an earlier file says %d; merge the shards of "
                          "one run", file, (long long)of, *shards);
    *shards = (int)of;
    const char *key;
    json_t *v;
    json_object_foreach(recs, key, v)
    {
        char *end;
        unsigned long i = strtoul(key, &end, 10);
        const char *hex = json_string_value(v);
        if (rc)
            break;
        if (*end || i >= n_points || !hex || strlen(hex) != 2 * (size_t)rb) {
            rc = tt_error_set(err, TT_EINPUT, "%s: $.records.%s: expected a point index below %zu and %lld hex "
                              "bytes", file, key, n_points, (long long)rb);
            break;
        }
        unsigned char *rec = records + i * (size_t)rb;
        if (!record_empty(rec, (size_t)rb)) {
            rc = tt_error_set(err, TT_EINPUT, "%s: $.records.%s: point %lu is also in an earlier shard; give "
                              "each shard once", file, key, i);
            break;
        }
        for (size_t k = 0; k < (size_t)rb; k++) {
            int hi = hex_value(hex[2 * k]), lo = hex_value(hex[2 * k + 1]);
            if (hi < 0 || lo < 0) {
                rc = tt_error_set(err, TT_EINPUT, "%s: $.records.%s: not hex at byte %zu", file, key, k);
                break;
            }
            rec[k] = (unsigned char)(hi << 4 | lo);
        }
    }
    json_decref(doc);
    return rc;
}

int shard_read_all(char *const *files, size_t nfiles, const char *scenario_path, char *const *sets,
                   size_t n_sets, size_t n_points, void *records, tt_error *err)
{
    char digest[17];
    int rc = scenario_digest(scenario_path, sets, n_sets, digest, err), shards = 0;
    memset(records, 0, n_points * run_record_bytes());
    for (size_t i = 0; rc == TT_OK && i < nfiles; i++)
        rc = read_one(files[i], digest, n_points, records, &shards, err);
    return rc;
}
