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
    tt_dtype math = dev->peak_flops[dt] >= dev->peak_flops[DTYPE_FP32] ? dt : DTYPE_FP32;
    d->peak_flops = dev->peak_flops[math];
    d->peak_fp32_flops = dev->peak_flops[DTYPE_FP32] > 0 ? dev->peak_flops[DTYPE_FP32] : d->peak_flops;
    if (d->peak_flops <= 0)
        return tt_error_set(err, TT_EINPUT, "the %s has no %s or fp32 peak in its device definition; "
                            "choose another precision", dev->name, precision);
    d->mem_Bps = dev->mem_Bps * dev->mem_efficiency; /* the device loader defaults it to 1 */
    d->mem_bytes = dev->mem_bytes;
    d->half_work_flops = dev->half_work_flops[math];
    d->dispatch_s = dev->dispatch_s;
    d->fusion = dev->fusion;
    for (int c = 0; c < OPCLASS_COUNT; c++) {
        d->efficiency[c] = device_efficiency(dev, math, (op_class)c);
        d->backward_efficiency[c] = dev->backward_efficiency[math][c];
    }
    return TT_OK;
}
