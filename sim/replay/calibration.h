/* calibration.h: a calibration set (platforms/calibration/, format in
 * platforms/README.md) fitted into the per-op cost parameters of its devices.
 * Each group is one silicon: its points are single-device or single-node
 * per-GPU throughputs (training steps or forward-only passes of a trace at a
 * batch and precision, each with its source); the fit finds the host dispatch time,
 * and per precision the half-work FLOPs and the large-kernel efficiency of
 * the op classes that carry the points' FLOPs, minimising the L8 norm of the
 * log errors of the predicted throughputs (close to the worst error).
 * Deterministic: the same set and device
 * library give the same document byte for byte. */
#ifndef TT_CALIBRATION_H
#define TT_CALIBRATION_H

#include <jansson.h>

#include "common/error.h"
#include "platforms/device.h"

typedef struct calibration calibration;

int calibration_load(const char *path, calibration **out, tt_error *err);

/* Fits every group against the devices of lib (peaks, memory, defaults) and
 * returns the fitted-parameters document (format "ttasim-calibrated": per
 * device the parameters, then every point's residual). */
int calibration_fit(calibration *c, const device_table *lib, json_t **fitted, tt_error *err);

/* As calibration_fit, then each generation (group) left out in turn: the set
 * refitted without it (a group that names it inherits or compares with what
 * the transfer rule gives its device), and its points predicted on its first
 * device from the specification through the transfer rule, the parameters a
 * device with no figures of its own takes (format "ttasim-leave-out": per
 * generation the points, median and worst |error|, the transferred
 * parameters and the residuals). table NULL: the fit alone. */
int calibration_leave_out(calibration *c, const device_table *lib, json_t **fitted, json_t **table, tt_error *err);

void calibration_free(calibration *c);

#endif
