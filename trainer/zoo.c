/* zoo.c: the architectures by name, with their reference shapes and
 * parameter names (torchvision for ResNet and ViT, Hugging Face BertModel
 * for BERT, the MLPerf references for DLRM and DLRM-DCNv2). */
#include <stdio.h>
#include <string.h>

#include "common/jsonx.h"
#include "trainer/graph.h"
#include "trainer/layers.h"

/* The parameters of an architecture family; each builder reads its own. */
typedef struct zoo_shape {
    const int *blocks;                     /* resnet: blocks per stage */
    int bottleneck;                        /* resnet: bottleneck blocks (ResNet-50) */
    int layers, hidden, heads, ffn, patch; /* bert, vit */
    const long *table_rows;                /* dlrm: the reference's rows per table (26) */
    const int *multi_hot;                  /* dlrm: its ids per sample per table (NULL: one) */
    long rows_cap;                         /* dlrm: default cap on rows per table */
    int cross, rank;                       /* dlrm-dcnv2: cross layers and their rank */
    const decoder_shape *dec;              /* gpt, llama, moe */
} zoo_shape;

/* MLPerf DLRM (Criteo Terabyte, --max-ind-range=40000000): rows per table */
static const long MLPERF_TABLE_ROWS[26] = {
    39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346, 10,
    2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36,
};

/* MLPerf Training v3.0+ DLRM-DCNv2 (mlcommons/training recommendation_v2/
 * torchrec_dlrm/README.MD, "Running the MLPerf DLRM v2 benchmark"):
 * --num_embeddings_per_feature and --multi_hot_sizes of the synthetic
 * multi-hot Criteo 1TB. 204,184,588 rows, 214 ids per sample. */
static const long DCNV2_TABLE_ROWS[26] = {
    40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956, 405282, 10,
    2209, 11938, 155, 4, 976, 14, 40000000, 40000000, 40000000, 590152, 12973, 108, 36,
};
static const int DCNV2_MULTI_HOT[26] = {
    3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1,
};

static const char *nm(char *buf, const char *prefix, const char *suffix)
{
    snprintf(buf, 64, "%s%s", prefix, suffix);
    return buf;
}

static int build_mlp(model *m, const model_opts *o, const zoo_shape *s)
{
    (void)s;
    int def[4] = {784, 1024, 1024, 10};
    const int *w = o->nwidths ? o->widths : def;
    int n = o->nwidths ? o->nwidths : 4;
    if (n < 2)
        return g_fail(m, "an mlp needs at least an input and an output width");
    int x = g_input_vector(m, w[0]);
    char name[64];
    for (int i = 1; i < n; i++) {
        snprintf(name, sizeof name, "fc%d", i);
        x = (i < n - 1 ? g_linear_relu : g_linear)(m, name, x, w[i], 1);
    }
    g_softmax_ce(m, "loss", x, o->label_smoothing);
    return 0;
}

static int build_cnn(model *m, const model_opts *o, const zoo_shape *s)
{
    (void)s;
    int C = o->channels ? o->channels : 1, S = o->image ? o->image : 28;
    int x = g_input_image(m, C, S, S);
    x = g_conv(m, "conv1", x, 32, 3, 1, 1, 1);
    x = g_relu(m, "relu1", x);
    x = g_maxpool(m, "pool1", x, 2, 2, 0);
    x = g_conv(m, "conv2", x, 64, 3, 1, 1, 1);
    x = g_relu(m, "relu2", x);
    x = g_maxpool(m, "pool2", x, 2, 2, 0);
    x = g_flatten(m, "flatten", x);
    x = g_linear(m, "fc1", x, 128, 1);
    x = g_relu(m, "relu3", x);
    x = g_dropout(m, "dropout", x, o->dropout);
    x = g_linear(m, "fc2", x, o->classes ? o->classes : 10, 1);
    g_softmax_ce(m, "loss", x, o->label_smoothing);
    return 0;
}

/* torchvision BasicBlock (expansion 1) or Bottleneck (expansion 4, stride on the 3x3) */
static int resnet_block(model *m, const char *p, int x, int width, int stride, int bottleneck)
{
    char b[64];
    int d[3];
    g_dims(m, x, d);
    int in_c = d[0];
    int out_c = bottleneck ? 4 * width : width, y;
    if (bottleneck) {
        y = g_conv(m, nm(b, p, "conv1"), x, width, 1, 1, 0, 0);
        y = g_bn_relu(m, nm(b, p, "bn1"), y);
        y = g_conv(m, nm(b, p, "conv2"), y, width, 3, stride, 1, 0);
        y = g_bn_relu(m, nm(b, p, "bn2"), y);
        y = g_conv(m, nm(b, p, "conv3"), y, out_c, 1, 1, 0, 0);
        y = g_bn(m, nm(b, p, "bn3"), y);
    } else {
        y = g_conv(m, nm(b, p, "conv1"), x, width, 3, stride, 1, 0);
        y = g_bn_relu(m, nm(b, p, "bn1"), y);
        y = g_conv(m, nm(b, p, "conv2"), y, width, 3, 1, 1, 0);
        y = g_bn(m, nm(b, p, "bn2"), y);
    }
    int skip = x;
    if (stride != 1 || in_c != out_c) {
        skip = g_conv(m, nm(b, p, "downsample.0"), x, out_c, 1, stride, 0, 0);
        skip = g_bn(m, nm(b, p, "downsample.1"), skip);
    }
    return g_add_relu(m, nm(b, p, "add"), y, skip);
}

static int build_resnet(model *m, const model_opts *o, const zoo_shape *s)
{
    const int *blocks = s->blocks, bottleneck = s->bottleneck;
    g_init_style(m, INIT_KAIMING_FANOUT);
    int S = o->image ? o->image : 224;
    int x = g_input_image(m, o->channels ? o->channels : 3, S, S);
    x = g_conv(m, "conv1", x, 64, 7, 2, 3, 0);
    x = g_bn_relu(m, "bn1", x);
    x = g_maxpool(m, "maxpool", x, 3, 2, 1);
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < blocks[l]; k++) {
            char p[64];
            snprintf(p, sizeof p, "layer%d.%d.", l + 1, k);
            x = resnet_block(m, p, x, 64 << l, k == 0 && l > 0 ? 2 : 1, bottleneck);
        }
    x = g_gap(m, "avgpool", x);
    g_init_style(m, INIT_TORCH);
    x = g_linear(m, "fc", x, o->classes ? o->classes : 1000, 1);
    g_softmax_ce(m, "loss", x, o->label_smoothing);
    return 0;
}

/* one post-LN BERT encoder layer (Hugging Face names; q, k, v fused in one GEMM) */
static int bert_layer(model *m, const char *p, int x, int H, int A, int I, float drop)
{
    char b[96];
    int qkv = g_linear(m, nm(b, p, "attention.self.qkv"), x, 3 * H, 1);
    int a = g_attention(m, nm(b, p, "attention.self.core"), qkv, A);
    a = g_linear(m, nm(b, p, "attention.output.dense"), a, H, 1);
    a = g_dropout(m, nm(b, p, "attention.output.dropout"), a, drop);
    a = g_add(m, nm(b, p, "attention.output.add"), a, x);
    a = g_layernorm(m, nm(b, p, "attention.output.LayerNorm"), a, 1e-12f);
    int f = g_linear(m, nm(b, p, "intermediate.dense"), a, I, 1);
    f = g_gelu(m, nm(b, p, "intermediate.gelu"), f);
    f = g_linear(m, nm(b, p, "output.dense"), f, H, 1);
    f = g_dropout(m, nm(b, p, "output.dropout"), f, drop);
    f = g_add(m, nm(b, p, "output.add"), f, a);
    return g_layernorm(m, nm(b, p, "output.LayerNorm"), f, 1e-12f);
}

static int build_bert(model *m, const model_opts *o, const zoo_shape *s)
{
    int L = s->layers, H = s->hidden, A = s->heads;
    g_init_style(m, INIT_NORMAL_002);
    int T = o->seq_len ? o->seq_len : 128, V = o->vocab ? o->vocab : 30522;
    if (V < 1100)
        return g_fail(m, "--vocab %d: BERT's synthetic tokens are drawn above id 1000; give at "
                         "least 1100", V);
    int x = g_embed(m, "embeddings", T, V, 512, 2, H);
    x = g_layernorm(m, "embeddings.LayerNorm", x, 1e-12f);
    x = g_dropout(m, "embeddings.dropout", x, o->dropout);
    for (int l = 0; l < L; l++) {
        char p[64];
        snprintf(p, sizeof p, "encoder.layer.%d.", l);
        x = bert_layer(m, p, x, H, A, 4 * H, o->dropout);
    }
    int pooled = g_slice0(m, "pooler.first_token", x);
    pooled = g_linear(m, "pooler.dense", pooled, H, 1);
    g_tanh(m, "pooler.activation", pooled);
    /* masked LM on ceil(15%) of the positions, decoder tied to the word
     * embeddings (no parameters beyond BertModel's) */
    int mlm = g_gather(m, "mlm.gather", x, (T * 15 + 99) / 100);
    mlm = g_linear_tied(m, "mlm.decoder", mlm, "embeddings.word_embeddings.weight");
    g_softmax_ce(m, "mlm.loss", mlm, o->label_smoothing);
    return 0;
}

/* one pre-LN ViT encoder layer (torchvision names) */
static int vit_layer(model *m, const char *p, int x, int H, int A, int I, float drop)
{
    char b[96];
    int y = g_layernorm(m, nm(b, p, "ln_1"), x, 1e-6f);
    y = g_linear(m, nm(b, p, "self_attention.in_proj"), y, 3 * H, 1);
    y = g_attention(m, nm(b, p, "self_attention.core"), y, A);
    y = g_linear(m, nm(b, p, "self_attention.out_proj"), y, H, 1);
    y = g_dropout(m, nm(b, p, "dropout"), y, drop);
    x = g_add(m, nm(b, p, "add_1"), y, x);
    y = g_layernorm(m, nm(b, p, "ln_2"), x, 1e-6f);
    y = g_linear(m, nm(b, p, "mlp.0"), y, I, 1);
    y = g_gelu(m, nm(b, p, "mlp.1"), y);
    y = g_linear(m, nm(b, p, "mlp.3"), y, H, 1);
    y = g_dropout(m, nm(b, p, "mlp.4"), y, drop);
    return g_add(m, nm(b, p, "add_2"), y, x);
}

static int build_vit(model *m, const model_opts *o, const zoo_shape *s)
{
    int patch = s->patch, L = s->layers, H = s->hidden, A = s->heads, I = s->ffn;
    g_init_style(m, INIT_NORMAL_002);
    int S = o->image ? o->image : 224;
    int x = g_input_image(m, o->channels ? o->channels : 3, S, S);
    x = g_conv(m, "conv_proj", x, H, patch, patch, 0, 1);
    x = g_vitembed(m, "encoder", x);
    x = g_dropout(m, "encoder.dropout", x, o->dropout);
    for (int l = 0; l < L; l++) {
        char p[64];
        snprintf(p, sizeof p, "encoder.layers.encoder_layer_%d.", l);
        x = vit_layer(m, p, x, H, A, I, o->dropout);
    }
    x = g_layernorm(m, "encoder.ln", x, 1e-6f);
    x = g_slice0(m, "class_token_out", x);
    x = g_linear(m, "heads.head", x, o->classes ? o->classes : 1000, 1);
    g_softmax_ce(m, "loss", x, o->label_smoothing);
    return 0;
}

static const int DLRM_BOTTOM[3] = {512, 256, 128}, DLRM_TOP[5] = {1024, 1024, 512, 256, 1};

/* A DLRM's 13 dense features through the bottom MLP (layer i named
 * pre<i*step>post) and its embedding bags (named tables): rows the reference's
 * or --table-rows, capped; ids per sample the reference's or --multi-hot.
 * Returns the dense vector and sets *emb to the pooled (F, 128); 0 after g_fail. */
static int dlrm_bottom(model *m, const model_opts *o, const zoo_shape *s, const char *pre,
                       int step, const char *post, const char *tables, int *emb)
{
    long rows[MODEL_MAX_TABLES];
    int bags[MODEL_MAX_TABLES];
    long cap = o->table_rows_cap > 0 ? o->table_rows_cap : s->rows_cap;
    int F = o->ntables > 0 ? o->ntables : 26;
    if (o->nmulti_hot && o->nmulti_hot != F)
        return g_fail(m, "--multi-hot gives %d sizes for %d embedding tables: give one per table",
                      o->nmulti_hot, F);
    if (!o->nmulti_hot && s->multi_hot && F != 26)
        return g_fail(m, "%d embedding tables from --table-rows: give their ids per sample with "
                         "--multi-hot (the reference's sizes are for its 26 tables)", F);
    for (int i = 0; i < F; i++) {
        long r = o->ntables > 0 ? o->table_rows[i] : s->table_rows[i];
        rows[i] = r < cap ? r : cap;
        bags[i] = o->nmulti_hot ? o->multi_hot[i] : s->multi_hot ? s->multi_hot[i] : 1;
    }
    char name[64];
    int x = g_input_vector(m, 13);
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s%d%s", pre, i * step, post);
        x = g_linear_relu(m, name, x, DLRM_BOTTOM[i], 1);
    }
    *emb = g_embbag(m, tables, F, rows, bags, 128, BAG_SUM);
    return *emb ? x : 0; /* 0: the plan failed (g_fail) */
}

/* DLRM v1 (MLPerf reference names): dot interaction between the MLPs */
static int build_dlrm(model *m, const model_opts *o, const zoo_shape *s)
{
    int e, x = dlrm_bottom(m, o, s, "bot_l.", 2, "", "emb_l", &e);
    if (!x)
        return 0;
    char name[64];
    int z = g_interaction(m, "interaction", x, e);
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "top_l.%d", 2 * i);
        z = (i < 4 ? g_linear_relu : g_linear)(m, name, z, DLRM_TOP[i], 1);
    }
    g_bce(m, "loss", z);
    return 0;
}

/* DLRM-DCNv2 (torchrec DLRM_DCN as the MLPerf v3.0+ reference runs it,
 * --interaction_type=dcn --dcn_num_layers=3 --dcn_low_rank_dim=512): the
 * dense vector and the 26 pooled embeddings concatenated (27 x 128 = 3456),
 * three low-rank cross layers on it, the top MLP on the result. Names follow
 * torchrec's modules (dense_arch, sparse_arch, inter_arch.crossnet, over_arch). */
static int build_dlrm_dcnv2(model *m, const model_opts *o, const zoo_shape *s)
{
    int e, x = dlrm_bottom(m, o, s, "dense_arch.model._mlp.", 1, "._linear",
                           "sparse_arch.embedding_bags", &e);
    if (!x)
        return 0;
    char name[64];
    int x0 = g_concat(m, "inter_arch.cat", x, e), z = x0;
    for (int l = 0; l < s->cross; l++) {
        snprintf(name, sizeof name, "inter_arch.crossnet.%d", l);
        z = g_cross(m, name, x0, z, s->rank);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "over_arch.model.0._mlp.%d._linear", i);
        z = g_linear_relu(m, name, z, DLRM_TOP[i], 1);
    }
    z = g_linear(m, "over_arch.model.1", z, DLRM_TOP[4], 1);
    g_bce(m, "loss", z);
    return 0;
}

static int build_decoder(model *m, const model_opts *o, const zoo_shape *s)
{
    return decoder_build(m, o, s->dec);
}

/* Decoders: {family, layers, hidden, ffn_hidden, heads, kv_heads, head_dim,
 * vocab, seq_len, tied, rope_theta, experts, top_k, shared_experts,
 * expert_ffn_hidden, dense_layers}. The tiny family members train in seconds. */
enum { GPT = MODEL_FAMILY_GPT, LLAMA = MODEL_FAMILY_LLAMA, MOE = MODEL_FAMILY_MOE };
static const decoder_shape DEC_GPT = {GPT, 2, 64, 256, 4, 4, 0, 64, 32, 1, 0, 0, 0, 0, 0, 0};
static const decoder_shape DEC_LLAMA = {LLAMA, 2, 64, 176, 4, 2, 0, 64, 32, 0, 1e4f, 0, 0, 0, 0, 0};
static const decoder_shape DEC_MOE = {MOE, 2, 64, 176, 4, 2, 0, 64, 32, 0, 1e4f, 4, 2, 1, 96, 0};
/* GPT-3, Brown et al. 2020, Table 2.1 (n_layers, d_model, n_heads, d_head),
 * d_ff = 4 d_model, n_ctx 2048, the GPT-2 vocabulary. At 1.3B and 13B the
 * table's n_heads x d_head (3072, 5120) differs from d_model (2048, 5140): the
 * attention is n_heads x d_head wide, the rest d_model, as the table says. */
#define GPT3(L, H, A, D) {GPT, L, H, 4 * (H), A, A, D, 50257, 2048, 1, 0, 0, 0, 0, 0, 0}
static const decoder_shape DEC_GPT3[8] = {
    GPT3(12, 768, 12, 64),   GPT3(24, 1024, 16, 64), GPT3(24, 1536, 16, 96),
    GPT3(24, 2048, 24, 128), GPT3(32, 2560, 32, 80), GPT3(32, 4096, 32, 128),
    GPT3(40, 5140, 40, 128), GPT3(96, 12288, 96, 128),
};
/* Llama 2 (Touvron et al. 2023; model cards: 4096 tokens, vocab 32000, theta
 * 10000) and Llama 3/3.1 (Meta model cards: 8192 tokens, vocab 128256, theta
 * 500000; 3.1's long-context RoPE scaling is left out). */
#define LLAMA2(L, H, F, A, KV) {LLAMA, L, H, F, A, KV, 0, 32000, 4096, 0, 1e4f, 0, 0, 0, 0, 0}
#define LLAMA3(L, H, F, A, KV) {LLAMA, L, H, F, A, KV, 0, 128256, 8192, 0, 5e5f, 0, 0, 0, 0, 0}
static const decoder_shape DEC_LLAMA2_7B = LLAMA2(32, 4096, 11008, 32, 32);
static const decoder_shape DEC_LLAMA2_13B = LLAMA2(40, 5120, 13824, 40, 40);
static const decoder_shape DEC_LLAMA2_70B = LLAMA2(80, 8192, 28672, 64, 8);
static const decoder_shape DEC_LLAMA3_8B = LLAMA3(32, 4096, 14336, 32, 8);
static const decoder_shape DEC_LLAMA3_70B = LLAMA3(80, 8192, 28672, 64, 8);
static const decoder_shape DEC_LLAMA31_405B = LLAMA3(126, 16384, 53248, 128, 8);
/* Mixtral 8x7B (Jiang et al. 2024; its config: theta 1e6; sequences of 4096 here) */
static const decoder_shape DEC_MIXTRAL = {MOE, 32, 4096, 14336, 32, 8, 0, 32000, 4096, 0, 1e6f,
                                          8, 2, 0, 14336, 0};
/* DeepSeek-V3's sizes (Liu et al. 2024): 61 layers, the first 3 dense (18432),
 * 256 routed experts of 2048 (top 8) and 1 shared, vocab 129280, 4096 tokens;
 * with 128 ordinary heads of 56 instead of multi-head latent attention */
static const decoder_shape DEC_MOE_FINE = {MOE, 61, 7168, 18432, 128, 128, 0, 129280, 4096, 0,
                                           1e4f, 256, 8, 1, 2048, 3};

/* Qwen3-235B-A22B (Qwen/Qwen3-235B-A22B config): 94 layers of 4096, 64 heads
 * of 128 (so 8192 wide, not hidden / heads), 4 kv heads, 128 experts of 1536
 * (top 8) in every layer, vocab 151936 untied, 40960 positions trained at
 * 4096; its per-head QK RMSNorms (256 weights a layer) left out */
static const decoder_shape DEC_QWEN3_235B = {MOE, 94, 4096, 12288, 64, 4, 128, 151936, 4096, 0, 1e6f,
                                             128, 8, 0, 1536, 0};

static const int RESNET18_BLOCKS[4] = {2, 2, 2, 2}, RESNET34_BLOCKS[4] = {3, 4, 6, 3};

/* The zoo, in the order 'ttasim model list' shows it. */
static const struct zoo_entry {
    const char *name, *description;
    int (*build)(model *m, const model_opts *o, const zoo_shape *s);
    zoo_shape shape;
} ZOO[] = {
    {"mlp", "multi-layer perceptron, widths --widths (default 784-1024-1024-10), ReLU fused in the "
            "linear layers", build_mlp, {0}},
    {"cnn", "small conv net for 28x28 images: 2 x (conv3x3, ReLU, max-pool), 2 linear layers",
     build_cnn, {0}},
    {"resnet18", "ResNet-18 (torchvision), 224x224, 1000 classes", build_resnet,
     {.blocks = RESNET18_BLOCKS}},
    {"resnet34", "ResNet-34 (torchvision), 224x224, 1000 classes", build_resnet,
     {.blocks = RESNET34_BLOCKS}},
    {"resnet50", "ResNet-50 v1.5 (torchvision), 224x224, 1000 classes", build_resnet,
     {.blocks = RESNET34_BLOCKS, .bottleneck = 1}},
    {"bert-tiny", "BERT-Tiny (L=2, H=128, A=2), masked-LM head tied to the word embeddings",
     build_bert, {.layers = 2, .hidden = 128, .heads = 2}},
    {"bert-base", "BERT-Base (L=12, H=768, A=12), 128 tokens, masked-LM head tied to the embeddings",
     build_bert, {.layers = 12, .hidden = 768, .heads = 12}},
    {"bert-large", "BERT-Large (L=24, H=1024, A=16), 128 tokens, masked-LM head tied to the embeddings",
     build_bert, {.layers = 24, .hidden = 1024, .heads = 16}},
    {"vit-b32", "ViT-B/32 (torchvision), 224x224, 1000 classes", build_vit,
     {.patch = 32, .layers = 12, .hidden = 768, .heads = 12, .ffn = 3072}},
    {"dlrm-mlperf", "DLRM, MLPerf Criteo 1TB: bottom 13-512-256-128, top 1024-1024-512-256-1, 26 "
                    "tables (rows capped at 40M)", build_dlrm,
     {.table_rows = MLPERF_TABLE_ROWS, .rows_cap = 40000000L}},
    {"dlrm-small", "DLRM with the MLPerf shapes and tables capped at 10,000 rows (trains in memory)",
     build_dlrm, {.table_rows = MLPERF_TABLE_ROWS, .rows_cap = 10000L}},
    {"dlrm-dcnv2", "DLRM-DCNv2, MLPerf v3.0+ multi-hot Criteo 1TB: bottom 13-512-256-128, 26 "
                   "tables x 128 (214 ids per sample), 3 cross layers of rank 512 on 3456, top "
                   "1024-1024-512-256-1", build_dlrm_dcnv2,
     {.table_rows = DCNV2_TABLE_ROWS, .multi_hot = DCNV2_MULTI_HOT, .rows_cap = 40000000L,
      .cross = 3, .rank = 512}},
    {"dlrm-dcnv2-small", "DLRM-DCNv2 with the MLPerf shapes and tables capped at 10,000 rows "
                         "(trains in memory)", build_dlrm_dcnv2,
     {.table_rows = DCNV2_TABLE_ROWS, .multi_hot = DCNV2_MULTI_HOT, .rows_cap = 10000L,
      .cross = 3, .rank = 512}},
    {"gpt", "GPT-style decoder of the shape --layers, --hidden, --heads, ... give (default: 2 "
            "layers of 64, 4 heads, vocab 64, 32 tokens)", build_decoder, {.dec = &DEC_GPT}},
    {"llama", "Llama-style decoder of the shape --layers, --hidden, --heads, --kv-heads, ... give "
              "(default: 2 layers of 64, 4 heads, 2 kv heads, SwiGLU 176, vocab 64, 32 tokens)",
     build_decoder, {.dec = &DEC_LLAMA}},
    {"moe", "Llama-style decoder with routed experts of the shape --experts, --top-k, ... give "
            "(default: 2 layers of 64, 4 experts of 96, top 2, 1 shared, vocab 64, 32 tokens)",
     build_decoder, {.dec = &DEC_MOE}},
    {"gpt3-125m", "GPT-3 Small (Table 2.1: 12 layers, 768, 12 heads), 2048 tokens, tied embeddings",
     build_decoder, {.dec = &DEC_GPT3[0]}},
    {"gpt3-350m", "GPT-3 Medium (24 layers, 1024, 16 heads), 2048 tokens", build_decoder,
     {.dec = &DEC_GPT3[1]}},
    {"gpt3-760m", "GPT-3 Large (24 layers, 1536, 16 heads of 96), 2048 tokens", build_decoder,
     {.dec = &DEC_GPT3[2]}},
    {"gpt3-1.3b", "GPT-3 XL (24 layers, 2048, 24 heads of 128 as Table 2.1 gives), 2048 tokens",
     build_decoder, {.dec = &DEC_GPT3[3]}},
    {"gpt3-2.7b", "GPT-3 2.7B (32 layers, 2560, 32 heads of 80), 2048 tokens", build_decoder,
     {.dec = &DEC_GPT3[4]}},
    {"gpt3-6.7b", "GPT-3 6.7B (32 layers, 4096, 32 heads), 2048 tokens", build_decoder,
     {.dec = &DEC_GPT3[5]}},
    {"gpt3-13b", "GPT-3 13B (40 layers, d_model 5140, 40 heads of 128 as Table 2.1 gives), "
                 "2048 tokens", build_decoder, {.dec = &DEC_GPT3[6]}},
    {"gpt3-175b", "GPT-3 175B (96 layers, 12288, 96 heads), 2048 tokens, tied embeddings",
     build_decoder, {.dec = &DEC_GPT3[7]}},
    {"llama2-7b", "Llama 2 7B (32 layers, 4096, SwiGLU 11008, 32 heads), 4096 tokens",
     build_decoder, {.dec = &DEC_LLAMA2_7B}},
    {"llama2-13b", "Llama 2 13B (40 layers, 5120, SwiGLU 13824, 40 heads), 4096 tokens",
     build_decoder, {.dec = &DEC_LLAMA2_13B}},
    {"llama2-70b", "Llama 2 70B (80 layers, 8192, SwiGLU 28672, 64 heads, 8 kv), 4096 tokens",
     build_decoder, {.dec = &DEC_LLAMA2_70B}},
    {"llama3-8b", "Llama 3 8B (32 layers, 4096, SwiGLU 14336, 32 heads, 8 kv, vocab 128256), "
                  "8192 tokens", build_decoder, {.dec = &DEC_LLAMA3_8B}},
    {"llama3-70b", "Llama 3 70B (80 layers, 8192, SwiGLU 28672, 64 heads, 8 kv), 8192 tokens",
     build_decoder, {.dec = &DEC_LLAMA3_70B}},
    {"llama3.1-405b", "Llama 3.1 405B (126 layers, 16384, SwiGLU 53248, 128 heads, 8 kv), 8192 "
                      "tokens", build_decoder, {.dec = &DEC_LLAMA31_405B}},
    {"mixtral-8x7b", "Mixtral 8x7B (32 layers, 4096, 8 SwiGLU experts of 14336, top 2, 32 heads, "
                     "8 kv), 4096 tokens", build_decoder, {.dec = &DEC_MIXTRAL}},
    {"qwen3-235b-a22b", "Qwen3-235B-A22B (94 layers, 4096, 64 heads of 128, 4 kv, 128 SwiGLU experts of "
                        "1536, top 8, vocab 151936), 4096 tokens; without its QK norms", build_decoder,
     {.dec = &DEC_QWEN3_235B}},
    {"moe-fine-256x", "fine-grained MoE of DeepSeek-V3's sizes (61 layers, 7168, first 3 dense, 256 "
                      "experts of 2048, top 8, 1 shared), NOT DeepSeek-V3: 128 plain attention heads "
                      "instead of MLA, softmax routing, no multi-token prediction", build_decoder,
     {.dec = &DEC_MOE_FINE}},
};
#define ZOO_SIZE (int)(sizeof ZOO / sizeof ZOO[0])

const char *model_zoo_name(int i)
{
    return i >= 0 && i < ZOO_SIZE ? ZOO[i].name : NULL;
}

const char *model_describe(const char *name)
{
    for (int i = 0; i < ZOO_SIZE; i++)
        if (strcmp(ZOO[i].name, name) == 0)
            return ZOO[i].description;
    return NULL;
}

int zoo_build(model *m, const char *name, const model_opts *o)
{
    const char *names[ZOO_SIZE + 1];
    for (int i = 0; i < ZOO_SIZE; i++) {
        if (strcmp(ZOO[i].name, name) == 0)
            return ZOO[i].build(m, o, &ZOO[i].shape);
        names[i] = ZOO[i].name;
    }
    names[ZOO_SIZE] = NULL;
    const char *near = jx_closest(name, names);
    g_fail(m, "unknown model '%s'%s%s%s; 'ttasim model list' shows the zoo", name,
           near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    return -1;
}
