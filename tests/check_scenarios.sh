#!/bin/sh
# make check: every scenario under scenarios/ runs and meets its "expect"
# bounds (the same command CI runs), with JUnit XML in the build tree.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
exec "$top_builddir/ttasim" check --junit "$top_builddir/scenarios-junit.xml" "$top_srcdir/scenarios"
