/* The trace reader and the per-rank step timeline, against hand-computed
 * timelines of a three-layer trace (HACKING.md format). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/replay/step.h"
#include "sim/replay/workload.h"
#include "tests/testutil.h"

/* conv (params 1e8 B) -> gemm (params 4e8 B) -> loss; fp32, micro-batch 8. */
static const char *TINY =
    "{\"format\": \"ttasim-trace\", \"version\": 1, \"model\": \"tiny\", \"micro_batch\": 8,\n"
    " \"precision\": \"fp32\", \"dtype_bytes\": 4, \"params\": 125000000, \"param_bytes\": 5e8,\n"
    " \"forward_flops\": 3e12, \"backward_flops\": 6e12,\n"
    " \"layers\": [\n"
    "  {\"name\": \"conv1\", \"class\": \"conv\", \"forward_flops\": 1e12, \"forward_bytes\": 1e9,\n"
    "   \"backward_flops\": 2e12, \"backward_bytes\": 2e9, \"activation_bytes\": 1e9, \"param_bytes\": 1e8},\n"
    "  {\"name\": \"fc\", \"class\": \"gemm\", \"forward_flops\": 2e12, \"forward_bytes\": 1e9,\n"
    "   \"backward_flops\": 4e12, \"backward_bytes\": 2e9, \"activation_bytes\": 5e8, \"param_bytes\": 4e8},\n"
    "  {\"name\": \"loss\", \"class\": \"loss\", \"forward_flops\": 1e6, \"forward_bytes\": 1e9,\n"
    "   \"backward_flops\": 1e6, \"backward_bytes\": 1e9, \"activation_bytes\": 0, \"param_bytes\": 0}],\n"
    " \"gradients\": [{\"name\": \"fc.weight\", \"bytes\": 4e8, \"layer\": 1},\n"
    "                {\"name\": \"conv1.weight\", \"bytes\": 1e8, \"layer\": 0}],\n"
    " \"optimizer\": {\"name\": \"sgd\", \"flops\": 1e9, \"bytes\": 4e9},\n"
    " \"buckets\": [{\"bytes\": 4e8, \"ready_after_layer\": 1}, {\"bytes\": 1e8, \"ready_after_layer\": 0}]%s}\n";

/* A plain roofline: no saturation, no dispatch floor, no fusion. */
static const device_model DEV = {
    .name = "test device", .peak_flops = 1e13, .peak_fp32_flops = 5e12, .mem_Bps = 1e12, .mem_bytes = 80e9,
    .efficiency = {[OPCLASS_CONV] = 0.5, [OPCLASS_GEMM] = 0.8, [OPCLASS_ATTENTION] = 0.5, [OPCLASS_NORM] = 0.5,
                   [OPCLASS_ELEMENTWISE] = 0.5, [OPCLASS_POOL] = 0.5, [OPCLASS_EMBEDDING] = 0.5, [OPCLASS_LOSS] = 0.5},
    .backward_efficiency = DEVICE_MODEL_SAME_BACKWARD,
};

static void load_tiny(const char *extra, workload *t)
{
    char text[4096], path[64];
    snprintf(text, sizeof text, TINY, extra);
    tu_write_temp(text, path, sizeof path);
    tt_error err = {0};
    int rc = workload_load(path, t, &err);
    unlink(path);
    ck_assert_msg(rc == TT_OK, "%s", err.msg);
}

static step_options opts(int micro_batch)
{
    step_options o = {.micro_batch = micro_batch, .accumulation = 1, .dtype_bytes = 4, .grad_dtype_bytes = 4,
                       .overlap = 1, .ranks = 8, .optimizer_state_words = 1, .embeddings = EMB_ACCELERATORS};
    return o;
}

START_TEST(trace_reads_fields)
{
    workload t;
    load_tiny("", &t);
    ck_assert_str_eq(t.model, "tiny");
    ck_assert_int_eq(t.micro_batch, 8);
    ck_assert_int_eq((int)t.n_layers, 3);
    ck_assert_int_eq(t.layers[1].cls, OPCLASS_GEMM);
    ck_assert_double_eq(t.layers[1].backward_flops, 4e12);
    ck_assert_double_eq(t.gradient_bytes, 5e8);
    ck_assert_int_eq((int)t.n_buckets, 2);
    ck_assert_int_eq(t.buckets[1].ready_after_layer, 0);
    ck_assert_str_eq(t.optimizer->name, "sgd");
    ck_assert_int_eq((int)t.n_comm, 0);
    workload_free(&t);
}
END_TEST

static void expect_bad(const char *text, const char *needle)
{
    char path[64];
    tu_write_temp(text, path, sizeof path);
    workload t;
    tt_error err = {0};
    int rc = workload_load(path, &t, &err);
    unlink(path);
    ck_assert_int_eq(rc, TT_EINPUT);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "expected '%s' in: %s", needle, err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
}

START_TEST(trace_rejects_bad_input)
{
    char text[4096];
    snprintf(text, sizeof text, TINY, "");
    char *at = strstr(text, "\"ready_after_layer\": 1");
    memcpy(at, "\"ready_after_layer\": 7", 22);
    expect_bad(text, "$.buckets[0].ready_after_layer");
    snprintf(text, sizeof text, TINY, "");
    at = strstr(text, "\"class\": \"gemm\"");
    memcpy(at, "\"class\": \"gemn\"", 15);
    expect_bad(text, "did you mean \"gemm\"");
    snprintf(text, sizeof text, TINY, "");
    at = strstr(text, "ttasim-trace");
    memcpy(at, "ttasim-trade", 12);
    expect_bad(text, "$.format");
    /* Buckets out of backward order. */
    snprintf(text, sizeof text, TINY, "");
    at = strstr(text, "\"ready_after_layer\": 0");
    memcpy(at, "\"ready_after_layer\": 2", 22);
    expect_bad(text, "order backward fills them");
}
END_TEST

START_TEST(kernel_roofline)
{
    ck_assert_double_eq_tol(step_kernel_s(1e12, 1e9, 1e13, 0.5, 1e12), 0.2, 1e-15);
    ck_assert_double_eq_tol(step_kernel_s(1e9, 1e10, 1e13, 0.5, 1e12), 0.01, 1e-15);
}
END_TEST

/* Forward 0.2 + 0.25 + 0.001; backward loss 0.001, fc 0.5 (bucket 0 from
 * 0.952 to 1.452), conv 0.4 (ends 1.352, bucket 1 from 1.452 to 1.552);
 * optimizer max(1e9 / 2.5e12, 4e9 / 1e12) = 0.004. */
START_TEST(timeline_overlap)
{
    workload t;
    load_tiny("", &t);
    step_options o = opts(8);
    step_coll c[3];
    ck_assert_int_eq((int)step_collectives(&t, &o, c), 3);
    ck_assert_int_eq(c[0].op, STEP_ALLREDUCE);
    ck_assert_double_eq(c[0].bytes, 4e8);
    double coll_s[] = {0.5, 0.1, 0};
    step_result r;
    tt_error err = {0};
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.compute_s, 1.352, 1e-12);
    ck_assert_double_eq_tol(r.comm_s, 0.6, 1e-12);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.2, 1e-12);
    ck_assert_double_eq_tol(r.optimizer_s, 0.004, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 1.556, 1e-12);
    ck_assert_double_eq_tol(r.host_embedding_s, 0, 1e-15);
    ck_assert_double_eq_tol(r.idle_s, 0.2, 1e-12); /* the exposed bucket */
    ck_assert_double_eq_tol(r.mfu, 9e12 / (1.556 * 1e13), 1e-12);
    /* Fast collectives hide completely behind the conv backward. */
    double fast[] = {0.1, 0.1};
    ck_assert_int_eq(step_replay(&t, &DEV, &o, fast, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.1, 1e-12); /* only the last bucket */
    ck_assert_double_eq_tol(r.time_s, 1.352 + 0.1 + 0.004, 1e-12);
    /* Without overlap both allreduces follow the backward: 0.2 exposed. */
    o.overlap = 0;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, fast, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.2, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 1.352 + 0.2 + 0.004, 1e-12);
    /* fp32 gradients of an fp16 step: buckets keep their fp32 size. */
    o.dtype_bytes = 2;
    step_coll c32[3];
    step_collectives(&t, &o, c32);
    ck_assert_double_eq(c32[0].bytes, 4e8);
    workload_free(&t);
}
END_TEST

/* The timeline_overlap step with two concurrent contexts (Caffe2's common
 * worlds): bucket 0 (0.5 s, of which its bytes hold the links 0.3 s) runs
 * 0.952-1.452 on context 0, its bytes on the links until 1.252; bucket 1
 * (0.1 s, bytes 0.05 s) is ready at 1.352 and no longer waits for bucket 0:
 * context 1, bytes 1.352-1.402, ends at max(1.352 + 0.1, 1.402) = 1.452.
 * The step waits for both: 0.1 exposed, 1.352 + 0.1 + 0.004 = 1.456 s. */
START_TEST(timeline_concurrent)
{
    workload t;
    load_tiny("", &t);
    step_options o = opts(8);
    double coll_s[] = {0.5, 0.1, 0}, wire_s[] = {0.3, 0.05, 0};
    step_result r;
    tt_error err = {0};
    o.coll_wire_s = wire_s;
    o.concurrent_ops = 2;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.comm_s, 0.6, 1e-12);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.1, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 1.456, 1e-12);
    /* All bytes, no latency to overlap (no split given): bucket 1's bytes
     * queue behind bucket 0's until 1.452 and end at 1.552, as on one stream. */
    o.coll_wire_s = NULL;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.2, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 1.556, 1e-12);
    /* Bucket 0 all bytes (links busy until 1.452), bucket 1's 0.05 s of bytes
     * behind them: 1.452-1.502, 0.15 exposed. */
    double late_s[] = {0.5, 0.05, 0};
    o.coll_wire_s = late_s;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.15, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 1.352 + 0.15 + 0.004, 1e-12);
    /* One context is one stream whatever the split: timeline_overlap's 1.556 s. */
    o.concurrent_ops = 1;
    o.coll_wire_s = wire_s;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.2, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 1.556, 1e-12);
    workload_free(&t);
}
END_TEST

/* The distributed optimizer on timeline_overlap's step: the buckets are
 * reduce-scattered as they were allreduced (bucket 0 0.952-1.452, bucket 1
 * 1.452-1.552), each of 8 ranks updates its eighth (max(1e9 / 8 / 2.5e12,
 * 4e9 / 8 / 1e12) = 0.0005 s), then the parameters are all-gathered, bucket
 * 0 in 0.3 s and bucket 1 in 0.05 s: 1.552 + 0.0005 + 0.35 = 1.9025 s.
 * Gathered during the forward instead: bucket 1 (the conv's) 0-0.05, bucket
 * 0 (the fc's) 0.05-0.35; the conv waits 0.05 and runs to 0.25, the fc waits
 * to 0.35, runs to 0.6, the loss to 0.601; backward as before from there:
 * bucket 0 1.102-1.602, bucket 1 1.602-1.702 while the conv ends at 1.502,
 * 0.2 exposed: 1.7025 s, 0.35 exposed in all. */
START_TEST(timeline_zero)
{
    workload t;
    load_tiny("", &t);
    step_options o = opts(8);
    o.zero = 1;
    step_coll c[5];
    ck_assert_int_eq((int)step_collectives(&t, &o, c), 5);
    ck_assert_int_le(5, (int)step_collectives_max(&t));
    ck_assert_int_eq(c[0].op, STEP_REDUCE_SCATTER);
    ck_assert_double_eq(c[0].bytes, 4e8);
    ck_assert_int_eq(c[3].op, STEP_ALLGATHER);
    ck_assert_double_eq(c[4].bytes, 1e8);
    double coll_s[] = {0.5, 0.1, 0, 0.3, 0.05};
    step_result r;
    tt_error err = {0};
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.optimizer_s, 0.0005, 1e-12);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.2 + 0.35, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 1.9025, 1e-12);
    o.overlap_param_gather = 1;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.35, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 1.7025, 1e-12);
    ck_assert_double_eq_tol(r.comm_s, 0.95, 1e-12);
    /* Memory: 1.25e8 fp32 parameters, one state word: the state on 8 ranks
     * (ZeRO-1), and the gradients too (ZeRO-2). */
    step_memory m0, m1, m2;
    o.zero = 0;
    step_memory_of(&t, &o, &m0);
    o.zero = 1;
    step_memory_of(&t, &o, &m1);
    o.zero = 2;
    step_memory_of(&t, &o, &m2);
    ck_assert_double_eq_tol(m0.optimizer_bytes, 5e8, 1);
    ck_assert_double_eq_tol(m1.optimizer_bytes, 5e8 / 8, 1);
    ck_assert_double_eq_tol(m1.gradients_bytes, m0.gradients_bytes, 1);
    ck_assert_double_eq_tol(m2.gradients_bytes, m0.gradients_bytes / 8, 1);
    ck_assert_double_eq_tol(m1.params_bytes, m0.params_bytes, 1); /* fp32: the weights are the master */
    workload_free(&t);
}
END_TEST

/* Micro-batch 16 doubles FLOPs and activation traffic but not weight reads;
 * fp16 halves every byte; accumulation repeats the compute, reduces once. */
START_TEST(scaling_and_accumulation)
{
    workload t;
    load_tiny("", &t);
    step_options o = opts(16);
    o.dtype_bytes = 2;
    o.grad_dtype_bytes = 2;
    step_coll c[3];
    step_collectives(&t, &o, c);
    ck_assert_double_eq(c[0].bytes, 2e8);
    double coll_s[] = {0, 0, 0};
    step_result r;
    tt_error err = {0};
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    /* conv fwd: 2e12 flops -> 0.4 s; loss fwd: 2e9 B x 0.5 -> 0.001 s. */
    double fwd = 0.4 + 0.5 + 0.001, bwd = 0.001 + 1.0 + 0.8;
    ck_assert_double_eq_tol(r.compute_s, fwd + bwd, 1e-12);
    ck_assert_double_eq_tol(r.memory.activations_bytes, 1.5e9 * 2 * 0.5, 1);
    /* 1.25e8 parameters: fp32 master + fp16 copy, fp16 gradients, one momentum word. */
    ck_assert_double_eq_tol(r.memory.params_bytes, 1.25e8 * 6, 1);
    ck_assert_double_eq_tol(r.memory.gradients_bytes, 1.25e8 * 2, 1);
    ck_assert_double_eq_tol(r.memory.optimizer_bytes, 1.25e8 * 4, 1);
    o = opts(8);
    o.accumulation = 3;
    double slow[] = {0.5, 0.1};
    ck_assert_int_eq(step_replay(&t, &DEV, &o, slow, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.compute_s, 3 * 1.352, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 2 * 1.352 + 1.556, 1e-12);
    workload_free(&t);
}
END_TEST

START_TEST(memory_does_not_fit)
{
    workload t;
    load_tiny("", &t);
    device_model small = DEV;
    small.mem_bytes = 2e9;
    step_options o = opts(8);
    double coll_s[] = {0, 0, 0};
    step_result r;
    tt_error err = {0};
    ck_assert_int_eq(step_replay(&t, &small, &o, coll_s, &r, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not fit"));
    ck_assert_ptr_nonnull(strstr(err.msg, "activations 1.5 GB"));
    workload_free(&t);
}
END_TEST

/* A forward alltoall after fc blocks the compute stream; in host-memory
 * placement there is none and the embedding lookups are idle time instead. */
START_TEST(alltoall_and_host_embeddings)
{
    workload t;
    load_tiny(", \"comm\": [{\"op\": \"alltoall\", \"phase\": \"forward\", \"after_layer\": 1,"
              " \"bytes_per_rank\": 1e8}]", &t);
    step_options o = opts(8);
    step_coll c[4];
    ck_assert_int_eq((int)step_collectives(&t, &o, c), 4);
    ck_assert_int_eq(c[2].op, STEP_ALLTOALL);
    double coll_s[] = {0, 0, 0.3, 0};
    step_result r;
    tt_error err = {0};
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.exposed_comm_s, 0.3, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 1.352 + 0.3 + 0.004, 1e-12);
    /* conv1 as a model-parallel table: 1/8 of its 2.5e7 parameters per rank,
     * sparse gradients (its rows, capped by that share) */
    t.layers[0].cls = OPCLASS_EMBEDDING;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.memory.params_bytes, (1e8 + 2.5e7 / 8) * 4, 1);
    ck_assert_double_eq_tol(r.memory.gradients_bytes, (1e8 + 2.5e7 / 8) * 4, 1);
    workload_free(&t);

    /* Make conv1 an embedding table held in host memory: its rows take 0.11 s
     * to arrive, its gradient rows and sparse update 0.12 s. */
    load_tiny("", &t);
    t.layers[0].cls = OPCLASS_EMBEDDING;
    o.embeddings = EMB_HOST;
    o.host_forward_s = 0.11;
    o.host_backward_s = 0.12;
    ck_assert_int_eq((int)step_collectives(&t, &o, c), 3);
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    /* conv1 waits 0.11 for its rows; fc 0.25 + loss 0.001 + 0.001 + fc 0.5 = 0.862, then the
     * gradient rows leave: host busy until 0.982; the optimizer ends at 0.866 and waits 0.116 */
    ck_assert_double_eq_tol(r.host_embedding_s, 0.11 + 0.116, 1e-12);
    ck_assert_double_eq_tol(r.time_s, 0.982, 1e-12);
    ck_assert_double_eq_tol(r.compute_s, 1.352 - 0.6, 1e-12);
    ck_assert_double_eq_tol(r.idle_s, 0.11 + 0.116, 1e-12); /* only host waits: no collective here */
    /* two micro-steps: the second's lookups wait for the first's update (0.982 + 0.11),
     * its fc/loss end at 1.844 and its update at 1.964 */
    o.accumulation = 2;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.time_s, 1.964, 1e-12);
    ck_assert_double_eq_tol(r.host_embedding_s, 0.11 + 0.23 + 0.116, 1e-12);
    o.accumulation = 1;
    /* the table stays in host memory: only fc's 1e8 fp32 parameters have gradients here */
    ck_assert_double_eq_tol(r.memory.gradients_bytes, 1e8 * 4, 1);
    workload_free(&t);

    /* fc as the table instead: its lookups (0.11) overlap conv1's forward (0.2) and
     * its update (0.202 + 0.12) conv1's backward: nothing waits, 1.352 - 0.75 + 0.004 */
    load_tiny("", &t);
    t.layers[1].cls = OPCLASS_EMBEDDING;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &r, &err), TT_OK);
    ck_assert_double_eq_tol(r.host_embedding_s, 0, 1e-15);
    ck_assert_double_eq_tol(r.time_s, 0.606, 1e-12);
    workload_free(&t);
}
END_TEST

/* The embedding traffic per micro-step: rows at the scenario's precision and
 * micro-batch, gradients at the gradient precision, DRAM bytes from the layer. */
START_TEST(host_load_scales)
{
    workload t;
    load_tiny("", &t);
    t.layers[0].cls = OPCLASS_EMBEDDING;
    step_options o = opts(16); /* twice the trace's micro-batch */
    o.dtype_bytes = 2;         /* fp16 rows, fp32 gradients */
    step_host_load l;
    step_host_load_of(&t, &o, &l);
    ck_assert_double_eq_tol(l.rows_bytes, 1e9 * 2 * 0.5, 1);
    ck_assert_double_eq_tol(l.grad_rows_bytes, 1e9 * 2, 1);
    ck_assert_double_eq_tol(l.lookup_bytes, 1e9 * 2 * 0.5, 1);
    ck_assert_double_eq_tol(l.update_bytes, 2e9 * 2 * 0.5, 1);
    workload_free(&t);
}
END_TEST

/* conv -> batchnorm -> loss, fp32, micro-batch 8: the per-op model. */
static const char *PEROP =
    "{\"format\": \"ttasim-trace\", \"version\": 1, \"model\": \"perop\", \"micro_batch\": 8,\n"
    " \"precision\": \"fp32\", \"dtype_bytes\": 4, \"params\": 25000000, \"param_bytes\": 1e8,\n"
    " \"forward_flops\": 1.001e12, \"backward_flops\": 2.002e12,\n"
    " \"layers\": [\n"
    "  {\"name\": \"conv1\", \"class\": \"conv\", \"forward_flops\": 1e12, \"forward_bytes\": 1e9,\n"
    "   \"backward_flops\": 2e12, \"backward_bytes\": 2e9, \"activation_bytes\": 1e9, \"param_bytes\": 1e8},\n"
    "  {\"name\": \"bn1\", \"class\": \"norm\", \"forward_flops\": 1e9, \"forward_bytes\": 2e9,\n"
    "   \"backward_flops\": 2e9, \"backward_bytes\": 3e9, \"activation_bytes\": 1e9, \"param_bytes\": 0},\n"
    "  {\"name\": \"loss\", \"class\": \"loss\", \"forward_flops\": 1e6, \"forward_bytes\": 1e6,\n"
    "   \"backward_flops\": 1e6, \"backward_bytes\": 1e6, \"activation_bytes\": 0, \"param_bytes\": 0}],\n"
    " \"gradients\": [{\"name\": \"conv1.weight\", \"bytes\": 1e8, \"layer\": 0}],\n"
    " \"optimizer\": {\"name\": \"sgd\", \"flops\": 1e9, \"bytes\": 4e9},\n"
    " \"buckets\": [{\"bytes\": 1e8, \"ready_after_layer\": 0}]}\n";

static void load_perop(workload *t)
{
    char path[64];
    tu_write_temp(PEROP, path, sizeof path);
    tt_error err = {0};
    int rc = workload_load(path, t, &err);
    unlink(path);
    ck_assert_msg(rc == TT_OK, "%s", err.msg);
}

/* Efficiency saturates with the work per kernel: at half_work_flops = 5e11 a
 * 1e12-FLOP kernel runs at 2/3 of the large-kernel efficiency; the backward
 * of a convolution is two kernels (input and weight gradients) of 1e12. */
START_TEST(perop_saturation)
{
    workload t;
    load_perop(&t);
    device_model d = DEV;
    step_options o = opts(8);
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 0), 0.2, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 0), 2e-3, 1e-15); /* memory bound */
    d.half_work_flops = 5e11;
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 0), 0.3, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 1), 0.6, 1e-12);
    /* twice the samples: 2e12 per kernel, 4/5 of the efficiency; per sample faster */
    o = opts(16);
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 0), 0.5, 1e-12);
    ck_assert(0.5 / 16 < 0.3 / 8);
    workload_free(&t);
}
END_TEST

/* Backward kernels reach efficiency x backward_efficiency: the conv's 2e12
 * backward FLOPs at 0.5 x 1.6 of 1e13 take 0.25 s (0.4 at the forward's
 * efficiency), its forward stays 0.2 s; saturation still applies (two
 * kernels of 1e12 at 5e11 half-work: 0.8 x 2/3, 0.375 s); a ratio that would
 * pass peak (0.5 x 3) stops there: 0.2 s. */
START_TEST(perop_backward_efficiency)
{
    workload t;
    load_perop(&t);
    device_model d = DEV;
    d.backward_efficiency[OPCLASS_CONV] = 1.6;
    step_options o = opts(8);
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 0), 0.2, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 1), 0.25, 1e-12);
    d.half_work_flops = 5e11;
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 1), 0.375, 1e-12);
    d.half_work_flops = 0;
    d.backward_efficiency[OPCLASS_CONV] = 3;
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 1), 0.2, 1e-12);
    workload_free(&t);
}
END_TEST

/* Kernels run no faster than the host dispatches them: the backward's two
 * kernels take two dispatches. */
START_TEST(perop_dispatch)
{
    workload t;
    load_perop(&t);
    device_model d = DEV;
    d.dispatch_s = 0.5;
    step_options o = opts(8);
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 0), 0.5, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 1), 1.0, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 2, &d, &o, 0), 0.5, 1e-12);
    workload_free(&t);
}
END_TEST

/* A GEMM's depth: tiny's fc reduces over K = 2e12 / (2 x 5e8 B / 4 B) = 8000
 * inputs into N = 1e8 weights / 8000 = 12,500 outputs for 10,000 tokens.
 * At gemm_half_depth 2000 its forward runs at 8000 / 10000 of 0.8: 0.25 s
 * becomes 0.3125 s; its backward's halves at 12,500 / 14,500 (input
 * gradient over N) and 10,000 / 12,000 (weight gradient over the tokens):
 * 0.5 s x (0.5 x 1.16 + 0.5 x 1.2) = 0.59 s. Twice the micro-batch doubles
 * the forward, and the weight gradient's depth: 1 s x (0.58 + 0.55). The
 * convolution has no depth. */
START_TEST(perop_gemm_depth)
{
    workload t;
    load_tiny("", &t);
    device_model d = DEV;
    step_options o = opts(8);
    ck_assert_double_eq_tol(step_gemm_depth(&t, 1), 8000, 1e-9);
    ck_assert_double_eq(step_gemm_depth(&t, 0), 0);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 0), 0.25, 1e-12);
    d.gemm_half_depth = 2000;
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 0), 0.3125, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 1), 0.59, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 0), 0.2, 1e-12);
    o = opts(16);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 0), 0.625, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 1), 1.13, 1e-12);
    workload_free(&t);
}
END_TEST

/* Fused into its producer a batchnorm has no kernel (no dispatch) and reads
 * its input from registers: one activation (1e9 B) less traffic each way.
 * The first layer has no producer. */
START_TEST(perop_fusion)
{
    workload t;
    load_perop(&t);
    device_model d = DEV;
    d.fusion = 1;
    d.dispatch_s = 0.5;
    step_options o = opts(8);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 0), 1e-3, 1e-15);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 1), 2e-3, 1e-15);
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 0), 0.5, 1e-12);
    /* fp16 halves every byte */
    o.dtype_bytes = 2;
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &o, 0), 0.5e-3, 1e-15);
    workload_free(&t);
}
END_TEST

/* MLPerf's MXNet replays its step as CUDA graphs: a kernel costs the
 * device's launch (4 us), not the host's 0.5 s dispatch, so the conv's
 * forward is its 0.2 s on the device. Horovod in one group: tiny's two
 * buckets (4e8 and 1e8 B) go in one allreduce after the backward. */
START_TEST(perop_mxnet)
{
    workload t;
    load_perop(&t);
    device_model d = DEV;
    d.dispatch_s = 0.5;
    step_options o = opts(8);
    o.framework = FRAMEWORK_MXNET;
    ck_assert_double_eq_tol(step_layer_s(&t, 0, &d, &o, 0), 0.2, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 2, &d, &o, 0), 4e-6, 1e-15);
    workload_free(&t);
    load_tiny("", &t);
    step_coll c[8];
    ck_assert_uint_ge(sizeof c / sizeof c[0], step_collectives_max(&t));
    step_collectives(&t, &o, c);
    ck_assert_double_eq(c[0].bytes, 0);
    ck_assert_double_eq_tol(c[1].bytes, 5e8, 1);
    workload_free(&t);
}
END_TEST

/* A forward-only pass is the forward layers alone: conv 0.2 s + batchnorm
 * 2 ms (memory) + loss 1 us (memory). */
START_TEST(perop_forward_pass)
{
    workload t;
    load_perop(&t);
    step_options o = opts(8);
    ck_assert_double_eq_tol(step_forward_s(&t, &DEV, &o), 0.202001, 1e-12);
    workload_free(&t);
}
END_TEST

/* Recomputation runs every non-normalisation layer's forward again in the
 * backward: conv 0.2 s and loss 1 us more per micro-step. */
START_TEST(recompute_costs_a_forward)
{
    workload t;
    load_perop(&t);
    step_options o = opts(8);
    double coll_s[] = {0};
    step_result plain, again;
    tt_error err = {0};
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &plain, &err), TT_OK);
    o.recompute = 1;
    ck_assert_int_eq(step_replay(&t, &DEV, &o, coll_s, &again, &err), TT_OK);
    ck_assert_double_eq_tol(again.compute_s - plain.compute_s, 0.200001, 1e-12);
    workload_free(&t);
}
END_TEST

/* BERT-Large at 36 sequences of 512 per 16 GB V100 in mixed precision with
 * LAMB: 27.7 GB of activations as the trace keeps them, so it needs
 * recomputation, which keeps the 49 LayerNorm outputs (0.82 GB per 8 fp32
 * sequences) and the widest segment (0.30 GB): 2.53 GB at 36 in fp16. */
START_TEST(bert_large_36x512_fits_v100_with_recompute)
{
    workload t;
    tt_error err = {0};
    ck_assert_int_eq(workload_load(TTASIM_SRCDIR "/scenarios/traces/bert-large-seq512.json", &t, &err), TT_OK);
    device_model v100 = DEV;
    v100.mem_bytes = 16.0 * 1024 * 1024 * 1024;
    step_options o = {.micro_batch = 36, .accumulation = 1, .dtype_bytes = 2, .grad_dtype_bytes = 2,
                      .overlap = 1, .ranks = 8, .optimizer_state_words = 2, .embeddings = EMB_ACCELERATORS};
    double *coll_s = calloc(t.n_buckets + 1, sizeof *coll_s);
    step_result r;
    ck_assert_int_eq(step_replay(&t, &v100, &o, coll_s, &r, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "activations 27.7 GB"));
    o.recompute = 1;
    ck_assert_msg(step_replay(&t, &v100, &o, coll_s, &r, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq_tol(r.memory.activations_bytes, 2532777984.0, 1);
    ck_assert_double_lt(r.memory.total_bytes, v100.mem_bytes);
    free(coll_s);
    workload_free(&t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("step");
    TCase *t = tcase_create("trace");
    tcase_add_test(t, trace_reads_fields);
    tcase_add_test(t, trace_rejects_bad_input);
    suite_add_tcase(s, t);
    t = tcase_create("timeline");
    tcase_add_test(t, kernel_roofline);
    tcase_add_test(t, timeline_overlap);
    tcase_add_test(t, timeline_concurrent);
    tcase_add_test(t, timeline_zero);
    tcase_add_test(t, scaling_and_accumulation);
    tcase_add_test(t, memory_does_not_fit);
    tcase_add_test(t, alltoall_and_host_embeddings);
    tcase_add_test(t, host_load_scales);
    tcase_add_test(t, perop_saturation);
    tcase_add_test(t, perop_backward_efficiency);
    tcase_add_test(t, perop_dispatch);
    tcase_add_test(t, perop_gemm_depth);
    tcase_add_test(t, perop_fusion);
    tcase_add_test(t, perop_mxnet);
    tcase_add_test(t, perop_forward_pass);
    tcase_add_test(t, recompute_costs_a_forward);
    tcase_add_test(t, bert_large_36x512_fits_v100_with_recompute);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
