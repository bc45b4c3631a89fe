#!/bin/sh
# Fails when an #include crosses the layering of sim/README.md and HACKING.md:
# common/ includes only common/; trainer/, platforms/, collectives/ never include sim/;
# only sim/engine/ includes SimGrid; engine/ includes no other sim/ folder;
# replay/ neither report/ nor cli/; report/ not engine/ nor cli/; and no header of
# replay/ (or below it) includes an engine header: the types replay and the engine
# share are plain data below sim/ (platforms/host_rows.h, link_usage.h).
src=${top_srcdir:-.}
cd "$src" || exit 99
bad=0
# forbid FOLDER PATTERN WHY [GLOB...]: every #include line under FOLDER matching PATTERN
# in a file matching one of the globs (default *.c and *.h) is a violation.
forbid() {
    dir=$1 pat=$2 why=$3
    shift 3
    [ $# -gt 0 ] || set -- '*.c' '*.h'
    globs=
    for g in "$@"; do globs="$globs --include=$g"; done
    set -f # the globs are grep's
    hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($pat)" "$dir" $globs 2>/dev/null)
    set +f
    if [ -n "$hits" ]; then
        printf '%s\n' "$hits" | sed "s|\$|   <- $why|" >&2
        bad=1
    fi
}
forbid common 'trainer/|platforms/|collectives/|sim/' 'common/ includes only common/'
for d in trainer platforms collectives; do
    forbid "$d" 'sim/' "$d/ never includes sim/"
done
for d in common trainer platforms collectives sim/replay sim/report sim/cli tests; do
    forbid "$d" 'simgrid/|xbt/|xbt\.h|simgrid\.h' 'only sim/engine/ includes SimGrid'
done
forbid sim/engine 'sim/(replay|report|cli)/' 'engine/ is the bottom of sim/'
forbid sim/replay 'sim/(report|cli)/' 'replay/ does not include report/ or cli/'
forbid sim/report 'sim/(engine|cli)/' 'report/ does not include engine/ or cli/'
forbid sim/replay 'sim/engine/' 'a replay/ header carries no engine type (plain data goes below sim/)' '*.h'
# The rules above must see the tree: a moved folder would make them pass vacuously.
for d in common trainer platforms collectives sim/engine sim/replay sim/report sim/cli; do
    [ -n "$(ls "$d"/*.c 2>/dev/null)" ] || { echo "test_layering: no C sources in $d/" >&2; bad=1; }
done
[ -n "$(grep -rlE '#include <simgrid/' sim/engine)" ] || { echo "test_layering: sim/engine/ does not include SimGrid" >&2; bad=1; }
if [ $bad -ne 0 ]; then
    echo "FAIL: an include crosses the layering (see sim/README.md)" >&2
    exit 1
fi
echo "layering: ok"
