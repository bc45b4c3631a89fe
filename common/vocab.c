#include "common/vocab.h"

#include <string.h>

const char *const OPCLASS_NAMES[] = {"conv", "gemm", "attention", "norm", "elementwise",
                                     "pool", "embedding", "loss", NULL};

const char *const DTYPE_NAMES[] = {"fp32", "fp16", "bf16", "fp8", NULL};

static int name_index(const char *const *names, const char *s)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

const char *opclass_name(op_class c)
{
    return OPCLASS_NAMES[c];
}

int opclass_parse(const char *s, op_class *out, tt_error *err)
{
    int i = name_index(OPCLASS_NAMES, s);
    if (i < 0)
        return tt_error_set(err, TT_EINPUT,
                            "expected conv, gemm, attention, norm, elementwise, pool, embedding "
                            "or loss, found \"%s\"", s);
    *out = (op_class)i;
    return TT_OK;
}

const char *dtype_name(tt_dtype t)
{
    return DTYPE_NAMES[t];
}

tt_dtype dtype_stored(tt_dtype t)
{
    return t == DTYPE_FP8 ? DTYPE_BF16 : t;
}

int dtype_bytes(tt_dtype t)
{
    return dtype_stored(t) == DTYPE_FP32 ? 4 : 2;
}

int dtype_parse(const char *s, tt_dtype *out, tt_error *err)
{
    int i = name_index(DTYPE_NAMES, s);
    if (i < 0)
        return tt_error_set(err, TT_EINPUT, "expected fp32, fp16, bf16 or fp8, found \"%s\"", s);
    *out = (tt_dtype)i;
    return TT_OK;
}
