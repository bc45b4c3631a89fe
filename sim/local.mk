noinst_LIBRARIES += libsim.a
libsim_a_SOURCES = \
	sim/cli.c sim/cli.h \
	sim/commands.c \
	sim/engine.c sim/engine.h \
	sim/replay.c sim/replay.h \
	sim/run.c sim/run.h \
	sim/scenario.c sim/scenario.h \
	sim/cmd_run.c \
	sim/cmd_model.c sim/model_cli.c sim/model_cli.h \
	sim/cmd_bench.c sim/bench_trainer.c sim/bench_trainer.h \
	sim/cmd_trace.c

bin_PROGRAMS += ttasim
ttasim_SOURCES = sim/main.c
ttasim_LDADD = $(TT_LIBS)
