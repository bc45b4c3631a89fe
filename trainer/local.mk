noinst_LIBRARIES += libtrainer.a
libtrainer_a_SOURCES = \
	trainer/workload.c trainer/workload.h \
	trainer/params.h trainer/param.c \
	trainer/rng.h \
	trainer/layers.h trainer/linear.c trainer/conv2d.c trainer/batchnorm.c \
	trainer/activation.c trainer/pool.c trainer/layernorm.c trainer/embedding.c \
	trainer/sequence.c trainer/attention.c trainer/interaction.c trainer/loss.c \
	trainer/model.h trainer/graph.h trainer/model.c trainer/zoo.c trainer/model_opts.c \
	trainer/fmnist.c trainer/fmnist.h \
	trainer/synth.c trainer/synth.h
# The elementwise passes between the GEMMs are a large share of a training
# step: let GCC vectorise loops with a remainder (not done at -O2's cost model).
libtrainer_a_CFLAGS = $(AM_CFLAGS) -ftree-vectorize -fvect-cost-model=dynamic
