/* Shards are data (F07 of the round-3 findings, ../shared/reliability-findings/):
 * 'ttasim merge' took raw C structs back unchecked, so a forged number landed
 * in the report with exit 0, a record's status became the exit status, a
 * forged count crashed the report, and shards of two folders with different
 * traces merged into one silently mixed report. Now a shard is JSON with a
 * schema version, the build, a checksum of the scenario and --set values,
 * the files its run read, and a checksum of its bytes; each refusal exits 2
 * naming the file. The forgeries below recompute that checksum, so the field
 * checks behind it are what refuses them. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/infile.h"
#include "tests/testutil.h"

static char dir[64], scen[96], out[16384];

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* A 4-point sweep on a star of the test trace, in its own folder with its own copy of the trace. */
static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/ttasim-shards-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char trace[128], cmd[512];
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    snprintf(cmd, sizeof cmd, "cp '%s/tests/data/tiny-trace.json' '%s'", TTASIM_SRCDIR, trace);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(scen, sizeof scen, "%s/s.json", dir);
    write_text(scen, "{\"version\": 1, \"name\": \"shards\", \"platform\": {\"name\": \"star\", \"nodes\": 4},\n"
                     " \"workload\": {\"trace\": \"trace.json\", \"global_batch\": 64},\n"
                     " \"convergence\": {\"mccandlish\": {\"s_min\": 1000, \"noise_scale\": 256}},\n"
                     " \"sweep\": {\"nodes\": [2, 4], \"global_batch\": [64, 100]}}\n");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* ttasim run s.json --shard i/2 into dir/NAME */
static void shard(int i, const char *name)
{
    char args[512];
    snprintf(args, sizeof args, "run %s --quiet --shard %d/2 > %s/%s", scen, i, dir, name);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
}

static int merge(const char *a, const char *b, const char *extra)
{
    char args[512];
    snprintf(args, sizeof args, "merge %s %s/%s %s/%s --quiet %s", scen, dir, a, dir, b, extra);
    return tu_run_ttasim(args, out, sizeof out);
}

/* Writes dir/dst: dir/src's document passed through edit (text in, text
 * out, or NULL for the same), with its checksum recomputed. */
static void forge(const char *src, const char *dst, void (*edit)(json_t *doc))
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, src);
    char *text = read_text(path);
    json_t *doc = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    free(text);
    json_object_del(doc, "checksum");
    edit(doc);
    text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    size_t len = strlen(text) - 1; /* the checksum covers what precedes it: the document less its brace */
    snprintf(path, sizeof path, "%s/%s", dir, dst);
    FILE *f = fopen(path, "w");
    fprintf(f, "%.*s,\"checksum\":\"%016llx\"}\n", (int)len, text,
            (unsigned long long)infile_fnv(INFILE_FNV_START, text, len));
    fclose(f);
    free(text);
}

static json_t *record0(json_t *doc)
{
    return json_array_get(json_object_get(doc, "records"), 0);
}

static void forge_time(json_t *doc)
{
    json_object_set_new(json_object_get(record0(doc), "step"), "time_s", json_string("fast"));
}
static void forge_rc(json_t *doc)
{
    json_object_set_new(record0(doc), "rc", json_integer(7));
}
/* a record's status is the merge's: 1 would say a prediction moved, a silent 2 says nothing */
static void forge_rc_expectation(json_t *doc)
{
    json_object_set_new(record0(doc), "rc", json_integer(1));
}
static void forge_rc_silent(json_t *doc)
{
    json_object_set_new(record0(doc), "rc", json_integer(2));
}
static void forge_plan(json_t *doc)
{
    json_object_set_new(record0(doc), "plan", json_integer(100000000));
}
static void forge_groups(json_t *doc)
{
    json_t *g = json_array();
    for (int i = 0; i < 9; i++)
        json_array_append_new(g, json_object());
    json_object_set_new(record0(doc), "groups", g);
}
static void forge_label(json_t *doc)
{
    char big[400];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    json_object_set_new(record0(doc), "label", json_string(big));
}
/* a field whose meaning changed gets a new name: step.time_ms for step.time_s */
static void forge_renamed(json_t *doc)
{
    json_t *step = json_object_get(record0(doc), "step");
    json_object_set(step, "time_ms", json_object_get(step, "time_s"));
    json_object_del(step, "time_s");
}
static void forge_extra(json_t *doc)
{
    json_object_set_new(json_object_get(record0(doc), "step"), "time_ms", json_real(1));
}
static void forge_version(json_t *doc)
{
    json_object_set_new(doc, "version", json_integer(1));
}
static void forge_build(json_t *doc)
{
    json_object_set_new(doc, "build", json_string("0123456789abcdef"));
}
static void forge_other_point(json_t *doc)
{
    json_object_set_new(record0(doc), "point", json_integer(1)); /* shard 0 of 2 holds even points */
}
static void keep(json_t *doc)
{
    (void)doc;
}

START_TEST(merge_refuses_forged_shards)
{
    shard(0, "s0.json");
    shard(1, "s1.json");
    ck_assert_int_eq(merge("s0.json", "s1.json", ""), 0);
    /* the checksum recomputed over the same document: accepted (the forger's tool is right) */
    forge("s0.json", "same.json", keep);
    ck_assert_msg(merge("same.json", "s1.json", "") == 0, "%s", out);
    static const struct {
        void (*edit)(json_t *);
        const char *why;
    } cases[] = {
        {forge_time, "$.records[0].step.time_s: expected a number"},
        {forge_rc, "$.records[0].rc: expected an integer in [0, 3], found 7"},
        {forge_rc_expectation, "$.records[0].rc: expected 0, or 2 or 3 with the reason in stop.message, found 1"},
        {forge_rc_silent, "$.records[0].rc: expected 0, or 2 or 3 with the reason in stop.message, found 2"},
        {forge_plan, "$.records[0].plan: expected an integer in [0, 6], found 100000000"},
        {forge_groups, "$.records[0].groups: expected a list of at most 8 table groups"},
        {forge_label, "$.records[0].label: expected a string shorter than its field"},
        {forge_renamed, "$.records[0].step.time_s: expected the field (missing)"},
        {forge_extra, "a field it does not know (another schema)"},
        {forge_version, "$.version: shard schema 1, this ttasim reads schema 6"},
        {forge_build, "$.build: written by another ttasim build (0123456789abcdef"},
        {forge_other_point, "$.records[0].point: expected a point of shard 0 of 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        forge("s0.json", "forged.json", cases[i].edit);
        ck_assert_msg(merge("forged.json", "s1.json", "") == 2, "case %zu accepted: %s", i, out);
        ck_assert_msg(strstr(out, "forged.json: ") && strstr(out, cases[i].why), "case %zu: %s", i, out);
    }
}
END_TEST

/* Any one byte changed (a digit of a step time, the checksum itself) is
 * refused; a shard given twice, and an output onto a shard, too. */
START_TEST(merge_refuses_changed_bytes)
{
    shard(0, "s0.json");
    shard(1, "s1.json");
    char path[128];
    snprintf(path, sizeof path, "%s/s0.json", dir);
    char *text = read_text(path);
    size_t len = strlen(text);
    const size_t at[] = {len / 3, len / 2, len - 5 /* in the checksum */};
    for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
        char *t = strdup(text);
        t[at[k]] = t[at[k]] == '1' ? '2' : '1';
        snprintf(path, sizeof path, "%s/t.json", dir);
        write_text(path, t);
        free(t);
        ck_assert_int_eq(merge("t.json", "s1.json", ""), 2);
        ck_assert_msg(strstr(out, "t.json: ") && (strstr(out, "$.checksum") || strstr(out, "invalid JSON")), "%s", out);
    }
    free(text);
    ck_assert_int_eq(merge("s0.json", "s0.json", ""), 2);
    ck_assert_msg(strstr(out, "shard 0 of 2 is given twice"), "%s", out);
    char extra[160];
    snprintf(extra, sizeof extra, "--csv %s/s1.json", dir);
    snprintf(path, sizeof path, "%s/s1.json", dir);
    text = read_text(path);
    ck_assert_int_eq(merge("s0.json", "s1.json", extra), 2);
    ck_assert_msg(strstr(out, "this output is a shard of the run"), "%s", out);
    char *after = read_text(path);
    ck_assert_str_eq(text, after);
    free(text);
    free(after);
}
END_TEST

/* Same scenario bytes, another folder whose trace differs (a layer's FLOPs):
 * shards of the two do not merge, nor do a folder's shards elsewhere; a
 * trace edited between the array job and the merge is refused; an
 * identical copy of the folder merges (the same data). */
START_TEST(merge_refuses_foreign_shards)
{
    shard(0, "s0.json");
    shard(1, "s1.json");
    char other[128], cmd[512], args[512];
    snprintf(other, sizeof other, "%s/other", dir);
    /* its first layer's forward FLOPs three times as many */
    snprintf(cmd, sizeof cmd, "mkdir %s && cp %s/s.json %s/trace.json %s/ && sed -i 's/\"forward_flops\": 1e11/"
             "\"forward_flops\": 3e11/' %s/trace.json", other, dir, dir, other, other);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(args, sizeof args, "run %s/s.json --quiet --shard 1/2 > %s/o1.json", other, dir);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 0);
    ck_assert_int_eq(merge("s0.json", "o1.json", ""), 2);
    ck_assert_msg(strstr(out, "o1.json: $.inputs: its run read other data than"), "%s", out);
    snprintf(args, sizeof args, "merge %s/s.json %s/s0.json %s/s1.json --quiet", other, dir, dir);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "and this merge read no file with its bytes"), "%s", out);
    snprintf(cmd, sizeof cmd, "rm -rf %s/copy && mkdir %s/copy && cp %s/s.json %s/trace.json %s/copy/", dir, dir, dir,
             dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(args, sizeof args, "merge %s/copy/s.json %s/s0.json %s/s1.json --quiet", dir, dir, dir);
    ck_assert_msg(tu_run_ttasim(args, out, sizeof out) == 0, "%s", out);
    snprintf(cmd, sizeof cmd, "sed -i 's/\"forward_flops\": 1e11/\"forward_flops\": 3e11/' %s/trace.json", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(merge("s0.json", "s1.json", ""), 2);
    ck_assert_msg(strstr(out, "$.inputs[") && strstr(out, "which has changed since"), "%s", out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shards");
    TCase *t = tcase_create("merge");
    tcase_set_timeout(t, 120);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, merge_refuses_forged_shards);
    tcase_add_test(t, merge_refuses_changed_bytes);
    tcase_add_test(t, merge_refuses_foreign_shards);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
