/* framework.h: the training framework's software term of a step
 * (workload.framework). Eager frameworks (PyTorch, TensorFlow 2 as NVIDIA's
 * DLRM examples run them) apply a linear layer's bias and activation as
 * separate elementwise kernels after the GEMM, each a pass over the layer's
 * output in memory; HugeCTR fuses them into the GEMM epilogue (cuBLASLt),
 * as the per-op model assumes without a framework. The pass counts are
 * counted from the ops, not fitted; platforms/calibration/frameworks.json
 * holds the single-GPU throughputs that check them (tests/test_framework). */
#ifndef TT_FRAMEWORK_H
#define TT_FRAMEWORK_H

#include "common/error.h"

typedef enum { FRAMEWORK_NONE = 0, FRAMEWORK_HUGECTR, FRAMEWORK_PYTORCH, FRAMEWORK_TENSORFLOW2 } framework;

/* The scenario spellings, index = enum value ("none" is today's model). */
extern const char *const FRAMEWORK_NAMES[];

/* Activation-sized memory passes the framework adds per linear layer:
 * forward (bias add read+write, ReLU read+write: 4) or backward (ReLU
 * gradient reads the gradient and the output and writes: 3, bias gradient
 * reduction reads the gradient: 1). 0 when the epilogue is fused. */
int framework_epilogue_passes(framework f, int backward);

#endif
