#include "sim/replay/device_model.h"

#include <string.h>

int device_model_of(const device_info *dev, const char *precision, device_model *d, tt_error *err)
{
    tt_dtype dt;
    int rc = dtype_parse(precision, &dt, err);
    if (rc)
        return rc;
    memset(d, 0, sizeof *d);
    d->name = dev->name;
    if (dt == DTYPE_FP8 && dev->peak_flops[DTYPE_FP8] <= 0)
        return tt_error_set(err, TT_EINPUT, "the %s has no fp8 peak in its device definition (fp8 GEMMs need "
                            "Hopper-class tensor cores or later); choose bf16", dev->name);
    tt_dtype math = device_class_peak_dtype(dev, dt, OPCLASS_ATTENTION); /* every class but fp8's GEMMs */
    d->peak_flops = dev->peak_flops[math];
    d->peak_fp32_flops = dev->peak_flops[DTYPE_FP32] > 0 ? dev->peak_flops[DTYPE_FP32] : d->peak_flops;
    if (d->peak_flops <= 0)
        return tt_error_set(err, TT_EINPUT, "the %s has no %s or fp32 peak in its device definition; "
                            "choose another precision", dev->name, precision);
    d->mem_Bps = dev->mem_Bps * dev->mem_efficiency; /* the device loader defaults it to 1 */
    d->mem_bytes = dev->mem_bytes;
    d->half_work_flops = device_half_work(dev, math);
    d->dispatch_s = dev->dispatch_s;
    d->gemm_half_depth = dev->gemm_half_depth;
    d->fusion = dev->fusion;
    for (int c = 0; c < OPCLASS_COUNT; c++) {
        tt_dtype k = device_class_dtype(dev, dt, (op_class)c);
        d->efficiency[c] = device_efficiency(dev, k, (op_class)c);
        d->backward_efficiency[c] = dev->backward_efficiency[k][c];
    }
    tt_dtype g = device_class_peak_dtype(dev, dt, OPCLASS_GEMM);
    if (g != math) { /* fp8: the GEMMs at their own rate */
        d->gemm_peak_flops = dev->peak_flops[g];
        d->gemm_half_work_flops = device_half_work(dev, g);
    }
    return TT_OK;
}

double device_model_peak(const device_model *d, op_class c)
{
    return c == OPCLASS_GEMM && d->gemm_peak_flops > 0 ? d->gemm_peak_flops : d->peak_flops;
}

double device_model_half_work(const device_model *d, op_class c)
{
    return c == OPCLASS_GEMM && d->gemm_peak_flops > 0 ? d->gemm_half_work_flops : d->half_work_flops;
}
