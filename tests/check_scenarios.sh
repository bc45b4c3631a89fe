#!/bin/sh
# make check: every scenario under scenarios/ runs and meets its "expect"
# bounds (the same command CI runs), with JUnit XML in the build tree.
# Sanitizer builds run SimGrid on threads (about 30x slower): there the
# scenarios of at most a few dozen ranks stand for the rest.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
s=$top_srcdir/scenarios
if [ "${scenario_set:-all}" = small ]; then
    set -- "$s/quickstart.json" "$s/examples/ci-expect.json" "$s/examples/zion-dlrm.json" \
        "$s/examples/zion-dlrm-host.json" "$s/published/bert-lamb-512.json" \
        "$s/published/resnet50-he-2016.json" "$s/published/vit-b32-1gpu.json" \
        "$s/collectives/dgx-a100-allreduce-8g.json" "$s/collectives/dgx-a100-allreduce-32b-2gpu.json"
else
    # every folder, but frontier-*.json (131,072 accelerators, 30 s and more a run): benchmarks
    # (`ttasim bench sim --scale`), as in tests/test_pinned.sh
    set -- "$s/quickstart.json"
    for d in "$s"/*/; do [ "$d" = "$s/examples/" ] || set -- "$@" "${d%/}"; done
    for f in "$s"/examples/*.json; do case $f in */frontier-*) ;; *) set -- "$@" "$f" ;; esac; done
fi
exec "$top_builddir/ttasim" check --junit "$top_builddir/scenarios-junit.xml" "$@"
