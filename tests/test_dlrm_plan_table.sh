#!/bin/sh
# make check: scenarios/examples/dlrm-plans.md, a generated table of the DLRM
# sharding plans, is what scenarios/examples/dlrm-plan-table.sh writes with this
# build (exit 1 when a change moved a row without 'make validation-table').
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
# sanitizer builds run SimGrid on threads, 30x slower: the full-build run checks the table
[ "${scenario_set:-all}" = small ] && { echo "skipped under the sanitizers (small scenario set)"; exit 77; }
exec sh "$top_srcdir/scenarios/examples/dlrm-plan-table.sh" "$top_builddir/ttasim" --check
