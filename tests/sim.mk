# Check suites for sim/ (see tests/local.mk for TEST_LIBS).

check_PROGRAMS += tests/test_step
tests_test_step_SOURCES = tests/test_step.c
tests_test_step_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_step_LDADD = $(TEST_LIBS)
TESTS += tests/test_step

check_PROGRAMS += tests/test_tta
tests_test_tta_SOURCES = tests/test_tta.c
tests_test_tta_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_tta_LDADD = $(TEST_LIBS)
TESTS += tests/test_tta
