# Hostile-input regressions (issue 14; see tests/fuzz/ for the fuzz targets).
check_PROGRAMS += tests/test_inputs
tests_test_inputs_SOURCES = tests/test_inputs.c
tests_test_inputs_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(ZLIB_CFLAGS)
tests_test_inputs_LDADD = $(TEST_LIBS)
TESTS += tests/test_inputs

# Golden values from NumPy (tests/golden/make_golden.py) and the mutants that
# once survived the suite.
check_PROGRAMS += tests/test_golden tests/test_mutants
tests_test_golden_SOURCES = tests/test_golden.c tests/golden/golden.h
tests_test_golden_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_golden_LDADD = $(TEST_LIBS)
tests_test_mutants_SOURCES = tests/test_mutants.c
tests_test_mutants_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_mutants_LDADD = $(TEST_LIBS)
TESTS += tests/test_golden tests/test_mutants
EXTRA_DIST += tests/golden/make_golden.py
