#!/bin/sh
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined)
# in OUT and runs each for FUZZ_SECONDS. Called by `make fuzz` (tests/fuzz/fuzz.mk),
# which passes the sources and the dependencies' flags; see tests/fuzz/README.md.
# usage: run.sh SRCDIR BUILDDIR OUT
set -eu
src=$1 build=$2 out=$3
: "${FUZZ_SECONDS:=60}" "${FUZZ_CC:=clang}" "${FUZZ_JOBS:=2}"
: "${FUZZ_TARGETS:=scenario platform device trace profile idx units options userxml shard outpath chakra}"
command -v "$FUZZ_CC" >/dev/null || { echo "make fuzz: $FUZZ_CC not found; apt-get install clang libclang-rt-14-dev" >&2; exit 2; }
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-std=c11 -D_GNU_SOURCE -g -O1 $san -I$src -I$build \
  -DTTASIM_SRCDIR=\"\\\"$src\\\"\" -DTTASIM_BUILDDIR=\"\\\"$build\\\"\" ${FUZZ_DEP_CFLAGS:-}"
mkdir -p "$out/obj" "$out/logs" "$out/artifacts"

# Objects: rebuilt when their source, or any header, is newer.
newest_h=$(find "$src" -name '*.h' -newer "$out/libtt.a" 2>/dev/null | head -n 1 || true)
[ -f "$out/libtt.a" ] || newest_h=all
objs=
for c in $FUZZ_C_FILES tests/fuzz/fuzz_input.c; do
  o="$out/obj/$(echo "$c" | tr / _).o"
  objs="$objs $o"
  s="$src/$c"; [ -f "$s" ] || s="$build/$c" # generated sources (protoc-c's) are the build's
  if [ -n "$newest_h" ] || [ ! -f "$o" ] || [ "$s" -nt "$o" ]; then
    printf '%s\n' "$FUZZ_CC $cflags -fsanitize=fuzzer-no-link -c $s -o $o"
  fi
done > "$out/compile.list"
if [ -s "$out/compile.list" ]; then
  echo "== make fuzz: compiling $(wc -l < "$out/compile.list") files with $FUZZ_CC"
  tr '\n' '\0' < "$out/compile.list" | xargs -0 -P "$FUZZ_JOBS" -I{} sh -c '{}'
  rm -f "$out/libtt.a"
  ar cr "$out/libtt.a" $objs
fi
for t in $FUZZ_TARGETS; do
  if [ ! -x "$out/fuzz_$t" ] || [ "$src/tests/fuzz/fuzz_$t.c" -nt "$out/fuzz_$t" ] || [ "$out/libtt.a" -nt "$out/fuzz_$t" ]; then
    eval "$FUZZ_CC $cflags -fsanitize=fuzzer $src/tests/fuzz/fuzz_$t.c $out/libtt.a ${FUZZ_DEP_LIBS:-} -lm -o $out/fuzz_$t"
  fi
done

# Seeds: the shipped files each parser reads, plus the committed corpus.
seed() { mkdir -p "$out/seeds/$1"; shift_t=$1; shift; for f in "$@"; do [ -f "$f" ] && cp "$f" "$out/seeds/$shift_t/"; done; return 0; }
seed scenario "$src"/scenarios/*.json "$src"/scenarios/examples/*.json "$src"/scenarios/published/*.json
seed platform $(ls "$src"/platforms/*.json | grep -v devices.json)
seed device "$src/platforms/devices.json"
seed trace "$src"/scenarios/traces/*.json "$src"/tests/data/*.json
seed profile "$src"/scenarios/profiles/*.json
seed idx /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
seed units
# a user's SimGrid XML: the writer's own, exported by the built ttasim
mkdir -p "$out/seeds/userxml" "$out/seeds/shard" "$out/seeds/outpath"
for p in dgx1-v100 knl-cluster torus2d; do
  [ -x "$build/ttasim" ] && { "$build/ttasim" platform export $p --nodes 2 --xml "$out/seeds/userxml/$p.xml" ||
    { echo "make fuzz: $build/ttasim cannot export $p (stale? run make first)" >&2; exit 2; }; }
done
# shards of a 4-point sweep (fuzz_shard loads the same scenario)
printf '{"version": 1, "name": "f", "platform": {"name": "star", "nodes": 4}, "workload": {"trace": "%s/tests/data/tiny-trace.json", "global_batch": 64}, "convergence": {"steps": 10}, "sweep": {"nodes": [2, 4], "global_batch": [64, 128]}}' \
  "$src" >"$out/seeds/sweep.json"
for i in 0 1; do
  [ -x "$build/ttasim" ] && "$build/ttasim" run "$out/seeds/sweep.json" --quiet --shard $i/2 >"$out/seeds/shard/s$i.json" 2>/dev/null
done
# a plan's shard (fuzz_shard reads it as plan's too, with these options): layouts' records, a failed one's error
printf '{"version": 1, "name": "p", "platform": {"name": "dgx-a100", "nodes": 2, "accelerator": "a100-sxm4-40gb"}, "workload": {"model": {"family": "gpt", "layers": 24, "hidden": 2048, "heads": 16, "vocab": 51200}, "seq_len": 2048, "global_batch": 256, "micro_batch": 1, "precision": "bf16"}, "optimizer": "adamw", "devices": {"a100-sxm4-40gb": {"mem_bytes": "6G"}}, "parallel": {"tensor": 2, "pipeline": 2, "zero": 1}, "convergence": {"steps": 1}}' \
  >"$out/seeds/plan.json"
[ -x "$build/ttasim" ] && "$build/ttasim" plan "$out/seeds/plan.json" --quiet --top 1 --zero 3 --recompute selective \
  --shard 0/1 >"$out/seeds/shard/plan.json" 2>/dev/null
printf '\000out.csv' >"$out/seeds/outpath/one"
printf '\001a.csv\nb.svg' >"$out/seeds/outpath/batch"
printf '\002link' >"$out/seeds/outpath/dropped"
printf '\000null\nin.json' >"$out/seeds/outpath/special"
seed options
# Chakra traces: a scenario's step exported by the built ttasim, and the hand-written ones of tests/test_chakra.sh
mkdir -p "$out/seeds/chakra"
[ -x "$build/ttasim" ] && "$build/ttasim" trace --chakra "$out/seeds/chakra-dir" \
  "$src/scenarios/examples/resnet50-throughput-v100-sxm2.json" >/dev/null 2>&1 &&
  cp "$out/seeds/chakra-dir/ttasim.0.et" "$out/seeds/chakra/resnet50.et"

# the targets find the data as ttasim does: from the build tree, which FUZZ_OUT may be outside of
: "${TTASIM_DATA_DIR:=$src}"
export TTASIM_DATA_DIR
status=0
for t in $FUZZ_TARGETS; do
  mkdir -p "$out/corpus/$t"
  log="$out/logs/$t.log"
  echo "== fuzz_$t for ${FUZZ_SECONDS}s (log: $log)"
  # 120 s of wall time per input is a hang (a 16-GPU node's bisection search, 0.5 s plain,
  # takes 7 s of CPU instrumented: 25 s on a loaded machine); 2 GiB is a leak or an
  # allocation the input should not get
  committed=$src/tests/fuzz/corpus/$t
  [ -d "$committed" ] || committed=
  if ! nice "$out/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -timeout=120 -rss_limit_mb=2048 \
      -malloc_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
      -artifact_prefix="$out/artifacts/$t-" "$out/corpus/$t" $committed \
      "$out/seeds/$t" > "$log" 2>&1; then
    status=1
    tail -n 60 "$log" >&2
    echo "== fuzz_$t FAILED: the input is in $out/artifacts/; add it to tests/fuzz/corpus/$t/ with its fix" >&2
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  secs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$log")
  echo "   fuzz_$t: ${execs:-?} execs in ${secs:-$FUZZ_SECONDS} s, corpus $(ls "$out/corpus/$t" | wc -l) inputs"
done
exit $status
