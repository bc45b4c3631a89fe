#include "sim/replay/framework.h"

#include <math.h>

const char *const FRAMEWORK_NAMES[] = {"none", "hugectr", "pytorch", "tensorflow2", "pytorch_apex", "mxnet", NULL};

int framework_epilogue_passes(framework f, int backward)
{
    if (f == FRAMEWORK_PYTORCH_APEX)
        return backward ? 3 : 2;
    if (f != FRAMEWORK_PYTORCH && f != FRAMEWORK_TENSORFLOW2)
        return 0;
    return backward ? 3 + 1 : 2 + 2;
}

int framework_epilogue_kernels(framework f, int backward)
{
    return f == FRAMEWORK_PYTORCH_APEX ? 1 : framework_epilogue_passes(f, backward);
}

int framework_overlaps_embedding(framework f)
{
    return f == FRAMEWORK_HUGECTR;
}

int framework_loss_in_forward(framework f)
{
    return f == FRAMEWORK_HUGECTR;
}

int framework_one_wgrad_allreduce(framework f)
{
    return f == FRAMEWORK_HUGECTR || f == FRAMEWORK_MXNET;
}

/* A kernel replayed from a CUDA graph still pays its launch on the device
 * (U: NVIDIA quotes 3-5 us of launch latency), not the host's dispatch;
 * never more than the host's. */
#define GRAPH_KERNEL_LAUNCH_S 4e-6

/* An eager op crosses Python, the bindings, autograd, the op dispatcher,
 * the library's algorithm choice and the driver's launch: 5-25 us of host
 * time in all (U: jiahuanglin.xyz, all_lessons/gpu_kernel_serving/18, its
 * per-layer costs summed), taken at the middle, 15 us (framework.h). */
double framework_kernel_s(framework f, double dispatch_s)
{
    if (f == FRAMEWORK_HUGECTR || f == FRAMEWORK_MXNET)
        return fmin(GRAPH_KERNEL_LAUNCH_S, dispatch_s);
    return framework_is_eager(f) ? fmax(FRAMEWORK_EAGER_OP_S, dispatch_s) : dispatch_s;
}

int framework_is_eager(framework f)
{
    return f == FRAMEWORK_PYTORCH || f == FRAMEWORK_TENSORFLOW2 || f == FRAMEWORK_PYTORCH_APEX;
}
