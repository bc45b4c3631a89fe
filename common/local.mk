noinst_LIBRARIES += libcommon.a
libcommon_a_SOURCES = \
	common/error.c common/error.h \
	common/units.c common/units.h \
	common/jsonx.c common/jsonx.h \
	common/datapath.c common/datapath.h \
	common/clock.c common/clock.h \
	common/outfile.c common/outfile.h
