#!/bin/sh
# Outputs: relative ones land next to the scenario (or under --out-dir), never in
# the current directory; an output that is an input of the run is refused with
# exit 2 and the input left as it was; a failed write (file size limit standing
# in for a full disk) exits 2 with the system's reason, leaves the previous file
# intact and no temporary file. An output in a missing directory is refused
# before the run.
top_srcdir=${top_srcdir:-.}
name=test-outputs
. "$top_srcdir/tests/testlib.sh"

mkdir -p "$work/scen" "$work/cwd" "$work/dir"
# A small scenario (the test trace, a star of 4) with outputs named relatively.
cat >"$work/scen/s.json" <<EOF
{
  "version": 1, "name": "outputs",
  "platform": {"name": "star", "nodes": 4},
  "workload": {"trace": "$src/tests/data/tiny-trace.json", "global_batch": 64},
  "convergence": {"steps": 100},
  "outputs": {"csv": "o.csv", "svg": "o.svg", "json": "o.json", "html": "o.html"}
}
EOF
cp "$work/scen/s.json" "$work/scen/orig.json"

# 1. Relative outputs go next to the scenario, not into the current directory.
cd "$work/cwd" || exit 99
expect_rc 0 "$ttasim" run ../scen/s.json
for f in o.csv o.svg o.json o.html; do
    [ -s "$work/scen/$f" ] || fail "$f not written next to the scenario"
    [ ! -e "$work/cwd/$f" ] || fail "$f written into the current directory"
done
grep -q '"step"' "$work/scen/o.json" || fail "o.json is not the run's JSON document"
grep -q 'data-key="step.time_s"' "$work/scen/o.html" || fail "o.html is not the run's HTML page"
# ... or under --out-dir.
expect_rc 0 "$ttasim" run ../scen/s.json --out-dir "$work/dir"
for f in o.csv o.svg o.json o.html; do
    [ -s "$work/dir/$f" ] || fail "$f not written under --out-dir"
done

# 2. An output that is an input is refused, and the input survives.
expect_rc 2 "$ttasim" run ../scen/s.json --csv ../scen/s.json
grep -q 'scenario' "$work/err" || fail "refusal does not name the scenario: $(cat "$work/err")"
cmp -s "$work/scen/s.json" "$work/scen/orig.json" || fail "--csv onto the scenario changed it"
expect_rc 2 "$ttasim" run ../scen/s.json --svg "$src/tests/data/tiny-trace.json"
grep -q 'trace' "$work/err" || fail "refusal does not name the trace: $(cat "$work/err")"
sed 's/"json": "o.json"/"json": "self.json"/' "$work/scen/orig.json" >"$work/scen/self.json"
cp "$work/scen/self.json" "$work/scen/self.orig"
expect_rc 2 "$ttasim" run ../scen/self.json
cmp -s "$work/scen/self.json" "$work/scen/self.orig" || fail "outputs.json naming the scenario changed it"
expect_rc 2 "$ttasim" run ../scen/s.json --csv x.csv --svg ./x.csv
expect_rc 2 "$ttasim" check ../scen/s.json --junit ../scen/s.json
cmp -s "$work/scen/s.json" "$work/scen/orig.json" || fail "--junit onto the scenario changed it"
# An output in a missing directory is refused before the run, not after it.
expect_rc 2 "$ttasim" run ../scen/s.json --set 'sweep.global_batch=[32,64]' --csv "$work/missing/o.csv"
grep -q 'missing/o.csv: cannot write' "$work/err" || fail "missing directory not named: $(cat "$work/err")"
! grep -q 'progress' "$work/err" || fail "the run ran before refusing its output: $(cat "$work/err")"
expect_rc 2 "$ttasim" compare ../scen/s.json ../scen/s.json --set 'sweep.global_batch=[32,64]' --svg "$work/missing/c.svg"
! grep -q 'progress' "$work/err" || fail "compare ran before refusing its output: $(cat "$work/err")"

# 3. A write that fails (file size limit: SIGXFSZ ignored, so write() gets EFBIG)
# exits 2 with the reason; the previous file stays whole; no temporary file is left.
cp "$work/scen/o.svg" "$work/prev.svg"
(
    trap '' XFSZ
    ulimit -f 2 # 2 KiB: less than the SVG
    "$ttasim" run ../scen/s.json --svg "$work/scen/o.svg" >"$work/out" 2>"$work/err"
    echo $? >"$work/rc"
)
[ "$(cat "$work/rc")" = 2 ] || fail "a failed write exits $(cat "$work/rc"), wanted 2"
grep -q 'File too large' "$work/err" || fail "a failed write does not give the reason: $(cat "$work/err")"
cmp -s "$work/scen/o.svg" "$work/prev.svg" || fail "a failed write changed the previous SVG"
leftover=$(ls -A "$work/scen" | grep '^\.' || true)
[ -z "$leftover" ] || fail "temporary files left: $leftover"

# 4. Interrupted: SIGTERM while the output is open leaves no temporary file.
# (ttasim trace spends its time in a training step after opening --out; the
# temporary file has no name until it is committed: seen as an open descriptor.)
"$ttasim" trace --model resnet50 --micro-batch 8 --out "$work/dir/t.json" >/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ] && ! ls -l /proc/$pid/fd 2>/dev/null | grep -q -- "-> $work/dir/"; do
    sleep 0.05
    i=$((i + 1))
done
[ $i -lt 100 ] || fail "trace --out never opened its temporary file"
kill -TERM $pid
wait $pid
leftover=$(ls -A "$work/dir" | grep '^\.' || true)
[ -z "$leftover" ] || fail "SIGTERM left temporary files: $leftover"
[ ! -e "$work/dir/t.json" ] || fail "SIGTERM left a trace behind"

[ $fails -eq 0 ] || exit 1
echo "outputs: ok"
