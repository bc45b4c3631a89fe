noinst_LIBRARIES += libtrainer.a
libtrainer_a_SOURCES = \
	trainer/workload.c trainer/workload.h
libtrainer_a_SOURCES += trainer/optimizer.c trainer/optimizer.h
libtrainer_a_SOURCES += trainer/sgd.c trainer/momentum.c trainer/adamw.c trainer/lars.c trainer/lamb.c
libtrainer_a_SOURCES += trainer/lr_schedule.c trainer/lr_schedule.h
libtrainer_a_SOURCES += trainer/noise_scale.c trainer/noise_scale.h
libtrainer_a_SOURCES += trainer/profile.c trainer/profile.h
