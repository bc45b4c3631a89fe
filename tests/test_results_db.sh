#!/bin/sh
# make check: --db FILE (sim/report/resultsdb.h, doc/results-db.md). A
# 64-point sweep answers the documented query with the run's own --json
# values; the same study appended under mpirun -n 3 is a second run with the
# same rows as -j 2's; check, compare and plan write theirs; a path that is
# not a regular file, or is an input, is refused with exit 2, left as it was.
top_srcdir=${top_srcdir:-.}
name=test-results-db
. "$top_srcdir/tests/testlib.sh"
command -v sqlite3 >/dev/null 2>&1 ||
    { echo "test_results_db: skipped: no sqlite3 command (apt-get install sqlite3, as README.md's install line)"; exit 77; }
# as tests/test_mpi.sh: CI runs as root; Open MPI's own leaks (not ours) are not checked under mpirun
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl_vader_single_copy_mechanism
mpirun=${MPIRUN:-mpirun}

# 4 node counts x 16 global batches on the test trace: 64 points, about a second.
cat >"$work/sweep.json" <<JSON
{
  "version": 1, "name": "db-sweep",
  "platform": {"name": "star", "nodes": 4},
  "workload": {"trace": "$src/tests/data/tiny-trace.json", "global_batch": 64},
  "convergence": {"mccandlish": {"s_min": 1000, "noise_scale": 256}},
  "sweep": {"nodes": [1, 2, 4, 8],
            "global_batch": [64, 96, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280]}
}
JSON
db=$work/a.db
expect_rc 0 "$ttasim" run "$work/sweep.json" -j 2 --quiet --json --db "$db" --set convergence.mccandlish.s_min=900
cp "$work/out" "$work/a.json"

# 1. doc/results-db.md's first query, answered from the database and from the --json output
fastest="SELECT point, output->>'nodes' AS nodes, output->>'global_batch' AS global_batch,
       output->>'time_to_accuracy_s' AS time_to_accuracy_s
FROM points
WHERE run = (SELECT max(id) FROM runs) AND point IS NOT NULL AND output->>'error' IS NULL
ORDER BY output->>'time_to_accuracy_s' LIMIT 1;"
grep -qF "$(printf '%s\n' "$fastest" | head -n 1)" "$src/doc/results-db.md" || fail "doc/results-db.md lacks the query tested"
got=$(sqlite3 "$db" "$fastest") || fail "sqlite3: the documented query failed"
# the same question asked of the run's own JSON output (sqlite3's readfile reads it as text)
want=$(sqlite3 :memory: "SELECT e.key, e.value->>'nodes', e.value->>'global_batch', e.value->>'time_to_accuracy_s'
    FROM json_each(readfile('$work/a.json'), '\$.sweep') AS e WHERE e.value->>'error' IS NULL
    ORDER BY e.value->>'time_to_accuracy_s' LIMIT 1")
[ -n "$got" ] && [ "$got" = "$want" ] || fail "fastest point: database says '$got', --json says '$want'"
echo "test_results_db: fastest point (point|nodes|global_batch|time_to_accuracy_s): $got"
rows=$(sqlite3 "$db" "SELECT count(*), count(point), count(DISTINCT point), min(point), max(point) FROM points")
[ "$rows" = "65|64|64|0|63" ] || fail "points: $rows, wanted the scenario's own and sweep points 0-63"
# every point's step time, and the sums of every number of the run, as the JSON has them
sum_db=$(sqlite3 "$db" "SELECT printf('%.9e', sum(value)) FROM point_values WHERE typeof(value) IN ('integer', 'real')")
sum_json=$(sqlite3 :memory: "SELECT printf('%.9e', sum(atom)) FROM json_tree(readfile('$work/a.json'))
    WHERE type IN ('integer', 'real')")
[ "$sum_db" = "$sum_json" ] || fail "the sum of every output number: database $sum_db, --json $sum_json"
over=$(sqlite3 "$db" "SELECT DISTINCT overrides FROM points")
[ "$over" = '{"convergence.mccandlish.s_min":900}' ] || fail "overrides: $over"
sums=$(sqlite3 "$db" "SELECT count(*) FROM points AS p JOIN inputs AS i ON i.run = p.run
    AND i.fnv1a64 = p.scenario_fnv1a64 AND i.path LIKE '%/sweep.json'")
[ "$sums" = 65 ] || fail "the scenario's checksum is not the inputs' one ($sums of 65 points)"
trace=$(sqlite3 "$db" "SELECT bytes FROM inputs WHERE path LIKE '%/tests/data/tiny-trace.json'")
[ "$trace" = "$(wc -c <"$src/tests/data/tiny-trace.json" | tr -d ' ')" ] || fail "inputs: the trace's size is '$trace'"
run=$(sqlite3 "$db" "SELECT command, json_array_length(argv), version, length(build) FROM runs")
[ "$run" = "run|10|$("$ttasim" --version | cut -d' ' -f2)|16" ] || fail "runs: $run"

# 2. the same study appended under mpirun -n 3: a second run, the same rows as the first
# but for the start, process and command line
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    "$mpirun" --oversubscribe -n 3 "$ttasim" run "$work/sweep.json" -j 1 --quiet --db "$db" \
    --set convergence.mccandlish.s_min=900 >/dev/null 2>"$work/err" || fail "mpirun ttasim run --db exited $?: $(cat "$work/err")"
rows() { # rows RUN: that run's rows less their ids and its start, process and command line
    sqlite3 "$db" "SELECT command, version, build, cwd FROM runs WHERE id = $1;
        SELECT path, bytes, fnv1a64 FROM inputs WHERE run = $1 ORDER BY rowid;
        SELECT scenario, scenario_fnv1a64, name, point, overrides, output FROM points WHERE run = $1 ORDER BY id"
}
rows 1 >"$work/j2.rows"
rows 2 >"$work/mpi.rows"
[ "$(wc -l <"$work/j2.rows")" -gt 65 ] || fail "-j 2: few rows: $(cat "$work/j2.rows")"
cmp -s "$work/j2.rows" "$work/mpi.rows" || fail "-j 2 and mpirun -n 3 wrote other rows: $(diff "$work/j2.rows" "$work/mpi.rows" | head -5)"
two=$(sqlite3 "$db" "SELECT count(*) FROM runs; SELECT count(*) FROM points WHERE run = 2;
    SELECT json_extract(argv, '\$[1]') || json_extract(argv, '\$[2]') FROM runs ORDER BY id" | tr '\n' ' ')
[ "$two" = "2 65 -j2 -j1 " ] || fail "two runs (runs, points of run 2, each one's -j): $two"

# 4. check (a bound missed: exit 1, its points still kept), compare and plan, on a 16-point
# sweep and a scenario without one (kept small: the sanitized suite runs them too)
sed -e 's/"name": "db-sweep"/"name": "db-expect"/' -e 's/"sweep": {"nodes": \[1, 2, 4, 8\],/"expect": {"step.time_s": {"max": 1e-9}}, "sweep": {"nodes": [2],/' \
    "$work/sweep.json" >"$work/expect.json"
sed -e 's/"name": "db-sweep"/"name": "db-one"/' -e 's/}},$/}}/' -e '/"sweep"/,/]}/d' "$work/sweep.json" >"$work/one.json"
expect_rc 1 "$ttasim" check "$work/expect.json" "$work/one.json" -j 2 --quiet --db "$work/c.db"
expect_rc 0 "$ttasim" compare "$work/expect.json" "$work/one.json" -j 2 --quiet --db "$work/c.db"
got=$(sqlite3 "$work/c.db" "SELECT r.command, p.name, count(*), count(p.point) FROM runs AS r JOIN points AS p ON p.run = r.id
    GROUP BY r.id, p.name ORDER BY r.id, p.name" | tr '\n' ' ')
[ "$got" = "check|db-expect|17|16 check|db-one|1|0 compare|db-expect|17|16 compare|db-one|1|0 " ] ||
    fail "check and compare rows: $got"
missed=$(sqlite3 "$work/c.db" "SELECT p.name, e.value->>'metric' AS metric, e.value->>'value' AS value
FROM points AS p, json_each(p.output, '\$.expect') AS e
WHERE p.point IS NULL AND e.value->>'passed' = 0;" | sort -u)
step=$(sqlite3 "$work/c.db" "SELECT output->'step'->>'time_s' FROM points WHERE run = 1 AND name = 'db-expect' AND point IS NULL")
[ "$missed" = "db-expect|step.time_s|$step" ] || fail "the documented check query: '$missed' (step $step)"
cat >"$work/plan.json" <<JSON
{"version": 1, "name": "plan-db",
 "platform": {"name": "dgx-a100", "nodes": 2, "accelerator": "a100-sxm4-40gb"},
 "workload": {"model": {"family": "gpt", "layers": 24, "hidden": 2048, "heads": 16, "vocab": 51200},
              "seq_len": 2048, "global_batch": 256, "micro_batch": 1, "precision": "bf16"},
 "optimizer": "adamw", "parallel": {"tensor": 2, "pipeline": 2}, "convergence": {"steps": 1}}
JSON
expect_rc 0 "$ttasim" plan "$work/plan.json" --top 1 --simulate 2 --zero 1 --recompute none --context-max 1 --json -j 2 \
    --quiet --db "$work/c.db"
cp "$work/out" "$work/plan.out"
got=$(sqlite3 "$work/c.db" "SELECT count(*), count(point) FROM points WHERE run = 3;
    SELECT output->>'set' FROM points WHERE run = 3 AND point = 0" | tr '\n' '|')
want=$(sqlite3 :memory: "SELECT json_array_length(readfile('$work/plan.out'), '\$.layouts') + 1,
    json_array_length(readfile('$work/plan.out'), '\$.layouts'); SELECT readfile('$work/plan.out')->'layouts'->0->>'set'" |
    tr '\n' '|')
[ "$got" = "$want" ] && [ "${got#3|2|}" != "$got" ] || fail "plan rows: '$got', its --json: '$want'"

# 5. refused before any simulation, exit 2, left as they were: not a regular file, an input, not ours
mkfifo "$work/fifo"
mkdir "$work/dir"
ln -s /dev/null "$work/null-link"
ln -s missing "$work/dangling"
printf 'not a database\n' >"$work/text.db"
sqlite3 "$work/other.db" "CREATE TABLE t (x)"
cp "$work/sweep.json" "$work/sweep.orig"
for bad in fifo dir null-link dangling sweep.json text.db other.db; do
    expect_rc 2 "$ttasim" run "$work/sweep.json" --quiet --db "$work/$bad"
    grep -qF "$work/$bad" "$work/err" || fail "--db $bad: the message does not name the file: $(cat "$work/err")"
    grep -q "simulat\|point" "$work/out" && fail "--db $bad: ran before refusing"
done
expect_rc 2 "$ttasim" check "$work/sweep.json" --quiet --db "$work/sweep.json"
expect_rc 2 "$ttasim" run "$work/sweep.json" --quiet --db "$src/tests/data/tiny-trace.json"
cmp -s "$work/sweep.json" "$work/sweep.orig" || fail "the scenario changed"
[ "$(cat "$work/text.db")" = "not a database" ] || fail "a file that is not a database changed"
[ -L "$work/dangling" ] && [ ! -e "$work/missing" ] || fail "a file was created through a dangling link"
expect_rc 2 "$ttasim" run "$work/sweep.json" --quiet --shard 0/2 --db "$work/s.db"

[ $fails -eq 0 ] || exit 1
echo "test_results_db: all passed"
