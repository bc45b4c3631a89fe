/* model_opts.c: model options from "key value" text (command lines). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "trainer/model.h"

const char *const MODEL_FAMILY_NAMES[] = {"", "gpt", "llama", "moe", NULL};

/* The decoders' integer shape options: key, field, range. */
static const struct {
    const char *key;
    size_t offset;
    long lo, hi;
} SHAPE_KEYS[] = {
    {"layers", offsetof(model_opts, layers), 1, 4096},
    {"hidden", offsetof(model_opts, hidden), 2, 1 << 20},
    {"ffn-hidden", offsetof(model_opts, ffn_hidden), 1, 1 << 22},
    {"heads", offsetof(model_opts, heads), 1, 4096},
    {"kv-heads", offsetof(model_opts, kv_heads), 1, 4096},
    {"head-dim", offsetof(model_opts, head_dim), 2, 1024},
    {"tied-embeddings", offsetof(model_opts, tied_embeddings), 0, 1},
    {"experts", offsetof(model_opts, experts), 1, 65536},
    {"top-k", offsetof(model_opts, top_k), 1, 16},
    {"shared-experts", offsetof(model_opts, shared_experts), 0, 64},
    {"expert-ffn-hidden", offsetof(model_opts, expert_ffn_hidden), 1, 1 << 22},
};

static int parse_float(const char *key, const char *v, float lo, float hi, float *out,
                       tt_error *err)
{
    char *end;
    errno = 0;
    float x = strtof(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi))
        return tt_error_set(err, TT_EINPUT, "--%s: expected a number in [%g, %g], got '%s'", key,
                            lo, hi, v);
    *out = x;
    return TT_OK;
}

int model_opts_set(model_opts *o, const char *key, const char *v, tt_error *err)
{
    long x = 0;
    int rc = TT_OK;
    char name[48]; /* as messages name the option */
    snprintf(name, sizeof name, "--%s", key);
    if (strcmp(key, "widths") == 0) {
        long w[MODEL_MAX_WIDTHS];
        int n = units_parse_int_list(v, "-,", 1, 1000000, w, MODEL_MAX_WIDTHS);
        if (n < 0)
            return tt_error_set(err, TT_EINPUT,
                                "--widths: expected 2 to %d positive integers separated by "
                                "'-' (input-hidden...-output, e.g. 784-1024-10), got '%s'",
                                MODEL_MAX_WIDTHS, v);
        if (n < 2)
            return tt_error_set(err, TT_EINPUT, "--widths: need at least an input and an output "
                                                "width, got '%s'", v);
        for (int i = 0; i < n; i++)
            o->widths[i] = (int)w[i];
        o->nwidths = n;
    } else if (strcmp(key, "image") == 0) {
        rc = units_parse_int(name, v, 1, 4096, &x, err);
        o->image = (int)x;
    } else if (strcmp(key, "channels") == 0) {
        rc = units_parse_int(name, v, 1, 4096, &x, err);
        o->channels = (int)x;
    } else if (strcmp(key, "classes") == 0) {
        rc = units_parse_int(name, v, 2, 10000000, &x, err);
        o->classes = (int)x;
    } else if (strcmp(key, "seq-len") == 0) {
        rc = units_parse_int(name, v, 2, 1 << 20, &x, err);
        o->seq_len = (int)x;
    } else if (strcmp(key, "vocab") == 0) {
        rc = units_parse_int(name, v, 2, 10000000, &x, err);
        o->vocab = (int)x;
    } else if (strcmp(key, "table-rows") == 0) {
        int n = units_parse_int_list(v, ",", 1, 2000000000L, o->table_rows, MODEL_MAX_TABLES);
        if (n < 0)
            return tt_error_set(err, TT_EINPUT,
                                "--table-rows: expected 1 to %d positive row counts separated "
                                "by ',' (e.g. 1000,20,30000), got '%s'",
                                MODEL_MAX_TABLES, v);
        if (n == 0)
            return tt_error_set(err, TT_EINPUT, "--table-rows: no row counts in '%s'", v);
        o->ntables = n;
    } else if (strcmp(key, "multi-hot") == 0) {
        long h[MODEL_MAX_TABLES];
        int n = units_parse_int_list(v, ",", 1, 4096, h, MODEL_MAX_TABLES);
        if (n <= 0)
            return tt_error_set(err, TT_EINPUT,
                                "--multi-hot: expected 1 to %d ids-per-sample counts in 1..4096 "
                                "separated by ',' (e.g. 3,2,1), got '%s'",
                                MODEL_MAX_TABLES, v);
        for (int i = 0; i < n; i++)
            o->multi_hot[i] = (int)h[i];
        o->nmulti_hot = n;
    } else if (strcmp(key, "table-rows-cap") == 0) {
        rc = units_parse_int(name, v, 1, 2000000000L, &x, err);
        o->table_rows_cap = x;
    } else if (strcmp(key, "dropout") == 0) {
        rc = parse_float(key, v, 0.0f, 0.95f, &o->dropout, err);
    } else if (strcmp(key, "label-smoothing") == 0) {
        rc = parse_float(key, v, 0.0f, 0.99f, &o->label_smoothing, err);
    } else if (strcmp(key, "seed") == 0) {
        rc = units_parse_int(name, v, 0, 0x7fffffffL, &x, err);
        o->seed = (uint64_t)x;
    } else if (strcmp(key, "family") == 0) {
        for (int f = MODEL_FAMILY_GPT; MODEL_FAMILY_NAMES[f]; f++)
            if (strcmp(v, MODEL_FAMILY_NAMES[f]) == 0)
                o->family = f;
        if (!o->family || strcmp(v, MODEL_FAMILY_NAMES[o->family]) != 0)
            return tt_error_set(err, TT_EINPUT, "--family: expected gpt, llama or moe, got '%s'", v);
    } else if (strcmp(key, "rope-theta") == 0) {
        rc = parse_float(key, v, 1.0f, 1e9f, &o->rope_theta, err);
    } else if (strcmp(key, "moe-aux-loss-coef") == 0) {
        rc = parse_float(key, v, 0.0f, 10.0f, &o->moe_aux_loss_coef, err);
    } else {
        for (size_t i = 0; i < sizeof SHAPE_KEYS / sizeof SHAPE_KEYS[0]; i++)
            if (strcmp(key, SHAPE_KEYS[i].key) == 0) {
                rc = units_parse_int(name, v, SHAPE_KEYS[i].lo, SHAPE_KEYS[i].hi, &x, err);
                if (rc == TT_OK)
                    *(int *)((char *)o + SHAPE_KEYS[i].offset) = (int)x;
                return rc;
            }
        return tt_error_set(err, TT_EINPUT, "unknown model option --%s", key);
    }
    return rc;
}
