# One source per line: this file merges with git's union driver (.gitattributes).
noinst_LIBRARIES += libsim.a
libsim_a_SOURCES =
libsim_a_SOURCES += sim/cli.c sim/cli.h
libsim_a_SOURCES += sim/commands.c
libsim_a_SOURCES += sim/engine.c sim/engine.h
libsim_a_SOURCES += sim/collective_sim.c sim/collective_sim.h
libsim_a_SOURCES += sim/run.c sim/run.h
libsim_a_SOURCES += sim/scenario.c sim/scenario.h
libsim_a_SOURCES += sim/trace.c sim/trace.h
libsim_a_SOURCES += sim/step.c sim/step.h
libsim_a_SOURCES += sim/convergence.c sim/convergence.h
libsim_a_SOURCES += sim/cost.c sim/cost.h
libsim_a_SOURCES += sim/report.c sim/report.h
libsim_a_SOURCES += sim/expect.c sim/expect.h
libsim_a_SOURCES += sim/svg.c sim/svg.h
libsim_a_SOURCES += sim/junit.c sim/junit.h
libsim_a_SOURCES += sim/model_cli.c sim/model_cli.h
libsim_a_SOURCES += sim/bench_trainer.c sim/bench_trainer.h
libsim_a_SOURCES += sim/cmd_run.c
libsim_a_SOURCES += sim/cmd_check.c
libsim_a_SOURCES += sim/cmd_train.c
libsim_a_SOURCES += sim/cmd_trace.c
libsim_a_SOURCES += sim/cmd_model.c
libsim_a_SOURCES += sim/cmd_platform.c
libsim_a_SOURCES += sim/cmd_bench.c
libsim_a_SOURCES = \
	sim/cli.c sim/cli.h \
	sim/commands.c \
	sim/engine.c sim/engine.h \
	sim/collective_sim.c sim/collective_sim.h \
	sim/run.c sim/run.h \
	sim/scenario.c sim/scenario.h \
	sim/cmd_run.c \
	sim/cmd_collective.c

bin_PROGRAMS += ttasim
ttasim_SOURCES = sim/main.c
ttasim_LDADD = $(TT_LIBS)
