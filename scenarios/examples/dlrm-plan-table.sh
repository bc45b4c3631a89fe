#!/bin/sh
# dlrm-plan-table.sh [TTASIM]: the sharding-plan table of issue 17 (plan x
# platform x nodes -> step, winner, bottleneck link) as Markdown: one
# 'ttasim run --links 1' per point (--links covers a scenario's own point,
# so each point is its own scenario), the points of zion-dlrm-plans-nodes.json
# and dgx-a100-dlrm-plans.json at global batch 65,536 (ids by TorchRec's input
# alltoall), plus a flat index distribution (Zipf 0.05) where hybrid has few
# hot rows to replicate, more DGX A100 nodes, and fewer samples per GPU
# (global batch 16,384).
set -eu
TTASIM=${1:-ttasim}
DIR=$(cd "$(dirname "$0")" && pwd)
SCEN=$(mktemp /tmp/dlrm-plan-XXXXXX.json)
trap 'rm -f "$SCEN"' EXIT
cat > "$SCEN" <<JSON
{"version": 1, "name": "dlrm plan point", "platform": {"name": "zion", "nodes": 1},
 "workload": {"trace": "$DIR/../traces/dlrm-mlperf.json", "global_batch": 65536, "precision": "fp16",
              "embedding": {"ids": "alltoall"}},
 "optimizer": "sgd", "convergence": {"steps": 1000}}
JSON

# The mix: the 18 small tables data-parallel, the 8 large ones' plan auto.
MIX='[{"max_rows": 100000, "plan": "data_parallel"}, {"plan": "auto"}]'

# point PLATFORM NODES ZIPF [GLOBAL_BATCH]: one row per plan, the fastest marked
point() {
    batch=${4:-65536}
    best=""; best_s=""
    rows=""
    for plan in table_wise column_wise hybrid host mix; do
        extra=""
        [ "$3" = "-" ] || extra="--set workload.embedding.index_zipf_s=$3"
        sharding=$plan
        [ "$plan" = mix ] && sharding=$MIX
        out=$("$TTASIM" run "$SCEN" --quiet -j1 --set platform.name="$1" --set platform.nodes="$2" \
              --set workload.global_batch="$batch" --set workload.embedding.sharding="$sharding" $extra --links 1 2>&1) || {
            rows="$rows$plan|does not fit|-\n"; continue; }
        step=$(printf '%s\n' "$out" | awk '$1 == "step.time_s" {print $2; exit}')
        link=$(printf '%s\n' "$out" | awk '$1 == "bottleneck" {print $2; exit}')
        [ "$plan" = mix ] && plan="mix: <= 1e5 rows data_parallel, the rest $(printf '%s\n' "$out" |
            awk '$1 == "group" && $2 == 2 {print $7; exit}')"
        rows="$rows$plan|$step|${link:-none}\n"
        if [ -z "$best_s" ] || awk "BEGIN {exit !($step < $best_s)}"; then best=$plan; best_s=$step; fi
    done
    printf "$rows" | while IFS='|' read -r plan step link; do
        ms=$(awk "BEGIN {if (\"$step\" == \"does not fit\") print \"-\"; else printf \"%.3f\", $step * 1000}")
        win=""; [ "$plan" = "$best" ] && win="**wins**"
        printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$batch" "$3" "$plan" "$ms" "$win" "$link"
    done
}

echo "| platform | nodes | global batch | index Zipf s | plan | step (ms) | winner | bottleneck link |"
echo "|---|---|---|---|---|---|---|---|"
for n in 1 2 4 8; do point zion "$n" -; done
for n in 1 2 4 8; do point dgx-a100 "$n" -; done
point dgx-a100 1 0.05
point dgx-a100 8 0.05
point dgx-a100 1 - 16384
point dgx-a100 8 - 16384
point zion 1 0.05
