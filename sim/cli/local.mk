# One source per line: this file merges with git's union driver (.gitattributes).
libsim_a_SOURCES += sim/cli/cli.c sim/cli/cli.h
libsim_a_SOURCES += sim/cli/commands.c
libsim_a_SOURCES += sim/cli/model_cli.c sim/cli/model_cli.h
libsim_a_SOURCES += sim/cli/bench_trainer.c sim/cli/bench_trainer.h
libsim_a_SOURCES += sim/cli/bench_sim.c sim/cli/bench_sim.h
libsim_a_SOURCES += sim/cli/bench_scale.c sim/cli/bench_scale.h
libsim_a_SOURCES += sim/cli/cmd_run.c sim/cli/cmd_run.h
libsim_a_SOURCES += sim/cli/cmd_merge.c
libsim_a_SOURCES += sim/cli/shard.c sim/cli/shard.h
libsim_a_SOURCES += sim/cli/shard_record.c sim/cli/shard_record.h
libsim_a_SOURCES += sim/cli/cmd_check.c
libsim_a_SOURCES += sim/cli/cmd_train.c
libsim_a_SOURCES += sim/cli/train_sweep.c sim/cli/train_sweep.h
libsim_a_SOURCES += sim/cli/cmd_trace.c
libsim_a_SOURCES += sim/cli/cmd_model.c
libsim_a_SOURCES += sim/cli/cmd_platform.c
libsim_a_SOURCES += sim/cli/cmd_bench.c
libsim_a_SOURCES += sim/cli/cmd_collective.c

bin_PROGRAMS += ttasim
ttasim_SOURCES = sim/cli/main.c
ttasim_LDADD = $(TT_LIBS)
libsim_a_SOURCES += sim/cli/cmd_profile.c
libsim_a_SOURCES += sim/cli/cmd_calibrate.c
libsim_a_SOURCES += sim/cli/progress.c sim/cli/progress.h
libsim_a_SOURCES += sim/cli/cmd_compare.c
libsim_a_SOURCES += sim/cli/cmd_plan.c
