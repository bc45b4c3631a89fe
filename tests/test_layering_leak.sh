#!/bin/sh
# test_layering.sh catches an engine header included by a replay/ header, as
# sim/replay/step.h and run.h once included sim/engine/host_embedding.h for two
# plain structs: a copy of the tree passes as it is and fails, naming step.h,
# with that include put back; a replay/ .c file may still call the engine.
top_srcdir=${top_srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ttasim-layering-XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
(cd "$top_srcdir" && find common trainer platforms collectives sim tests -name '*.[ch]' | tar -cf - -T -) |
    tar -xf - -C "$tmp" || exit 99
layering=$(cd "$top_srcdir/tests" && pwd)/test_layering.sh
if ! top_srcdir=$tmp sh "$layering" >"$tmp/out" 2>&1; then
    echo "FAIL: the copied tree does not pass test_layering.sh:"; cat "$tmp/out"; exit 1
fi
grep -q '#include "sim/engine/' "$tmp"/sim/replay/*.c ||
    { echo "FAIL: no replay/ .c file includes an engine header: the copy proves nothing"; exit 1; }
sed 's|^#include "common/error.h"$|&\n#include "sim/engine/host_embedding.h"|' "$top_srcdir/sim/replay/step.h" >"$tmp/sim/replay/step.h"
grep -q 'sim/engine/host_embedding.h' "$tmp/sim/replay/step.h" || { echo "FAIL: could not put the include back"; exit 99; }
if top_srcdir=$tmp sh "$layering" >"$tmp/out" 2>&1; then
    echo "FAIL: test_layering.sh passed a replay/ header that includes sim/engine/host_embedding.h"; exit 1
fi
grep -q '^sim/replay/step.h:[0-9]*:#include "sim/engine/host_embedding.h"' "$tmp/out" ||
    { echo "FAIL: test_layering.sh failed without naming step.h's include:"; cat "$tmp/out"; exit 1; }
echo "layering leak: caught"
