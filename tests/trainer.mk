# Check suites for trainer/ (see tests/local.mk for TEST_LIBS).
