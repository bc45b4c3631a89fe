/* bench_trainer.h: how fast this machine runs the trainer, measured. */
#ifndef TT_BENCH_TRAINER_H
#define TT_BENCH_TRAINER_H

#include "common/error.h"

typedef struct bench_trainer_result {
    char corename[32];       /* OpenBLAS kernel set in use */
    int threads;
    int repeats;
    double sgemm_gflops;     /* best square sgemm, n = sgemm_n */
    int sgemm_n;
    double step_gflops;      /* MLP 784-1024-1024-10 fwd + bwd + SGD at step_batch */
    double step_s, step_flops;
    int step_batch;
    double resnet50_images_per_s, resnet50_gflops, resnet50_step_s;
    int resnet50_batch;      /* 0 when skipped */
} bench_trainer_result;

/* Runs the measurements (best of `repeats` for each, interleaved so that load
 * from other processes hits both alike); resnet50_batch 0 skips ResNet-50. */
int bench_trainer_run(int repeats, int resnet50_batch, bench_trainer_result *r, tt_error *err);

#endif
