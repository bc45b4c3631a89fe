# One entry per line: this file merges with git's union driver (.gitattributes).
noinst_LIBRARIES += libtrainer.a
libtrainer_a_SOURCES =
libtrainer_a_SOURCES += trainer/params.h trainer/param.c
libtrainer_a_SOURCES += trainer/rng.h
libtrainer_a_SOURCES += trainer/layers.h trainer/linear.c trainer/conv2d.c trainer/batchnorm.c
libtrainer_a_SOURCES += trainer/activation.c trainer/pool.c trainer/layernorm.c trainer/embedding.c
libtrainer_a_SOURCES += trainer/sequence.c trainer/attention.c trainer/interaction.c trainer/loss.c
libtrainer_a_SOURCES += trainer/crossnet.c
libtrainer_a_SOURCES += trainer/rmsnorm.c trainer/swiglu.c trainer/rope.c trainer/moe.c
libtrainer_a_SOURCES += trainer/decoder.c trainer/softmax.c
libtrainer_a_SOURCES += trainer/model.h trainer/model_internal.h trainer/graph.h
libtrainer_a_SOURCES += trainer/graph.c trainer/plan.c trainer/model.c trainer/zoo.c trainer/model_opts.c
libtrainer_a_SOURCES += trainer/fmnist.c trainer/fmnist.h
libtrainer_a_SOURCES += trainer/synth.c trainer/synth.h
libtrainer_a_SOURCES += trainer/markov.c trainer/markov.h
libtrainer_a_SOURCES += trainer/trace.c trainer/trace.h
libtrainer_a_SOURCES += trainer/optimizer.c trainer/optimizer.h
libtrainer_a_SOURCES += trainer/sgd.c trainer/momentum.c trainer/adamw.c trainer/lars.c trainer/lamb.c
libtrainer_a_SOURCES += trainer/lr_schedule.c trainer/lr_schedule.h
libtrainer_a_SOURCES += trainer/noise_scale.c trainer/noise_scale.h
libtrainer_a_SOURCES += trainer/profile.c trainer/profile.h
libtrainer_a_SOURCES += trainer/dataparallel.c trainer/dataparallel.h
# The elementwise passes between the GEMMs are a large share of a training
# step: let GCC vectorise loops with a remainder (not done at -O2's cost model).
libtrainer_a_CFLAGS = $(AM_CFLAGS) $(VECT_CFLAGS)

# Regenerates the committed workload traces (one real step each; minutes).
traces: ttasim$(EXEEXT)
	$(SHELL) $(srcdir)/scenarios/traces/make-traces.sh $(abs_top_builddir)/ttasim $(srcdir)/scenarios/traces
.PHONY: traces
