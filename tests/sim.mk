# Check suites for sim/ (see tests/local.mk for TEST_LIBS).

check_PROGRAMS += tests/test_layout
tests_test_layout_SOURCES = tests/test_layout.c
tests_test_layout_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_layout_LDADD = $(TEST_LIBS)
TESTS += tests/test_layout

check_PROGRAMS += tests/test_taskgraph
tests_test_taskgraph_SOURCES = tests/test_taskgraph.c
tests_test_taskgraph_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_taskgraph_LDADD = $(TEST_LIBS)
TESTS += tests/test_taskgraph

check_PROGRAMS += tests/test_step
tests_test_step_SOURCES = tests/test_step.c
tests_test_step_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_step_LDADD = $(TEST_LIBS)
TESTS += tests/test_step

check_PROGRAMS += tests/test_memory
tests_test_memory_SOURCES = tests/test_memory.c
tests_test_memory_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_memory_LDADD = $(TEST_LIBS)
TESTS += tests/test_memory

check_PROGRAMS += tests/test_tta
tests_test_tta_SOURCES = tests/test_tta.c
tests_test_tta_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_tta_LDADD = $(TEST_LIBS)
TESTS += tests/test_tta

check_PROGRAMS += tests/test_run
tests_test_run_SOURCES = tests/test_run.c
tests_test_run_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_run_LDADD = $(TEST_LIBS)
TESTS += tests/test_run

check_PROGRAMS += tests/test_host_embedding
tests_test_host_embedding_SOURCES = tests/test_host_embedding.c
tests_test_host_embedding_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_host_embedding_LDADD = $(TEST_LIBS)
TESTS += tests/test_host_embedding

# ttasim check scenarios/ (JUnit XML: scenarios-junit.xml in the build tree).
TESTS += tests/check_scenarios.sh
# check's exit rule, expect paths checked at load, DIR's picks, JUnit (tests/test_check.sh).
TESTS += tests/test_check.sh
EXTRA_DIST += tests/test_check.sh tests/testlib.sh
EXTRA_DIST += tests/check_scenarios.sh tests/data/tiny-trace.json
if SANITIZERS
CHECK_SCENARIO_SET = small
else
CHECK_SCENARIO_SET = all
endif
AM_TESTS_ENVIRONMENT = top_builddir='$(top_builddir)' top_srcdir='$(top_srcdir)' \
	scenario_set='$(CHECK_SCENARIO_SET)' MPIRUN='$(MPIRUN)'; export top_builddir top_srcdir scenario_set MPIRUN;
CLEANFILES += scenarios-junit.xml

# Includes follow the layering of sim/README.md.
TESTS += tests/test_layering.sh
EXTRA_DIST += tests/test_layering.sh
# ... and test_layering.sh sees an engine header included by a replay/ header.
TESTS += tests/test_layering_leak.sh
EXTRA_DIST += tests/test_layering_leak.sh

# Outputs: next to the scenario, never over an input, written whole or not at all.
TESTS += tests/test_outputs.sh
EXTRA_DIST += tests/test_outputs.sh

check_PROGRAMS += tests/test_calibration
tests_test_calibration_SOURCES = tests/test_calibration.c
tests_test_calibration_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_calibration_LDADD = $(TEST_LIBS)
TESTS += tests/test_calibration

# Regenerating the committed traces changes nothing (make traces).
TESTS += tests/test_traces.sh
EXTRA_DIST += tests/test_traces.sh scenarios/traces/make-traces.sh
# The planner's workflow: --set, partial devices, sweeps over platform paths, compare, progress.
check_PROGRAMS += tests/test_planner
tests_test_planner_SOURCES = tests/test_planner.c
tests_test_planner_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_planner_LDADD = $(TEST_LIBS)
TESTS += tests/test_planner
check_PROGRAMS += tests/test_coll_request
tests_test_coll_request_SOURCES = tests/test_coll_request.c
tests_test_coll_request_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_coll_request_LDADD = $(TEST_LIBS)
TESTS += tests/test_coll_request

check_PROGRAMS += tests/test_sharding
tests_test_sharding_SOURCES = tests/test_sharding.c
tests_test_sharding_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_sharding_LDADD = $(TEST_LIBS)
TESTS += tests/test_sharding

check_PROGRAMS += tests/test_dlrm
tests_test_dlrm_SOURCES = tests/test_dlrm.c
tests_test_dlrm_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_dlrm_LDADD = $(TEST_LIBS)
TESTS += tests/test_dlrm
# ttasim calibrate reproduces platforms/calibration/calibrated.json byte for byte.
TESTS += tests/test_calibrate.sh
EXTRA_DIST += tests/test_calibrate.sh
# -j: sweep points and check's scenarios in forked workers, output identical to -j 1.
TESTS += tests/test_parallel.sh
EXTRA_DIST += tests/test_parallel.sh
# plan --shard I/N and plan --merge: the unsharded plan's bytes, refusals, a search resumed.
TESTS += tests/test_plan_shards.sh
EXTRA_DIST += tests/test_plan_shards.sh

# MPI: mpirun --oversubscribe -n 3 shares tasks over the ranks; rank 0 writes a serial run's bytes.
check_PROGRAMS += tests/test_mpi_tasks
tests_test_mpi_tasks_SOURCES = tests/test_mpi_tasks.c
tests_test_mpi_tasks_LDADD = $(TT_LIBS)
TESTS += tests/test_mpi.sh
EXTRA_DIST += tests/test_mpi.sh

# Pinned predictions of every shipped scenario (tests/pinned/, relative 1e-6);
# `make pinned` rewrites them after a deliberate change.
check_PROGRAMS += tests/pin_diff
tests_pin_diff_SOURCES = tests/pin_diff.c
tests_pin_diff_LDADD = $(JANSSON_LIBS) -lm
TESTS += tests/test_pinned.sh
EXTRA_DIST += tests/test_pinned.sh tests/pinned
pinned: ttasim tests/pin_diff
	PINNED_WRITE=1 top_builddir='$(top_builddir)' top_srcdir='$(top_srcdir)' $(SHELL) $(top_srcdir)/tests/test_pinned.sh
.PHONY: pinned
check_PROGRAMS += tests/test_precision
tests_test_precision_SOURCES = tests/test_precision.c
tests_test_precision_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_precision_LDADD = $(TEST_LIBS)
TESTS += tests/test_precision

check_PROGRAMS += tests/test_cpu_ranks
tests_test_cpu_ranks_SOURCES = tests/test_cpu_ranks.c
tests_test_cpu_ranks_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_cpu_ranks_LDADD = $(TEST_LIBS)
TESTS += tests/test_cpu_ranks

check_PROGRAMS += tests/test_input_pipeline
tests_test_input_pipeline_SOURCES = tests/test_input_pipeline.c
tests_test_input_pipeline_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_input_pipeline_LDADD = $(TEST_LIBS)
TESTS += tests/test_input_pipeline

# Shards are JSON, checked field by field and by checksum (round-3 finding F07).
check_PROGRAMS += tests/test_shards
tests_test_shards_SOURCES = tests/test_shards.c
tests_test_shards_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_shards_LDADD = $(TEST_LIBS)
TESTS += tests/test_shards

# Inputs are data, outputs never destroy, exit codes 0/1/2 (the round-3 findings F01-F19, end to end).
TESTS += tests/test_reliability.sh
EXTRA_DIST += tests/test_reliability.sh
# scenarios/collectives/README.md is what its generator writes from the current model
# (make validation-table rewrites it after a deliberate change).
TESTS += tests/test_collective_table.sh
EXTRA_DIST += tests/test_collective_table.sh
# scenarios/published/README.md likewise.
TESTS += tests/test_published_table.sh
EXTRA_DIST += tests/test_published_table.sh
# scenarios/examples/dlrm-plans.md likewise.
TESTS += tests/test_dlrm_plan_table.sh
EXTRA_DIST += tests/test_dlrm_plan_table.sh
# doc/ttasim.1 names every command and the options of the synopses it spells out.
TESTS += tests/test_manpage.sh
EXTRA_DIST += tests/test_manpage.sh
check_PROGRAMS += tests/test_pipeline
tests_test_pipeline_SOURCES = tests/test_pipeline.c
tests_test_pipeline_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_pipeline_LDADD = $(TEST_LIBS)
TESTS += tests/test_pipeline
check_PROGRAMS += tests/test_transformer
tests_test_transformer_SOURCES = tests/test_transformer.c
tests_test_transformer_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_transformer_LDADD = $(TEST_LIBS)
TESTS += tests/test_transformer

check_PROGRAMS += tests/test_lm_convergence
tests_test_lm_convergence_SOURCES = tests/test_lm_convergence.c
tests_test_lm_convergence_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_lm_convergence_LDADD = $(TEST_LIBS)
TESTS += tests/test_lm_convergence

check_PROGRAMS += tests/test_layout_search
tests_test_layout_search_SOURCES = tests/test_layout_search.c
tests_test_layout_search_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_layout_search_LDADD = $(TEST_LIBS)
TESTS += tests/test_layout_search
check_PROGRAMS += tests/test_human
tests_test_human_SOURCES = tests/test_human.c
tests_test_human_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_human_LDADD = $(TEST_LIBS)
TESTS += tests/test_human
TESTS += tests/test_text_report.sh
EXTRA_DIST += tests/test_text_report.sh
TESTS += tests/test_html_report.sh
EXTRA_DIST += tests/test_html_report.sh

# compare --svg laid out by headless Chromium: no text overlaps another or leaves the figure
TESTS += tests/test_plot_text.sh
EXTRA_DIST += tests/test_plot_text.sh
check_PROGRAMS += tests/test_resilience
tests_test_resilience_SOURCES = tests/test_resilience.c
tests_test_resilience_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_resilience_LDADD = $(TEST_LIBS)
TESTS += tests/test_resilience
# --db FILE: the results database's rows, the same under -j and mpirun, refusals (tests/test_results_db.sh).
TESTS += tests/test_results_db.sh
EXTRA_DIST += tests/test_results_db.sh
check_PROGRAMS += tests/test_pareto
tests_test_pareto_SOURCES = tests/test_pareto.c
tests_test_pareto_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_pareto_LDADD = $(TEST_LIBS)
TESTS += tests/test_pareto
check_PROGRAMS += tests/test_scaling
tests_test_scaling_SOURCES = tests/test_scaling.c
tests_test_scaling_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_scaling_LDADD = $(TEST_LIBS)
TESTS += tests/test_scaling
# Chakra traces out and back, and a hand-written one (tests/test_chakra.sh).
TESTS += tests/test_chakra.sh
EXTRA_DIST += tests/test_chakra.sh
