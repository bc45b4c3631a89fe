/* input_pipeline.h: the host input pipeline of a step (workload.input). Each
 * node's host CPUs decode and augment the images its accelerators consume;
 * the pipeline runs ahead of them (a prefetch queue of at least one batch, as
 * Caffe2's ImageInputOp, Chainer's MultiprocessIterator and tf.data keep), so
 * in steady state a step takes the longer of the accelerators' step and the
 * host's time for one step's images, never their sum. */
#ifndef TT_INPUT_PIPELINE_H
#define TT_INPUT_PIPELINE_H

#include "common/error.h"

typedef enum {
    INPUT_NONE = 0,  /* not modelled (today's step: the default) */
    INPUT_SYNTHETIC, /* synthetic data in device memory: no host work (tf_cnn_benchmarks without --data_dir) */
    INPUT_CPU_JPEG   /* ImageNet JPEGs decoded, random-resized-cropped and flipped on the host CPU cores */
} input_pipeline_kind;

/* The scenario spellings, index = enum value. */
extern const char *const INPUT_PIPELINE_NAMES[];

/* Images one host core decodes and augments per second for a kind (0 for
 * none and synthetic); the derivation is in input_pipeline.c and
 * platforms/README.md. */
double input_pipeline_core_images_per_s(input_pipeline_kind kind);

/* The decode workers a node runs: threads, at most host_cores (threads <= 0:
 * one per core, as the frameworks default). */
int input_pipeline_workers(int host_cores, int threads);

/* A node's images per second: input_pipeline_workers() cores at the kind's
 * per-core rate (threads <= 0: the framework runs one worker per core).
 * Fails with TT_EINPUT, naming the scenario file and the platform, when a
 * host pipeline has no host cores to run on. */
int input_pipeline_host_images_per_s(input_pipeline_kind kind, int host_cores, int threads, const char *file,
                                     const char *platform, double *out, tt_error *err);

/* The step with the pipeline ahead of the accelerators: *input_s is the
 * host's time for images_per_node, *wait_s what the accelerators wait for it
 * (max(accelerator_s, input_s) - accelerator_s). No host rate: both 0. */
void input_pipeline_step(double accelerator_s, double images_per_node, double host_images_per_s, double *input_s,
                         double *wait_s);

#endif
