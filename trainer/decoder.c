/* decoder.c: decoder-only transformers by shape. gpt: pre-LN blocks with
 * LayerNorm, a GeLU MLP, learned positions and the output tied to the token
 * embeddings (GPT-2/GPT-3, Hugging Face GPT2 names; dense attention where
 * GPT-3 alternates dense and banded layers). llama: RMSNorm, rotary
 * embeddings, grouped-query attention, SwiGLU, untied output (Hugging Face
 * Llama names; q, k and v fused in one GEMM as Megatron's linear_qkv, whose
 * parameters are the same). moe: llama whose FFNs are routed experts (Mixtral
 * names), with optional shared experts (DeepSeek names) and first layers that
 * keep a dense FFN. */
#include <stdio.h>

#include "trainer/graph.h"
#include "trainer/layers.h"

#define MOE_AUX_LOSS_COEF 0.01f /* Switch Transformer's alpha */

/* The shape: the model's, each option set overriding it; 0 after g_fail. */
static int resolve(model *m, const model_opts *o, const decoder_shape *base, decoder_shape *s)
{
    *s = *base;
    if (o->family && o->family != s->family)
        return g_fail(m, "--family %s: this model is of the %s family", MODEL_FAMILY_NAMES[o->family],
                      MODEL_FAMILY_NAMES[s->family]);
    int *dst[] = {&s->layers, &s->hidden, &s->ffn_hidden, &s->heads, &s->kv_heads, &s->head_dim,
                  &s->vocab, &s->seq_len, &s->experts, &s->top_k, &s->expert_ffn_hidden};
    const int src[] = {o->layers, o->hidden, o->ffn_hidden, o->heads, o->kv_heads, o->head_dim,
                       o->vocab, o->seq_len, o->experts, o->top_k, o->expert_ffn_hidden};
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
        if (src[i] > 0)
            *dst[i] = src[i];
    if (o->tied_embeddings >= 0)
        s->tied = o->tied_embeddings;
    if (o->shared_experts >= 0)
        s->shared_experts = o->shared_experts;
    if (o->rope_theta > 0)
        s->rope_theta = o->rope_theta;
    if (o->hidden > 0 && o->ffn_hidden <= 0 && s->family == MODEL_FAMILY_GPT)
        s->ffn_hidden = 4 * o->hidden;
    if (s->family == MODEL_FAMILY_GPT && (o->kv_heads > 0 || o->rope_theta > 0))
        return g_fail(m, "--kv-heads and --rope-theta are llama and moe options (gpt has "
                         "multi-head attention and learned positions)");
    if (s->family != MODEL_FAMILY_MOE && (o->experts > 0 || o->top_k > 0 || o->expert_ffn_hidden > 0 ||
                                          o->shared_experts >= 0))
        return g_fail(m, "--experts, --top-k, --shared-experts and --expert-ffn-hidden are moe "
                         "options");
    if (s->family == MODEL_FAMILY_GPT)
        s->kv_heads = s->heads;
    if (s->kv_heads > s->heads || s->heads % s->kv_heads)
        return g_fail(m, "%d kv heads must divide the %d heads", s->kv_heads, s->heads);
    if (!s->head_dim && s->hidden % s->heads)
        return g_fail(m, "hidden %d is not a multiple of %d heads: give --head-dim", s->hidden,
                      s->heads);
    if (s->dense_layers > s->layers)
        s->dense_layers = s->layers;
    return 1;
}

static const char *nm(char *buf, const char *prefix, const char *suffix)
{
    snprintf(buf, 96, "%s%s", prefix, suffix);
    return buf;
}

/* SwiGLU FFN of width F on h: gate and up (column-parallel), down (row-parallel) */
static int swiglu_ffn(model *m, const char *p, int h, int F, int C, const char *const kinds[3])
{
    char b[96];
    int g = g_linear(m, nm(b, p, "gate_proj"), h, F, 0);
    g_tag(m, kinds[0], "column");
    int u = g_linear(m, nm(b, p, "up_proj"), h, F, 0);
    g_tag(m, kinds[1], "column");
    int a = g_swiglu(m, nm(b, p, "act"), g, u);
    a = g_linear(m, nm(b, p, "down_proj"), a, C, 0);
    g_tag(m, kinds[2], "row");
    return a;
}

static const char *const DENSE_KINDS[3] = {"mlp_gate", "mlp_up", "mlp_down"};
static const char *const SHARED_KINDS[3] = {"shared_gate", "shared_up", "shared_down"};

static int llama_block(model *m, const char *p, int x, const decoder_shape *s, int layer, float coef)
{
    char b[96];
    int C = s->hidden, hs = s->head_dim ? s->head_dim : C / s->heads;
    int h = g_rmsnorm(m, nm(b, p, "input_layernorm"), x, 1e-5f);
    int qkv = g_linear(m, nm(b, p, "self_attn.qkv_proj"), h, (s->heads + 2 * s->kv_heads) * hs, 0);
    g_tag(m, "qkv", "column");
    qkv = g_rope(m, nm(b, p, "self_attn.rotary"), qkv, s->heads + s->kv_heads, hs, s->rope_theta);
    int a = g_causal_attention(m, nm(b, p, "self_attn.core"), qkv, s->heads, s->kv_heads, hs);
    a = g_linear(m, nm(b, p, "self_attn.o_proj"), a, C, 0);
    g_tag(m, "attn_out", "row");
    x = g_add(m, nm(b, p, "self_attn.residual"), x, a);
    h = g_rmsnorm(m, nm(b, p, "post_attention_layernorm"), x, 1e-5f);
    int f;
    if (s->family == MODEL_FAMILY_MOE && layer >= s->dense_layers) {
        f = g_moe(m, nm(b, p, "block_sparse_moe"), h, s->experts, s->top_k, s->expert_ffn_hidden,
                  coef);
        if (s->shared_experts > 0) {
            int sh = swiglu_ffn(m, nm(b, p, "mlp.shared_experts."), h,
                                s->shared_experts * s->expert_ffn_hidden, C, SHARED_KINDS);
            f = g_add(m, nm(b, p, "mlp.shared_add"), f, sh);
        }
    } else {
        f = swiglu_ffn(m, nm(b, p, "mlp."), h, s->ffn_hidden, C, DENSE_KINDS);
    }
    return g_add(m, nm(b, p, "mlp.residual"), x, f);
}

static int gpt_block(model *m, const char *p, int x, const decoder_shape *s)
{
    char b[96];
    int C = s->hidden, hs = s->head_dim ? s->head_dim : C / s->heads;
    int h = g_layernorm(m, nm(b, p, "ln_1"), x, 1e-5f);
    int qkv = g_linear(m, nm(b, p, "attn.c_attn"), h, 3 * s->heads * hs, 1);
    g_tag(m, "qkv", "column");
    int a = g_causal_attention(m, nm(b, p, "attn.core"), qkv, s->heads, s->heads, hs);
    a = g_linear(m, nm(b, p, "attn.c_proj"), a, C, 1);
    g_tag(m, "attn_out", "row");
    x = g_add(m, nm(b, p, "attn.residual"), x, a);
    h = g_layernorm(m, nm(b, p, "ln_2"), x, 1e-5f);
    int f = g_linear(m, nm(b, p, "mlp.c_fc"), h, s->ffn_hidden, 1);
    g_tag(m, "mlp_up", "column");
    f = g_gelu(m, nm(b, p, "mlp.gelu"), f);
    f = g_linear(m, nm(b, p, "mlp.c_proj"), f, C, 1);
    g_tag(m, "mlp_down", "row");
    return g_add(m, nm(b, p, "mlp.residual"), x, f);
}

int decoder_build(model *m, const model_opts *o, const decoder_shape *base)
{
    decoder_shape s;
    if (!resolve(m, o, base, &s))
        return 0;
    g_init_style(m, INIT_NORMAL_002);
    int gpt = s.family == MODEL_FAMILY_GPT, T = s.seq_len, C = s.hidden;
    float coef = o->moe_aux_loss_coef >= 0 ? o->moe_aux_loss_coef : MOE_AUX_LOSS_COEF;
    const char *table = gpt ? "transformer.wte.weight" : "model.embed_tokens.weight";
    int x = gpt ? g_embed_tokens(m, "transformer", T, s.vocab, C, "wte.weight", "wpe.weight")
                : g_embed_tokens(m, "model.embed_tokens", T, s.vocab, C, "weight", NULL);
    for (int l = 0; l < s.layers; l++) {
        char p[64];
        snprintf(p, sizeof p, gpt ? "transformer.h.%d." : "model.layers.%d.", l);
        x = gpt ? gpt_block(m, p, x, &s) : llama_block(m, p, x, &s, l, coef);
    }
    x = gpt ? g_layernorm(m, "transformer.ln_f", x, 1e-5f) : g_rmsnorm(m, "model.norm", x, 1e-5f);
    x = s.tied ? g_linear_tied(m, "lm_head", x, table) : g_linear(m, "lm_head", x, s.vocab, 0);
    g_tag(m, "lm_head", "column");
    g_softmax_ce(m, "loss", x, o->label_smoothing);
    return 0;
}
