# Hostile-input regressions (issue 14; see tests/fuzz/ for the fuzz targets).
check_PROGRAMS += tests/test_inputs
tests_test_inputs_SOURCES = tests/test_inputs.c
tests_test_inputs_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(ZLIB_CFLAGS)
tests_test_inputs_LDADD = $(TEST_LIBS)
TESTS += tests/test_inputs
