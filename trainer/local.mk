# One entry per line: this file merges with git's union driver (.gitattributes).
noinst_LIBRARIES += libtrainer.a
libtrainer_a_SOURCES =
libtrainer_a_SOURCES += trainer/params.h trainer/param.c
libtrainer_a_SOURCES += trainer/rng.h
libtrainer_a_SOURCES += trainer/layers.h trainer/linear.c trainer/conv2d.c trainer/batchnorm.c
libtrainer_a_SOURCES += trainer/activation.c trainer/pool.c trainer/layernorm.c trainer/embedding.c
libtrainer_a_SOURCES += trainer/sequence.c trainer/attention.c trainer/interaction.c trainer/loss.c
libtrainer_a_SOURCES += trainer/model.h trainer/model_internal.h trainer/graph.h
libtrainer_a_SOURCES += trainer/graph.c trainer/plan.c trainer/model.c trainer/zoo.c trainer/model_opts.c
libtrainer_a_SOURCES += trainer/fmnist.c trainer/fmnist.h
libtrainer_a_SOURCES += trainer/synth.c trainer/synth.h
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
TRACE_CMD = $(abs_top_builddir)/ttasim trace
traces: ttasim$(EXEEXT)
	$(MKDIR_P) $(srcdir)/scenarios/traces
	$(TRACE_CMD) --model resnet50 --micro-batch 32 --out $(srcdir)/scenarios/traces/resnet50.json
	$(TRACE_CMD) --model bert-large --seq-len 128 --dropout 0.1 --micro-batch 8 --run-batch 2 --optimizer lamb \
		--out $(srcdir)/scenarios/traces/bert-large.json
	$(TRACE_CMD) --model bert-large --seq-len 512 --dropout 0.1 --micro-batch 8 --run-batch 1 \
		--optimizer lamb --out $(srcdir)/scenarios/traces/bert-large-seq512.json
	$(TRACE_CMD) --model vit-b32 --micro-batch 32 --out $(srcdir)/scenarios/traces/vit-b32.json
	$(TRACE_CMD) --model dlrm-mlperf --micro-batch 2048 --out $(srcdir)/scenarios/traces/dlrm-mlperf.json
.PHONY: traces
