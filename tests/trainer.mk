# Check suites for trainer/ (see tests/local.mk for TEST_LIBS).

check_PROGRAMS += tests/test_optimizer
tests_test_optimizer_SOURCES = tests/test_optimizer.c
tests_test_optimizer_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_optimizer_LDADD = $(TEST_LIBS)
TESTS += tests/test_optimizer

check_PROGRAMS += tests/test_profile
tests_test_profile_SOURCES = tests/test_profile.c
tests_test_profile_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_profile_LDADD = $(TEST_LIBS)
TESTS += tests/test_profile
