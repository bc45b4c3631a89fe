#!/bin/sh
# ttasim run --html: the page loads in headless Chromium with no console error,
# uses no external resource, and every number it shows is --json's (each value
# cell names its JSON key); text is escaped (a scenario name with markup reads
# as written); the validation status is validation.json's; the same bytes twice.
top_srcdir=${top_srcdir:-.}
name=test-html-report
. "$top_srcdir/tests/testlib.sh"

need_chromium

q=$src/scenarios/quickstart.json
# markup, quotes and an ampersand in a name are text; a sweep of two points
set -- --set 'name=<b>q</b> & "x" '"'y'"' <!--' --set 'sweep.global_batch=[2048,4096]' --quiet
expect_rc 0 "$ttasim" run "$q" "$@" --json --html "$work/page.html"
cp "$work/out" "$work/doc.json"
expect_rc 0 "$ttasim" run "$q" "$@" -j 1 --html "$work/again.html"
cmp -s "$work/page.html" "$work/again.html" || fail "two runs wrote different pages"
# the page is written whole through outfile: never onto an input
expect_rc 2 "$ttasim" run "$q" --quiet --html "$q"

timeout 180 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
    --enable-logging=stderr --v=0 --dump-dom "file://$work/page.html" >"$work/dom.html" 2>"$work/chromium.err" ||
    fail "chromium exited $? rendering the page: $(tail -n 3 "$work/chromium.err")"
# console messages (script errors, blocked or missing resources) are logged as CONSOLE lines
grep -E 'CONSOLE|Uncaught|Failed to load' "$work/chromium.err" >&2 && fail "the page logged console messages"

python3 - "$work/dom.html" "$work/doc.json" "$src/scenarios/published-validation.json" <<'EOF' || fails=$((fails + 1))
import json, re, statistics, sys
from html.parser import HTMLParser

dom_path, doc_path, validation_path = sys.argv[1:]
doc = json.load(open(doc_path))
errors = []

class Page(HTMLParser):
    """Cells with data-key (and the text they show), the h1, the assumptions' items, external references."""
    def __init__(self):
        super().__init__()
        self.stack, self.cells, self.rows, self.h1, self.items, self.external = [], [], {}, "", [], []
        self.in_assumptions, self.validated = False, (None, None)
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "link", "img", "iframe", "object", "embed") or "src" in a or \
                ("href" in a and not a["href"].startswith("#")):
            self.external.append((tag, attrs))
        if tag == "section" and a.get("id") == "assumptions":
            self.in_assumptions = True
        if tag == "section" and a.get("id") == "validation":
            self.validated = (a.get("data-model"), a.get("data-accelerator"))
        if tag == "tr" and "data-validation" in a:
            self.row = self.rows.setdefault(a["data-validation"], {})
        for k in ("data-rows", "data-median", "data-worst"):
            if k in a:
                self.row[k] = float(a[k])
        self.stack.append((tag, a, []))
    def handle_endtag(self, tag):
        while self.stack:
            t, a, text = self.stack.pop()
            s = "".join(text)
            if self.stack:
                self.stack[-1][2].append(s)
            if t == "td" and "data-key" in a:
                self.cells.append((a["data-key"], a["data-value"], s))
            if t == "h1":
                self.h1 = s
            if t == "li" and self.in_assumptions:
                self.items.append(s)
            if t == "section":
                self.in_assumptions = False
            if t == tag:
                break
    def handle_data(self, data):
        if self.stack:
            self.stack[-1][2].append(data)

page = Page()
page.feed(open(dom_path).read())

def lookup(path):
    v = doc
    for part in path.split("."):
        m = re.fullmatch(r"([a-z_A-Z0-9]+)((?:\[\d+\])*)", part)
        v = v[m.group(1)]
        for i in re.findall(r"\[(\d+)\]", m.group(2)):
            v = v[int(i)]
    return v

def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-300

for key, value, shown in page.cells:
    try:
        want = lookup(key)
    except (KeyError, IndexError, TypeError):
        errors.append(f"{key}: in the page, not in --json")
        continue
    if not close(float(value), want, 1e-11):
        errors.append(f"{key}: data-value {value}, --json {want}")
    if not close(float(shown), want, 6e-6):
        errors.append(f"{key}: shows {shown}, --json {want}")
keys = {k for k, _, _ in page.cells}
required = ["step.time_s", "step.compute_s", "step.exposed_comm_s", "step.mfu", "step.memory.total_bytes",
            "steps_to_target", "time_to_accuracy_s", "time_to_accuracy_p90_s", "cost_usd", "energy_j",
            "per_step.cost_usd", "resilience.goodput", "resilience.interruptions_per_day",
            "time_to_accuracy_with_failures_s", "ownership.capex_usd.total", "ownership.to_accuracy_usd",
            "ownership.tco_usd"]
for i in range(len(doc["sweep"])):
    required += [f"sweep[{i}].{k}" for k in ("global_batch", "step.time_s", "time_to_accuracy_s", "cost_usd")]
errors += [f"{k}: in --json, not in the page" for k in required if k not in keys]
if len(page.cells) < 80:
    errors.append(f"only {len(page.cells)} values in the page")
if page.h1 != doc["scenario"]:
    errors.append(f"the heading reads {page.h1!r}, the scenario is named {doc['scenario']!r}")
if page.items != doc["assumptions"]:
    errors.append(f"the page folds {len(page.items)} assumptions, --json lists {len(doc['assumptions'])}")
errors += [f"an external resource: {t} {a}" for t, a in page.external]

rows = json.load(open(validation_path))["rows"]
model, accel = page.validated
if model != doc["workload"]["model"] or not accel:
    errors.append(f"the validation status is of {page.validated}, the run's model is {doc['workload']['model']}")
for rid, m, acc in (("both", model, accel), ("model", model, None), ("accelerator", None, accel), ("all", None, None)):
    for role in ("validation", "calibration"):
        dev = [abs(r["step_ratio"] - 1) for r in rows if r["role"] == role and "step_ratio" in r
               and m in (None, r["model"]) and acc in (None, r["accelerator"])]
        got = page.rows.get(f"{rid}-{role}", {})
        if got.get("data-rows") != len(dev):
            errors.append(f"validation {rid}-{role}: {got.get('data-rows')} rows, validation.json {len(dev)}")
        elif dev and not (close(got["data-median"], statistics.median(dev), 1e-9) and
                          close(got["data-worst"], max(dev), 1e-9)):
            errors.append(f"validation {rid}-{role}: {got}, validation.json median {statistics.median(dev)}")
if not page.rows.get("both-validation", {}).get("data-rows"):
    errors.append(f"no validation row of {model} on {accel}: the quickstart's model and accelerator are published")
for e in errors:
    print("FAIL:", e, file=sys.stderr)
print(f"{len(page.cells)} values equal --json's, {len(page.rows)} validation rows")
sys.exit(1 if errors else 0)
EOF

[ $fails -eq 0 ] || exit 1
echo "html report: ok"
