/* Shard documents ('ttasim merge' and 'ttasim plan --merge', sim/cli/shard.c):
 * the bytes as a shard file of either command (checksum, header, records),
 * and, with its checksum made right, the records' fields (shard_record.c); a
 * record accepted is printed as every report does (report.c once read a
 * forged plan index out of bounds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/infile.h"
#include "sim/cli/shard.h"
#include "sim/cli/shard_record.h"
#include "sim/report/report.h"
#include "tests/fuzz/fuzz_input.h"

static scenario sc;
static int have_sc;

/* A shard file read as run's and as plan's (run.sh's plan seed has these options). */
static void read_as_each(char *const *files, size_t n, point_outcome *recs)
{
    const shard_origin origins[] = {{"run", "", sc.path, NULL, 0},
                                    {"plan", "--simulate 3 --zero 3 --recompute selective", sc.path, NULL, 0}};
    for (size_t i = 0; i < sizeof origins / sizeof *origins; i++) {
        tt_error err = {0};
        shard_set *set = NULL;
        if (shard_set_read(files, 1, &origins[i], n, recs, &set, &err) == TT_OK)
            shard_set_free(set);
    }
}

/* A 4-point sweep on a star of the test trace, loaded once. */
static void load_scenario(void)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"f\", \"platform\": {\"name\": \"star\", \"nodes\": 4},"
             " \"workload\": {\"trace\": \"%s/tests/data/tiny-trace.json\", \"global_batch\": 64},"
             " \"convergence\": {\"steps\": 10}, \"sweep\": {\"nodes\": [2, 4], \"global_batch\": [64, 128]}}",
             TTASIM_SRCDIR);
    const char *path = fuzz_input_file(NULL, "s.json", (const uint8_t *)text, strlen(text));
    tt_error err = {0};
    if (scenario_load(path, &sc, &err) != TT_OK)
        abort();
    have_sc = 1;
}

/* A record taken back, printed as the reports print it. */
static void report(const point_outcome *o)
{
    run_result r;
    memset(&r, 0, sizeof r);
    r.base = o->pt;
    r.points = (run_point *)&o->pt;
    r.n_points = 1;
    json_t *doc = report_json(&sc, &r);
    json_decref(doc);
    FILE *null = fopen("/dev/null", "w");
    report_text(null, &sc, &r, 1);
    fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!have_sc)
        load_scenario();
    /* as a file, then with the checksum it should end with */
    size_t n = run_sweep_points(&sc);
    point_outcome *recs = calloc(n + 1, sizeof *recs);
    char *files[1];
    tt_error err = {0};
    files[0] = (char *)fuzz_input_file(NULL, "shard.json", data, size);
    read_as_each(files, n, recs);
    if (size > 1 && data[size - 1] == '}') {
        char *text = malloc(size + 64);
        memcpy(text, data, size - 1);
        int len = snprintf(text + size - 1, 64, ",\"checksum\":\"%016llx\"}",
                           (unsigned long long)infile_fnv(INFILE_FNV_START, data, size - 1));
        files[0] = (char *)fuzz_input_file(NULL, "shard.json", (const uint8_t *)text, size - 1 + (size_t)len);
        read_as_each(files, n, recs);
        free(text);
    }
    /* each record of the document, past the header's build and scenario checks */
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    json_t *list = json_object_get(doc, "records");
    for (size_t i = 0; i < json_array_size(list) || (!list && i == 0 && doc); i++) {
        point_outcome o;
        if (shard_record_read(list ? json_array_get(list, i) : doc, "shard.json", "$.records[0]", &o, &err) == TT_OK)
            report(&o);
    }
    json_decref(doc);
    free(recs);
    return 0;
}
