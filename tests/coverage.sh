#!/bin/sh
# Line coverage per folder from the gcov data of a `make check` run (make coverage).
# Run from the build tree; every instrumented source counts, run or not.
GCOV=${GCOV:-gcov}
for gcno in $(find common trainer platforms collectives sim -name '*.gcno' | sort); do
    "$GCOV" -n -o "$(dirname "$gcno")" "$gcno" 2>/dev/null
done | awk '
    /^File / {  # in-tree "sim/x.c" or VPATH "../src/sim/x.c"
        f = $2; gsub(/\047/, "", f)
        if (match(f, /(^|\/)(common|trainer|platforms|collectives|sim)\//)) f = substr(f, RSTART + (substr(f, RSTART, 1) == "/"))
        next
    }
    /^Lines executed:/ && f ~ /\.c$/ && !(f in seen) {
        seen[f] = 1
        split($2, a, ":"); pct = a[2]; sub(/%/, "", pct); n = $4
        d = f; sub(/\/[^\/]*$/, "", d)
        if (d !~ /^sim\//) sub(/\/.*/, "", d)
        run[d] += pct * n / 100; all[d] += n; trun += pct * n / 100; tall += n
    }
    END {
        split("common trainer platforms collectives sim/engine sim/replay sim/report sim/cli", order, " ")
        printf "%-12s %8s %8s %7s\n", "folder", "lines", "run", "cover"
        for (i = 1; i <= 8; i++) {
            d = order[i]
            if (all[d]) printf "%-12s %8d %8d %6.1f%%\n", d, all[d], run[d] + 0.5, 100 * run[d] / all[d]
            else printf "%-12s %8s %8s %7s\n", d, "-", "-", "no data"
        }
        if (tall) printf "%-12s %8d %8d %6.1f%%\n", "total", tall, trun + 0.5, 100 * trun / tall
    }'
