noinst_LIBRARIES += libsim.a
libsim_a_SOURCES = \
	sim/cli.c sim/cli.h \
	sim/commands.c \
	sim/engine.c sim/engine.h \
	sim/collective_sim.c sim/collective_sim.h \
	sim/run.c sim/run.h \
	sim/scenario.c sim/scenario.h \
	sim/trace.c sim/trace.h \
	sim/step.c sim/step.h \
	sim/convergence.c sim/convergence.h \
	sim/cost.c sim/cost.h \
	sim/report.c sim/report.h \
	sim/expect.c sim/expect.h \
	sim/svg.c sim/svg.h \
	sim/junit.c sim/junit.h \
	sim/cmd_run.c \
	sim/cmd_check.c \
	sim/cmd_collective.c \
	sim/bench_sim.c sim/bench_sim.h \
	sim/cmd_bench.c

bin_PROGRAMS += ttasim
ttasim_SOURCES = sim/main.c
ttasim_LDADD = $(TT_LIBS)
