# Check suites for collectives/ (see tests/local.mk for TEST_LIBS).
check_PROGRAMS += tests/test_collectives
tests_test_collectives_SOURCES = tests/test_collectives.c
tests_test_collectives_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_collectives_LDADD = $(TEST_LIBS)
TESTS += tests/test_collectives

check_PROGRAMS += tests/test_nccl
tests_test_nccl_SOURCES = tests/test_nccl.c
tests_test_nccl_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_nccl_LDADD = $(TEST_LIBS)
TESTS += tests/test_nccl

check_PROGRAMS += tests/test_staging
tests_test_staging_SOURCES = tests/test_staging.c
tests_test_staging_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_staging_LDADD = $(TEST_LIBS)
TESTS += tests/test_staging
