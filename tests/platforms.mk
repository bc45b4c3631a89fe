# Check suites for platforms/ (see tests/local.mk for TEST_LIBS).
check_PROGRAMS += tests/test_platforms
tests_test_platforms_SOURCES = tests/test_platforms.c
tests_test_platforms_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_platforms_LDADD = $(TEST_LIBS)
TESTS += tests/test_platforms
