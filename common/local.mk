# One source per line: this file merges with git's union driver (.gitattributes).
noinst_LIBRARIES += libcommon.a
libcommon_a_SOURCES =
libcommon_a_SOURCES += common/error.c common/error.h
libcommon_a_SOURCES += common/units.c common/units.h
libcommon_a_SOURCES += common/jsonx.c common/jsonx.h
libcommon_a_SOURCES += common/datapath.c common/datapath.h
libcommon_a_SOURCES += common/clock.c common/clock.h
libcommon_a_SOURCES += common/outfile.c common/outfile.h
libcommon_a_SOURCES += common/vocab.c common/vocab.h
libcommon_a_SOURCES += common/parallel.c common/parallel.h
libcommon_a_SOURCES += common/fdio.c common/fdio.h
libcommon_a_SOURCES += common/scratch.c common/scratch.h
libcommon_a_SOURCES += common/stats.c common/stats.h
libcommon_a_SOURCES += common/infile.c common/infile.h
