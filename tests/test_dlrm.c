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
#include "sim/replay/step.h"
#include "sim/replay/workload.h"
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
 * (the hot rows replicated) cuts the alltoall by more than sorting the
 * batch's ids every step costs (19 kernels at the A100's 4 us dispatch): it
 * is the fastest and auto keeps it, ahead of column-wise and table-wise;
 * data-parallel (48 GB of tables per GPU) does not fit and is skipped. */
START_TEST(auto_picks_fastest_that_fits)
{
    static char out[65536];
    json_t *tw = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296, "", 0, out, sizeof out);
    json_t *au = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296, ", \"embedding\": {\"sharding\": \"auto\"}", 0,
                          out, sizeof out);
    json_t *hy = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296, ", \"embedding\": {\"sharding\": \"hybrid\"}", 0,
                          out, sizeof out);
    json_t *cw = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 55296,
                          ", \"embedding\": {\"sharding\": \"column_wise\"}", 0, out, sizeof out);
    ck_assert_str_eq(plan_of(au), "hybrid");
    ck_assert_double_eq(get(au, "step.time_s"), get(hy, "step.time_s"));
    ck_assert_double_lt(get(au, "step.time_s"), get(cw, "step.time_s"));
    ck_assert_double_lt(get(au, "step.time_s"), get(tw, "step.time_s"));
    ck_assert_double_lt(get(hy, "embedding.alltoall_bytes"), 0.5 * get(tw, "embedding.alltoall_bytes"));
    ck_assert_double_gt(get(hy, "embedding.hot_rows"), 0);
    json_decref(hy);
    json_decref(cw);
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

/* Eager frameworks add the bias and ReLU passes over every linear layer's
 * output: HugeCTR (fused epilogue) adds none, PyTorch and TF2 add
 * the same time, and it grows with the samples per GPU: doubling them
 * twice, the second increment is about twice the first (not exactly: the
 * one-wide last layer's passes sit on the eager op's host time, 15 us, so
 * the batches are large enough for the wide layers'). */
START_TEST(framework_adds_unfused_epilogue)
{
    static char out[65536];
    const char *src = "\"trace\": \"" TRACE "\"";
    double added[3];
    for (int i = 0; i < 3; i++) {
        long batch = 1048576L << i;
        json_t *a = run_dlrm("dgx-a100", src, batch, "", 0, out, sizeof out);
        json_t *c = run_dlrm("dgx-a100", src, batch, ", \"framework\": \"pytorch\"", 0, out, sizeof out);
        added[i] = get(c, "step.compute_s") - get(a, "step.compute_s");
        if (i == 0) {
            json_t *b = run_dlrm("dgx-a100", src, batch, ", \"framework\": \"hugectr\"", 0, out, sizeof out);
            json_t *d = run_dlrm("dgx-a100", src, batch, ", \"framework\": \"tensorflow2\"", 0, out, sizeof out);
            /* HugeCTR adds no pass; its graph, loss kernel and streams only take time away */
            ck_assert_double_lt(get(b, "step.compute_s"), get(a, "step.compute_s"));
            ck_assert_double_eq(get(d, "step.compute_s"), get(c, "step.compute_s"));
            ck_assert_double_gt(added[0], 0.1 * get(a, "step.compute_s"));
            json_decref(b);
            json_decref(d);
        }
        json_decref(a);
        json_decref(c);
    }
    ck_assert_double_eq_tol((added[2] - added[1]) / (added[1] - added[0]), 2.0, 0.15);
    run_dlrm("dgx-a100", src, 65536, ", \"framework\": \"jax\"", 2, out, sizeof out);
    ck_assert_ptr_nonnull(strstr(out, "$.workload.framework"));
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

/* A DLRM-shaped trace: bottom MLP gemm -> tables -> interaction (no
 * parameters) -> top MLP gemm -> loss; fp32, micro-batch 8, a forward
 * alltoall after the tables and a backward one after the interaction. */
static const char *SHAPED =
    "{\"format\": \"ttasim-trace\", \"version\": 1, \"model\": \"shaped\", \"micro_batch\": 8,\n"
    " \"precision\": \"fp32\", \"dtype_bytes\": 4, \"params\": 1000500000, \"param_bytes\": 4.002e9,\n"
    " \"forward_flops\": 2.48e12, \"backward_flops\": 4.96e12,\n"
    " \"layers\": [\n"
    "  {\"name\": \"bot\", \"class\": \"gemm\", \"forward_flops\": 8e11, \"forward_bytes\": 1e6,\n"
    "   \"backward_flops\": 1.6e12, \"backward_bytes\": 2e6, \"activation_bytes\": 1e9, \"param_bytes\": 1e6},\n"
    "  {\"name\": \"emb\", \"class\": \"embedding\", \"forward_flops\": 0, \"forward_bytes\": 5e10,\n"
    "   \"backward_flops\": 0, \"backward_bytes\": 1e11, \"activation_bytes\": 1e8, \"param_bytes\": 4e9},\n"
    "  {\"name\": \"interaction\", \"class\": \"gemm\", \"forward_flops\": 8e10, \"forward_bytes\": 1e6,\n"
    "   \"backward_flops\": 1.6e11, \"backward_bytes\": 2e6, \"activation_bytes\": 1e8, \"param_bytes\": 0},\n"
    "  {\"name\": \"top\", \"class\": \"gemm\", \"forward_flops\": 1.6e12, \"forward_bytes\": 1e6,\n"
    "   \"backward_flops\": 3.2e12, \"backward_bytes\": 2e6, \"activation_bytes\": 1e9, \"param_bytes\": 1e6},\n"
    "  {\"name\": \"loss\", \"class\": \"loss\", \"forward_flops\": 0, \"forward_bytes\": 0,\n"
    "   \"backward_flops\": 0, \"backward_bytes\": 0, \"activation_bytes\": 0, \"param_bytes\": 0}],\n"
    " \"gradients\": [{\"name\": \"top.weight\", \"bytes\": 1e6, \"layer\": 3},\n"
    "                {\"name\": \"bot.weight\", \"bytes\": 1e6, \"layer\": 0}],\n"
    " \"optimizer\": {\"name\": \"sgd\", \"flops\": 0, \"bytes\": 0},\n"
    " \"buckets\": [{\"bytes\": 1e6, \"ready_after_layer\": 3}, {\"bytes\": 1e6, \"ready_after_layer\": 0}],\n"
    " \"comm\": [{\"op\": \"alltoall\", \"phase\": \"forward\", \"after_layer\": 1, \"bytes_per_rank\": 1e8},\n"
    "          {\"op\": \"alltoall\", \"phase\": \"backward\", \"after_layer\": 2, \"bytes_per_rank\": 1e8}]}\n";

/* A plain roofline (gemm at 8e12 FLOP/s, 1e12 B/s) and no dispatch floor. */
static const device_model ROOFLINE = {
    .name = "roofline", .peak_flops = 1e13, .peak_fp32_flops = 1e13, .mem_Bps = 1e12, .mem_bytes = 80e9,
    .efficiency = {[OPCLASS_CONV] = 0.5, [OPCLASS_GEMM] = 0.8, [OPCLASS_ATTENTION] = 0.5, [OPCLASS_NORM] = 0.5,
                   [OPCLASS_ELEMENTWISE] = 0.5, [OPCLASS_POOL] = 0.5, [OPCLASS_EMBEDDING] = 0.5,
                   [OPCLASS_LOSS] = 0.5},
    .backward_efficiency = DEVICE_MODEL_SAME_BACKWARD,
};

static void load_shaped(workload *t)
{
    char path[64];
    tu_write_temp(SHAPED, path, sizeof path);
    tt_error err = {0};
    int rc = workload_load(path, t, &err);
    unlink(path);
    ck_assert_msg(rc == TT_OK, "%s", err.msg);
}

static double shaped_replay(const step_options *o, const device_model *dev, const double *coll_s, step_result *r)
{
    workload t;
    tt_error err = {0};
    load_shaped(&t);
    ck_assert_int_eq(step_replay(&t, dev, o, coll_s, r, &err), TT_OK);
    workload_free(&t);
    return r->time_s;
}

/* The shaped trace's step options: 8 ranks of 8 samples, fp32. */
static step_options shaped_options(framework f)
{
    return (step_options){.micro_batch = 8, .accumulation = 1, .dtype_bytes = 4, .grad_dtype_bytes = 4,
                          .overlap = 1, .ranks = 8, .optimizer_state_words = 1, .embeddings = EMB_ACCELERATORS,
                          .framework = f};
}

static double shaped_run(framework f, const device_model *dev, int async_wgrad, int grouped, const double *coll_s,
                         step_result *r)
{
    step_options o = shaped_options(f);
    o.async_wgrad = async_wgrad;
    o.grouped = grouped;
    return shaped_replay(&o, dev, coll_s, r);
}

static double shaped_step(framework f, double dispatch_s, step_result *r)
{
    device_model d = ROOFLINE;
    d.dispatch_s = dispatch_s;
    step_options o = shaped_options(f);
    double coll_s[] = {0, 0, 0.3, 0.3, 0}; /* two buckets, the two alltoalls, no replicated rows */
    return shaped_replay(&o, &d, coll_s, r);
}

/* By hand. In order: bot 0.1, tables 0.05, alltoall 0.3, interaction 0.01,
 * top 0.2; backward top 0.4, interaction 0.02, alltoall 0.3, tables 0.1,
 * bot 0.2: 1.68 s, 0.6 s of it exposed alltoall. HugeCTR's overlap: the
 * tables first (0.05), the alltoall to 0.35 while bot runs to 0.15, so 0.2
 * exposed; top ends at 0.56; backward interaction ends at 0.98, the alltoall
 * to 1.28 while bot's backward runs to 1.18 (0.1 exposed), the tables' update
 * to 1.38. apex's epilogue: bias+ReLU in one kernel each way, 2 and 3 passes
 * of bot's and top's 1e9-byte outputs (0.01 s), and the loss's kernel, each
 * way, an eager op's host time (FRAMEWORK_EAGER_OP_S); with a 0.01 s dispatch
 * floor one kernel each way (0.04 s) where eager pays a floor per pass (0.16 s). */
START_TEST(framework_mechanisms_by_hand)
{
    step_result r;
    ck_assert_double_eq_tol(shaped_step(FRAMEWORK_NONE, 0, &r), 1.68, 1e-9);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.6, 1e-9);
    ck_assert_double_eq_tol(shaped_step(FRAMEWORK_HUGECTR, 0, &r), 1.38, 1e-9);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.3, 1e-9);
    ck_assert_double_eq_tol(r.compute_s, 1.38 - 0.3, 1e-9);
    ck_assert_double_eq_tol(shaped_step(FRAMEWORK_PYTORCH_APEX, 0, &r), 1.68 + 0.01 + 2 * FRAMEWORK_EAGER_OP_S, 1e-9);
    ck_assert_double_eq_tol(shaped_step(FRAMEWORK_PYTORCH, 0, &r), 1.68 + 0.016 + 2 * FRAMEWORK_EAGER_OP_S, 1e-9);
    double floor_none = shaped_step(FRAMEWORK_NONE, 0.01, &r);
    ck_assert_double_eq_tol(shaped_step(FRAMEWORK_PYTORCH_APEX, 0.01, &r) - floor_none, 0.04, 1e-9);
    ck_assert_double_eq_tol(shaped_step(FRAMEWORK_PYTORCH, 0.01, &r) - floor_none, 0.16, 1e-9);
    /* the least a kernel costs: HugeCTR's graph launch; an eager op's host time; else the device's dispatch */
    ck_assert_double_eq(framework_kernel_s(FRAMEWORK_HUGECTR, 2e-5), 4e-6);
    ck_assert_double_eq(framework_kernel_s(FRAMEWORK_PYTORCH, 4e-6), FRAMEWORK_EAGER_OP_S);
    ck_assert_double_eq(framework_kernel_s(FRAMEWORK_TENSORFLOW2, 4e-5), 4e-5);
    ck_assert_double_eq(framework_kernel_s(FRAMEWORK_NONE, 4e-6), 4e-6);
}
END_TEST

/* HugeCTR's streams, by hand, on the roofline with a partial-wave tail of
 * 8e11 FLOPs (a gemm kernel of w FLOPs takes (w + 8e11) / 8e12 s; busy,
 * w / 8e12). Forward: the lookups (0.05) beside bot (0.2, busy 0.1) take
 * 0.2; the alltoall ends at 0.35, interaction 0.11 and top 0.3 end at
 * 0.76. Backward: top (two kernels of 1.6e12: 0.6) and interaction (two of
 * 8e10: 0.22) to 1.58, the alltoall to 1.88, bot's two kernels (0.4, busy
 * 0.2) beside the update (0.1) to 1.98, and the update waits for the
 * alltoall: 1.98. With the weight gradients on their own stream a layer's
 * two kernels share one tail: top 0.5, interaction 0.12, bot 0.3: the
 * alltoall ends at 1.68, the update at 1.78. Grouped, the gradients' one
 * allreduce (0.05) follows the backward. */
START_TEST(hugectr_streams_by_hand)
{
    device_model d = ROOFLINE;
    d.half_work_flops = 8e11;
    double coll_s[] = {0, 0, 0.3, 0.3, 0.05};
    step_result r;
    ck_assert_double_eq_tol(shaped_run(FRAMEWORK_HUGECTR, &d, 0, 0, coll_s, &r), 1.98, 1e-9);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.15, 1e-9);
    ck_assert_double_eq_tol(shaped_run(FRAMEWORK_HUGECTR, &d, 1, 0, coll_s, &r), 1.78, 1e-9);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.25, 1e-9);
    ck_assert_double_eq_tol(r.compute_s, 1.78 - 0.25, 1e-9);
    ck_assert_double_eq_tol(shaped_run(FRAMEWORK_HUGECTR, &d, 1, 1, coll_s, &r), 1.83, 1e-9);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.30, 1e-9);
    /* without HugeCTR's streams the lookups and bot run one after the other (0.25) and the
     * update after bot's backward (0.4): 0.05 + 0.4 more compute, the alltoalls blocking */
    ck_assert_double_gt(shaped_run(FRAMEWORK_NONE, &d, 0, 0, coll_s, &r), 1.98 + 0.4);
}
END_TEST

/* HugeCTR across nodes (8 ranks, 4 to a node, a hybrid plan), by hand with
 * the tail of hugectr_streams_by_hand and weight gradients on their own
 * stream. Forward: the lookups (0.05), the alltoall to 0.35 while bot runs
 * (0.2) after the lookups, to 0.25; interaction 0.11 and top 0.3 to 0.76.
 * Backward: top 0.5 and interaction 0.12 to 1.38, bot 0.3 to 1.68, then the
 * grouped allreduce (0.2) to 1.88. With overlap_ar_a2a the alltoall (0.3)
 * and the update (0.1) follow the interaction on the embedding's stream,
 * ending at 1.78, and the step at 1.88; without, they follow the allreduce:
 * 2.18 and 2.28. Not grouped, the frequent rows' allreduce comes first on
 * the embedding's stream: 1.38 to 1.58, the alltoall to 1.88, the update to
 * 1.98, where the dense buckets (none here) also wait for the wire. */
START_TEST(hugectr_network_by_hand)
{
    device_model d = ROOFLINE;
    d.half_work_flops = 8e11;
    double coll_s[] = {0, 0, 0.3, 0.3, 0.2};
    sharding_cost hybrid = {.kind = SHARD_HYBRID};
    step_options o = shaped_options(FRAMEWORK_HUGECTR);
    o.async_wgrad = 1;
    o.grouped = 1;
    o.tables = &hybrid;
    o.node_ranks = 4;
    o.overlap_ar_a2a = 1;
    step_result r;
    ck_assert_double_eq_tol(shaped_replay(&o, &d, coll_s, &r), 1.88, 1e-9);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.1 + 0.2, 1e-9);
    ck_assert_double_eq_tol(r.compute_s, 0.66 + 1.02, 1e-9); /* the update on its own stream counted */
    o.overlap_ar_a2a = 0;
    ck_assert_double_eq_tol(shaped_replay(&o, &d, coll_s, &r), 2.28, 1e-9);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.1 + 0.2 + 0.4, 1e-9);
    o.overlap_ar_a2a = 1;
    o.grouped = 0;
    ck_assert_double_eq_tol(shaped_replay(&o, &d, coll_s, &r), 1.98, 1e-9);
    /* on one node, HugeCTR's single-node path: hugectr_streams_by_hand's 1.78, then the grouped allreduce */
    o.node_ranks = 8;
    o.grouped = 1;
    ck_assert_double_eq_tol(shaped_replay(&o, &d, coll_s, &r), 1.98, 1e-9);
}
END_TEST

/* HugeCTR allreduces the network's weight gradients once, after the
 * backward: the last bucket (ready after the first layer) holds them all;
 * grouped, the frequent rows' allreduce carries them. */
START_TEST(hugectr_one_wgrad_allreduce)
{
    workload t;
    load_shaped(&t);
    step_coll c[8];
    step_options o = shaped_options(FRAMEWORK_NONE);
    ck_assert_uint_eq(step_collectives(&t, &o, c), 5);
    ck_assert_double_eq(c[0].bytes, 1e6);
    ck_assert_double_eq(c[1].bytes, 1e6);
    o.framework = FRAMEWORK_HUGECTR;
    step_collectives(&t, &o, c);
    ck_assert_double_eq(c[0].bytes, 0);
    ck_assert_double_eq(c[1].bytes, 2e6);
    ck_assert_double_eq(c[4].bytes, 0);
    o.grouped = 1;
    step_collectives(&t, &o, c);
    ck_assert_double_eq(c[1].bytes, 0);
    ck_assert_double_eq(c[4].bytes, 2e6);
    workload_free(&t);
}
END_TEST

/* HugeCTR's loss kernel is one elementwise pass: no partial wave of tiles
 * (with a 8e11-FLOP tail a 1e6-FLOP loss at 0.5 of 1e13 would take 0.16 s,
 * without it 2e-7 s); the other frameworks keep the per-op model's. */
START_TEST(hugectr_loss_has_no_tile_wave)
{
    workload t;
    load_shaped(&t);
    t.layers[4].forward_flops = 1e6;
    device_model d = ROOFLINE;
    d.half_work_flops = 8e11;
    step_options o = shaped_options(FRAMEWORK_NONE);
    ck_assert_double_eq_tol(step_layer_s(&t, 4, &d, &o, 0), (1e6 + 8e11) / 5e12, 1e-12);
    o.framework = FRAMEWORK_HUGECTR;
    ck_assert_double_eq_tol(step_layer_s(&t, 4, &d, &o, 0), 1e6 / 5e12, 1e-15);
    workload_free(&t);
}
END_TEST

/* The sharding plan's lookups and update are gathers and scatters of rows:
 * no partial wave of tiles (a 4e11-FLOP lookup at 0.5 of 1e13 takes 0.08 s,
 * not 0.24 with the 8e11-FLOP tail); the trace's own embedding layer keeps it. */
START_TEST(plan_lookups_have_no_tile_wave)
{
    char text[4096], path[64];
    size_t n = strlen(SHAPED) - 2; /* before the closing brace */
    snprintf(text, sizeof text,
             "%.*s, \"embedding\": {\"layer\": 1, \"index_distribution\": \"zipf\", \"index_zipf_s\": 1.05,\n"
             " \"tables\": [{\"rows\": 1000, \"dim\": 16, \"lookups\": 1}]}}\n",
             (int)n, SHAPED);
    tu_write_temp(text, path, sizeof path);
    workload t;
    tt_error err = {0};
    int rc = workload_load(path, &t, &err);
    unlink(path);
    ck_assert_msg(rc == TT_OK, "%s", err.msg);
    t.layers[1].forward_flops = 4e11;
    device_model d = ROOFLINE;
    d.half_work_flops = 8e11;
    step_options o = shaped_options(FRAMEWORK_NONE);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 0), (4e11 + 8e11) / 5e12, 1e-12);
    sharding_cost plan = {.kind = SHARD_TABLE_WISE, .lookup_flops = 4e11, .lookup_bytes = 1e10};
    o.tables = &plan;
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 0), 0.08, 1e-12);
    workload_free(&t);
}
END_TEST

static const char *group_plan(json_t *doc, size_t g)
{
    json_t *groups = json_object_get(json_object_get(doc, "embedding"), "groups");
    return json_string_value(json_object_get(json_array_get(groups, g), "plan"));
}

/* Per-group plans: each group's error names its JSON path; an auto group
 * takes the plan that makes the step fastest with the other group fixed
 * (here the small tables at data_parallel): none of the other plans for it
 * gives a faster step, and the one it names gives the same. */
START_TEST(per_group_plans)
{
    static char out[65536];
    const char *src = "\"trace\": \"" TRACE "\"";
    static const struct {
        const char *sharding, *where;
    } bad[] = {
        {"[{\"plan\": \"table_wise\"}, {\"plan\": \"hybrid\"}]", "$.workload.embedding.sharding[0]"},
        {"[{\"max_rows\": 1000, \"plan\": \"hybrid\"}, {\"max_rows\": 10, \"plan\": \"table_wise\"}]",
         "$.workload.embedding.sharding[1].max_rows"},
        {"[{\"max_rows\": 1000, \"plan\": \"host\"}, {\"plan\": \"table_wise\"}]", "$.workload.embedding.sharding[0].plan"},
        {"[{\"max_rows\": 1000, \"plan\": \"row_wise\"}, {\"plan\": \"hybrid\"}]", "$.workload.embedding.sharding"},
        {"[{\"max_rows\": 1000, \"plan\": \"diagonal\"}, {\"plan\": \"hybrid\"}]", "$.workload.embedding.sharding[0].plan"},
        {"[]", "$.workload.embedding.sharding"},
    };
    char emb[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(emb, sizeof emb, ", \"embedding\": {\"sharding\": %s}", bad[i].sharding);
        run_dlrm("dgx-a100", src, 65536, emb, 2, out, sizeof out);
        ck_assert_msg(strstr(out, bad[i].where) != NULL, "%s: %s", bad[i].sharding, out);
    }
    json_t *a = run_dlrm("dgx-a100", src, 65536,
                         ", \"embedding\": {\"sharding\": [{\"max_rows\": 100000, \"plan\": \"data_parallel\"},"
                         " {\"plan\": \"auto\"}]}",
                         0, out, sizeof out);
    ck_assert_str_eq(plan_of(a), "mix");
    ck_assert_str_eq(group_plan(a, 0), "data_parallel");
    const char *chosen = group_plan(a, 1);
    ck_assert_ptr_nonnull(chosen);
    double t = get(a, "step.time_s");
    /* data_parallel is left out: 24e9 parameters on every GPU do not fit */
    static const char *const plans[] = {"table_wise", "row_wise", "column_wise", "hybrid"};
    int same = 0;
    for (size_t k = 0; k < sizeof plans / sizeof plans[0]; k++) {
        snprintf(emb, sizeof emb,
                 ", \"embedding\": {\"sharding\": [{\"max_rows\": 100000, \"plan\": \"data_parallel\"},"
                 " {\"plan\": \"%s\"}]}", plans[k]);
        json_t *b = run_dlrm("dgx-a100", src, 65536, emb, 0, out, sizeof out);
        ck_assert_str_eq(group_plan(b, 1), plans[k]);
        ck_assert_double_le(t, get(b, "step.time_s"));
        same += strcmp(plans[k], chosen) == 0 && get(b, "step.time_s") == t;
        json_decref(b);
    }
    ck_assert_int_eq(same, 1);
    json_decref(a);
}
END_TEST

/* Column-wise on one DGX A100: every GPU needs all 26 tables' ids and
 * lengths for the 65,536 samples (int64 + int32); read on each GPU they cost
 * no exchange, by TorchRec's input alltoall they add its time to the step
 * (before the lookups, not overlapped). A bad choice is an input error. */
START_TEST(ids_alltoall_adds_to_step)
{
    static char out[65536];
    json_t *rd = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 65536,
                          ", \"embedding\": {\"sharding\": \"column_wise\", \"ids\": \"reader\"}", 0, out, sizeof out);
    json_t *a2a = run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 65536,
                           ", \"embedding\": {\"sharding\": \"column_wise\", \"ids\": \"alltoall\"}", 0, out, sizeof out);
    double ids_bytes = 65536.0 * 26 * (8 + 4);
    ck_assert_double_eq_tol(get(rd, "embedding.id_bytes"), ids_bytes, 1e-3);
    ck_assert_double_eq_tol(get(a2a, "embedding.id_bytes"), ids_bytes, 1e-3);
    ck_assert_double_eq(get(rd, "embedding.id_s"), 0);
    double id_s = get(a2a, "embedding.id_s");
    ck_assert_double_gt(id_s, 0);
    ck_assert_double_eq_tol(get(a2a, "step.time_s") - get(rd, "step.time_s"), id_s, 1e-3 * id_s);
    json_decref(rd);
    json_decref(a2a);
    run_dlrm("dgx-a100", "\"trace\": \"" TRACE "\"", 65536, ", \"embedding\": {\"ids\": \"tfrecord\"}", 2, out,
             sizeof out);
    ck_assert_msg(strstr(out, "$.workload.embedding.ids: expected one of \"reader\", \"alltoall\"") != NULL, "%s", out);
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
    tcase_add_test(tc, framework_adds_unfused_epilogue);
    tcase_add_test(tc, framework_mechanisms_by_hand);
    tcase_add_test(tc, hugectr_streams_by_hand);
    tcase_add_test(tc, hugectr_network_by_hand);
    tcase_add_test(tc, hugectr_one_wgrad_allreduce);
    tcase_add_test(tc, hugectr_loss_has_no_tile_wave);
    tcase_add_test(tc, plan_lookups_have_no_tile_wave);
    tcase_add_test(tc, per_group_plans);
    tcase_add_test(tc, ids_alltoall_adds_to_step);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
