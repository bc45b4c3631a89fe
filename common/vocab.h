/* vocab.h: the words the trainer, the workload trace and the device model
 * share: operation classes (a device keeps one roofline efficiency per class)
 * and data types with their element sizes. Names are as in the trace format
 * (HACKING.md) and platforms/devices.json. */
#ifndef TT_VOCAB_H
#define TT_VOCAB_H

#include "common/error.h"

typedef enum {
    OPCLASS_CONV, OPCLASS_GEMM, OPCLASS_ATTENTION, OPCLASS_NORM, OPCLASS_ELEMENTWISE,
    OPCLASS_POOL, OPCLASS_EMBEDDING, OPCLASS_LOSS, OPCLASS_COUNT
} op_class;

/* fp8 is a training recipe more than a storage type: Transformer Engine's
 * default runs the linear layers' GEMMs in fp8 and keeps everything it
 * stores (weights, activations, gradients) and every other op in bf16. */
typedef enum { DTYPE_FP32, DTYPE_FP16, DTYPE_BF16, DTYPE_FP8, DTYPE_COUNT } tt_dtype;

/* Names in enum order, NULL-terminated (for jx_enum and key lists). */
extern const char *const OPCLASS_NAMES[];
extern const char *const DTYPE_NAMES[];

const char *opclass_name(op_class c);
/* Sets *out and returns TT_OK, or TT_EINPUT with "expected conv, gemm, ...,
 * found \"s\"" in err (callers prefix where the word came from). */
int opclass_parse(const char *s, op_class *out, tt_error *err);

const char *dtype_name(tt_dtype t);
/* The type a recipe stores its tensors in: fp8's are bf16 (see tt_dtype). */
tt_dtype dtype_stored(tt_dtype t);
/* Bytes per stored element: fp32 4, fp16 and bf16 2 (fp8 too). */
int dtype_bytes(tt_dtype t);
/* As opclass_parse: "expected fp32, fp16, bf16 or fp8, found \"s\"". */
int dtype_parse(const char *s, tt_dtype *out, tt_error *err);

#endif
