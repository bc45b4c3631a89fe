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
            "  --seq-len N            BERT tokens per sequence (128)\n"
            "  --vocab N              BERT vocabulary (30522)\n"
            "  --table-rows R1,R2,... DLRM: rows of each embedding table (MLPerf Criteo 1TB)\n"
            "  --table-rows-cap N     DLRM: cap every embedding table at N rows\n"
            "  --multi-hot H1,H2,...  DLRM: ids per sample of each table (the model's reference)\n"
            "  --dropout P            dropout probability where the model has dropout (0)\n"
            "  --label-smoothing E    softmax cross-entropy label smoothing (0)\n"
            "  --seed N               parameter initialisation and dropout seed (1)\n");
}
