#!/bin/sh
# The committed traces are what 'make traces' writes today: regenerating them
# changes nothing (each is one real step of the trainer; minutes under the
# sanitizers, so that build skips it).
set -e
[ "${scenario_set:-all}" = small ] && { echo "skipped under the sanitizers (scenario_set=small)"; exit 77; }
src=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$src/scenarios/traces/make-traces.sh" "${top_builddir:-.}/ttasim" "$tmp" 2>/dev/null
status=0
for f in "$tmp"/*.json; do
	name=$(basename "$f")
	if ! cmp -s "$f" "$src/scenarios/traces/$name"; then
		echo "scenarios/traces/$name differs from what 'make traces' writes: run make traces and commit it" >&2
		status=1
	fi
done
[ $status -eq 0 ] && echo "$(ls "$tmp" | wc -l) traces regenerated, identical"
exit $status
