noinst_LIBRARIES += libcollectives.a
libcollectives_a_SOURCES = \
	collectives/schedule.h collectives/schedule_impl.h collectives/schedule.c \
	collectives/algorithms.c \
	collectives/functional.h collectives/functional.c \
	collectives/closed_form.h collectives/closed_form.c \
	collectives/nccl.h collectives/nccl.c collectives/pipeline.c
