noinst_LIBRARIES += libcollectives.a
libcollectives_a_SOURCES = \
	collectives/schedule.h collectives/ring.c
