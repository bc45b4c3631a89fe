#!/bin/sh
# Chakra execution traces (sim/replay/chakra.h): a scenario's step exported by
# 'ttasim trace --chakra' and replayed by $.workload.chakra gives the same step
# time to 1e-9, on a data-parallel step (ResNet-50) and a transformer under
# tensor and pipeline parallelism (GPT-3 175B, 16 stages); a 2-rank trace written
# here byte by byte from et_def.proto replays to its hand-worked time.
set -e
ttasim=${top_builddir:-.}/ttasim
src=${top_srcdir:-.}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

step_s() { python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["step"]["time_s"]))' "$1"; }
same() { python3 -c 'import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(abs(a/b-1)>1e-9)' "$1" "$2"; }

for s in resnet50-throughput-v100-sxm2 gpt3-175b-1k-a100; do
  f="$src/scenarios/examples/$s.json"
  "$ttasim" trace --chakra "$dir/$s" "$f" 2>/dev/null
  "$ttasim" run --json "$f" > "$dir/a.json" 2>/dev/null || true
  "$ttasim" run --json "$f" --set "workload.chakra=$dir/$s" > "$dir/b.json" 2>/dev/null || true
  a=$(step_s "$dir/a.json") b=$(step_s "$dir/b.json")
  same "$a" "$b" || { echo "$s: step $a s, replayed from Chakra $b s" >&2; exit 1; }
done
[ "$(ls "$dir/gpt3-175b-1k-a100" | grep -c '\.et$')" = 16 ] || { echo "expected one file per pipeline stage" >&2; exit 1; }

# Hand-written, one file per rank (no rank map): each rank computes 1000 us, allreduces
# 64 MiB over "dp" (recorded 2000 us), computes 500 us; rank 0 then sends 300 us to
# rank 1, whose last compute (250 us) waits for the receive:
#   rank 0: 1000 + 2000 + 500 + send 300 = 3800 us
#   rank 1: 1000 + 2000 + 500 = 3500, the receive ends at 3800, + 250 = 4050 us: the step.
mkdir "$dir/hand" "$dir/lone"
python3 - "$dir/hand" <<'PY'
import struct, sys
def varint(v):
    out = b""
    while True:
        b = v & 0x7f; v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v: return out
def field(n, wire, payload):
    key = varint(n << 3 | wire)
    return key + (varint(payload) if wire == 0 else varint(len(payload)) + payload)
def attr_int(name, v): return field(10, 2, field(1, 2, name.encode()) + field(9, 0, v))
def attr_str(name, v): return field(10, 2, field(1, 2, name.encode()) + field(29, 2, v.encode()))
def node(id, typ, micros, deps=(), attrs=b""):
    m = field(1, 0, id) + field(2, 2, b"n%d" % id) + field(3, 0, typ)
    if deps: m += field(5, 2, b"".join(varint(d) for d in deps))
    return m + field(7, 0, micros) + attrs
COMP, SEND, RECV, COLL = 4, 5, 6, 7
def write(path, nodes):
    meta = field(1, 2, b"0.0.4")
    with open(path, "wb") as f:
        for m in [meta] + nodes:
            f.write(varint(len(m)) + m)
ar = attr_int("comm_type", 0) + attr_int("comm_size", 64 << 20) + attr_str("pg_name", "dp")
common = [node(1, COMP, 1000), node(2, COLL, 2000, [1], ar), node(3, COMP, 500, [2])]
p2p = attr_int("comm_src", 0) + attr_int("comm_dst", 1) + attr_int("comm_tag", 7)
write(sys.argv[1] + "/hand.0.et", common + [node(4, SEND, 300, [3], p2p)])
write(sys.argv[1] + "/hand.1.et", common + [node(4, RECV, 0, [], p2p), node(5, COMP, 250, [3, 4])])
# lone nodes, no dependency in either file (a graph without edges): the step is the longer, 1000 us
write(sys.argv[1] + "/../lone/lone.0.et", [node(1, COMP, 1000)])
write(sys.argv[1] + "/../lone/lone.1.et", [node(1, COMP, 700)])
PY
cat > "$dir/hand.json" <<EOF2
{"version": 1, "name": "hand-written Chakra trace",
 "platform": {"name": "star", "nodes": 2, "accelerator": "v100-sxm2"},
 "workload": {"trace": "$src/scenarios/traces/resnet50.json", "micro_batch": 32, "chakra": "$dir/hand"},
 "optimizer": "momentum", "collectives": {"allreduce": "ring"}, "convergence": {"steps": 10}}
EOF2
"$ttasim" run --json "$dir/hand.json" > "$dir/h.json"
h=$(step_s "$dir/h.json")
same "$h" 0.00405 || { echo "hand-written trace: step $h s, expected 0.00405 s" >&2; exit 1; }
sed "s|$dir/hand|$dir/lone|" "$dir/hand.json" > "$dir/lone.json"
"$ttasim" run --json "$dir/lone.json" > "$dir/l.json"
l=$(step_s "$dir/l.json")
same "$l" 0.001 || { echo "trace of lone nodes: step $l s, expected 0.001 s" >&2; exit 1; }

# strict: a node depending on an id the file lacks is named with its file
python3 - "$dir/hand/hand.1.et" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
open(sys.argv[1], "wb").write(b[:-12])
PY
if "$ttasim" run --json "$dir/hand.json" > /dev/null 2> "$dir/err"; then echo "a cut trace ran" >&2; exit 1; fi
grep -q "hand.1.et" "$dir/err" || { cat "$dir/err" >&2; exit 1; }
echo ok
