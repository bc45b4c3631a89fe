noinst_LIBRARIES += libplatforms.a
libplatforms_a_SOURCES = \
	platforms/device.c platforms/device.h \
	platforms/network.c \
	platforms/platform.c platforms/platform.h platforms/platform_impl.h \
	platforms/platform_json.c \
	platforms/platform_load.c \
	platforms/platform_xml.c

platformsdir = $(pkgdatadir)/platforms
dist_platforms_DATA = platforms/README.md platforms/devices.json
