# sim/ is four folders, one concern each (sim/README.md); each lists its sources.
noinst_LIBRARIES += libsim.a
libsim_a_SOURCES =
include sim/engine/local.mk
include sim/replay/local.mk
include sim/report/local.mk
include sim/cli/local.mk
