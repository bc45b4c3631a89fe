noinst_LIBRARIES += libtrainer.a
libtrainer_a_SOURCES = \
	trainer/workload.c trainer/workload.h
