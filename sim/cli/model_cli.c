/* model_cli.c: getopt entries for model_opts_set(). */
#include "sim/cli/model_cli.h"

static const char *const KEYS[MODEL_CLI_COUNT] = {MODEL_OPTION_KEYS};

void model_cli_options(struct option *opts)
{
    for (int i = 0; i < MODEL_CLI_COUNT; i++) {
        opts[i].name = KEYS[i];
        opts[i].has_arg = required_argument;
        opts[i].flag = NULL;
        opts[i].val = MODEL_CLI_BASE + i;
    }
}

int model_cli_apply(int c, const char *arg, model_opts *o, tt_error *err)
{
    return model_opts_set(o, KEYS[c - MODEL_CLI_BASE], arg, err);
}

void model_cli_help(FILE *out)
{
    fprintf(out,
            "Model options (defaults are the reference architecture):\n"
            "  --widths W0-W1-...-Wn  mlp layer widths (784-1024-1024-10)\n"
            "  --image N              input height = width of image models\n"
            "  --channels N           input channels of image models\n"
            "  --classes N            output classes\n"
            "  --seq-len N            tokens per sequence (BERT 128; decoders: the model's)\n"
            "  --vocab N              vocabulary (BERT 30522; decoders: the model's)\n"
            "  --table-rows R1,R2,... DLRM: rows of each embedding table (MLPerf Criteo 1TB)\n"
            "  --table-rows-cap N     DLRM: cap every embedding table at N rows\n"
            "  --multi-hot H1,H2,...  DLRM: ids per sample of each table (the model's reference)\n"
            "  --dropout P            dropout probability where the model has dropout (0)\n"
            "  --label-smoothing E    softmax cross-entropy label smoothing (0)\n"
            "  --seed N               parameter initialisation and dropout seed (1)\n"
            "Decoder shape (gpt, llama, moe and their zoo members; default: the model's):\n"
            "  --family F             gpt, llama or moe (must match the model)\n"
            "  --layers N             transformer blocks\n"
            "  --hidden N             model width\n"
            "  --ffn-hidden N         dense MLP width (gpt: 4 x hidden)\n"
            "  --heads N              attention heads\n"
            "  --kv-heads N           key/value heads (grouped-query; dividing --heads)\n"
            "  --head-dim N           attention head size (hidden / heads)\n"
            "  --tied-embeddings 0|1  output layer shares the token embeddings\n"
            "  --rope-theta X         rotary embedding base (llama2 10000, llama3 500000)\n"
            "  --experts N            moe: routed experts per layer\n"
            "  --top-k N              moe: experts per token\n"
            "  --shared-experts N     moe: experts every token goes through\n"
            "  --expert-ffn-hidden N  moe: each expert's SwiGLU width\n"
            "  --moe-aux-loss-coef X  moe: load-balancing loss coefficient (0.01)\n");
}
