noinst_LIBRARIES += libplatforms.a
libplatforms_a_SOURCES = \
	platforms/platform.c platforms/platform.h
