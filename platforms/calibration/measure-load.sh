#!/bin/sh
# Re-measures the per-object costs of platforms/platform_estimate.c: SimGrid
# 3.32 loads XML files that each grow one kind of object at three sizes, 2x
# apart; the slope of the peak resident set (and of user time) between them
# is that object's cost. Usage: sh platforms/calibration/measure-load.sh
# (needs cc and libsimgrid-dev; prints "kind size peak_KiB user_s").
set -e
dir=$(mktemp -d "${TMPDIR:-/tmp}/ttasim-measure-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cat >"$dir/load.c" <<'C'
#include <simgrid/engine.h>
#include <stdio.h>
#include <sys/resource.h>
int main(int argc, char **argv)
{
    simgrid_init(&argc, argv);
    simgrid_load_platform(argv[1]);
    simgrid_run_until(0.0); /* seals the zones */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%ld %.3f\n", ru.ru_maxrss, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6);
    return 0;
}
C
cc -O2 "$dir/load.c" -o "$dir/load" -lsimgrid
# kind n [links per route | hosts per zone]
gen() {
    awk -v kind="$1" -v n="$2" -v k="${3:-4}" 'BEGIN {
        L = "<link id=\"%s\" bandwidth=\"1e9Bps\" latency=\"1e-6s\" sharing_policy=\"SPLITDUPLEX\"/>\n"
        print "<?xml version=\0471.0\047?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">"
        if (kind == "hosts") { print "<zone id=\"z\" routing=\"Dijkstra\">"; for (i = 0; i < n; i++) printf "<host id=\"h%d\" speed=\"1f\"/>\n", i }
        if (kind == "routers") { print "<zone id=\"z\" routing=\"Dijkstra\"><host id=\"h\" speed=\"1f\"/>"; for (i = 0; i < n; i++) printf "<router id=\"r%d\"/>\n", i }
        if (kind == "links") { print "<zone id=\"z\" routing=\"Full\"><host id=\"h\" speed=\"1f\"/>"; for (i = 0; i < n; i++) printf L, "l" i }
        if (kind == "fullcells") { print "<zone id=\"z\" routing=\"Full\">"; for (i = 0; i < n; i++) printf "<host id=\"h%d\" speed=\"1f\"/>\n", i }
        if (kind == "routes" || kind == "edges" || kind == "bypass") { # routes of a Full zone, edges of a Dijkstra graph, bypass routes
            printf "<zone id=\"z\" routing=\"%s\">", kind == "edges" ? "DijkstraCache" : "Full"
            for (i = 0; i < 400; i++) printf "<host id=\"h%d\" speed=\"1f\"/>\n", i
            for (i = 0; i < 64; i++) printf L, "l" i
            c = 0; tag = kind == "bypass" ? "bypassRoute" : "route"; sym = kind == "bypass" ? "" : " symmetrical=\"NO\""
            for (a = 0; a < 400 && c < n; a++) for (b = 0; b < 400 && c < n; b++) if (a != b) {
                printf "<%s src=\"h%d\" dst=\"h%d\"%s>", tag, a, b, sym
                for (j = 0; j < k; j++) printf "<link_ctn id=\"l%d\" direction=\"UP\"/>", (a + j) % 64
                printf "</%s>\n", tag; c++
            }
            if (kind == "bypass") for (a = 0; a < 400; a++) printf "<route src=\"h%d\" dst=\"h%d\" symmetrical=\"NO\"><link_ctn id=\"l0\" direction=\"UP\"/></route>\n", a, (a + 1) % 400
        }
        if (kind == "cluster") printf "<cluster id=\"c\" prefix=\"acc-\" suffix=\"\" radical=\"0-%d\" speed=\"1f\" bw=\"1e9Bps\" lat=\"1e-6s\" sharing_policy=\"SPLITDUPLEX\" topology=\"FLAT\"/>\n", n - 1
        if (kind == "groups") { # n zones of k hosts under a Floyd world, as platform_xml.c writes groups
            print "<zone id=\"w\" routing=\"Floyd\">"
            for (z = 0; z < n; z++) {
                printf "<zone id=\"g%d\" routing=\"DijkstraCache\">", z
                for (j = 0; j < k; j++) printf "<host id=\"h%d-%d\" speed=\"1f\"/>", z, j
                print "</zone>"
            }
        }
        if (kind == "zones") { # n zones of k hosts, 20 per Floyd group, as platform_xml.c nested nodes
            print "<zone id=\"w\" routing=\"Floyd\">"
            for (z = 0; z < n; z++) {
                if (z % 20 == 0) printf "%s<zone id=\"g%d\" routing=\"Floyd\">\n", z ? "</zone>" : "", z
                printf "<zone id=\"n%d\" routing=\"Full\">", z
                for (j = 0; j < k; j++) printf "<host id=\"h%d-%d\" speed=\"1f\"/>", z, j
                print "</zone>"
            }
            print "</zone>"
        }
        if (kind != "cluster") print "</zone>"
        print "</platform>"
    }' >"$dir/p.xml"
    echo "$* $("$dir/load" "$dir/p.xml" --log=root.thresh:warning)"
}
for n in 20000 40000 80000; do gen hosts $n; gen routers $n; gen links $n; gen cluster $n; done
for n in 1000 2000 4000; do gen fullcells $n; gen zones $n 1; done
for n in 40000 80000 159600; do gen routes $n 4; gen edges $n 4; gen bypass $n 4; done
gen routes 80000 1; gen routes 80000 8; gen bypass 80000 1; gen bypass 80000 8
for n in 256 512 1024 2048; do gen zones $n 18; done
for n in 64 128 256 512; do gen groups $n 200; done
