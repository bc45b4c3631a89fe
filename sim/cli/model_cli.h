/* model_cli.h: the model options (--widths, --image, ...) shared by the
 * commands that build a model of the zoo. */
#ifndef TT_MODEL_CLI_H
#define TT_MODEL_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "trainer/model.h"

#define MODEL_CLI_BASE 1000 /* getopt values of the model options */
#define MODEL_CLI_COUNT 26

/* Copies the model options into opts[0..MODEL_CLI_COUNT). */
void model_cli_options(struct option *opts);
/* For a getopt value >= MODEL_CLI_BASE: applies it to o. */
int model_cli_apply(int c, const char *arg, model_opts *o, tt_error *err);
/* The options' help lines. */
void model_cli_help(FILE *out);
/* The model options in a command's usage lines. */
#define MODEL_CLI_USAGE                                                                                    \
    "\n           [--widths W0-W1-...-Wn] [--image N] [--channels N] [--classes N] [--seq-len N] [--vocab N]" \
    "\n           [--table-rows R1,R2,...] [--table-rows-cap N] [--multi-hot H1,H2,...] [--dropout P]"      \
    "\n           [--label-smoothing E] [--seed N] [--family F] [--layers N] [--hidden N] [--ffn-hidden N]"  \
    "\n           [--heads N] [--kv-heads N] [--head-dim N] [--tied-embeddings 0|1] [--rope-theta X]"      \
    "\n           [--experts N] [--top-k N] [--shared-experts N] [--expert-ffn-hidden N]"                 \
    "\n           [--moe-aux-loss-coef X]"

#endif
