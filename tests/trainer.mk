# Check suites for trainer/ (see tests/local.mk for TEST_LIBS).
check_PROGRAMS += tests/test_layers tests/test_models
tests_test_layers_SOURCES = tests/test_layers.c
tests_test_layers_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_layers_LDADD = $(TEST_LIBS)
tests_test_models_SOURCES = tests/test_models.c
tests_test_models_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_models_LDADD = $(TEST_LIBS)
TESTS += tests/test_layers tests/test_models

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

check_PROGRAMS += tests/test_dataparallel
tests_test_dataparallel_SOURCES = tests/test_dataparallel.c
tests_test_dataparallel_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_dataparallel_LDADD = $(TEST_LIBS)
TESTS += tests/test_dataparallel

check_PROGRAMS += tests/test_llm
tests_test_llm_SOURCES = tests/test_llm.c
tests_test_llm_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_llm_LDADD = $(TEST_LIBS)
TESTS += tests/test_llm

check_PROGRAMS += tests/test_markov
tests_test_markov_SOURCES = tests/test_markov.c
tests_test_markov_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_markov_LDADD = $(TEST_LIBS)
TESTS += tests/test_markov
