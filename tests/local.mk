# Check suites; each area adds its own tests/AREA.mk, included below.
check_LIBRARIES += libtestutil.a
libtestutil_a_SOURCES = tests/testutil.c tests/testutil.h
libtestutil_a_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)

TEST_LIBS = libtestutil.a $(TT_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/test_foundation
tests_test_foundation_SOURCES = tests/test_foundation.c
tests_test_foundation_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_foundation_LDADD = $(TEST_LIBS)
TESTS += tests/test_foundation
