/* DLRM end to end: the trace and model paths give the same step, tables
 * stored apart from the dense part (mixed precision fits 16 GB V100s), and
 * the sharding plans (named in the report, auto the fastest that fits). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "sim/report/report.h"
#include "tests/testutil.h"

#define TRACE TTASIM_SRCDIR "/scenarios/traces/dlrm-mlperf.json"

static json_t *run_dlrm(const char *platform_file, const char *source, long batch, const char *embedding,
                        int expect_rc, char *out, size_t n)
{
    char text[2048], path[64], args[512];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"dlrm\", \"platform\": {\"name\": \"%s\", \"nodes\": 1},\n"
             " \"workload\": {%s, \"global_batch\": %ld, \"precision\": \"fp16\"%s},\n"
             " \"optimizer\": \"sgd\", \"convergence\": {\"steps\": 1000}}\n",
             platform_file, source, batch, embedding);
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run --json %s", path);
    int rc = tu_run_ttasim(args, out, n);
    unlink(path);
    ck_assert_msg(rc == expect_rc, "exit %d, expected %d: %s", rc, expect_rc, out);
    if (expect_rc != 0)
        return NULL;
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "not JSON: %s", out);
    return doc;
}

static double get(json_t *doc, const char *metric)
{
    double v = NAN;
    ck_assert_msg(report_lookup(doc, metric, &v), "no %s", metric);
    return v;
}

static const char *plan_of(json_t *doc)
{
    return json_string_value(json_object_get(json_object_get(doc, "embedding"), "plan"));
}

/* One DGX A100 at 6,912 samples per GPU: the shipped trace (made at 2,048)
 * and a trace made on the fly at the scenario's batch agree within 1 %. */
START_TEST(trace_and_model_agree)
{
    static char out[65536];
    json_t *a = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296, "", 0, out, sizeof out);
    json_t *b = run_dlrm("dgx-a100", "\"model\": \"dlrm-mlperf\"", 55296, "", 0, out, sizeof out);
    double ta = get(a, "step.time_s"), tb = get(b, "step.time_s");
    ck_assert_msg(fabs(ta - tb) < 0.01 * tb, "trace %g s, model %g s", ta, tb);
    ck_assert_double_eq_tol(get(a, "step.compute_s"), get(b, "step.compute_s"), 0.01 * get(b, "step.compute_s"));
    ck_assert_str_eq(plan_of(a), "table_wise");
    /* the sparse update follows the batch: 3.375 x the samples touch more rows, but fewer than 3.375 x */
    double u = get(a, "embedding.unique_rows");
    json_t *c = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 16384, "", 0, out, sizeof out);
    double u_small = get(c, "embedding.unique_rows");
    ck_assert_double_gt(u, 1.5 * u_small);
    ck_assert_double_lt(u, 3.375 * u_small);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}
END_TEST

/* fp16 tables with no master copy fit eight 16 GB V100s (the largest table,
 * 39,884,406 x 128 x 2 B = 10.2 GB, on one GPU); asking for an fp32 master
 * copy (6 B per element, 30.6 GB) does not, and the error says what to change. */
START_TEST(mixed_precision_fits_v100)
{
    static char out[65536];
    json_t *a = run_dlrm("dgx1-v100", "\"trace\": \"" TRACE "\"", 16384, "", 0, out, sizeof out);
    /* the largest table's GPU also holds small tables (under 1 % more); a master copy would triple it */
    ck_assert_double_ge(get(a, "embedding.params_bytes"), 39884406.0 * 128 * 2);
    ck_assert_double_lt(get(a, "embedding.params_bytes"), 39884406.0 * 128 * 2 * 1.01);
    ck_assert_double_lt(get(a, "step.memory.total_bytes"), 16 * 1073741824.0);
    ck_assert_double_eq(get(a, "embedding.optimizer_bytes"), 0);
    json_decref(a);
    run_dlrm("dgx1-v100", "\"trace\": \"" TRACE "\"", 16384, ", \"embedding\": {\"master_weights\": true}", 2, out,
             sizeof out);
    ck_assert_ptr_nonnull(strstr(out, "does not fit"));
    ck_assert_ptr_nonnull(strstr(out, "workload.embedding"));
    /* row-wise Adagrad keeps one fp32 word per row of the busiest rank's tables */
    a = run_dlrm("dgx1-v100", "\"trace\": \"" TRACE "\"", 16384,
                 ", \"embedding\": {\"optimizer\": \"rowwise_adagrad\", \"sharding\": \"column_wise\"}", 0, out,
                 sizeof out);
    ck_assert_str_eq(plan_of(a), "column_wise");
    double rows = 0;
    json_t *tr = json_load_file(TRACE, 0, NULL);
    json_t *tables = json_object_get(json_object_get(tr, "embedding"), "tables");
    for (size_t i = 0; i < json_array_size(tables); i++)
        rows += json_number_value(json_object_get(json_array_get(tables, i), "rows"));
    json_decref(tr);
    ck_assert_double_eq_tol(get(a, "embedding.optimizer_bytes"), rows * 4, 1);
    ck_assert_double_eq_tol(get(a, "embedding.params_bytes"), rows * 128 / 8 * 2, 1);
    json_decref(a);
}
END_TEST

/* auto tries every plan: on a DGX A100 at 6,912 samples per GPU, hybrid
 * (the hot rows replicated) cuts the alltoall and beats table-wise;
 * data-parallel (48 GB of tables per GPU) does not fit and is skipped. */
START_TEST(auto_picks_fastest_that_fits)
{
    static char out[65536];
    json_t *tw = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296, "", 0, out, sizeof out);
    json_t *au = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296, ", \"embedding\": {\"sharding\": \"auto\"}", 0,
                          out, sizeof out);
    json_t *hy = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296, ", \"embedding\": {\"sharding\": \"hybrid\"}", 0,
                          out, sizeof out);
    ck_assert_str_eq(plan_of(au), "hybrid");
    ck_assert_double_eq(get(au, "step.time_s"), get(hy, "step.time_s"));
    ck_assert_double_lt(get(au, "step.time_s"), get(tw, "step.time_s"));
    json_decref(hy);
    ck_assert_double_lt(get(au, "embedding.alltoall_bytes"), 0.5 * get(tw, "embedding.alltoall_bytes"));
    ck_assert_double_gt(get(au, "embedding.hot_rows"), 0);
    json_decref(tw);
    json_decref(au);
    run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296, ", \"embedding\": {\"sharding\": \"data_parallel\"}", 2,
             out, sizeof out);
    ck_assert_ptr_nonnull(strstr(out, "does not fit"));
    run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296, ", \"embedding\": {\"sharding\": \"diagonal\"}", 2, out,
             sizeof out);
    ck_assert_ptr_nonnull(strstr(out, "$.workload.embedding.sharding"));
}
END_TEST

/* Tables in Zion's CPU memory: the sockets' lookups grow with the batch,
 * their sparse update by the distinct rows the node's batch touches (the hot
 * rows repeat), so 4 x the samples cost 4 x the lookups and less than 4 x the update. */
START_TEST(host_update_follows_distinct_rows)
{
    static char out[65536];
    const char *host = ", \"embedding\": {\"sharding\": \"host\"}";
    json_t *a = run_dlrm("zion", "\"trace\": \"" TRACE "\"", 16384, host, 0, out, sizeof out);
    json_t *b = run_dlrm("zion", "\"trace\": \"" TRACE "\"", 65536, host, 0, out, sizeof out);
    ck_assert_str_eq(plan_of(a), "host");
    ck_assert_double_eq_tol(get(b, "embedding.lookups"), 4 * get(a, "embedding.lookups"), 1e-6 * get(b, "embedding.lookups"));
    ck_assert_double_lt(get(b, "embedding.unique_rows"), 3.5 * get(a, "embedding.unique_rows"));
    double la = get(a, "host_embedding.lookup_s"), lb = get(b, "host_embedding.lookup_s");
    double ua = get(a, "host_embedding.update_s"), ub = get(b, "host_embedding.update_s");
    ck_assert_double_eq_tol(lb, 4 * la, 1e-6 * lb);
    ck_assert_double_lt(ub, 3.9 * ua);
    ck_assert_double_gt(ub, 2 * ua);
    json_decref(a);
    json_decref(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dlrm");
    TCase *tc = tcase_create("run");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, trace_and_model_agree);
    tcase_add_test(tc, mixed_precision_fits_v100);
    tcase_add_test(tc, auto_picks_fastest_that_fits);
    tcase_add_test(tc, host_update_follows_distinct_rows);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
