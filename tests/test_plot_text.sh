#!/bin/sh
# ttasim compare --svg, as headless Chromium lays it out: no two texts overlap
# and none leaves the figure (each text's box from getBoundingClientRect), on
# four scenarios of which two coincide point for point (their Pareto letters
# share a label) and one sweeps node counts beside the batch; the title names
# every model once and --set; after --set the legend names the files, not the
# scenarios' own names (which may say what no longer holds).
top_srcdir=${top_srcdir:-.}
name=test-plot-text
. "$top_srcdir/tests/testlib.sh"

need_chromium

scenario() { # file name bandwidth sweep
    cat >"$work/$1.json" <<JSON
{"version": 1, "name": "$2",
 "platform": {"name": "star", "nodes": 8, "link_bw_Bps": "$3", "link_latency_s": "1us"},
 "network": "ideal",
 "workload": {"trace": "$src/tests/data/tiny-trace.json", "global_batch": 64, "micro_batch": 8},
 "collectives": {"allreduce": "ring"},
 "convergence": {"mccandlish": {"s_min": 1000, "noise_scale": 64}},
 "sweep": $4}
JSON
}
batches='{"global_batch": [64, 128, 256]}'
scenario fast "stale: 8 star nodes at 12.5 GB/s" 12.5G "$batches"
scenario twin "stale: the same 8 star nodes again" 12.5G "$batches"
scenario slow "stale: 8 star nodes at 0.5 GB/s" 0.5G "$batches"
scenario grid "stale: 8 star nodes, batches by node counts" 2G '{"global_batch": [64, 256], "nodes": [2, 4]}'
expect_rc 0 "$ttasim" compare "$work/fast.json" "$work/twin.json" "$work/slow.json" "$work/grid.json" \
    --set platform.link_latency_s=2us --svg "$work/p.svg" --quiet

{
    printf '<!DOCTYPE html><html><body style="margin:0">\n'
    cat "$work/p.svg"
    cat <<'EOF'
<pre id="boxes"></pre>
<script>
const svg = document.querySelector("svg").getBoundingClientRect();
const out = [...document.querySelectorAll("svg text")].map(t => {
  const r = t.getBoundingClientRect();
  return [t.textContent, r.left - svg.left, r.top - svg.top, r.width, r.height];
});
document.getElementById("boxes").textContent = JSON.stringify({w: svg.width, h: svg.height, texts: out});
</script></body></html>
EOF
} >"$work/page.html"
timeout 180 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
    --dump-dom "file://$work/page.html" >"$work/dom.html" 2>"$work/chromium.err" ||
    fail "chromium exited $? laying out the figure: $(tail -n 3 "$work/chromium.err")"

python3 - "$work/dom.html" <<'EOF' || fails=$((fails + 1))
import html, json, re, sys
m = re.search(r'<pre id="boxes">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
if not m:
    sys.exit("the page's script left no text boxes")
doc = json.loads(html.unescape(m.group(1)))
texts = [t for t in doc["texts"] if t[0].strip()]
errors = []
if len(texts) < 60:
    errors.append("only %d texts laid out: expected the title, legend, axes and letters of five panels" % len(texts))
for s, x, y, w, h in texts:
    if x < -0.5 or y < -0.5 or x + w > doc["w"] + 0.5 or y + h > doc["h"] + 0.5:
        errors.append("%r at (%.0f, %.0f) %.0fx%.0f leaves the %.0fx%.0f figure" % (s, x, y, w, h, doc["w"], doc["h"]))
# a glyph box holds the line's ascent and descent: shrink it by a pixel a side so that
# texts on adjacent lines, which touch, do not count
for i, (a, ax, ay, aw, ah) in enumerate(texts):
    for b, bx, by, bw, bh in texts[i + 1:]:
        if ax + 1 < bx + bw - 1 and bx + 1 < ax + aw - 1 and ay + 1 < by + bh - 1 and by + 1 < ay + ah - 1:
            errors.append("%r at (%.0f, %.0f) overlaps %r at (%.0f, %.0f)" % (a, ax, ay, b, bx, by))
title = texts[0][0] + (" " + texts[1][0] if texts[1][1] == texts[0][1] and texts[1][0][:1].isalpha() else "")
if "scenarios compared: tiny; --set platform.link_latency_s=2us" not in title:
    errors.append("title %r: expected the model once and the --set" % title)
legend = [t[0] for t in texts if re.match(r"[A-H]  ", t[0])]
if any("stale" in s for s in legend) or not any(s.startswith("B  twin") for s in legend):
    errors.append("legend %r: after --set, expected the files' names (fast, twin, ...)" % legend)
if not any(re.fullmatch(r"[A-D]*A[A-D]*B[A-D]*", t[0]) for t in texts):
    errors.append("no shared label 'AB' for the coinciding points of fast and twin")
if errors:
    sys.exit("\n".join(errors))
EOF

[ $fails -eq 0 ] || exit 1
echo "plot text: ok"
