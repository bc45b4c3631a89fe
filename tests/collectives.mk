# Check suites for collectives/ (see tests/local.mk for TEST_LIBS).
