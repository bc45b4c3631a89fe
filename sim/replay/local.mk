# One source per line: this file merges with git's union driver (.gitattributes).
libsim_a_SOURCES += sim/replay/scenario.c sim/replay/scenario.h
libsim_a_SOURCES += sim/replay/device_model.c sim/replay/device_model.h
libsim_a_SOURCES += sim/replay/workload.c sim/replay/workload.h
libsim_a_SOURCES += sim/replay/step.c sim/replay/step.h
libsim_a_SOURCES += sim/replay/sharding.c sim/replay/sharding.h
libsim_a_SOURCES += sim/replay/framework.c sim/replay/framework.h
libsim_a_SOURCES += sim/replay/input_pipeline.c sim/replay/input_pipeline.h
libsim_a_SOURCES += sim/replay/traffic.c sim/replay/traffic.h
libsim_a_SOURCES += sim/replay/convergence.c sim/replay/convergence.h
libsim_a_SOURCES += sim/replay/cost.c sim/replay/cost.h
libsim_a_SOURCES += sim/replay/run.c sim/replay/run.h
libsim_a_SOURCES += sim/replay/coll_scenario.c sim/replay/coll_scenario.h
libsim_a_SOURCES += sim/replay/calibration.c sim/replay/calibration.h
libsim_a_SOURCES += sim/replay/override.c sim/replay/override.h
