#include "sim/replay/input_pipeline.h"

#include <math.h>

const char *const INPUT_PIPELINE_NAMES[] = {"none", "synthetic", "cpu-jpeg", NULL};

/* cpu-jpeg, one core, one ImageNet training image (platforms/README.md, "Host input pipeline"):
 * decode: ImageNet's mean image is 469 x 387 px (image-net.org, ILSVRC 2014); libjpeg on one core
 *   decodes a 517 x 606 px JPEG in 4.546 ms (pytorch/vision PR #2786, torchvision decode_jpeg timing),
 *   68.9 Mpx/s, so 2.634 ms;
 * random-resized crop to 224 and horizontal flip: 1,295 and 1,652 images/s on one Xeon Platinum 8168
 *   core (albumentations README benchmark, torchvision with the Pillow-SIMD backend, ImageNet val images):
 *   0.772 + 0.605 ms. */
#define JPEG_MEAN_PX (469.0 * 387.0)
#define JPEG_DECODE_PX_PER_S (517.0 * 606.0 / 4.5461893e-3)
#define CROP_RESIZE_PER_S 1295.0
#define FLIP_PER_S 1652.0

double input_pipeline_core_images_per_s(input_pipeline_kind kind)
{
    if (kind != INPUT_CPU_JPEG)
        return 0;
    return 1 / (JPEG_MEAN_PX / JPEG_DECODE_PX_PER_S + 1 / CROP_RESIZE_PER_S + 1 / FLIP_PER_S);
}

int input_pipeline_workers(int host_cores, int threads)
{
    return threads > 0 && threads < host_cores ? threads : host_cores;
}

int input_pipeline_host_images_per_s(input_pipeline_kind kind, int host_cores, int threads, const char *file,
                                     const char *platform, double *out, tt_error *err)
{
    *out = 0;
    if (kind != INPUT_CPU_JPEG)
        return TT_OK;
    if (host_cores <= 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.workload.input.pipeline: \"cpu-jpeg\" decodes on the host CPUs, "
                            "but platform %s has no CPU component in its node; give the node one (a device of kind "
                            "cpu, with its \"cores\") or use \"synthetic\" or \"none\"", file, platform);
    *out = input_pipeline_workers(host_cores, threads) * input_pipeline_core_images_per_s(kind);
    return TT_OK;
}

void input_pipeline_step(double accelerator_s, double images_per_node, double host_images_per_s, double *input_s,
                         double *wait_s)
{
    *input_s = host_images_per_s > 0 ? images_per_node / host_images_per_s : 0;
    *wait_s = fmax(accelerator_s, *input_s) - accelerator_s;
}
