# sim/ is four folders, one concern each (sim/README.md); each lists its sources.
noinst_LIBRARIES += libsim.a
libsim_a_SOURCES =
include sim/engine/local.mk
include sim/replay/local.mk
include sim/report/local.mk
include sim/cli/local.mk

# Chakra's schema (vendored, sim/replay/et_def.proto) compiled by protoc-c at build time.
nodist_libsim_a_SOURCES = sim/replay/et_def.pb-c.c sim/replay/et_def.pb-c.h
BUILT_SOURCES += sim/replay/et_def.pb-c.c sim/replay/et_def.pb-c.h
CLEANFILES += sim/replay/et_def.pb-c.c sim/replay/et_def.pb-c.h
EXTRA_DIST += sim/replay/et_def.proto
sim/replay/et_def.pb-c.h: sim/replay/et_def.pb-c.c
sim/replay/et_def.pb-c.c: sim/replay/et_def.proto
	$(AM_V_GEN)$(MKDIR_P) sim/replay && $(PROTOC_C) --proto_path=$(srcdir) --c_out=. sim/replay/et_def.proto
