/* sim/replay/step_transformer.c: Megatron-style steps worked by hand on a
 * trace of four blocks, each one GEMM of 1 s forward and 2 s backward on a
 * plain roofline and an attention layer of no work (its shape gives the
 * activations: micro-batch 8 x 8 tokens x 4 heads x 16). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/replay/step_transformer.h"
#include "tests/testutil.h"

static const device_model DEV = {
    .name = "test device", .peak_flops = 1e13, .peak_fp32_flops = 5e12, .mem_Bps = 1e15, .mem_bytes = 80e9,
    .efficiency = {[OPCLASS_CONV] = 0.5, [OPCLASS_GEMM] = 0.8, [OPCLASS_ATTENTION] = 0.5, [OPCLASS_NORM] = 0.5,
                   [OPCLASS_ELEMENTWISE] = 0.5, [OPCLASS_POOL] = 0.5, [OPCLASS_EMBEDDING] = 0.5, [OPCLASS_LOSS] = 0.5},
    .backward_efficiency = DEVICE_MODEL_SAME_BACKWARD,
};

/* A trace of `blocks` blocks, each an attention layer of no work (its shape
 * gives the activations: micro-batch 8 x 8 tokens x 4 heads x 16) and the
 * layer `second` (a format taking the block's number) of 8e12 FLOPs forward,
 * 1.6e13 backward and layer_bytes of parameters, in fp32. */
static void load_block_trace(workload *t, int blocks, double layer_bytes, const char *second)
{
    char text[8192], path[64], layer[512];
    int n = snprintf(text, sizeof text,
                     "{\"format\": \"ttasim-trace\", \"version\": 1, \"model\": \"blocks\", \"micro_batch\": 8,\n"
                     " \"precision\": \"fp32\", \"dtype_bytes\": 4, \"params\": %.17g, \"param_bytes\": %.17g,\n"
                     " \"forward_flops\": %g, \"backward_flops\": %g, \"layers\": [",
                     blocks * layer_bytes / 4, blocks * layer_bytes, blocks * 8e12, blocks * 1.6e13);
    for (int b = 0; b < blocks; b++) {
        snprintf(layer, sizeof layer, second, b);
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "%s{\"name\": \"layers.%d.attn\", \"class\": \"attention\", \"forward_flops\": 0, "
                      "\"forward_bytes\": 0, \"backward_flops\": 0, \"backward_bytes\": 0, \"activation_bytes\": 0, "
                      "\"param_bytes\": 0, \"seq_len\": 8, \"heads\": 4, \"head_dim\": 16},\n %s",
                      b ? ",\n " : "", b, layer);
    }
    snprintf(text + n, sizeof text - (size_t)n,
             "],\n \"gradients\": [], \"optimizer\": {\"name\": \"sgd\", \"flops\": 0, \"bytes\": 0},"
             " \"buckets\": []}\n");
    tu_write_temp(text, path, sizeof path);
    tt_error err = {0};
    int rc = workload_load(path, t, &err);
    unlink(path);
    ck_assert_msg(rc == TT_OK, "%s", err.msg);
}

/* Four blocks, each one GEMM of 1 s forward and 2 s backward on the plain roofline. */
static void load_blocks(workload *t)
{
    load_block_trace(t, 4, 1e9,
                     "{\"name\": \"layers.%d.fc\", \"class\": \"gemm\", \"forward_flops\": 8e12, "
                     "\"forward_bytes\": 1e3, \"backward_flops\": 1.6e13, \"backward_bytes\": 1e3, "
                     "\"activation_bytes\": 1e9, \"param_bytes\": 1e9}");
}

/* Two blocks of a MoE model (hidden 64): the MoE layer has 8 experts of
 * width 32 (3 x 64 x 32 weights each), top 2, its GEMMs 1 s forward and 2 s
 * backward. */
static void load_moe(workload *t)
{
    load_block_trace(t, 2, 196608,
                     "{\"name\": \"layers.%d.moe\", \"class\": \"gemm\", \"forward_flops\": 8e12, "
                     "\"forward_bytes\": 1e3, \"backward_flops\": 1.6e13, \"backward_bytes\": 1e3, "
                     "\"activation_bytes\": 1e9, \"param_bytes\": 196608, \"experts\": 8, \"top_k\": 2, "
                     "\"hidden\": 64}");
}

static step_options opts(int micro_batches)
{
    return (step_options){.micro_batch = 8, .accumulation = micro_batches, .dtype_bytes = 4, .grad_dtype_bytes = 4,
                          .overlap = 1, .ranks = 1, .optimizer_state_words = 0, .embeddings = EMB_ACCELERATORS};
}

static void make_layout(int tp, int pp, int dp, layout *l)
{
    int deg[LAYOUT_DIMS] = {[LAYOUT_TENSOR] = tp, [LAYOUT_PIPELINE] = pp, [LAYOUT_DATA] = dp};
    tt_error err = {0};
    ck_assert_msg(layout_make(deg, NULL, tp * pp * dp, "test", l, &err) == TT_OK, "%s", err.msg);
}

/* Two stages of two blocks (forward 2 s, backward 4 s), 3 micro-batches,
 * sends 0.5 s: stage 0 runs F0 0-2, F1 2-4, B0 9-13, F2 13-15, B1 15-19,
 * B2 22-26 (tests/test_pipeline.c's timeline, doubled): 26 s, of which 18 s
 * compute and 8 s bubble. */
START_TEST(pipeline_by_hand)
{
    workload t;
    load_blocks(&t);
    layout l;
    make_layout(1, 2, 1, &l);
    tf_options x = {.layout = &l, .chunks = 1, .micro_batches = 3};
    step_options o = opts(3);
    double coll_s[TF_COLLS] = {0};
    step_result r;
    tt_error err = {0};
    ck_assert_msg(tf_replay(&t, &DEV, &o, &x, coll_s, 0.5, &r, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq_tol(r.time_s, 26, 1e-9);
    ck_assert_double_eq_tol(r.compute_s, 18, 1e-9);
    ck_assert_double_eq_tol(r.bubble_s, 8, 1e-9);
    ck_assert_double_eq_tol(r.tp_comm_s, 0, 1e-12);
    /* an evaluation's forward: the first micro-batch 2 + 0.5 + 2 s, the rest every 2 s */
    ck_assert_double_eq_tol(r.forward_fill_s, 4.5, 1e-9);
    ck_assert_double_eq_tol(r.forward_beat_s, 2, 1e-9);
    /* stage 0 holds two micro-batches in flight: 2 x 2 blocks x 1 GB of activations */
    ck_assert_double_eq_tol(r.memory.activations_bytes, 4e9, 1);
    workload_free(&t);
}
END_TEST

/* Tensor parallelism 2, one stage, 2 micro-batches: compute halves (2 s
 * forward, 4 s backward), each block adds two allreduces (0.1 s) each way and
 * the embedding end one more forward: 2.9 + 4.8 s per micro-batch, 15.4 s. The
 * allreduce is of micro-batch x tokens x hidden: 8 x 8 x 64 x 4 bytes. */
START_TEST(tensor_parallel_by_hand)
{
    workload t;
    load_blocks(&t);
    layout l;
    make_layout(2, 1, 1, &l);
    tf_options x = {.layout = &l, .chunks = 1, .micro_batches = 2};
    step_options o = opts(2);
    step_coll c[TF_COLLS];
    tf_collectives(&t, &o, &x, c);
    ck_assert_double_eq(c[TF_TP_ALLREDUCE].bytes, 8 * 8 * 64 * 4);
    ck_assert_uint_eq(c[TF_TP_ALLREDUCE].dims, LAYOUT_DIM(LAYOUT_TENSOR));
    ck_assert_double_eq(c[TF_TP_ALLGATHER].bytes, 0);
    double coll_s[TF_COLLS] = {[TF_TP_ALLREDUCE] = 0.1};
    step_result r;
    tt_error err = {0};
    ck_assert_msg(tf_replay(&t, &DEV, &o, &x, coll_s, 0, &r, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq_tol(r.time_s, 15.4, 1e-9);
    ck_assert_double_eq_tol(r.tp_comm_s, 3.4, 1e-9);
    ck_assert_double_eq_tol(r.compute_s, 12, 1e-9);
    /* half of every block's parameters: 4 x 0.5 GB in fp32, and their fp32 gradients */
    ck_assert_double_eq_tol(r.memory.params_bytes, 2e9, 1);
    ck_assert_double_eq_tol(r.memory.gradients_bytes, 2e9, 1);
    workload_free(&t);
}
END_TEST

/* Data parallelism 2, one stage, one micro-batch: 1e9 fp32 gradients in
 * buckets of 1 GB, four of them, each reduced in 1.5 s as its quarter of the
 * backward (2 s each) ends at 6, 8, 10, 12 s: the last ends at 13.5 s, 1.5 s
 * exposed. */
START_TEST(data_parallel_buckets_by_hand)
{
    workload t;
    load_blocks(&t);
    layout l;
    make_layout(1, 1, 2, &l);
    tf_options x = {.layout = &l, .chunks = 1, .micro_batches = 1, .bucket_bytes = 1e9};
    step_options o = opts(1);
    o.ranks = 2;
    step_coll c[TF_COLLS];
    tf_collectives(&t, &o, &x, c);
    ck_assert_int_eq(c[TF_DP_GRADS].op, STEP_ALLREDUCE);
    ck_assert_double_eq_tol(c[TF_DP_GRADS].bytes, 1e9, 1);
    double coll_s[TF_COLLS] = {[TF_DP_GRADS] = 1.5};
    step_result r;
    tt_error err = {0};
    ck_assert_msg(tf_replay(&t, &DEV, &o, &x, coll_s, 0, &r, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq_tol(r.time_s, 13.5, 1e-9);
    ck_assert_double_eq_tol(r.exposed_comm_s, 1.5, 1e-9);
    ck_assert_double_eq_tol(r.bubble_s, 0, 1e-9);
    workload_free(&t);
}
END_TEST

/* Context parallelism 2, one stage, two micro-batches: each block's GEMM on
 * half the tokens (forward 0.5 s, backward 1 s); its attention (no work)
 * hides nothing of the ring, 0.1 s forward, 0.1 + 0.05 s backward: a
 * micro-batch is 4 x (0.5 + 0.1) + 4 x (1 + 0.15) = 7 s, the step 14 s, of
 * which 2 s the ring. The keys and values passed: 2 x 8 samples x 4 of the
 * 8 tokens x 4 heads x 16 x 4 bytes = 16,384 bytes a rank. */
START_TEST(context_parallel_by_hand)
{
    workload t;
    load_blocks(&t);
    int deg[LAYOUT_DIMS] = {[LAYOUT_TENSOR] = 1, [LAYOUT_CONTEXT] = 2, [LAYOUT_EXPERT] = 1, [LAYOUT_DATA] = 1,
                            [LAYOUT_PIPELINE] = 1};
    layout l;
    tt_error err = {0};
    ck_assert_msg(layout_make(deg, NULL, 2, "test", &l, &err) == TT_OK, "%s", err.msg);
    tf_options x = {.layout = &l, .chunks = 1, .micro_batches = 2};
    step_options o = opts(2);
    o.context = 2;
    step_coll c[TF_COLLS];
    tf_collectives(&t, &o, &x, c);
    ck_assert_double_eq(c[TF_CP_ALLGATHER].bytes, 2 * 16384);
    ck_assert_uint_eq(c[TF_CP_ALLGATHER].dims, LAYOUT_DIM(LAYOUT_CONTEXT));
    /* the dense replicas: data x context (x expert, of degree 1) */
    ck_assert_uint_eq(c[TF_DP_GRADS].dims, LAYOUT_DIM(LAYOUT_DATA) | LAYOUT_DIM(LAYOUT_CONTEXT) |
                                               LAYOUT_DIM(LAYOUT_EXPERT));
    double coll_s[TF_COLLS] = {[TF_CP_ALLGATHER] = 0.1, [TF_CP_REDUCE_SCATTER] = 0.05};
    step_result r;
    ck_assert_msg(tf_replay(&t, &DEV, &o, &x, coll_s, 0, &r, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq_tol(r.time_s, 14, 1e-9);
    ck_assert_double_eq_tol(r.cp_comm_s, 2, 1e-9);
    ck_assert_double_eq_tol(r.compute_s, 12, 1e-9);
    workload_free(&t);
}
END_TEST

/* ZeRO-3 over 2 ranks, 2 micro-batches: each block's 2.5e8 fp32 parameters
 * gathered (1.5 s) before its forward (1 s) and its backward (2 s), its
 * gradients reduce-scattered (0.8 s) after it. Forward: the first gather
 * exposed, each next one 0.5 s beyond the block before: 1.5 + 3 x 0.5 = 3 s;
 * backward: the first gather (no head to hide it), each next gather and
 * reduce-scatter 0.3 s beyond a block's backward, the last reduce-scatter:
 * 1.5 + 3 x 0.3 + 0.8 = 3.2 s. A micro-batch 4 + 8 + 6.2 s, the step 36.4 s. */
START_TEST(zero3_by_hand)
{
    workload t;
    load_blocks(&t);
    layout l;
    make_layout(1, 1, 2, &l);
    tf_options x = {.layout = &l, .chunks = 1, .micro_batches = 2, .bucket_bytes = 1e9};
    step_options o = opts(2);
    o.ranks = 2;
    o.zero = 3;
    step_coll c[TF_COLLS];
    tf_collectives(&t, &o, &x, c);
    ck_assert_int_eq(c[TF_DP_PARAMS].op, STEP_ALLGATHER);
    ck_assert_int_eq(c[TF_DP_GRADS].op, STEP_REDUCE_SCATTER);
    ck_assert_double_eq_tol(c[TF_DP_PARAMS].bytes, 1e9, 1);
    ck_assert_double_eq_tol(c[TF_DP_GRADS].bytes, 1e9, 1);
    ck_assert_double_eq(c[TF_DP_ROOT_PARAMS].bytes, 0); /* every layer is in a block */
    /* per step: 4 blocks x 2 micro-batches gathered twice and reduced once */
    ck_assert_double_eq(tf_runs_per_step(&t, &o, &x, TF_DP_PARAMS), 16);
    ck_assert_double_eq(tf_runs_per_step(&t, &o, &x, TF_DP_GRADS), 8);
    double coll_s[TF_COLLS] = {[TF_DP_PARAMS] = 1.5, [TF_DP_GRADS] = 0.8};
    step_result r;
    tt_error err = {0};
    ck_assert_msg(tf_replay(&t, &DEV, &o, &x, coll_s, 0, &r, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq_tol(r.time_s, 36.4, 1e-9);
    ck_assert_double_eq_tol(r.compute_s, 24, 1e-9);
    ck_assert_double_eq_tol(r.exposed_comm_s, 12.4, 1e-9);
    ck_assert_double_eq_tol(r.bubble_s, 0, 1e-9);
    /* each micro-batch: 4 blocks x (2 gathers + 1 reduce-scatter) */
    ck_assert_double_eq_tol(r.comm_s, 2 * 4 * (2 * 1.5 + 0.8), 1e-9);
    /* half of the 1e9 fp32 parameters and gradients, and two blocks gathered, one block's gradients */
    ck_assert_double_eq_tol(r.memory.params_bytes, 2e9 + 2e9, 1);
    ck_assert_double_eq_tol(r.memory.gradients_bytes, 2e9 + 1e9, 1);
    workload_free(&t);
}
END_TEST

static size_t layer_named(const workload *t, const char *name)
{
    for (size_t i = 0; i < t->n_layers; i++)
        if (!strcmp(t->layers[i].name, name))
            return i;
    ck_abort_msg("no layer %s", name);
    return 0;
}

/* The default gpt (2 blocks of 64, 32 tokens) at micro-batch 2 in bf16: ln_1's
 * output, 2 x 32 x 64 elements (8,192 bytes), is read only by c_attn's weight
 * gradient, so an fp8 recipe keeps it in 4,096; c_attn's output (q, k, v) is
 * read by attention's backward and stays bf16. */
START_TEST(fp8_keeps_gemm_inputs_in_one_byte)
{
    workload t;
    tt_error err = {0};
    ck_assert_msg(workload_make("gpt", NULL, 2, "bf16", 0, NULL, &t, &err) == TT_OK, "%s", err.msg);
    step_options o = {.micro_batch = 2, .dtype_bytes = 2, .grad_dtype_bytes = 2, .autograd_activations = 1};
    size_t ln = layer_named(&t, "transformer.h.0.ln_1"), qkv = layer_named(&t, "transformer.h.0.attn.c_attn");
    ck_assert_double_eq_tol(t.layers[ln].kept_gemm_bytes, 8192, 1e-9);
    ck_assert_double_eq_tol(t.layers[qkv].kept_gemm_bytes, 0, 1e-9);
    double ln_bf16 = step_layer_kept_bytes(&t, ln, &o), qkv_bf16 = step_layer_kept_bytes(&t, qkv, &o);
    o.fp8_gemm_inputs = 1;
    ck_assert_double_eq_tol(ln_bf16 - step_layer_kept_bytes(&t, ln, &o), 4096, 1e-9);
    ck_assert_double_eq_tol(step_layer_kept_bytes(&t, qkv, &o), qkv_bf16, 1e-9);
    workload_free(&t);
}
END_TEST

START_TEST(refusals_name_the_fix)
{
    workload t;
    load_blocks(&t);
    layout l;
    make_layout(1, 3, 1, &l);
    tf_options x = {.layout = &l, .chunks = 1, .micro_batches = 3};
    step_options o = opts(3);
    double coll_s[TF_COLLS] = {0};
    step_result r;
    tt_error err = {0};
    ck_assert_int_eq(tf_replay(&t, &DEV, &o, &x, coll_s, 0, &r, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "4 blocks do not split evenly over 3 pipeline stages"));
    make_layout(1, 2, 1, &l);
    device_model small = DEV;
    small.mem_bytes = 1e9;
    ck_assert_int_eq(tf_replay(&t, &small, &o, &x, coll_s, 0, &r, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "pipeline stage 0's rank"));
    ck_assert_ptr_nonnull(strstr(err.msg, "$.parallel.tensor"));
    workload_free(&t);
}
END_TEST

/* Expert parallelism 4 on 4 ranks (2 per node), one micro-batch: each rank
 * holds 2 of the 8 experts; each MoE layer's dispatch and combine send the
 * rank's 64 tokens x 2 experts x 64 wide in fp32, twice forward and twice
 * backward (0.05 s each): 0.4 s over the 2 layers. The shuffles between the
 * GEMMs: rows = forward FLOPs / (6 x 64 x 32), hidden read and written
 * twice and the SwiGLU 3 x 32 (5 x 32 backward) per row, at 1e15 B/s. */
START_TEST(expert_parallel_by_hand)
{
    workload t;
    load_moe(&t);
    layout l;
    tt_error err = {0};
    ck_assert_msg(layout_make_experts((int[LAYOUT_DIMS]){[LAYOUT_EXPERT] = 4}, 0, NULL, 4, "test", &l, &err) == TT_OK,
                  "%s", err.msg);
    tf_options x = {.layout = &l, .chunks = 1, .micro_batches = 1};
    step_options o = opts(1);
    o.node_ranks = 2;
    step_coll c[TF_COLLS];
    tf_collectives(&t, &o, &x, c);
    ck_assert_double_eq(c[TF_EP_ALLTOALL].bytes, 8 * 8 * 2 * 64 * 4);
    ck_assert_uint_eq(c[TF_EP_ALLTOALL].dims, LAYOUT_DIM(LAYOUT_EXPERT));
    /* dense weights replicate over all 4; each expert lives on one rank only: nothing to reduce */
    ck_assert_uint_eq(c[TF_DP_GRADS].dims, LAYOUT_DIM(LAYOUT_DATA) | LAYOUT_DIM(LAYOUT_CONTEXT) |
                                               LAYOUT_DIM(LAYOUT_EXPERT));
    ck_assert_double_eq(c[TF_EP_GRADS].bytes, 0);
    /* DeepEP: once per node reached; 2 nodes of 4 experts each, top 2: 2 x (1 - 4/8 x 3/7) */
    x.dedup_tokens = 1;
    tf_collectives(&t, &o, &x, c);
    ck_assert_double_eq_tol(c[TF_EP_ALLTOALL].bytes, 8 * 8 * (2 * (1 - 12.0 / 56)) * 64 * 4, 1e-9);
    x.dedup_tokens = 0;
    double coll_s[TF_COLLS] = {[TF_EP_ALLTOALL] = 0.05};
    step_result r;
    ck_assert_msg(tf_replay(&t, &DEV, &o, &x, coll_s, 0, &r, &err) == TT_OK, "%s", err.msg);
    double rows = 8e12 / (6 * 64 * 32), shuffle = 2 * rows * (4 * 64 + 3 * 32 + 4 * 64 + 5 * 32) * 4 / 1e15;
    ck_assert_double_eq_tol(r.ep_comm_s, 0.4, 1e-12);
    ck_assert_double_eq_tol(r.compute_s, 6 + shuffle, 1e-9);
    ck_assert_double_eq_tol(r.time_s, 6.4 + shuffle, 1e-9);
    /* a quarter of the experts' weights, in fp32 */
    ck_assert_double_eq_tol(r.memory.params_bytes, 2 * 196608 / 4.0, 1e-6);
    /* overlapped: each alltoall beside the other micro-batch's MoE GEMMs (covered) or its
     * attention (no work: exposed), one of each pair per layer both ways */
    x.overlap_experts = 1;
    ck_assert_msg(tf_replay(&t, &DEV, &o, &x, coll_s, 0, &r, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq_tol(r.ep_comm_s, 0.2, 1e-12);
    /* 8 experts over 3 ranks: refused, naming the key */
    ck_assert_msg(layout_make_experts((int[LAYOUT_DIMS]){[LAYOUT_EXPERT] = 3}, 0, NULL, 3, "test", &l, &err) == TT_OK,
                  "%s", err.msg);
    ck_assert_int_eq(tf_check(&t, &x, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "$.parallel.expert dividing 8"));
    workload_free(&t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("transformer");
    TCase *c = tcase_create("megatron");
    tcase_add_test(c, pipeline_by_hand);
    tcase_add_test(c, tensor_parallel_by_hand);
    tcase_add_test(c, data_parallel_buckets_by_hand);
    tcase_add_test(c, refusals_name_the_fix);
    tcase_add_test(c, fp8_keeps_gemm_inputs_in_one_byte);
    tcase_add_test(c, context_parallel_by_hand);
    tcase_add_test(c, zero3_by_hand);
    tcase_add_test(c, expert_parallel_by_hand);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
