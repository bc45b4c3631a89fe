# Check suites for sim/ (see tests/local.mk for TEST_LIBS).
