#!/bin/sh
# A `ttasim run` sweep killed mid-simulation, by SIGINT and by SIGKILL of the
# parent, leaves no simulation process, no ttasim-platform file in TMPDIR, and
# the previous output file as it was (no temporary output beside it).
# 4,096 GPUs: SimGrid alone takes seconds to load them, so a child that does
# not die with its parent is still there when looked for (it is killed as soon
# as it appears: no sanitizer build runs that many ranks).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ttasim-signals-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/t"
trace=$(cd "$top_srcdir/scenarios/traces" && pwd)/resnet50.json
profile=$(cd "$top_srcdir/scenarios/profiles" && pwd)/resnet50-imagenet-sgd.json
cat > "$tmp/sweep.json" <<JSON
{"version": 1, "name": "signals", "platform": {"name": "dgx-a100", "nodes": 512},
 "workload": {"trace": "$trace", "global_batch": 131072, "micro_batch": 32},
 "optimizer": "momentum", "convergence": {"profile": "$profile",
   "target": {"dataset": "imagenet", "metric": "top1_accuracy", "value": 0.749}},
 "collectives": {"allreduce": "ring"},
 "sweep": {"nodes": [256, 128]}}
JSON
printf 'previous output\n' > "$tmp/prev.csv"
cp "$tmp/prev.csv" "$tmp/out.csv"
fail=0
children() { awk -v p="$1" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null; }
# a killed orphan stays a zombie until the machine's init reaps it: not alive
alive() { for c in $1; do awk '$3 != "Z" { print $1 }' "/proc/$c/stat" 2>/dev/null; done; }
for sig in INT KILL; do
    # a script's background jobs start with SIGINT ignored: env restores it
    TMPDIR="$tmp/t" env --default-signal=INT "$top_builddir/ttasim" run "$tmp/sweep.json" --csv "$tmp/out.csv" >/dev/null 2>"$tmp/err" &
    pid=$!
    kids=
    i=0
    while [ -z "$kids" ] && [ $i -lt 600 ]; do # up to 60 s for a simulation child
        kids=$(children "$pid")
        [ -z "$kids" ] && sleep 0.1
        i=$((i + 1))
    done
    if [ -z "$kids" ]; then
        echo "FAIL SIG$sig: no simulation child of ttasim appeared"; cat "$tmp/err"; fail=1
    fi
    left=$(ls "$tmp/t")
    [ -z "$left" ] || { echo "FAIL SIG$sig: during the simulation $tmp/t holds: $left"; fail=1; }
    kill -s "$sig" "$pid"
    wait "$pid"
    i=0
    while [ -n "$(alive "$kids")" ] && [ $i -lt 10 ]; do sleep 0.1; i=$((i + 1)); done
    [ -z "$(alive "$kids")" ] || { echo "FAIL SIG$sig: simulation process $(alive "$kids") outlived ttasim"; fail=1; kill -9 $kids; }
    left=$(ls "$tmp/t")
    [ -z "$left" ] || { echo "FAIL SIG$sig: left in TMPDIR: $left"; fail=1; }
    cmp -s "$tmp/out.csv" "$tmp/prev.csv" || { echo "FAIL SIG$sig: the previous output file changed"; fail=1; }
    partial=$(ls -A "$tmp" | grep '^\.out\.csv\.' || true)
    [ -z "$partial" ] || { echo "FAIL SIG$sig: temporary output left: $partial"; fail=1; }
    [ $fail -eq 0 ] && echo "SIG$sig: no process, no temporary file left"
done
exit $fail
