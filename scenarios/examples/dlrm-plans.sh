#!/bin/sh
# The embedding sharding plans side by side: DLRM (MLPerf tables, fp16) on one
# Zion and one DGX A100 at three global batches, every plan's step time in ms
# ("--": does not fit) and the plan 'auto' keeps. The last rows ask for an
# fp32 master copy of the tables on Zion with 16 GB V100s: nothing fits the
# accelerators and the tables go to the CPU sockets' memory.
# Usage: scenarios/examples/dlrm-plans.sh [TTASIM]
set -e
here=$(cd "$(dirname "$0")" && pwd)
ttasim=${1:-$here/../../ttasim}
trace=$here/../traces/dlrm-mlperf.json
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
plans="table_wise row_wise column_wise data_parallel hybrid host auto"
echo "| platform | accelerator | global batch | master copy | $(echo $plans | sed 's/ / | /g') |"
echo "|---|---|---|---|$(for p in $plans; do printf -- '---|'; done)"
run() { # platform accelerator batch master
    line="| $1 | $2 | $3 | $4 |"
    for plan in $plans; do
        cat >"$tmp" <<JSON
{"version": 1, "name": "plans", "platform": {"name": "$1", "nodes": 1, "accelerator": "$2"},
 "workload": {"trace": "$trace", "global_batch": $3, "precision": "fp16",
              "embedding": {"sharding": "$plan", "master_weights": $4}},
 "optimizer": "sgd", "convergence": {"steps": 1}}
JSON
        if ! doc=$("$ttasim" run --json "$tmp" 2>/dev/null); then
            line="$line -- |"
            continue
        fi
        cell=$(echo "$doc" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("%.2f%s" % (d["step"]["time_s"] * 1e3, " (" + d["embedding"]["plan"] + ")" if sys.argv[1] == "auto" else ""))' "$plan")
        line="$line $cell |"
    done
    echo "$line"
}
for b in 16384 65536 262144; do run zion oam-accelerator $b false; done
for b in 16384 65536 262144; do run dgx-a100 a100-sxm4-40gb $b false; done
for b in 16384 65536; do run zion v100-sxm2 $b true; done
