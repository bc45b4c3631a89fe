noinst_LIBRARIES += libtrainer.a
libtrainer_a_SOURCES = \
	trainer/workload.c trainer/workload.h \
	trainer/params.h trainer/param.c \
	trainer/rng.h \
	trainer/layers.h trainer/linear.c trainer/conv2d.c trainer/batchnorm.c \
	trainer/activation.c trainer/pool.c trainer/layernorm.c trainer/embedding.c \
	trainer/sequence.c trainer/attention.c trainer/interaction.c trainer/loss.c \
	trainer/model.h trainer/graph.h trainer/model.c trainer/zoo.c \
	trainer/fmnist.c trainer/fmnist.h \
	trainer/synth.c trainer/synth.h
libtrainer_a_SOURCES += trainer/optimizer.c trainer/optimizer.h
libtrainer_a_SOURCES += trainer/sgd.c trainer/momentum.c trainer/adamw.c trainer/lars.c trainer/lamb.c
libtrainer_a_SOURCES += trainer/lr_schedule.c trainer/lr_schedule.h
libtrainer_a_SOURCES += trainer/noise_scale.c trainer/noise_scale.h
libtrainer_a_SOURCES += trainer/profile.c trainer/profile.h
libtrainer_a_SOURCES += trainer/dataparallel.c trainer/dataparallel.h
