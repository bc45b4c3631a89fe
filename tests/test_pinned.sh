#!/bin/sh
# make check: every shipped scenario's `ttasim run --json` against its pin in
# tests/pinned/ (numbers within a relative 1e-6): the regression net, apart
# from the loose "expect" bounds. A difference names the scenario, the JSON
# path, the pinned and the new value. A prediction that changed on purpose:
# `make pinned` rewrites the pins (review the diff). PINNED_WRITE=1 is that.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
pins=$top_srcdir/tests/pinned
work=$(mktemp -d "${TMPDIR:-/tmp}/ttasim-pinned-XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
cd "$top_srcdir" || exit 99
# frontier-*.json (131,072 accelerators, 30 s and more a run) are benchmarks, not pins: `ttasim bench sim
# --scale` holds their goals and scenarios/examples/frontier-table.sh tables their wall time and memory
scenarios=$(ls scenarios/quickstart.json scenarios/examples/*.json scenarios/published/*.json \
    scenarios/collectives/*.json | grep -v '^scenarios/examples/frontier-')
if [ "${scenario_set:-all}" = small ] && [ -z "$PINNED_WRITE" ]; then
    # sanitizer builds run SimGrid on threads: the scenarios check_scenarios.sh runs there
    scenarios="scenarios/quickstart.json scenarios/examples/ci-expect.json scenarios/published/bert-lamb-512.json
scenarios/published/resnet50-he-2016.json scenarios/collectives/dgx-a100-allreduce-8g.json"
    echo "test_pinned: sanitizer build: checking $(echo "$scenarios" | wc -w) of the pins"
fi
pin_of() { echo "$1" | sed 's|^scenarios/||; s|/|__|g'; }
ttasim=$top_builddir/ttasim
case $ttasim in /*) ;; *) ttasim=$OLDPWD/$ttasim ;; esac
pin_diff=$top_builddir/tests/pin_diff
case $pin_diff in /*) ;; *) pin_diff=$OLDPWD/$pin_diff ;; esac
# two at a time: the runs are independent (one per line: xargs -I takes lines)
export ttasim work
printf '%s\n' $scenarios | xargs -P 2 -I{} sh -c 'n=$(echo {} | sed "s|^scenarios/||; s|/|__|g");
    "$ttasim" run {} --json >"$work/$n" 2>"$work/$n.err"; echo $? >"$work/$n.rc"'
status=0
for s in $scenarios; do
    n=$(pin_of "$s")
    if [ "$(cat "$work/$n.rc")" != 0 ]; then
        echo "FAIL $s: ttasim run $s --json exited $(cat "$work/$n.rc"):"; cat "$work/$n.err"; status=1; continue
    fi
    if [ -n "$PINNED_WRITE" ]; then
        mkdir -p "$work/pins" && "$pin_diff" --strip "$work/$n" "$work/pins/$n" || status=1
    elif [ ! -f "$pins/$n" ]; then
        echo "FAIL $s: no pin $pins/$n; run 'make pinned' and commit it"; status=1
    elif ! "$pin_diff" "$pins/$n" "$work/$n" "$s"; then
        echo "FAIL $s: its prediction moved; if on purpose, 'make pinned' rewrites tests/pinned/ (review the diff)"
        status=1
    fi
done
if [ -z "$PINNED_WRITE" ] && [ "${scenario_set:-all}" != small ]; then
    for p in "$pins"/*.json; do
        s=scenarios/$(basename "$p" | sed 's|__|/|g')
        [ -f "$s" ] || { echo "FAIL $p: pins $s, which is no longer shipped; run 'make pinned'"; status=1; }
    done
fi
if [ $status = 0 ] && [ -n "$PINNED_WRITE" ]; then
    # replaced only once every scenario ran: an interrupted `make pinned` keeps the old pins
    rm -f "$pins"/*.json && mv "$work/pins"/*.json "$pins"/ || status=1
    echo "make pinned: wrote $(echo "$scenarios" | wc -w) pins in tests/pinned/; review 'git diff tests/pinned' and commit"
elif [ $status = 0 ]; then
    echo "test_pinned: $(echo "$scenarios" | wc -w) scenarios match their pins"
fi
exit $status
