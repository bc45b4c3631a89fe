# Check suites for sim/engine/ (see tests/local.mk for TEST_LIBS).

check_PROGRAMS += tests/test_engine
tests_test_engine_SOURCES = tests/test_engine.c
tests_test_engine_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_engine_LDADD = $(TEST_LIBS)
TESTS += tests/test_engine

# A sweep killed mid-run (SIGINT, SIGKILL) leaves no process and no temporary file.
TESTS += tests/test_signals.sh
EXTRA_DIST += tests/test_signals.sh

# --links: link bytes on SimGrid's routes, rails' PXN relay, overridden values noted.
check_PROGRAMS += tests/test_links
tests_test_links_SOURCES = tests/test_links.c
tests_test_links_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_links_LDADD = $(TEST_LIBS)
TESTS += tests/test_links
