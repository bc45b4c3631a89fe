#!/bin/sh
# Inputs are data, outputs never destroy, exit codes mean what they say: the
# round-3 findings (../shared/reliability-findings/, F01-F19) end to end, on a
# private copy of the built-in data. Parser-level checks are in test_inputs
# (F01, F04, F05, F10, F11, F19), test_shards (F07), test_foundation (F17's
# budget) and test_platforms (F16's estimate).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
ttasim=$(cd "$top_builddir" && pwd)/ttasim
src=$(cd "$top_srcdir" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ttasim-test-reliability.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# expect RC PATTERN CMD...: runs CMD (stdout to $work/out, stderr to $work/err); checks the exit status and the message.
expect() {
    [ -z "${TIMING:-}" ] || echo "$(date +%s.%N | cut -c1-14) $*" >&2
    want=$1 pat=$2
    shift 2
    "$@" >"$work/out" 2>"$work/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "exit $got, wanted $want: $* ($(cat "$work/err"))"
    [ -z "$pat" ] || grep -q -- "$pat" "$work/err" || fail "$*: no '$pat' in: $(cat "$work/err")"
}
same() { cmp -s "$1" "$2" || fail "$3"; }

D=$work/data
mkdir -p "$D/platforms/calibration" "$D/scenarios"
cp "$src"/platforms/*.json "$D/platforms/"
cp "$src"/platforms/calibration/*.json "$D/platforms/calibration/"
cp -r "$src/scenarios/traces" "$src/scenarios/profiles" "$D/scenarios/"
cp -r "$D" "$work/orig"
TTASIM_DATA_DIR=$D
export TTASIM_DATA_DIR
# A sweep of 4 points on a generic star, the test trace: fast everywhere.
cat >"$work/s.json" <<EOF
{"version": 1, "name": "reliability", "platform": {"name": "star", "nodes": 4},
 "workload": {"trace": "$src/tests/data/tiny-trace.json", "global_batch": 64},
 "convergence": {"steps": 100}, "sweep": {"nodes": [2, 4], "global_batch": [64, 128]}}
EOF
# The quickstart on a built-in platform: it reads the device library and the calibration.
sed "s|\"trace\": \"traces/|\"trace\": \"$D/scenarios/traces/|; s|\"profile\": \"profiles/|\"profile\": \"$D/scenarios/profiles/|" \
    "$src/scenarios/quickstart.json" >"$work/q.json"

# F01: /dev/zero (and any input that is not a regular file) is refused before it is read.
expect 2 '/dev/zero: not a regular file (a character device)' "$ttasim" run /dev/zero
mkfifo "$work/fifo"
expect 2 'not a regular file (a FIFO' "$ttasim" run "$work/fifo"
mkdir "$work/withfifo" # check DIR opens no FIFO to see whether it is a scenario (it blocked)
mkfifo "$work/withfifo/x.json"
expect 2 'could not run' timeout 60 "$ttasim" check "$work/withfifo" --quiet

# F02: standard output that cannot be written is exit 2, never a truncated document and 0.
expect 2 'cannot write standard output: No space left on device' sh -c '"$0" run "$1" --json --quiet >/dev/full' \
    "$ttasim" "$work/s.json"
expect 2 'cannot write standard output' sh -c '"$0" platform list >/dev/full' "$ttasim"
expect 2 'cannot write standard output: Bad file descriptor' sh -c '"$0" model show resnet50 --json >&-' "$ttasim"

# F03: exit 2 (never 3) when the environment fails: no TMPDIR, a shard to a full disk, a killed worker.
expect 2 'set TMPDIR to a writable directory' env TMPDIR=/nonexistent "$ttasim" run "$work/s.json" --quiet
expect 2 'cannot write the shard document to standard output' sh -c '"$0" run "$1" --shard 0/2 --quiet >/dev/full' \
    "$ttasim" "$work/s.json"
sed 's/"nodes": 4}/"nodes": 128}/; s/"global_batch": 64}/"global_batch": 1024}/; s/"nodes": \[2, 4\]/"nodes": [128, 256, 64, 32]/; s/"global_batch": \[64, 128\]/"global_batch": [1024, 2048]/' \
    "$work/s.json" >"$work/long.json"
"$ttasim" run "$work/long.json" -j 2 --quiet >/dev/null 2>"$work/err" &
pid=$!
i=0 kid=
while [ -z "$kid" ] && [ $i -lt 200 ]; do # both -j workers up (they live as long as the sweep): one killed from outside
    kid=$(awk -v p="$pid" '$4 == p && $3 != "Z" { n++; k = $1 } END { if (n >= 2) print k }' /proc/[0-9]*/stat 2>/dev/null)
    [ -n "$kid" ] || sleep 0.05
    i=$((i + 1))
done
[ -n "$kid" ] && kill -9 "$kid"
wait "$pid"
rc=$?
[ -z "$kid" ] || [ $rc -eq 2 ] || fail "a killed worker: exit $rc, wanted 2 ($(cat "$work/err"))"
[ -z "$kid" ] || grep -q 'killed from outside' "$work/err" || fail "a killed worker: $(cat "$work/err")"

# F05: a platform's "xml" ending in .so is not loaded: no code from a scenario folder runs, exit 2.
mkdir "$work/so"
printf '#include <stdio.h>\n__attribute__((constructor)) static void pwn(void) { FILE *f = fopen("PWNED", "w"); if (f) fclose(f); }\n' \
    >"$work/so/evil.c"
if ${CC:-cc} -shared -fPIC -o "$work/so/evil.so" "$work/so/evil.c" 2>/dev/null; then :; else cp /bin/true "$work/so/evil.so"; fi
printf 'h0\nh1\n' >"$work/so/mine.hosts"
cat >"$work/so/mine.json" <<EOF
{"format": "ttasim-platform", "version": 1, "name": "mine", "sources": [], "assumptions": [],
 "simgrid": {"xml": "./evil.so", "rank_hosts": "mine.hosts", "accelerator": "v100-sxm2",
   "ranks_per_node": 1, "path_estimate": {"bandwidth_Bps": 1e10, "latency_s": 1e-6, "hops": 1}}}
EOF
printf '{"version": 1, "name": "innocent", "platform": {"name": "mine.json"}, "collective": {"op": "allreduce", "algo": "ring", "bytes": "1M"}}\n' \
    >"$work/so/scen.json"
(cd "$work/so" && expect 2 'evil.so:1:1: the file holds NUL bytes' "$ttasim" run scen.json)
(cd "$work/so" && expect 2 'could not run' "$ttasim" check scen.json --quiet && grep -q 'evil.so' "$work/out") ||
    fail "check of the .so platform: $(cat "$work/out")"
[ ! -e "$work/so/PWNED" ] || fail "a platform file's .so ran"

# F06: an output onto any file the run read (device library, built-in platform, calibration, a
# checked scenario's trace, a merge's shard) is refused and the file kept.
expect 2 'this output is a file the run read' "$ttasim" run "$work/q.json" --quiet --csv "$D/platforms/devices.json"
expect 2 'this output is a file the run read' "$ttasim" run "$work/q.json" --quiet --svg "$D/platforms/dgx1-v100.json"
expect 2 'this output is a file the run read' "$ttasim" run "$work/q.json" --quiet \
    --csv "$D/platforms/calibration/calibrated.json"
expect 2 'this output is a file the run read' "$ttasim" check "$work/q.json" --quiet --junit "$D/scenarios/traces/resnet50.json"
expect 2 'this output is a file the run read' "$ttasim" platform export dgx1-v100 --xml "$D/platforms/devices.json"
diff -r "$work/orig" "$D" >/dev/null || fail "an input of the data folder changed: $(diff -rq "$work/orig" "$D")"

# F08: check exits 2 for a scenario that is an input error, 1 only for a failed expectation.
printf '{"version": 1}\n' >"$work/bad.json"
expect 2 'could not run' "$ttasim" check "$work/bad.json" --quiet
grep -q 'missing required key "name"' "$work/out" || fail "check: $(cat "$work/out")"

# F09: a FIFO, /dev/null, a character device and stdout are written in place; a symbolic link keeps
# pointing at the file it names; a directory is refused; nothing but a regular file is replaced.
cat "$work/fifo" >"$work/from-fifo" &
reader=$!
expect 0 '' "$ttasim" run "$work/s.json" --quiet --csv "$work/fifo"
wait $reader
head -1 "$work/from-fifo" | grep -q '^scenario,point' || fail "nothing came out of the FIFO"
[ -p "$work/fifo" ] || fail "the FIFO was replaced"
expect 0 '' "$ttasim" run "$work/s.json" --quiet --csv /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
if mknod "$work/full" c 1 7 2>/dev/null; then # root (CI): a device node of our own, never the system's
    expect 2 'full: cannot write the CSV file: No space left on device' "$ttasim" run "$work/s.json" --quiet --csv "$work/full"
    [ -c "$work/full" ] || fail "a character device was replaced by a regular file"
fi
"$ttasim" run "$work/s.json" --quiet --csv /dev/stdout >"$work/stdout.txt" 2>"$work/err" || fail "--csv /dev/stdout: $(cat "$work/err")"
grep -q '^scenario,point' "$work/stdout.txt" && grep -q '^sweep' "$work/stdout.txt" ||
    fail "--csv /dev/stdout: the CSV and the report are not both on stdout"
echo previous >"$work/real.csv"
ln -s real.csv "$work/link.csv"
expect 0 '' "$ttasim" run "$work/s.json" --quiet --csv "$work/link.csv"
[ -L "$work/link.csv" ] || fail "the symbolic link was replaced"
grep -q '^scenario,point' "$work/real.csv" || fail "the file the link names was not written"
mkdir "$work/adir"
expect 2 'it is a directory' "$ttasim" run "$work/s.json" --quiet --csv "$work/adir"

# F10, F11: numbers SimGrid or an int cannot take are input errors naming the JSON path.
sed 's/"nodes": 4}/"nodes": 4, "link_latency_s": 5e-324}/' "$work/s.json" >"$work/tiny.json"
expect 2 '$.platform.link_latency_s: expected 0 or a value of at least 1e-15' "$ttasim" run "$work/tiny.json"

# F12: messages name the scenario file (memory fit, load estimate) and the JSON path (an empty trace path).
cat >"$work/fit.json" <<EOF
{"version": 1, "name": "fit", "platform": {"name": "dgx1-v100", "nodes": 1},
 "workload": {"trace": "$D/scenarios/traces/vit-b32.json", "micro_batch": 4096}, "convergence": {"steps": 10}}
EOF
expect 2 "$work/fit.json: vit-b32 at micro-batch 4096 does not fit" "$ttasim" run "$work/fit.json"
sed 's/"nodes": 1}/"nodes": 4096}/' "$work/fit.json" >"$work/huge.json"
expect 2 "$work/huge.json: .*platform dgx1-v100 with 4096 nodes" "$ttasim" run "$work/huge.json" --max-memory 10M
sed 's|"trace": "[^"]*"|"trace": ""|' "$work/fit.json" >"$work/empty.json"
expect 2 '$.workload.trace' "$ttasim" run "$work/empty.json"

# F13: a temporary output a SIGKILL left (unlocked) is removed by the next run writing that output;
# a file size limit is exit 2 with the reason, the previous file whole and no temporary file left.
mkdir "$work/k"
echo stale >"$work/k/.o.csv.ttasim-AbC123"
echo other >"$work/k/.o.csv.keep"
expect 0 '' "$ttasim" run "$work/s.json" --quiet --csv "$work/k/o.csv"
[ ! -e "$work/k/.o.csv.ttasim-AbC123" ] || fail "a stale temporary output was not removed"
[ -e "$work/k/.o.csv.keep" ] || fail "a file that is not ttasim's temporary output was removed"

# F14: a run's outputs are committed together: when the SVG cannot be written, the CSV is not replaced.
echo PREV >"$work/k/o.csv"
echo PREV >"$work/k/o.svg"
(
    trap '' XFSZ
    ulimit -f 8 # 4-8 KiB: the CSV fits, the SVG does not
    "$ttasim" run "$work/s.json" --quiet --csv "$work/k/o.csv" --svg "$work/k/o.svg" >/dev/null 2>"$work/err"
    echo $? >"$work/rc"
)
[ "$(cat "$work/rc")" = 2 ] || fail "outputs past the size limit: exit $(cat "$work/rc"), wanted 2"
grep -q 'File too large' "$work/err" || fail "outputs past the size limit: $(cat "$work/err")"
[ "$(cat "$work/k/o.csv")" = PREV ] && [ "$(cat "$work/k/o.svg")" = PREV ] ||
    fail "one output of the run was replaced, not the other"
[ -z "$(ls -A "$work/k" | grep '\.ttasim-')" ] || fail "temporary files left: $(ls -A "$work/k")"

# F16, F18: estimates that refuse at once: a FLAT cluster's load grows with the square of its hosts;
# a sweep's size and its loads are refused before a point runs.
# (--max-memory: the time refusal, whatever memory the machine has free at the time; 6.1 GB for dgx-a100)
expect 2 'would take about' "$ttasim" platform check knl-cluster --nodes 65536 --max-time 10 --max-memory 64G
expect 2 'would take about' "$ttasim" platform check dgx-a100 --nodes 65536 --max-memory 64G
python_free_sweep() { # a scenario whose sweep has 64 x 64 x 8 points
    v=1
    vals=
    while [ $v -le 64 ]; do vals="$vals${vals:+, }$v"; v=$((v + 1)); done
    printf '{"version": 1, "name": "big", "platform": {"name": "star", "nodes": 4},\n' >"$1"
    printf ' "workload": {"trace": "%s/tests/data/tiny-trace.json", "global_batch": 64}, "convergence": {"steps": 10},\n' "$src" >>"$1"
    printf ' "sweep": {"nodes": [%s], "global_batch": [%s], "cost.pue": [1, 2, 3, 4, 5, 6, 7, 8]}}\n' "$vals" "$vals" >>"$1"
}
python_free_sweep "$work/big.json"
expect 2 '$.sweep: 32768 points' "$ttasim" run "$work/big.json"
sed 's/"name": "star", "nodes": 4/"name": "dgx-a100", "nodes": 2/; s/"nodes": \[2, 4\]/"nodes": [2048, 4096]/' \
    "$work/s.json" >"$work/slow.json"
expect 2 '$.sweep: its 4 points would take at least' "$ttasim" run "$work/slow.json" --max-time 1

# The same node limit in a scenario's sweep as in --nodes.
sed 's/"nodes": \[2, 4\]/"nodes": [2, 65537]/' "$work/s.json" >"$work/n.json"
expect 2 '$.sweep.nodes\[1\]: expected a value in \[1, 65536\]' "$ttasim" run "$work/n.json"

[ $fails -eq 0 ] || exit 1
echo "reliability: ok"
