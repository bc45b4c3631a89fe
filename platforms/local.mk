noinst_LIBRARIES += libplatforms.a
libplatforms_a_SOURCES = \
	platforms/device.c platforms/device.h \
	platforms/host_rows.h \
	platforms/link_usage.c platforms/link_usage.h \
	platforms/network.c \
	platforms/platform.c platforms/platform.h platforms/platform_impl.h \
	platforms/platform_json.c \
	platforms/platform_estimate.c \
	platforms/platform_load.c \
	platforms/platform_paths.c \
	platforms/platform_summary.c \
	platforms/platform_xml.c \
	platforms/user_xml.c

platformsdir = $(pkgdatadir)/platforms
dist_platforms_DATA = platforms/README.md \
	platforms/abci-v100.json \
	platforms/big-basin-p100.json \
	platforms/devices.json \
	platforms/dgx-a100.json \
	platforms/dgx-b200.json \
	platforms/dgx-h100.json \
	platforms/dgx-h200.json \
	platforms/dgx1-p100.json \
	platforms/dgx1-v100.json \
	platforms/dgx2-v100.json \
	platforms/gb200-nvl72.json \
	platforms/gb300-nvl72.json \
	platforms/hgx-a100-4hdr.json \
	platforms/polaris.json \
	platforms/knl-cluster.json \
	platforms/mi300x-8.json \
	platforms/mi325x-8.json \
	platforms/mi355x-8.json \
	platforms/mn1-p100.json \
	platforms/tencent-p40.json \
	platforms/trn2-16.json \
	platforms/trn2-ultra-64.json \
	platforms/tpu-v2-pod.json \
	platforms/tpu-v3-pod.json \
	platforms/tpu-v4-pod.json \
	platforms/tpu-v5e-pod.json \
	platforms/tpu-v5p-pod.json \
	platforms/tpu-v6e-pod.json \
	platforms/tpu-v7-pod.json \
	platforms/zion.json \
	platforms/zionex.json

# The calibration set and what 'ttasim calibrate' fits from it (platforms/README.md).
calibrationdir = $(pkgdatadir)/platforms/calibration
dist_calibration_DATA = platforms/calibration/gpus.json platforms/calibration/calibrated.json
EXTRA_DIST += platforms/calibration/measure-load.sh
