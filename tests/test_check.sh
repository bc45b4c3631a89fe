#!/bin/sh
# make check: 'ttasim check' as CI runs it. Input errors exit 2 with the
# message 'run' gives for the same file, a failed bound 1; an expect path the
# run does not write is refused before any simulation, with the closest path.
top_srcdir=${top_srcdir:-.}
name=test-check
. "$top_srcdir/tests/testlib.sh"
# scenario FILE NAME BATCH EXTRA: a small scenario (the test trace on a star of 4).
scenario() {
    cat >"$1" <<EOS
{
  "version": 1, "name": "$2",
  "platform": {"name": "star", "nodes": 4},
  "workload": {"trace": "$src/tests/data/tiny-trace.json", "global_batch": $3},
  "convergence": {"steps": 100}$4
}
EOS
}

# 1. The same input error exits 2 from run and from check, with run's message.
mkdir "$work/in"
printf '{"version": 1, "name": \n' >"$work/in/syntax.json"
scenario "$work/in/unknown-key.json" unknown 64 ', "optimzer": "sgd"'
for f in syntax unknown-key missing; do
    expect_rc 2 "$ttasim" run "$work/in/$f.json" --quiet
    msg=$(sed -n 's/^ttasim: //p' "$work/err" | head -n 1)
    [ -n "$msg" ] || fail "run $f.json: no message: $(cat "$work/err")"
    expect_rc 2 "$ttasim" check "$work/in/$f.json" --quiet
    grep -qF -- "$msg" "$work/out" "$work/err" || fail "check $f.json does not say what run says ($msg): $(cat "$work/out" "$work/err")"
done
# A failed bound is 1; a failed bound beside an input error is still 2 (CI must see the error).
scenario "$work/fails.json" fails 64 ', "expect": {"step.time_s": {"max": 1e-12}}'
expect_rc 1 "$ttasim" check "$work/fails.json" --quiet
grep -q 'step.time_s = .* > max 1e-12' "$work/out" || fail "check: the failed bound is not named: $(cat "$work/out")"
expect_rc 2 "$ttasim" check "$work/fails.json" "$work/in/unknown-key.json" --quiet
# The rule is stated where users look.
"$ttasim" check --help | tr '\n' ' ' | grep -q 'Exit status: 0 .* 1 .*expect.* 2 an input error .*missing file.*ttasim run' ||
    fail "check --help does not state the exit rule: $("$ttasim" check --help | tail -n 4)"
sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$src/doc/ttasim.1" | tr '\n' ' ' |
    grep -q 'check.*does not parse.*expect path.*missing.*as *\.B run' ||
    fail "doc/ttasim.1's EXIT STATUS does not state check's rule"

# 2. An expect path that the run does not write: exit 2 before any simulation
# (this scenario's batch of 6 does not split over 4 ranks, which only a run finds),
# naming the file, $.expect["PATH"] and the closest path.
scenario "$work/typo.json" typo 6 ', "expect": {"step.time_s": {"max": 1}, "step.memory.totl_bytes": {"max": 1}}'
for cmd in run check; do
    expect_rc 2 "$ttasim" $cmd "$work/typo.json" --quiet
    all=$(cat "$work/out" "$work/err")
    case $all in
    *'typo.json: $.expect["step.memory.totl_bytes"]: '*'(did you mean "step.memory.total_bytes"?)'*) ;;
    *) fail "$cmd: the typo is not named with its closest path: $all" ;;
    esac
    case $all in *'does not split'*) fail "$cmd simulated before it validated the expect paths: $all" ;; esac
done
# A sweep's point past its end names the points there are; a number of a block some runs write passes.
scenario "$work/sweep.json" sweep 64 ', "sweep": {"global_batch": [64, 128]}, "expect": {"sweep[2].cost_usd": {"min": 0}}'
expect_rc 2 "$ttasim" check "$work/sweep.json" --quiet
grep -q 'the sweep has 2 points, sweep\[0\] to sweep\[1\]' "$work/out" || fail "sweep[2]: $(cat "$work/out")"
scenario "$work/ok.json" ok 64 ', "sweep": {"global_batch": [64, 128]}, "expect": {"sweep[1].step.time_s": {"min": 0}}'
expect_rc 0 "$ttasim" check "$work/ok.json" --quiet

# 3. check DIR runs the scenarios only: the run's own --json report next to it
# (its "outputs"), a check --json report and a trace are skipped with a note.
mkdir "$work/dir"
scenario "$work/dir/s.json" dir 64 ', "outputs": {"json": "s-run.json"}, "expect": {"step.time_s": {"min": 0}}'
expect_rc 0 "$ttasim" run "$work/dir/s.json" --quiet
[ -s "$work/dir/s-run.json" ] || fail "run did not write its outputs.json"
expect_rc 0 "$ttasim" check "$work/dir/s.json" --json --quiet
cp "$work/out" "$work/dir/check-report.json"
cp "$src/tests/data/tiny-trace.json" "$work/dir/trace.json"
expect_rc 0 "$ttasim" check "$work/dir" --quiet
grep -q '1 of 1 scenarios passed; 3 other JSON files skipped, not scenarios' "$work/out" ||
    fail "check DIR: $(cat "$work/out")"
for f in s-run check-report trace; do
    grep -q "^ttasim check: skipped $work/dir/$f.json: .*not a scenario" "$work/err" ||
        fail "check DIR: no note for $f.json: $(cat "$work/err")"
    ! grep -q "$f.json" "$work/out" || fail "check DIR ran $f.json: $(cat "$work/out")"
done
expect_rc 0 "$ttasim" check "$work/dir" --json --quiet
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [s["name"] for s in d["scenarios"]] == ["dir"], d["scenarios"]
assert sorted(k["file"].rsplit("/", 1)[1] for k in d["skipped"]) == ["check-report.json", "s-run.json", "trace.json"], d["skipped"]
' "$work/out" || fail "check DIR --json: $(cat "$work/out")"

# 4. JUnit: each testcase's wall time, and per bound the value measured (the
# number 'run --json' writes there) with its bounds, as properties and in
# system-out; the bytes are the same at -j 1 and -j 2 but for the times.
if command -v python3 >/dev/null 2>&1; then
    mkdir "$work/ju"
    scenario "$work/ju/a.json" passes 64 ', "expect": {"step.time_s": {"min": 1e-9, "max": 10}, "steps_to_target": {"min": 100}}'
    scenario "$work/ju/b.json" fails 64 ', "sweep": {"global_batch": [64, 128]}, "expect": {"sweep[1].step.comm_s": {"max": 1e-12}}'
    expect_rc 0 "$ttasim" run "$work/ju/a.json" --json --quiet
    mv "$work/out" "$work/a-run.json"
    expect_rc 1 "$ttasim" run "$work/ju/b.json" --json --quiet
    mv "$work/out" "$work/b-run.json"
    expect_rc 1 "$ttasim" check "$work/ju" --junit "$work/j1.xml" -j 1 --quiet
    expect_rc 1 "$ttasim" check "$work/ju" --junit "$work/j2.xml" -j 2 --quiet
    sed 's/ time="[0-9.]*"//' "$work/j1.xml" >"$work/j1.notime"
    sed 's/ time="[0-9.]*"//' "$work/j2.xml" >"$work/j2.notime"
    cmp -s "$work/j1.notime" "$work/j2.notime" || fail "JUnit at -j 2 differs from -j 1 beyond the times"
    python3 - "$work/j1.xml" "$work/a-run.json" "$work/b-run.json" <<'EOP' || fail "JUnit: $(cat "$work/j1.xml")"
import json, sys
import xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
runs = {"passes": json.load(open(sys.argv[2])), "fails": json.load(open(sys.argv[3]))}
def lookup(doc, path):
    for part in path.split("."):
        name, _, idx = part.partition("[")
        doc = doc[name]
        if idx:
            doc = doc[int(idx.rstrip("]"))]
    return doc
want = {"passes": {"step.time_s": (1e-9, 10), "steps_to_target": (100, None)},
        "fails": {"sweep[1].step.comm_s": (None, 1e-12)}}
cases = suite.findall("testcase")
assert [c.get("name") for c in cases] == ["passes", "fails"], [c.get("name") for c in cases]
assert suite.get("failures") == "1" and float(suite.get("time")) >= 0
for c in cases:
    assert float(c.get("time")) >= 0, c.get("time")
    props = {p.get("name"): float(p.get("value")) for p in c.find("properties")}
    name = c.get("name")
    expected = {}
    for metric, (lo, hi) in want[name].items():
        measured = lookup(runs[name], metric)
        assert measured > 0
        expected[metric] = measured
        if lo is not None:
            expected[metric + ".min"] = lo
        if hi is not None:
            expected[metric + ".max"] = hi
    assert props.keys() == expected.keys(), (props, expected)
    for k, v in expected.items():
        assert abs(props[k] - v) <= 1e-9 * abs(v), (k, props[k], v)
    out = c.find("system-out").text
    for metric in want[name]:
        assert metric + " = " in out, out
    assert (c.find("failure") is not None) == (name == "fails")
assert "sweep[1].step.comm_s = " in cases[1].find("failure").get("message")
assert ": FAIL" in cases[1].find("system-out").text and ": pass" in cases[0].find("system-out").text
EOP
else
    echo "test_check: no python3, the JUnit parse is skipped (Debian: apt-get install python3)"
fi

[ "$fails" -eq 0 ] || exit 1
echo "test_check: ok"
