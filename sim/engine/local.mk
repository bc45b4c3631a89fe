# One source per line: this file merges with git's union driver (.gitattributes).
libsim_a_SOURCES += sim/engine/engine.c sim/engine/engine.h
libsim_a_SOURCES += sim/engine/collective_sim.c sim/engine/collective_sim.h
libsim_a_SOURCES += sim/engine/collective_group.c sim/engine/collective_group.h
libsim_a_SOURCES += sim/engine/collective_exec.c
libsim_a_SOURCES += sim/engine/collective_estimate.c
libsim_a_SOURCES += sim/engine/collective_request.c
libsim_a_SOURCES += sim/engine/host_embedding.c sim/engine/host_embedding.h
libsim_a_SOURCES += sim/engine/nccl_plan.c sim/engine/nccl_plan.h
libsim_a_SOURCES += sim/engine/link_tally.c sim/engine/link_tally.h
libsim_a_SOURCES += sim/engine/collective_fluid.c sim/engine/collective_fluid.h
libsim_a_SOURCES += sim/engine/collective_staging.c
libsim_a_SOURCES += sim/engine/maxmin.c sim/engine/maxmin.h
