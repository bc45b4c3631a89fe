/* framework.h: the training framework's software term of a step
 * (workload.framework). Eager frameworks (PyTorch, TensorFlow 2 as NVIDIA's
 * DLRM examples run them) apply a linear layer's bias and activation as
 * separate elementwise kernels after the GEMM, each a pass over the layer's
 * output in memory; apex's fused MLP (NVIDIA's MLPerf v0.7 PyTorch DLRM)
 * does bias and ReLU in one kernel each way; HugeCTR fuses them into the GEMM
 * epilogue (cuBLASLt), as the per-op model assumes without a framework, and
 * runs the embedding on a stream of its own beside the bottom MLP
 * (step_data.c). The pass and kernel counts are counted from the ops, not
 * fitted; the single-GPU DLRM rows of scenarios/published
 * (dlrm-ngc-*-1xa100-small.json) check them, and tests/test_dlrm.c the passes.
 * "mxnet" is NVIDIA's MLPerf MXNet ResNet-50 stack of v1.0 on (mlcommons
 * training_results_v1.0 and v3.0, NVIDIA/benchmarks/resnet/implementations/
 * mxnet): NHWC BatchNorm(act_type relu) and BatchNormAddRelu kernels
 * (symbols/resnet-v1b-fl.py), the device's default fusion; the step captured
 * in CUDA graphs (config_DGXA100_common.sh: MXNET_ENABLE_CUDA_GRAPHS=1); the
 * gradients in one Horovod allreduce after the backward. */
#ifndef TT_FRAMEWORK_H
#define TT_FRAMEWORK_H

#include "common/error.h"

typedef enum {
    FRAMEWORK_NONE = 0,
    FRAMEWORK_HUGECTR,
    FRAMEWORK_PYTORCH,
    FRAMEWORK_TENSORFLOW2,
    FRAMEWORK_PYTORCH_APEX,
    FRAMEWORK_MXNET
} framework;

/* The scenario spellings, index = enum value ("none" is today's model). */
extern const char *const FRAMEWORK_NAMES[];

/* Activation-sized memory passes the framework adds per linear layer.
 * Eager: forward bias add read+write, ReLU read+write (4); backward ReLU
 * gradient reads the gradient and the output and writes (3), bias gradient
 * reduction reads the gradient (1). apex.mlp.MLP (mlp_cuda.cu):
 * biasAddRelu_fprop reads and writes the output in place (2);
 * biasAddRelu_bprop reads the gradient and the output, writes the GEMM's
 * input gradient and reduces the bias gradient in the same kernel (3).
 * 0 when the epilogue is fused into the GEMM. */
int framework_epilogue_passes(framework f, int backward);

/* Kernels those passes take, each at least the device's dispatch time:
 * apex's one kernel per direction; eager charges a launch per pass. */
int framework_epilogue_kernels(framework f, int backward);

/* HugeCTR's overlapped pipeline (solver.enable_overlap): the embedding's
 * collectives run on their own stream while the bottom MLP computes, forward
 * and backward (step_data.c). */
int framework_overlaps_embedding(framework f);

/* HugeCTR's loss kernel writes the loss's gradient into its input as it
 * computes the loss (BinaryCrossEntropy_Kernel, is_train): no backward
 * kernel of its own (step.c). */
int framework_loss_in_forward(framework f);

/* HugeCTR allreduces the network's weight gradients in one buffer after the
 * backward (Model::exchange_wgrad), not in buckets during it; so does MLPerf's
 * MXNet, Horovod in one group (config_*.sh: MXNET_HOROVOD_NUM_GROUPS=1, "Default
 * is no NCCL and BWD overlap"). */
int framework_one_wgrad_allreduce(framework f);

/* The least a small kernel of the framework's costs: HugeCTR replays the
 * step as one CUDA graph (solver.holistic_cuda_graph), MLPerf's MXNet its
 * forward and backward, so the device's launch; PyTorch and TensorFlow 2 issue each op eagerly from Python through
 * their dispatchers, at least FRAMEWORK_EAGER_OP_S of host time; the others
 * the device's own dispatch_s. */
#define FRAMEWORK_EAGER_OP_S 15e-6
double framework_kernel_s(framework f, double dispatch_s);

/* PyTorch and TensorFlow 2 (apex's fused kernels included): each op issued from Python. */
int framework_is_eager(framework f);

#endif
