#!/bin/sh
# The default text report fits on one screen: the quickstart's in at most 25
# lines, none longer than 160 characters, its assumptions counted on one line;
# --assumptions lists every one of them (as --json does) and the whole recipe.
top_srcdir=${top_srcdir:-.}
name=test-text-report
. "$top_srcdir/tests/testlib.sh"

q=$src/scenarios/quickstart.json
expect_rc 0 "$ttasim" run "$q" --quiet
cp "$work/out" "$work/brief"
lines=$(wc -l <"$work/brief")
[ "$lines" -le 25 ] || fail "the quickstart's report is $lines lines, more than a screen's 25"
long=$(awk 'length($0) > 160' "$work/brief" | wc -l)
[ "$long" -eq 0 ] || fail "$long lines of the quickstart's report are longer than 160 characters"
expect_rc 0 "$ttasim" run "$q" --quiet --json
# the document's top-level list, one string a line
n=$(awk '/^  "assumptions": \[/ {on = 1; next} on && /^  \]/ {on = 0} on {k++} END {print k + 0}' "$work/out")
grep -q "^assumptions  $n behind these numbers" "$work/brief" ||
    fail "the brief report does not count the run's $n assumptions: $(grep '^assumptions' "$work/brief")"
expect_rc 0 "$ttasim" run "$q" --quiet --assumptions
listed=$(grep -c '^  - ' "$work/out")
[ "$listed" -eq "$n" ] || fail "--assumptions lists $listed assumptions, --json $n"
grep -q '^recipe .*; schedule ' "$work/out" || fail "--assumptions does not print the whole recipe"
# counts read as counts: no exponent, grouped by thousands
grep -q '^to target     [0-9,]* steps' "$work/brief" || fail "steps to target: $(grep '^to target' "$work/brief")"
grep '^  MFU\|^to target' "$work/brief" | grep -q 'e+0' && fail "an exponent in a count: $(grep '^  MFU' "$work/brief")"

# TTASIM_DEBUG_OPS: a line per layer pass on stderr, the report unchanged
d=$src/scenarios/published/dlrm-mlperf20-hugectr-14xdgxa100.json
expect_rc 0 "$ttasim" run "$d" --quiet --json
cp "$work/out" "$work/plain"
expect_rc 0 env TTASIM_DEBUG_OPS=1 "$ttasim" run "$d" --quiet --json
cmp -s "$work/out" "$work/plain" || fail "TTASIM_DEBUG_OPS changed the report"
grep -q '^op top_l.2 backward kernels 2 equivalent_flops [0-9.e+]* device_s ' "$work/err" ||
    fail "TTASIM_DEBUG_OPS: no line for top_l.2's backward: $(head -n 2 "$work/err")"

[ $fails -eq 0 ] || exit 1
echo "text report: ok"
