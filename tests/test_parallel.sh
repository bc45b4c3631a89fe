#!/bin/sh
# -j: a sweep's points and check's scenarios run in forked workers; every
# output (text, JSON, CSV, SVG, JUnit) is byte-identical to -j 1, a point that
# fails stops the run with the same error as -j 1, and a bad -j is a usage error.
# --shard I/N and merge: the same bytes again, and merges that cannot be whole refused.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
ttasim=$(cd "$top_builddir" && pwd)/ttasim
src=$(cd "$top_srcdir" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ttasim-test-parallel.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# A 16-point sweep (4 node counts x 4 batches) of the test trace on a star.
cat >"$work/sweep.json" <<EOF
{
  "version": 1, "name": "parallel-sweep",
  "platform": {"name": "star", "nodes": 4},
  "workload": {"trace": "$src/tests/data/tiny-trace.json", "global_batch": 64},
  "convergence": {"mccandlish": {"s_min": 1000, "noise_scale": 256}},
  "sweep": {"nodes": [2, 4, 8, 16], "global_batch": [64, 128, 256, 512]}
}
EOF

# 1. run: -j 1, -j 2 and -j 5 (more workers than cores, fewer than points) agree byte for byte.
for j in 1 2 5; do
    "$ttasim" run "$work/sweep.json" -j $j --quiet --csv "$work/j$j.csv" --svg "$work/j$j.svg" >"$work/j$j.txt" 2>"$work/err" ||
        fail "run -j $j exited $?: $(cat "$work/err")"
    "$ttasim" run "$work/sweep.json" --jobs $j --json >"$work/j$j.json" 2>"$work/err" ||
        fail "run --jobs $j --json exited $?: $(cat "$work/err")"
done
[ "$(grep -c '"nodes"' "$work/j1.json")" -ge 16 ] || fail "the sweep did not report its 16 points"
for j in 2 5; do
    for ext in txt csv svg json; do
        cmp -s "$work/j1.$ext" "$work/j$j.$ext" || fail "run -j $j: $ext differs from -j 1"
    done
done
# The points are not all the same (a sweep that ignored its values would still agree).
[ "$(sed 1d "$work/j1.csv" | cut -d, -f1-6 | sort -u | wc -l)" -eq 16 ] || fail "the 16 CSV rows are not distinct"

# 2. Points that cannot run (90 over 4 ranks, 100 over 8...) keep their error in their row, at any -j.
sed 's/"global_batch": \[64, 128, 256, 512\]/"global_batch": [64, 100, 256, 90]/' "$work/sweep.json" >"$work/bad.json"
for j in 1 2; do
    "$ttasim" run "$work/bad.json" -j $j --quiet --json >"$work/bad$j.json" 2>"$work/err" ||
        fail "run -j $j of a sweep with points that do not split exited $?: $(cat "$work/err")"
done
grep -q 'the global batch 90 does not split over 4 ranks' "$work/bad1.json" || fail "-j 1: no error row for 90 over 4"
cmp -s "$work/bad1.json" "$work/bad2.json" || fail "-j 2 rows with errors differ from -j 1"

# 3. check: several scenarios in parallel, table, JSON and JUnit identical to -j 1.
mkdir -p "$work/set"
for n in 2 4 8; do
    cat >"$work/set/s$n.json" <<EOF
{
  "version": 1, "name": "set-$n",
  "platform": {"name": "star", "nodes": $n},
  "workload": {"trace": "$src/tests/data/tiny-trace.json", "global_batch": 64},
  "convergence": {"steps": 100}
}
EOF
done
printf '{"version": 1,\n' >"$work/set/s9-bad.json" # cannot load: an ERROR row
for j in 1 2; do
    "$ttasim" check "$work/set" -j $j --quiet --junit "$work/c$j.xml" >"$work/c$j.txt" 2>"$work/err"
    rc=$?
    sed -i 's/ time="[0-9.]*"//' "$work/c$j.xml" # wall seconds: the one part that may differ
    [ $rc -eq 2 ] || fail "check -j $j exited $rc, wanted 2 (one scenario cannot run: an input error): $(cat "$work/err")"
    "$ttasim" check "$work/set" -j $j --json >"$work/c$j.json" 2>/dev/null
done
grep -q '3 of 4 scenarios passed' "$work/c1.txt" || fail "check -j 1: $(cat "$work/c1.txt")"
for ext in txt xml json; do
    cmp -s "$work/c1.$ext" "$work/c2.$ext" || fail "check -j 2: $ext differs from -j 1"
done

# 4. Shards (job arrays): run --shard I/3 three times, merge in any order = run, byte for byte.
for i in 0 1 2; do
    "$ttasim" run "$work/sweep.json" --shard $i/3 -j 1 >"$work/shard$i.json" 2>"$work/err" ||
        fail "run --shard $i/3 exited $?: $(cat "$work/err")"
done
"$ttasim" merge "$work/sweep.json" "$work/shard2.json" "$work/shard0.json" "$work/shard1.json" \
    --csv "$work/m.csv" --svg "$work/m.svg" >"$work/m.txt" 2>"$work/err" || fail "merge exited $?: $(cat "$work/err")"
"$ttasim" merge "$work/sweep.json" "$work/shard0.json" "$work/shard1.json" "$work/shard2.json" --json \
    >"$work/m.json" 2>/dev/null
for ext in txt csv svg json; do
    cmp -s "$work/j1.$ext" "$work/m.$ext" || fail "merge: $ext differs from run"
done
# An array of one task: --shard 0/1 is a shard too.
"$ttasim" run "$work/sweep.json" --shard 0/1 -j 1 >"$work/whole.json" 2>"$work/err" || fail "run --shard 0/1 exited $?"
"$ttasim" merge "$work/sweep.json" "$work/whole.json" >"$work/m1.txt" 2>"$work/err" || fail "merge of 0/1 exited $?: $(cat "$work/err")"
cmp -s "$work/j1.txt" "$work/m1.txt" || fail "merge of --shard 0/1: text differs from run"
# A missing shard, a shard given twice, a changed scenario, a bad --shard: exit 2, saying what to do.
expect2() { # expect2 PATTERN CMD...
    pat=$1
    shift
    "$@" >/dev/null 2>"$work/err"
    rc=$?
    [ $rc -eq 2 ] || fail "exit $rc, wanted 2: $*"
    grep -q "$pat" "$work/err" || fail "$*: no '$pat' in: $(cat "$work/err")"
}
expect2 'sweep point 1 (nodes 2, global batch 128) is in none of the shards' \
    "$ttasim" merge "$work/sweep.json" "$work/shard0.json" "$work/shard2.json"
expect2 'is given twice' \
    "$ttasim" merge "$work/sweep.json" "$work/shard0.json" "$work/shard0.json" "$work/shard1.json"
sed 's/"noise_scale": 256/"noise_scale": 512/' "$work/sweep.json" >"$work/changed.json"
expect2 'another version of the scenario' "$ttasim" merge "$work/changed.json" "$work/shard0.json"
expect2 'expected I/N' "$ttasim" run "$work/sweep.json" --shard 3/3
expect2 'expected I/N' "$ttasim" run "$work/sweep.json" --shard 1
expect2 'drop --json' "$ttasim" run "$work/sweep.json" --shard 0/2 --json
expect2 "give the file 'ttasim run SCENARIO --shard I/N' wrote" "$ttasim" merge "$work/sweep.json" "$work/sweep.json"

# 5. A bad -j is a usage error naming what it expects.
for bad in 0 -3 two 99999; do
    "$ttasim" run "$work/sweep.json" -j "$bad" >/dev/null 2>"$work/err"
    rc=$?
    [ $rc -eq 2 ] || fail "run -j $bad exited $rc, wanted 2"
    grep -q -- '-j (parallel jobs): expected a whole number from 1 to' "$work/err" || fail "run -j $bad: $(cat "$work/err")"
done
"$ttasim" check "$work/set" -j x >/dev/null 2>"$work/err"
[ $? -eq 2 ] || fail "check -j x did not exit 2"

[ $fails -eq 0 ] || exit 1
echo "test_parallel: all passed"
