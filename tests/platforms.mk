# Check suites for platforms/ (see tests/local.mk for TEST_LIBS).
