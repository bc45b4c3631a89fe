#!/bin/sh
# plan --shard I/N and plan --merge: each shard simulates only its share of
# the layouts (k mod N = I) after the whole screen, and the merge of the N
# shards prints and writes what the unsharded plan does, byte for byte (text,
# --json, --csv; -j 1 and -j 2), simulating nothing itself. A shard missing,
# given twice, changed by a byte, cut short or of other search options is
# refused (exit 2) naming the file; an interrupted search resumes by running
# again only the shard that is missing.
top_srcdir=${top_srcdir:-.}
name=test-plan-shards
. "$top_srcdir/tests/testlib.sh"

# tests/test_layout_search.c's 1.3B GPT on 16 A100 cut to 6 GB, 424 of its layouts screened.
cat >"$work/s.json" <<EOF
{"version": 1, "name": "GPT 1.3B on 16 A100 of 6G",
 "platform": {"name": "dgx-a100", "nodes": 2, "accelerator": "a100-sxm4-40gb"},
 "workload": {"model": {"family": "gpt", "layers": 24, "hidden": 2048, "heads": 16, "vocab": 51200},
              "seq_len": 2048, "global_batch": 256, "micro_batch": 1, "precision": "bf16",
              "gradient_precision": "fp32"},
 "optimizer": "adamw",
 "devices": {"a100-sxm4-40gb": {"mem_bytes": "6G"}},
 "parallel": {"tensor": 2, "pipeline": 2, "sequence_parallel": true, "zero": 1},
 "convergence": {"steps": 1}}
EOF
s=$work/s.json
# --top 3: 9 screened layouts simulated and the scenario's own, 10 simulations
plan() { "$ttasim" plan "$s" --top 3 --zero 2,3 --recompute selective "$@"; }

plan -j 1 --quiet --csv "$work/u.csv" >"$work/u.txt" 2>"$work/err" || fail "plan exited $?: $(cat "$work/err")"
plan -j 1 --quiet --json >"$work/u.json" 2>"$work/err" || fail "plan --json exited $?: $(cat "$work/err")"
grep -q '^top 3 by step time' "$work/u.txt" || fail "the unsharded plan ranks no layouts: $(cat "$work/u.txt")"

# 1. Three shards: each simulates its share (4, 3, 3 of 10), prints one document on stdout, progress on stderr.
for i in 0 1 2; do
    plan -j 1 --shard $i/3 >"$work/shard$i.json" 2>"$work/err$i" || fail "plan --shard $i/3 exited $?: $(cat "$work/err$i")"
    head -c 40 "$work/shard$i.json" | grep -q '^{"format":"ttasim-shard"' || fail "shard $i: not a shard document"
    [ "$(wc -l <"$work/shard$i.json")" -eq 1 ] || fail "shard $i: more than the document on stdout"
    want=$((i == 0 ? 4 : 3))
    grep -q "simulate: $want/$want layouts done" "$work/err$i" ||
        fail "shard $i/3 did not simulate its $want of the 10 simulations: $(cat "$work/err$i")"
done
grep -q '"point":3,' "$work/shard0.json" && grep -q '"point":9,' "$work/shard0.json" ||
    fail "shard 0 of 3 lacks simulations 3 and 9 (k mod 3 = 0)"

# 2. Their merge, in any order: the unsharded plan's bytes, and no simulation of its own.
plan -j 1 --merge "$work/shard2.json" "$work/shard0.json" "$work/shard1.json" --csv "$work/m.csv" \
    >"$work/m.txt" 2>"$work/err" || fail "plan --merge exited $?: $(cat "$work/err")"
grep -q 'simulate:' "$work/err" && fail "plan --merge simulated layouts itself: $(cat "$work/err")"
plan -j 1 --quiet --json --merge "$work/shard0.json" "$work/shard1.json" "$work/shard2.json" >"$work/m.json" 2>"$work/err" ||
    fail "plan --merge --json exited $?: $(cat "$work/err")"
for ext in txt json csv; do
    cmp -s "$work/u.$ext" "$work/m.$ext" || fail "merge of 3 shards: $ext differs from the unsharded plan"
done

# 3. -j 2, two shards: the same bytes again.
for i in 0 1; do
    plan -j 2 --quiet --shard $i/2 >"$work/two$i.json" 2>"$work/err" || fail "plan -j 2 --shard $i/2 exited $?"
done
plan -j 2 --quiet --merge "$work/two0.json" "$work/two1.json" >"$work/m2.txt" 2>"$work/err" ||
    fail "plan -j 2 --merge exited $?: $(cat "$work/err")"
cmp -s "$work/u.txt" "$work/m2.txt" || fail "merge of 2 shards at -j 2: text differs from the unsharded plan"

# 4. Refusals: exit 2, naming the file and what to do.
expect2() { # expect2 PATTERN CMD...
    pat=$1
    shift
    expect_rc 2 "$@"
    grep -q -- "$pat" "$work/err" || fail "$*: no '$pat' in: $(cat "$work/err")"
}
expect2 'simulation 1 of 10 (.*) is in none of the shards given; run its shard (--shard I/N with I = 1 mod N' \
    plan --quiet --merge "$work/shard0.json" "$work/shard2.json"
expect2 'shard1.json: $.shard: shard 1 of 3 is given twice' \
    plan --quiet --merge "$work/shard0.json" "$work/shard1.json" "$work/shard1.json" "$work/shard2.json"
# one byte changed, mid-document
cp "$work/shard1.json" "$work/edited.json"
at=$(($(wc -c <"$work/edited.json") / 2))
byte=$(dd if="$work/edited.json" bs=1 skip=$at count=1 2>/dev/null)
[ "$byte" = 1 ] && new=2 || new=1
printf %s "$new" | dd of="$work/edited.json" bs=1 seek=$at conv=notrunc 2>/dev/null
cmp -s "$work/edited.json" "$work/shard1.json" && fail "the shard's byte $at was not changed"
expect2 "edited.json: \$.checksum: the file's bytes do not match.*run that shard again" \
    plan --quiet --merge "$work/shard0.json" "$work/edited.json" "$work/shard2.json"
# other search options in a shard (--simulate), or in the merge (--no-sequence-parallel)
plan --quiet --simulate 10 --shard 1/3 >"$work/other1.json" 2>"$work/err" || fail "plan --simulate 10 --shard exited $?"
expect2 'other1.json: $.options: .*"--simulate 10 --zero 2,3 --recompute selective", this merge with "--simulate 9 --zero' \
    plan --quiet --merge "$work/shard0.json" "$work/other1.json" "$work/shard2.json"
expect2 'shard0.json: $.options: .*this merge with ".* --no-sequence-parallel"' \
    plan --quiet --no-sequence-parallel --merge "$work/shard0.json" "$work/shard1.json" "$work/shard2.json"
expect2 "shard0.json: \$.command: a shard of 'ttasim plan', not of 'ttasim run'; merge it with 'ttasim plan SCENARIO --merge" \
    "$ttasim" merge "$s" "$work/shard0.json" "$work/shard1.json" "$work/shard2.json"
expect2 'drop --merge, --json, --csv and --db' plan --shard 0/3 --json
expect2 'give the scenario file, then its shard files' plan --merge
expect2 'this output is a shard' plan --quiet --merge "$work/shard0.json" "$work/shard1.json" "$work/shard2.json" \
    --csv "$work/shard2.json"

# 5. Resumed: shard 1 cut short (an interrupted task) is refused, run again alone, and the merge is whole.
head -c 3000 "$work/shard1.json" >"$work/cut.json"
expect2 "cut.json: it does not end with the shard's checksum" \
    plan --quiet --merge "$work/shard0.json" "$work/cut.json" "$work/shard2.json"
plan -j 1 --quiet --shard 1/3 >"$work/cut.json" 2>"$work/err" || fail "plan --shard 1/3 again exited $?"
plan -j 1 --quiet --merge "$work/shard0.json" "$work/cut.json" "$work/shard2.json" >"$work/r.txt" 2>"$work/err" ||
    fail "the resumed merge exited $?: $(cat "$work/err")"
cmp -s "$work/u.txt" "$work/r.txt" || fail "the resumed merge differs from the unsharded plan"

[ $fails -eq 0 ] || exit 1
echo "test_plan_shards: all passed"
