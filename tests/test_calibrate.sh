#!/bin/sh
# 'ttasim calibrate' reproduces the committed fitted parameters
# (platforms/calibration/calibrated.json) from the committed calibration set byte for
# byte, and the residual table names every point.
set -e
ttasim=${top_builddir:-.}/ttasim
src=${top_srcdir:-.}
tmp=$(mktemp)
res=$(mktemp)
trap 'rm -f "$tmp" "$res"' EXIT
"$ttasim" calibrate "$src/platforms/calibration/gpus.json" --check "$src/platforms/calibration/calibrated.json" > "$res"
grep -q "^v100-sxm2 .* train .*traces/resnet50.json .* fp16 .* 192 .* 1376.0" "$res"
# the H100's one figure is a ratio to the A100 in the same harness: met, both sides printed
grep -q "^h100-sxm5-80gb .* train .*traces/resnet50.json .* fp16 .* 1280 .* 2616.0 .* 3993.0 .* -0.0%" "$res"
grep -q "^  versus a100-sxm4-80gb .* 1582.0 .* 2415.0  (ratio)" "$res"
# single-node LLM figures: bf16 on the H100's fp16 parameters, NeMo's fp8 row
grep -q "^h100-sxm5-80gb .* train .*traces/mpt-7b.json .* bf16 .* 6 .* 5.197 " "$res"
grep -q "^h100-sxm5-80gb .* train .*traces/llama2-7b.json .* fp8 .* 16 .* 4.113 " "$res"
grep -q "points, worst |error|" "$res"
# a stale file is a failed expectation (exit 1), not a crash
sed 's/"dispatch_s": [0-9.e-]*/"dispatch_s": 1/' "$src/platforms/calibration/calibrated.json" > "$tmp"
set +e
"$ttasim" calibrate "$src/platforms/calibration/gpus.json" --check "$tmp" > /dev/null 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { echo "a stale fitted-parameters file should exit 1, got $rc" >&2; exit 1; }
echo "platforms/calibration/calibrated.json reproduced; a stale copy is refused"
