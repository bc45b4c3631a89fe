/* The model zoo: exact parameter counts, output shapes, whole-model gradient
 * checks through the engine (fan-out accumulation, tied weights), determinism,
 * the IDX reader, and a short Fashion-MNIST run whose loss must fall. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/testutil.h"
#include "trainer/fmnist.h"
#include "trainer/model.h"
#include "trainer/rng.h"
#include "trainer/synth.h"
#include "trainer/trace.h"

static model *make(const char *name, const model_opts *o)
{
    model_opts def;
    model_opts_default(&def);
    tt_error err = {0};
    model *m = NULL;
    int rc = model_create(&m, name, o ? o : &def, &err);
    ck_assert_msg(rc == 0, "%s: %s", name, err.msg);
    return m;
}

static size_t count(const char *name)
{
    model *m = make(name, NULL);
    size_t n = model_params(m)->numel;
    model_free(m);
    return n;
}

START_TEST(param_counts)
{
    ck_assert_uint_eq(count("resnet50"), 25557032);   /* torchvision */
    ck_assert_uint_eq(count("bert-large"), 335141888); /* HF BertModel, bert-large-uncased */
    ck_assert_uint_eq(count("vit-b32"), 88224232);    /* torchvision vit_b_32 */
    ck_assert_uint_eq(count("resnet18"), 11689512);
    ck_assert_uint_eq(count("resnet34"), 21797672);
    ck_assert_uint_eq(count("bert-base"), 109482240);
    /* MLPerf tables (40M cap): 187,767,399 rows x 128 + the MLPs' 2,368,897 */
    ck_assert_uint_eq(count("dlrm-mlperf"), 24036595969ULL);
    ck_assert_uint_eq(count("dlrm-small"), 21525377);
    /* DLRM-DCNv2 (MLPerf v3.0+): tables 204,184,588 rows x 128 = 26,135,627,264; bottom
     * 13-512-256-128 171,392; 3 cross layers on 27 x 128 = 3456 of rank 512, V and W
     * 3456 x 512 each + bias 3456: 3 x 3,542,400 = 10,627,200; top 3456-1024-1024-512-256-1
     * 5,245,953 (weights + biases); dense 16,044,545 */
    ck_assert_uint_eq(count("dlrm-dcnv2"), 26135627264ULL + 16044545ULL);
    ck_assert_uint_eq(count("dlrm-dcnv2-small"), 149667ULL * 128 + 16044545ULL); /* rows <= 10,000 */
    ck_assert_uint_eq(count("mlp"), 784 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 10 + 10);
    /* decoders, against the model cards (Hugging Face configs count the same) */
    ck_assert_uint_eq(count("llama3-8b"), 8030261248ULL);
    ck_assert_uint_eq(count("llama3.1-405b"), 405853388800ULL);
    ck_assert_uint_eq(count("llama3-70b"), 70553706496ULL);
    ck_assert_uint_eq(count("llama2-7b"), 6738415616ULL);
    ck_assert_uint_eq(count("llama2-13b"), 13015864320ULL);
    ck_assert_uint_eq(count("llama2-70b"), 68976648192ULL);
    ck_assert_uint_eq(count("mixtral-8x7b"), 46702792704ULL);
    /* Qwen3-235B-A22B without its QK norms: 94 x (4096 x (64 + 2 x 4) x 128 + 8192 x 4096 (heads x
     * head_dim is not its hidden) + 2 x 4096 + 128 x (3 x 4096 x 1536 + 4096)) + 2 x 151936 x 4096 + 4096 */
    ck_assert_uint_eq(count("qwen3-235b-a22b"), 235093610496ULL);
    /* GPT-3 175B as Table 2.1 gives it: 96 x (12 x 12288^2 + 13 x 12288) + 50257 x 12288
     * (tied) + 2048 x 12288 positions + the final LayerNorm's 2 x 12288 */
    ck_assert_uint_eq(count("gpt3-175b"), 174604259328ULL);
    /* GPT-3 Small is GPT-2 small (124,439,808) with 2048 positions instead of 1024 */
    ck_assert_uint_eq(count("gpt3-125m"), 124439808ULL + 1024 * 768);
    /* the views tile the flat buffer and say what takes weight decay */
    model *m = make("resnet50", NULL);
    param_set *ps = model_params(m);
    size_t off = 0;
    for (int i = 0; i < ps->nviews; i++) {
        ck_assert_uint_eq(ps->views[i].offset, off);
        off += ps->views[i].numel;
    }
    int v = param_set_find(ps, "layer4.2.bn3.weight");
    ck_assert_int_ge(v, 0);
    ck_assert(ps->views[v].is_bias_or_norm && !ps->views[v].weight_decay);
    v = param_set_find(ps, "layer1.0.downsample.0.weight");
    ck_assert(v >= 0 && ps->views[v].weight_decay && ps->views[v].numel == 256 * 64);
    model_free(m);
}
END_TEST

/* Each layer type is timed with its device class: the counts of ResNet-50's
 * 53 convs, 53 batchnorms (ReLU fused), 16 residual adds, 2 pools, 1 fc, 1 loss. */
START_TEST(layer_classes)
{
    model *m = make("resnet50", NULL);
    int n[OPCLASS_COUNT] = {0};
    for (int i = 0; i < model_nlayers(m); i++)
        n[model_layer_at(m, i)->cls]++;
    ck_assert_int_eq(n[OPCLASS_CONV], 53);
    ck_assert_int_eq(n[OPCLASS_NORM], 53);
    ck_assert_int_eq(n[OPCLASS_ELEMENTWISE], 16);
    ck_assert_int_eq(n[OPCLASS_POOL], 2);
    ck_assert_int_eq(n[OPCLASS_GEMM], 1);
    ck_assert_int_eq(n[OPCLASS_LOSS], 1);
    ck_assert_int_eq(n[OPCLASS_EMBEDDING] + n[OPCLASS_ATTENTION], 0);
    model_free(m);
    m = make("bert-tiny", NULL);
    ck_assert_int_eq(model_layer_at(m, 0)->cls, OPCLASS_EMBEDDING);
    int attn = 0;
    for (int i = 0; i < model_nlayers(m); i++)
        attn += model_layer_at(m, i)->cls == OPCLASS_ATTENTION;
    ck_assert_int_eq(attn, 2); /* one per encoder layer */
    model_free(m);
}
END_TEST

START_TEST(flops_counted)
{
    /* ResNet-50 forward at 224: 4.09 G multiply-adds (torchvision), 2 FLOPs each */
    model *m = make("resnet50", NULL);
    double f = model_forward_flops_per_sample(m);
    ck_assert_msg(f > 8.1e9 && f < 8.3e9, "resnet50 forward %.4g FLOPs", f);
    model_free(m);
    /* MLP: exactly the three GEMMs, bias adds, relu and softmax */
    m = make("mlp", NULL);
    double gemm = 2.0 * (784 * 1024 + 1024 * 1024 + 1024 * 10);
    f = model_forward_flops_per_sample(m);
    ck_assert(f > gemm && f < gemm * 1.01);
    /* backward skips the input gradient of the first layer */
    double b = model_backward_flops_per_sample(m);
    ck_assert(b > 2 * gemm - 2.0 * 784 * 1024 - 1 && b < 2 * gemm - 2.0 * 784 * 1024 + 1e5);
    model_free(m);
}
END_TEST

/* Allocates at batch B, fills synthetic inputs, returns the loss. */
static float run_once(model *m, int B, uint64_t seed)
{
    tt_error err = {0};
    ck_assert_msg(model_alloc(m, B, &err) == 0, "%s", err.msg);
    synth_fill(model_get_inputs(m), seed, 0);
    model_zero_grad(m);
    float loss = model_forward(m);
    model_backward(m);
    return loss;
}

START_TEST(output_shapes)
{
    struct {
        const char *name;
        int image, cols;
    } cases[] = {{"cnn", 0, 10}, {"resnet18", 64, 1000}, {"resnet50", 64, 1000},
                 {"vit-b32", 64, 1000}, {"bert-tiny", 0, 30522}, {"dlrm-small", 0, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_opts o;
        model_opts_default(&o);
        o.image = cases[i].image;
        o.seq_len = 16;
        model *m = make(cases[i].name, &o);
        float loss = run_once(m, 2, 3);
        ck_assert_msg(isfinite(loss) && loss > 0, "%s loss %g", cases[i].name, loss);
        int cols;
        const float *z = model_logits(m, &cols);
        ck_assert_int_eq(cols, cases[i].cols);
        ck_assert(isfinite(z[0]));
        model_free(m);
    }
}
END_TEST

/* Central differences of the whole model's loss against its gradients for
 * 6 entries of every parameter view (h = 1e-3; 5% tolerance on the vector of
 * sampled entries; a skipped residual or tied gradient is off by O(1)).
 * ResNet runs in eval mode: batch statistics over 3 tiny images put many
 * ReLU inputs within h of their kink (train-mode batchnorm is checked alone). */
static void model_gradcheck(const char *name, model_opts *o, int B, int training)
{
    model *m = make(name, o);
    model_set_training(m, training);
    run_once(m, B, 5);
    param_set *ps = model_params(m);
    double diff = 0, na = 0;
    for (int v = 0; v < ps->nviews; v++) {
        size_t n = ps->views[v].numel;
        for (int k = 0; k < 6; k++) {
            size_t i = ps->views[v].offset + (size_t)(k * 7919) % n;
            float keep = ps->params[i];
            float h = 1e-3f;
            ps->params[i] = keep + h;
            double lp = model_forward(m);
            ps->params[i] = keep - h;
            double lm = model_forward(m);
            ps->params[i] = keep;
            double num = (lp - lm) / (2 * h), an = ps->grads[i];
            diff += (num - an) * (num - an);
            na += an * an;
        }
    }
    double rel = sqrt(diff) / sqrt(na);
    ck_assert_msg(rel < 5e-2, "%s: model gradient relative error %.3g", name, rel);
    model_free(m);
}

START_TEST(model_gradients)
{
    model_opts o;
    model_opts_default(&o);
    o.seq_len = 8;
    o.vocab = 1100; /* tokens are drawn above 1000 */
    model_gradcheck("bert-tiny", &o, 2, 1);
    model_opts_default(&o);
    o.image = 32;
    o.classes = 5;
    model_gradcheck("resnet18", &o, 3, 0);
    model_opts_default(&o);
    o.table_rows_cap = 50;
    model_gradcheck("dlrm-small", &o, 4, 1);
    model_opts_default(&o); /* DLRM-DCNv2 on 3 multi-hot tables: cross layers on 4 x 128 */
    o.ntables = 3;
    o.table_rows[0] = 40, o.table_rows[1] = 7, o.table_rows[2] = 25;
    o.nmulti_hot = 3;
    o.multi_hot[0] = 3, o.multi_hot[1] = 1, o.multi_hot[2] = 5;
    model_gradcheck("dlrm-dcnv2", &o, 3, 1);
    model_opts_default(&o);
    o.image = 12; /* flatten and max-pool inside the engine */
    model_gradcheck("cnn", &o, 3, 1);
    /* decoders: tied, untied, routed and shared experts; every token goes to
     * all 3 experts, so no perturbation changes which (test_layers checks the
     * top-k selection on inputs far from a tie) */
    const char *decoders[] = {"gpt", "llama", "moe"};
    for (int i = 0; i < 3; i++) {
        model_opts_default(&o);
        o.seq_len = 8;
        o.vocab = 16;
        if (i == 2)
            o.experts = o.top_k = 3;
        model_gradcheck(decoders[i], &o, 2, 1);
    }
}
END_TEST

static void train_losses(const char *name, model_opts *o, int B, int steps, float lr, float *out)
{
    model *m = make(name, o);
    tt_error err = {0};
    ck_assert(model_alloc(m, B, &err) == 0);
    for (int s = 0; s < steps; s++) {
        synth_fill(model_get_inputs(m), 9, (uint64_t)s * B);
        model_zero_grad(m);
        out[s] = model_forward(m);
        model_backward(m);
        model_sgd_step(m, lr);
    }
    model_free(m);
}

START_TEST(determinism)
{
    model_opts o;
    model_opts_default(&o);
    o.seed = 77;
    o.dropout = 0.2f;
    float a[4], b[4];
    train_losses("cnn", &o, 8, 4, 0.05f, a);
    train_losses("cnn", &o, 8, 4, 0.05f, b);
    ck_assert_mem_eq(a, b, sizeof a);
    ck_assert(a[0] != a[3]);
    o.seed = 78; /* another seed, another run */
    train_losses("cnn", &o, 8, 4, 0.05f, b);
    ck_assert(memcmp(a, b, sizeof a) != 0);
}
END_TEST

/* ---- IDX reader ---- */
static void write_gz(const char *path, const unsigned char *bytes, int n)
{
    gzFile gz = gzopen(path, "wb");
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzwrite(gz, bytes, (unsigned)n), n);
    gzclose(gz);
}

START_TEST(idx_reader)
{
    char dir[] = "/tmp/ttasim-idx-XXXXXX", ip[128], lp[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(ip, sizeof ip, "%s/train-images-idx3-ubyte.gz", dir);
    snprintf(lp, sizeof lp, "%s/train-labels-idx1-ubyte.gz", dir);
    /* 2 images of 2x3 and their labels */
    unsigned char img[16 + 12] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3};
    for (int i = 0; i < 12; i++)
        img[16 + i] = (unsigned char)(i * 20);
    unsigned char lab[8 + 2] = {0, 0, 8, 1, 0, 0, 0, 2, 7, 3};
    write_gz(ip, img, sizeof img);
    write_gz(lp, lab, sizeof lab);
    fmnist d;
    tt_error err = {0};
    ck_assert_int_eq(fmnist_load(dir, "train", &d, &err), 0);
    ck_assert(d.n == 2 && d.rows == 2 && d.cols == 3 && d.labels[0] == 7 && d.labels[1] == 3);
    ck_assert_float_eq_tol(d.images[7], 140.0f / 255.0f, 1e-6f);
    fmnist_free(&d);
    /* truncated: one pixel short */
    write_gz(ip, img, sizeof img - 1);
    ck_assert_int_eq(fmnist_load(dir, "train", &d, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, ip) && strstr(err.msg, "12 data bytes"), "%s", err.msg);
    /* wrong magic (labels where images belong) */
    write_gz(ip, lab, sizeof lab);
    ck_assert_int_eq(fmnist_load(dir, "train", &d, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "magic number 0x00000801, expected 0x00000803"), "%s", err.msg);
    /* missing: names the package */
    unlink(ip);
    ck_assert_int_eq(fmnist_load(dir, "train", &d, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "dataset-fashion-mnist"), "%s", err.msg);
    unlink(lp);
    rmdir(dir);
}
END_TEST

/* ---- learning ---- */
START_TEST(fashion_mnist_loss_falls)
{
    fmnist train;
    tt_error err = {0};
    int rc = fmnist_load(NULL, "train", &train, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    model_opts o;
    model_opts_default(&o);
    o.nwidths = 3;
    o.widths[0] = 784;
    o.widths[1] = 128;
    o.widths[2] = 10;
    model *m = make("mlp", &o);
    ck_assert(model_alloc(m, 64, &err) == 0);
    model_inputs *in = model_get_inputs(m);
    int idx[64];
    double first = 0, last = 0;
    rng r = rng_at(3, 0);
    for (int s = 0; s < 300; s++) {
        for (int b = 0; b < 64; b++)
            idx[b] = (int)rng_below(&r, (uint64_t)train.n);
        fmnist_fill(&train, idx, 64, in->x, in->labels);
        model_zero_grad(m);
        float loss = model_forward(m);
        model_backward(m);
        model_sgd_step(m, 0.1f);
        if (s < 10)
            first += loss / 10;
        if (s >= 280)
            last += loss / 20;
    }
    ck_assert_msg(first > 1.5 && last < 0.6 * first, "loss %.3f -> %.3f", first, last);
    /* and it generalises: accuracy on 1024 test images */
    fmnist test;
    ck_assert(fmnist_load(NULL, "t10k", &test, &err) == 0);
    int correct = 0;
    model_set_training(m, 0);
    for (int s = 0; s < 16; s++) {
        for (int b = 0; b < 64; b++)
            idx[b] = s * 64 + b;
        fmnist_fill(&test, idx, 64, in->x, in->labels);
        model_forward(m);
        int cols;
        const float *z = model_logits(m, &cols);
        for (int b = 0; b < 64; b++) {
            int best = 0;
            for (int k = 1; k < cols; k++)
                best = z[b * cols + k] > z[b * cols + best] ? k : best;
            correct += best == in->labels[b];
        }
    }
    ck_assert_msg(correct > 0.7 * 1024, "test accuracy %d/1024", correct);
    fmnist_free(&test);
    fmnist_free(&train);
    model_free(m);
}
END_TEST

START_TEST(teacher_stream_learnable)
{
    teacher t;
    ck_assert_int_eq(teacher_init(&t, 32, 16, 4, 5), 0);
    model_opts o;
    model_opts_default(&o);
    o.nwidths = 3;
    o.widths[0] = 32;
    o.widths[1] = 64;
    o.widths[2] = 4;
    model *m = make("mlp", &o);
    tt_error err = {0};
    ck_assert(model_alloc(m, 64, &err) == 0);
    model_inputs *in = model_get_inputs(m);
    int hist[4] = {0};
    double first = 0, last = 0;
    for (int s = 0; s < 300; s++) {
        teacher_fill(&t, (uint64_t)s * 64, 64, in->x, in->labels);
        for (int b = 0; b < 64 && s == 0; b++)
            hist[in->labels[b]]++;
        model_zero_grad(m);
        float loss = model_forward(m);
        model_backward(m);
        model_sgd_step(m, 0.2f);
        first += s < 10 ? loss / 10 : 0;
        last += s >= 280 ? loss / 20 : 0;
    }
    for (int k = 0; k < 4; k++) /* every class occurs */
        ck_assert_int_gt(hist[k], 0);
    ck_assert_msg(last < 0.6 * first, "teacher stream loss %.3f -> %.3f", first, last);
    /* sample i does not depend on how the stream is cut */
    float x1[32 * 3], x2[32];
    int l1[3], l2[1];
    teacher_fill(&t, 100, 3, x1, l1);
    teacher_fill(&t, 102, 1, x2, l2);
    ck_assert_mem_eq(x1 + 64, x2, sizeof x2);
    ck_assert_int_eq(l1[2], l2[0]);
    teacher_free(&t);
    model_free(m);
}
END_TEST

START_TEST(synthetic_inputs)
{
    /* Zipf: rank 0 is the most frequent, ids stay in range */
    rng r = rng_at(1, 1);
    int c0 = 0, c10 = 0;
    for (int i = 0; i < 20000; i++) {
        long k = synth_zipf(rng_uniform(&r), 1000, 1.05);
        ck_assert(k >= 0 && k < 1000);
        c0 += k == 0;
        c10 += k == 10;
    }
    ck_assert_int_gt(c0, 4 * c10);
    /* BERT inputs: masked positions hold [MASK], labels the original tokens */
    model_opts o;
    model_opts_default(&o);
    o.seq_len = 32;
    model *m = make("bert-tiny", &o);
    tt_error err = {0};
    ck_assert(model_alloc(m, 3, &err) == 0);
    model_inputs *in = model_get_inputs(m);
    synth_fill(in, 4, 0);
    ck_assert_int_eq(in->npred, 5);
    for (int b = 0; b < 3; b++) {
        ck_assert(in->lengths[b] >= 16 && in->lengths[b] <= 32);
        for (int p = 0; p < 5; p++) {
            int q = in->positions[b * 5 + p];
            ck_assert(q >= 1 && q < in->lengths[b]);
            ck_assert_int_eq(in->tokens[b * 32 + q], 103);
            ck_assert(in->labels[b * 5 + p] >= 1000 && in->labels[b * 5 + p] < 30522);
        }
    }
    model_free(m);
}
END_TEST

/* Where a `model list` line's params field ends: past the name, the spaces
 * and the digits. */
static size_t params_column_end(const char *line)
{
    size_t k = strcspn(line, " ");
    k += strspn(line + k, " ");
    return k + strspn(line + k, "0123456789");
}

START_TEST(model_command)
{
    static char out[1 << 20];
    ck_assert_int_eq(tu_run_ttasim("model show resnet50 --json", out, sizeof out), 0);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "%s", je.text);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "params")), 25557032);
    json_t *layers = json_object_get(doc, "layers");
    ck_assert_int_gt(json_array_size(layers), 120); /* relus fused into bn and add */
    double sum = 0, fwd = json_real_value(json_object_get(doc, "forward_flops_per_sample"));
    for (size_t i = 0; i < json_array_size(layers); i++)
        sum += json_real_value(json_object_get(json_array_get(layers, i), "forward_flops"));
    ck_assert(fabs(sum - fwd) < 1e-6 * fwd);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(layers, 0), "name")),
                     "conv1");
    json_decref(doc);
    ck_assert_int_eq(tu_run_ttasim("model show mlp --widths 10-5-3 --json", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"params\": 73"));
    ck_assert_int_eq(tu_run_ttasim("model list", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "dlrm-mlperf"));
    /* the name column fits the longest name: the params end in one column */
    const char *a = strstr(out, "\nmlp "), *b = strstr(out, "\ndlrm-dcnv2-small ");
    ck_assert(a && b);
    ck_assert_int_eq(params_column_end(a + 1), params_column_end(b + 1));
    /* tables as a parameter: 3 tables of 10, 20, 30 rows */
    ck_assert_int_eq(tu_run_ttasim("model show dlrm-mlperf --table-rows 10,20,30 --json", out,
                                   sizeof out), 0);
    long mlps = 13 * 512 + 512 + 512 * 256 + 256 + 256 * 128 + 128 + (128 + 6) * 1024 + 1024 +
                1024 * 1024 + 1024 + 1024 * 512 + 512 + 512 * 256 + 256 + 256 + 1;
    char want[64];
    snprintf(want, sizeof want, "\"params\": %ld,", mlps + 60 * 128);
    ck_assert_msg(strstr(out, want) != NULL, "%s", want);
    ck_assert_int_eq(tu_run_ttasim("model show resnet-50", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "did you mean 'resnet50'"));
    ck_assert_int_eq(tu_run_ttasim("model show cnn --image 2", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "too small"));
    /* decoders: listed, shaped by options (1 layer of 32, 4 heads of 8 on 1 kv head, SwiGLU 48,
     * vocab 16: embeddings, qkv 32 x 48, o 32 x 32, 3 x 32 x 48, 3 norms, head), per-layer GEMMs */
    ck_assert_int_eq(tu_run_ttasim("model list", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "\nllama3.1-405b  "));
    ck_assert_ptr_nonnull(strstr(out, "\nmoe-fine-256x "));
    ck_assert_int_eq(tu_run_ttasim("model show llama --layers 1 --hidden 32 --heads 4 --kv-heads 1 "
                                   "--ffn-hidden 48 --vocab 16 --json", out, sizeof out), 0);
    snprintf(want, sizeof want, "\"params\": %d,", 16 * 32 + 32 * 48 + 32 * 32 + 3 * 32 * 48 + 3 * 32 + 16 * 32);
    ck_assert_msg(strstr(out, want) != NULL, "%s", want);
    ck_assert_ptr_nonnull(strstr(out, "\"kind\": \"attn_out\""));
    ck_assert_int_eq(tu_run_ttasim("model show llama --kv-heads 3", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "3 kv heads must divide the 4 heads"));
    ck_assert_int_eq(tu_run_ttasim("model show gpt --experts 4", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "moe options"));
}
END_TEST

/* DLRM-DCNv2's layers as the replay sees them, and its multi-hot bags: each table
 * pools exactly its own ids (order inside a bag does not matter, which table does) */
START_TEST(dcnv2_layers)
{
    model *m = make("dlrm-dcnv2", NULL);
    int cross = 0;
    for (int i = 0; i < model_nlayers(m); i++) {
        const model_layer *L = model_layer_at(m, i);
        if (strncmp(L->name, "inter_arch.crossnet.", 20) != 0)
            continue;
        cross++;
        /* two rank-512 GEMMs on 3456 plus bias, multiply, add; backward four GEMMs, du,
         * dbias, dx0 */
        ck_assert_int_eq(L->cls, OPCLASS_GEMM);
        ck_assert(L->fwd_flops == 4.0 * 3456 * 512 + 3 * 3456);
        ck_assert(L->bwd_flops == 8.0 * 3456 * 512 + 3 * 3456);
        ck_assert(L->params == 2.0 * 3456 * 512 + 3456);
    }
    ck_assert_int_eq(cross, 3);
    const model_layer *E = model_layer_at(m, 3);
    ck_assert_int_eq(E->cls, OPCLASS_EMBEDDING);
    ck_assert(E->model_parallel && E->lookups == 214);
    ck_assert(E->fwd_flops == 214.0 * 128);
    model_free(m);

    model_opts o;
    model_opts_default(&o);
    o.ntables = 2;
    o.table_rows[0] = 5, o.table_rows[1] = 7;
    o.nmulti_hot = 2;
    o.multi_hot[0] = 2, o.multi_hot[1] = 3;
    m = make("dlrm-dcnv2", &o);
    tt_error err = {0};
    ck_assert(model_alloc(m, 1, &err) == 0);
    model_inputs *in = model_get_inputs(m);
    ck_assert_int_eq(in->ids_per_sample, 5);
    synth_fill(in, 3, 0);
    int base[5] = {1, 1, 2, 3, 6}, perm[5] = {1, 1, 6, 2, 3}, moved[5] = {1, 2, 1, 3, 6};
    memcpy(in->sparse, base, sizeof base);
    float l0 = model_forward(m);
    memcpy(in->sparse, perm, sizeof perm);
    ck_assert_float_eq_tol(model_forward(m), l0, 1e-6f * fabsf(l0));
    memcpy(in->sparse, moved, sizeof moved);
    ck_assert(fabsf(model_forward(m) - l0) > 1e-4f * fabsf(l0));
    model_free(m);
    /* multi-hot sizes must match the tables */
    o.nmulti_hot = 3;
    ck_assert_int_eq(model_create(&m, "dlrm-dcnv2", &o, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "--multi-hot gives 3 sizes for 2"));
    o.nmulti_hot = 0;
    ck_assert_int_eq(model_create(&m, "dlrm-dcnv2", &o, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "give their ids per sample with --multi-hot"));
    char out[8192];
    ck_assert_int_eq(tu_run_ttasim("model show dlrm-dcnv2 --table-rows 10,20 --multi-hot 4",
                                   out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--multi-hot gives 1 sizes for 2"));
    ck_assert_int_eq(tu_run_ttasim("model show dlrm-mlperf --multi-hot 0,2", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--multi-hot: expected"));
}
END_TEST

/* the trace: sums, orders and buckets consistent with the model; deterministic */
START_TEST(trace_consistent)
{
    model_opts mo;
    model_opts_default(&mo);
    mo.seq_len = 16;
    trace_opts to;
    trace_opts_default(&to);
    to.micro_batch = 4;
    to.bucket_bytes = 2e6;
    to.optimizer = optim_find("lamb");
    to.precision = "bf16";
    tt_error err = {0};
    json_t *a, *b;
    ck_assert_msg(trace_build("bert-tiny", &mo, &to, &a, &err) == 0, "%s", err.msg);
    ck_assert(trace_build("bert-tiny", &mo, &to, &b, &err) == 0);
    char *sa = json_dumps(a, JSON_SORT_KEYS), *sb = json_dumps(b, JSON_SORT_KEYS);
    ck_assert_str_eq(sa, sb);
    free(sa);
    free(sb);
    json_decref(b);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "dtype_bytes")), 2);
    json_t *layers = json_object_get(a, "layers"), *grads = json_object_get(a, "gradients");
    json_t *buckets = json_object_get(a, "buckets");
    double fwd = 0, gbytes = 0, bbytes = 0;
    for (size_t i = 0; i < json_array_size(layers); i++)
        fwd += json_real_value(json_object_get(json_array_get(layers, i), "forward_flops"));
    ck_assert(fabs(fwd - json_real_value(json_object_get(a, "forward_flops"))) < 1e-6 * fwd);
    int last = 1 << 30;
    for (size_t i = 0; i < json_array_size(grads); i++) {
        json_t *g = json_array_get(grads, i);
        int layer = (int)json_integer_value(json_object_get(g, "layer"));
        ck_assert_int_le(layer, last); /* backward order */
        last = layer;
        gbytes += json_real_value(json_object_get(g, "bytes"));
    }
    /* the tied word embedding's gradient comes last: its layer (0) finishes it */
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(grads, json_array_size(grads) - 1), "name")),
                     "embeddings.word_embeddings.weight");
    ck_assert(gbytes == json_real_value(json_object_get(a, "param_bytes")));
    int prev = 1 << 30;
    for (size_t i = 0; i < json_array_size(buckets); i++) {
        json_t *k = json_array_get(buckets, i);
        int r = (int)json_integer_value(json_object_get(k, "ready_after_layer"));
        ck_assert_int_le(r, prev);
        prev = r;
        bbytes += json_real_value(json_object_get(k, "bytes"));
        if (i > 0 && i + 1 < json_array_size(buckets))
            ck_assert(json_real_value(json_object_get(k, "bytes")) >= 2e6);
    }
    ck_assert(bbytes == gbytes);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(buckets, json_array_size(buckets) - 1), "ready_after_layer")), 0);
    /* lamb: 16 FLOPs per parameter */
    double params = (double)json_integer_value(json_object_get(a, "params"));
    ck_assert(json_real_value(json_object_get(json_object_get(a, "optimizer"), "flops")) == 16 * params);
    json_decref(a);
    /* DLRM: tables model-parallel, alltoalls, full table bytes */
    model_opts_default(&mo);
    trace_opts_default(&to);
    to.micro_batch = 64;
    ck_assert(trace_build("dlrm-mlperf", &mo, &to, &a, &err) == 0);
    ck_assert(json_integer_value(json_object_get(a, "params")) == 24036595969LL);
    json_t *comm = json_object_get(a, "comm");
    ck_assert_int_eq(json_array_size(comm), 2);
    ck_assert(json_real_value(json_object_get(json_array_get(comm, 0), "bytes_per_rank")) ==
              64.0 * 26 * 128 * 4);
    grads = json_object_get(a, "gradients");
    for (size_t i = 0; i < json_array_size(grads); i++)
        ck_assert(strncmp(json_string_value(json_object_get(json_array_get(grads, i), "name")),
                          "emb_l", 5) != 0);
    json_decref(a);
    /* DLRM-DCNv2: 214 lookups per sample, but the alltoall carries the 26 pooled vectors */
    to.micro_batch = 16;
    ck_assert_msg(trace_build("dlrm-dcnv2", &mo, &to, &a, &err) == 0, "%s", err.msg);
    ck_assert(json_integer_value(json_object_get(a, "params")) == 26151671809LL);
    comm = json_object_get(a, "comm");
    ck_assert_int_eq(json_array_size(comm), 2);
    ck_assert(json_real_value(json_object_get(json_array_get(comm, 1), "bytes_per_rank")) ==
              16.0 * 26 * 128 * 4);
    json_t *emb = json_array_get(json_object_get(a, "layers"), 3);
    ck_assert_str_eq(json_string_value(json_object_get(emb, "class")), "embedding");
    /* pooled output plus the 214 rows read, per sample */
    ck_assert(json_real_value(json_object_get(emb, "forward_bytes")) ==
              16.0 * (26 + 214) * 128 * 4);
    grads = json_object_get(a, "gradients");
    ck_assert_int_eq(json_array_size(grads), 3 * 2 + 3 * 3 + 5 * 2); /* dense views only */
    /* each table's own multi-hot size for the sharding costs: the 100-hot one and 214 in all */
    json_t *tables = json_object_get(json_object_get(a, "embedding"), "tables");
    double ids = 0;
    for (size_t i = 0; i < json_array_size(tables); i++)
        ids += json_real_value(json_object_get(json_array_get(tables, i), "lookups"));
    ck_assert(ids == 214);
    ck_assert(json_real_value(json_object_get(json_array_get(tables, 20), "lookups")) == 100);
    json_decref(a);
    to.precision = "int8";
    ck_assert_int_eq(trace_build("mlp", &mo, &to, &a, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "int8"));
}
END_TEST

static Suite *models_suite(void)
{
    Suite *s = suite_create("models");
    TCase *tc = tcase_create("zoo");
    tcase_set_timeout(tc, 600); /* 20 s of CPU; minutes on a loaded 2-core machine */
    tcase_add_test(tc, param_counts);
    tcase_add_test(tc, layer_classes);
    tcase_add_test(tc, flops_counted);
    tcase_add_test(tc, output_shapes);
    tcase_add_test(tc, model_gradients);
    tcase_add_test(tc, determinism);
    tcase_add_test(tc, idx_reader);
    tcase_add_test(tc, fashion_mnist_loss_falls);
    tcase_add_test(tc, teacher_stream_learnable);
    tcase_add_test(tc, synthetic_inputs);
    tcase_add_test(tc, model_command);
    tcase_add_test(tc, trace_consistent);
    tcase_add_test(tc, dcnv2_layers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(models_suite()) ? 1 : 0;
}
