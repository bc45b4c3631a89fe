#include "sim/replay/device_model.h"

#include <string.h>

int device_model_of(const device_info *dev, const char *precision, device_model *d, tt_error *err)
{
    int dt = device_dtype_parse(precision);
    memset(d, 0, sizeof *d);
    d->name = dev->name;
    if (dt < 0)
        return tt_error_set(err, TT_EINPUT, "unknown precision \"%s\"; use fp32, fp16 or bf16", precision);
    int math = dev->peak_flops[dt] >= dev->peak_flops[DTYPE_FP32] ? dt : DTYPE_FP32;
    d->peak_flops = dev->peak_flops[math];
    d->peak_fp32_flops = dev->peak_flops[DTYPE_FP32] > 0 ? dev->peak_flops[DTYPE_FP32] : d->peak_flops;
    if (d->peak_flops <= 0)
        return tt_error_set(err, TT_EINPUT, "the %s has no %s or fp32 peak in its device definition; "
                            "choose another precision", dev->name, precision);
    d->mem_Bps = dev->mem_Bps * dev->mem_efficiency; /* the device loader defaults it to 1 */
    d->mem_bytes = dev->mem_bytes;
    for (int c = 0; c < OP_CLASSES; c++)
        d->efficiency[c] = device_efficiency(dev, (device_dtype)math,
                                             (device_opclass)device_opclass_parse(TRACE_OP_CLASSES[c]));
    return TT_OK;
}
