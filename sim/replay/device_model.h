/* device_model.h: an accelerator as the per-op cost model sees it at one
 * precision: peaks, memory, per-class efficiency of large kernels, how
 * efficiency saturates with the work per kernel, host dispatch per kernel,
 * and whether elementwise and normalisation ops fuse into their producer. */
#ifndef TT_DEVICE_MODEL_H
#define TT_DEVICE_MODEL_H

#include "common/error.h"
#include "platforms/device.h"
#include "sim/replay/workload.h"

typedef struct device_model {
    const char *name;
    double peak_flops;      /* at the scenario's precision (fp8: bf16's, what all but its GEMMs run at) */
    double peak_fp32_flops; /* the optimizer step runs in fp32 */
    double mem_Bps;         /* achieved: peak x mem_efficiency */
    double mem_bytes;
    double efficiency[OPCLASS_COUNT]; /* achieved / peak FLOP/s per op class, large kernels */
    /* Backward kernels run other code (dgrad, wgrad): efficiency x this, unitless. */
    double backward_efficiency[OPCLASS_COUNT];
    /* A kernel of w FLOPs reaches efficiency x w / (w + half_work_flops): a
     * small kernel leaves compute units idle (a partial wave of tiles). */
    double half_work_flops;
    /* Host time to issue one kernel (framework + launch): kernels run no
     * faster than the host issues them. */
    double dispatch_s;
    /* A GEMM of reduction depth K reaches efficiency x K / (K + gemm_half_depth)
     * (0: no depth effect). */
    double gemm_half_depth;
    int fusion; /* norm/elementwise ops fused into their producer (cuDNN, XLA, fused framework kernels) */
    /* Linear layers (class gemm) under fp8: their peak and half-work FLOPs
     * (0, every other precision: peak_flops and half_work_flops; read them
     * through device_model_peak and device_model_half_work). */
    double gemm_peak_flops, gemm_half_work_flops;
} device_model;

/* backward_efficiency of a device whose backward kernels do as its forward
 * ones (for models written out by hand). */
#define DEVICE_MODEL_SAME_BACKWARD {1, 1, 1, 1, 1, 1, 1, 1}
_Static_assert(OPCLASS_COUNT == 8, "DEVICE_MODEL_SAME_BACKWARD has one entry per op class");

/* The device at a precision ("fp32", "fp16", "bf16", "fp8"). A device
 * without fast math at that precision (P40 fp16) computes in fp32 on
 * low-precision data, as mixed-precision training did there: math never gets
 * slower. bf16 on tensor cores that run it at fp16's peak takes fp16's
 * parameters (device_math_dtype). fp8 is Transformer Engine's default
 * recipe: the GEMMs of linear layers at the fp8 peak and fp8 efficiency, the
 * rest (attention, norms, elementwise, the optimizer) as bf16; a device
 * without an fp8 peak is an input error naming it. */
int device_model_of(const device_info *dev, const char *precision, device_model *d, tt_error *err);

/* The peak and half-work FLOPs a kernel of class c runs at. */
double device_model_peak(const device_model *d, op_class c);
double device_model_half_work(const device_model *d, op_class c);

#endif
