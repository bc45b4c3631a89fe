/* The memory model against published figures and hand counts: what a
 * transformer layer keeps for its backward with standard and fused
 * (FlashAttention) attention, fused attention's time, and the largest
 * micro-batch that fits a device. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/replay/scenario.h"
#include "sim/replay/step.h"
#include "sim/replay/workload.h"
#include "tests/testutil.h"

/* FlashAttention's README benchmark (Dao-AILab/flash-attention, "Memory"):
 * batch 8, 12 heads of dimension 64 (C = 768), fp16. Two layers as the
 * trainer traces them (trainer/plan.c): the QKV projection keeps Q, K, V
 * (3 N C elements per sample), the attention core its output and the
 * probabilities (N C + 12 N^2); forward FLOPs 4 N^2 C + 5 H N^2, backward
 * 8 N^2 C + 4 H N^2; bytes in + out + probabilities (forward), out + in + din
 * + probabilities (backward). */
enum { B = 8, H = 12, D = 64, C = H * D, DT = 2 };

static void load_attention(long n, int shapes, workload *t)
{
    double nn = (double)n * n, b = B * DT;
    char text[4096], shape[96] = "", path[64];
    if (shapes)
        snprintf(shape, sizeof shape, ", \"seq_len\": %ld, \"heads\": %d, \"head_dim\": %d", n, H, D);
    snprintf(text, sizeof text,
             "{\"format\": \"ttasim-trace\", \"version\": 1, \"model\": \"attn\", \"micro_batch\": %d,\n"
             " \"precision\": \"fp16\", \"dtype_bytes\": %d, \"params\": 1769472, \"param_bytes\": 3538944,\n"
             " \"forward_flops\": 1, \"backward_flops\": 1, \"layers\": [\n"
             "  {\"name\": \"qkv\", \"class\": \"gemm\", \"forward_flops\": %.17g, \"forward_bytes\": %.17g,\n"
             "   \"backward_flops\": %.17g, \"backward_bytes\": %.17g, \"activation_bytes\": %.17g,\n"
             "   \"param_bytes\": 3538944},\n"
             "  {\"name\": \"core\", \"class\": \"attention\", \"forward_flops\": %.17g, \"forward_bytes\": %.17g,\n"
             "   \"backward_flops\": %.17g, \"backward_bytes\": %.17g, \"activation_bytes\": %.17g,\n"
             "   \"param_bytes\": 0%s}],\n"
             " \"gradients\": [{\"name\": \"qkv.weight\", \"bytes\": 3538944, \"layer\": 0}],\n"
             " \"optimizer\": {\"name\": \"sgd\", \"flops\": 1, \"bytes\": 1},\n"
             " \"buckets\": [{\"bytes\": 3538944, \"ready_after_layer\": 0}]}\n",
             B, DT, 2.0 * n * C * 3 * C * B, 4.0 * n * C * b, 4.0 * n * C * 3 * C * B, 7.0 * n * C * b,
             3.0 * n * C * b, (4 * nn * C + 5 * H * nn) * B, (4.0 * n * C + H * nn) * b,
             (8 * nn * C + 4 * H * nn) * B, (7.0 * n * C + H * nn) * b, (1.0 * n * C + H * nn) * b, shape);
    tu_write_temp(text, path, sizeof path);
    tt_error err = {0};
    int rc = workload_load(path, t, &err);
    unlink(path);
    ck_assert_msg(rc == TT_OK, "%s", err.msg);
}

static step_options fp16(int micro_batch, int fused)
{
    return (step_options){.micro_batch = micro_batch, .accumulation = 1, .dtype_bytes = 2, .grad_dtype_bytes = 2,
                          .overlap = 1, .ranks = 1, .optimizer_state_words = 2, .embeddings = EMB_ACCELERATORS,
                          .fused_attention = fused};
}

static double kept(const workload *t, const step_options *o)
{
    return step_layer_kept_bytes(t, 0, o) + step_layer_kept_bytes(t, 1, o);
}

/* Kept bytes of the attention block (Q, K, V, output, and the probabilities or
 * the fp32 log-sum-exp), 8 sequences in fp16:
 *   N = 2048: standard 16 x (4 x 2048 x 768 + 12 x 2048^2) = 905,969,664;
 *             fused 16 x 4 x 2048 x 768 + 8 x 12 x 2048 x 4 = 101,449,728 (8.93x)
 *   N = 4096: standard 16 x (4 x 4096 x 768 + 12 x 4096^2) = 3,422,552,064;
 *             fused 201,326,592 + 1,572,864 = 202,899,456 (16.9x)
 * FlashAttention's README reads "10X memory savings at sequence length 2K,
 * and 20X at 4K" off its graph of the same setting (which also holds the
 * benchmark's gradients), and "memory linear in sequence length": fused
 * doubles exactly with N, standard grows 3.78x. */
START_TEST(flashattention_readme_savings)
{
    workload t2k, t4k;
    load_attention(2048, 1, &t2k);
    load_attention(4096, 1, &t4k);
    step_options standard = fp16(B, 0), fused = fp16(B, 1);
    ck_assert_double_eq_tol(kept(&t2k, &standard), 905969664.0, 1e-3);
    ck_assert_double_eq_tol(kept(&t2k, &fused), 101449728.0, 1e-3);
    ck_assert_double_eq_tol(kept(&t4k, &standard), 3422552064.0, 1e-3);
    ck_assert_double_eq_tol(kept(&t4k, &fused), 202899456.0, 1e-3);
    ck_assert_double_eq_tol(kept(&t4k, &fused) / kept(&t2k, &fused), 2.0, 1e-12);
    /* step_memory_of adds them up at the scenario's batch: 4 sequences, half */
    step_memory m;
    step_options four = fp16(4, 1);
    step_memory_of(&t2k, &four, &m);
    ck_assert_double_eq_tol(m.activations_bytes, 101449728.0 / 2, 1e-3);
    workload_free(&t2k);
    workload_free(&t4k);
}
END_TEST

/* The log-sum-exp stays fp32 when the trace's precision is not the
 * scenario's: an fp16 trace replayed in fp32 doubles Q, K, V and the output,
 * not the statistics: 2 x 100,663,296 + 786,432. */
START_TEST(statistics_stay_fp32)
{
    workload t;
    load_attention(2048, 1, &t);
    step_options o = fp16(B, 1);
    o.dtype_bytes = 4;
    step_memory m;
    step_memory_of(&t, &o, &m);
    ck_assert_double_eq_tol(m.activations_bytes, 2 * 100663296.0 + 786432, 1e-3);
    workload_free(&t);
}
END_TEST

/* A plain roofline: peak 1e13 FLOP/s at attention efficiency 0.5, no
 * saturation or dispatch floor. */
static const device_model ROOFLINE = {.name = "roofline", .peak_flops = 1e13, .peak_fp32_flops = 1e13,
                                      .mem_Bps = 1e12, .mem_bytes = 80e9,
                                      .efficiency = {[OPCLASS_GEMM] = 0.5, [OPCLASS_ATTENTION] = 0.5},
                                      .backward_efficiency = DEVICE_MODEL_SAME_BACKWARD};

/* On that roofline at N = 2048:
 * backward, compute-bound: standard 8 x (8 x 2048^2 x 768 + 4 x 12 x 2048^2)
 *   = 207,769,042,944 FLOPs (41.55 ms); fused recomputes S = QK^T and P:
 *   + 2 x 8 x 12 x 2048^2 x (64 + 1) = 52,344,913,920 (52.02 ms, 1.25x);
 * forward at 1 GB/s, bandwidth-bound (its 105,092,481,024 FLOPs take 21 ms):
 *   standard writes the probabilities, 905,969,664 B (0.906 s); fused
 *   16 x 4 x 2048 x 768 + 786,432 B (0.101 s). */
START_TEST(fused_attention_time)
{
    workload t;
    load_attention(2048, 1, &t);
    device_model d = ROOFLINE;
    step_options standard = fp16(B, 0), fused = fp16(B, 1);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &standard, 1), 207769042944.0 / 5e12, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &fused, 1), (207769042944.0 + 52344913920.0) / 5e12, 1e-12);
    d.mem_Bps = 1e9;
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &standard, 0), 905969664.0 / 1e9, 1e-12);
    ck_assert_double_eq_tol(step_layer_s(&t, 1, &d, &fused, 0), 101449728.0 / 1e9, 1e-12);
    workload_free(&t);
}
END_TEST

/* A trace without the attention shapes or the kept bytes (written before
 * traces recorded them) is refused for fused attention or autograd
 * activations, naming the layer and the fix. */
START_TEST(fused_needs_shapes)
{
    workload t;
    load_attention(512, 0, &t);
    step_options o = fp16(B, 1);
    double coll_s[2] = {0};
    step_result r;
    tt_error err = {0};
    ck_assert_int_eq(step_replay(&t, &ROOFLINE, &o, coll_s, &r, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "layers[1] (core) has no seq_len"));
    ck_assert_ptr_nonnull(strstr(err.msg, "$.workload.attention \"fused\" needs"));
    o.fused_attention = 0;
    o.autograd_activations = 1; /* nor kept_bytes */
    ck_assert_int_eq(step_replay(&t, &ROOFLINE, &o, coll_s, &r, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "layers[0] (qkv) has no kept_bytes and kept_aux_bytes"));
    ck_assert_ptr_nonnull(strstr(err.msg, "$.workload.activations \"autograd\" needs"));
    o.autograd_activations = 0;
    ck_assert_int_eq(step_replay(&t, &ROOFLINE, &o, coll_s, &r, &err), TT_OK);
    workload_free(&t);
}
END_TEST

static void load_bert512(workload *t)
{
    tt_error err = {0};
    ck_assert_msg(workload_load(TTASIM_SRCDIR "/scenarios/traces/bert-large-seq512.json", t, &err) == TT_OK, "%s",
                  err.msg);
}

/* One BERT-Large encoder layer (trace layers 3-14) at s = 512, h = 1024,
 * a = 16, b = 1 sequence in fp16, against Korthikanti et al. 2022
 * ("Reducing Activation Recomputation in Large Transformer Models",
 * arXiv:2205.05198, section 4.1): 34 s b h + 5 a s^2 b = 38,797,312 bytes
 * without recomputation, 34 s b h = 17,825,792 with the attention core's
 * S x S tensors recomputed ("selective").
 * "autograd" keeps what the backward reads: the QKV projection's input (the
 * previous LayerNorm's output, 2 sbh), Q K V (6), the core's output (2, the
 * dense layer's input), the dropout mask (1 byte: sbh), the add's output (2,
 * the LayerNorm's input), the LayerNorm's output (2, the FFN's input), the
 * FFN's output (8, GELU's input), GELU's output (8, the second dense
 * layer's input), its dropout mask (1), the add's output (2) = 34 sbh, plus
 * the probabilities 2 a s^2 b and the LayerNorms' fp32 mean and rstd (16 sb):
 *   17,825,792 + 8,388,608 + 8,192 = 26,222,592;
 * fused attention keeps the fp32 log-sum-exp instead (4 a s b):
 *   17,825,792 + 8,192 + 32,768 = 17,866,752 (Megatron's selective count
 *   plus the statistics it leaves out).
 * The S x S part is 2 a s^2 b where Megatron's is 5 a s^2 b: the trainer's
 * attention has no dropout on the probabilities (Megatron counts its mask,
 * a s^2 b, and its output, 2 a s^2 b).
 * "outputs" (the default) keeps every op's output: QKV 3, core 1, dense 1,
 * dropout 2 (output and mask), add 1, LayerNorm 1, FFN 4, GELU 4, dense 1,
 * dropout 2, add 1, LayerNorm 1 = 22 s h elements, 44 s b h, and the
 * LayerNorm statistics at the precision (8 s b):
 *   23,068,672 + 8,388,608 + 4,096 = 31,461,376; fused 23,105,536. */
START_TEST(megatron_layer_formula)
{
    workload t;
    load_bert512(&t);
    ck_assert_str_eq(t.layers[3].name, "encoder.layer.0.attention.self.qkv");
    ck_assert_str_eq(t.layers[14].name, "encoder.layer.0.output.LayerNorm");
    const double s = 512, h = 1024, a = 16, b = 1;
    double layer[4] = {0, 0, 0, 0}; /* outputs, outputs fused, autograd, autograd fused */
    for (int v = 0; v < 4; v++) {
        step_options o = fp16(1, v & 1);
        o.autograd_activations = v >> 1;
        for (size_t i = 3; i <= 14; i++)
            layer[v] += step_layer_kept_bytes(&t, i, &o);
    }
    ck_assert_double_eq_tol(layer[0], 44 * s * b * h + 2 * a * s * s * b + 8 * s * b, 1e-6);
    ck_assert_double_eq_tol(layer[0], 31461376.0, 1e-6);
    ck_assert_double_eq_tol(layer[1], 44 * s * b * h + 8 * s * b + 4 * a * s * b, 1e-6);
    ck_assert_double_eq_tol(layer[1], 23105536.0, 1e-6);
    ck_assert_double_eq_tol(layer[2], 34 * s * b * h + 2 * a * s * s * b + 16 * s * b, 1e-6);
    ck_assert_double_eq_tol(layer[2], 26222592.0, 1e-6);
    ck_assert_double_eq_tol(layer[3], 34 * s * b * h + 16 * s * b + 4 * a * s * b, 1e-6);
    ck_assert_double_eq_tol(layer[3], 17866752.0, 1e-6);
    workload_free(&t);
}
END_TEST

/* The largest micro-batch whose step memory fits `mem_bytes`. */
static int max_micro_batch(const workload *t, step_options o, double mem_bytes)
{
    int best = 0;
    for (o.micro_batch = 1; o.micro_batch <= 1024; o.micro_batch++) {
        step_memory m;
        step_memory_of(t, &o, &m);
        if (m.total_bytes > mem_bytes)
            break;
        best = o.micro_batch;
    }
    return best;
}

/* BERT-Large at sequence length 512 with LAMB in mixed precision
 * (parameters 4 + 2 bytes, gradients 2, two fp32 moments: 5.37 GB) on a
 * 16 GiB V100 (17.18 GB): activations per sequence 0.769 GB as the trace
 * keeps them with the probabilities (24 x 16 x 512^2 x 2 bytes of them,
 * 0.201 GB), 0.568 GB fused (+ 0.8 MB of statistics); as autograd keeps
 * them 0.636 GB and 0.435 GB: largest micro-batches 15, 20, 18 and 27. */
START_TEST(bert_large_512_max_batch_v100)
{
    workload t;
    load_bert512(&t);
    const double v100_bytes = 16.0 * 1024 * 1024 * 1024;
    ck_assert_int_eq(max_micro_batch(&t, fp16(1, 0), v100_bytes), 15);
    ck_assert_int_eq(max_micro_batch(&t, fp16(1, 1), v100_bytes), 20);
    step_options o = fp16(1, 0);
    o.autograd_activations = 1;
    ck_assert_int_eq(max_micro_batch(&t, o, v100_bytes), 18);
    o.fused_attention = 1;
    ck_assert_int_eq(max_micro_batch(&t, o, v100_bytes), 27);
    workload_free(&t);
}
END_TEST

/* workload.attention and workload.activations in a scenario: the defaults
 * are "standard" and "outputs", anything else is an input error naming the
 * path and the valid values. */
START_TEST(scenario_fields)
{
    static const char *text =
        "{\"version\": 1, \"name\": \"t\", \"network\": \"ideal\",\n"
        " \"platform\": {\"name\": \"star\", \"nodes\": 2, \"link_bw_Bps\": \"100G\", \"link_latency_s\": \"1us\"},\n"
        " \"workload\": {\"trace\": \"" TTASIM_SRCDIR "/scenarios/traces/bert-large-seq512.json\"%s},\n"
        " \"convergence\": {\"steps\": 1000}}\n";
    static const struct {
        const char *field;
        int ok, fused, autograd;
        const char *error[3];
    } cases[] = {
        {"", 1, 0, 0, {NULL}},
        {", \"attention\": \"fused\", \"activations\": \"autograd\"", 1, 1, 1, {NULL}},
        {", \"attention\": \"standard\", \"activations\": \"outputs\"", 1, 0, 0, {NULL}},
        {", \"attention\": \"flash\"", 0, 0, 0, {"$.workload.attention", "\"standard\", \"fused\"", "\"flash\""}},
        {", \"activations\": \"saved\"", 0, 0, 0, {"$.workload.activations", "\"outputs\", \"autograd\"", "\"saved\""}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char doc[1024], path[64];
        snprintf(doc, sizeof doc, text, cases[i].field);
        tu_write_temp(doc, path, sizeof path);
        scenario sc;
        tt_error err = {0};
        int rc = scenario_load(path, &sc, &err);
        unlink(path);
        if (cases[i].ok) {
            ck_assert_msg(rc == TT_OK, "%s", err.msg);
            ck_assert_int_eq(sc.fused_attention, cases[i].fused);
            ck_assert_int_eq(sc.autograd_activations, cases[i].autograd);
            scenario_free(&sc);
            continue;
        }
        ck_assert_int_eq(rc, TT_EINPUT);
        for (int k = 0; k < 3; k++)
            ck_assert_msg(strstr(err.msg, cases[i].error[k]), "'%s' not in: %s", cases[i].error[k], err.msg);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("memory");
    TCase *t = tcase_create("attention");
    tcase_add_test(t, flashattention_readme_savings);
    tcase_add_test(t, statistics_stay_fp32);
    tcase_add_test(t, fused_attention_time);
    tcase_add_test(t, fused_needs_shapes);
    tcase_add_test(t, megatron_layer_formula);
    tcase_add_test(t, bert_large_512_max_batch_v100);
    tcase_add_test(t, scenario_fields);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
