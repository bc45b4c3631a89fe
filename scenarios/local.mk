# Scenario files and the data they use, installed under $(pkgdatadir)/scenarios.
scenariodir = $(pkgdatadir)/scenarios
dist_scenario_DATA = scenarios/quickstart.json scenarios/README.md scenarios/published-validation.json

profilesdir = $(pkgdatadir)/scenarios/profiles
dist_profiles_DATA = \
	scenarios/profiles/bert-large-lamb.json \
	scenarios/profiles/bert-large-wikipedia-lamb-mlperf.json \
	scenarios/profiles/fashion-mnist-mlp-lamb.json \
	scenarios/profiles/gpt3-175b-c4-mlperf.json \
	scenarios/profiles/llama3.1-405b-c4-mlperf.json \
	scenarios/profiles/resnet50-imagenet-lars-mlperf.json \
	scenarios/profiles/resnet50-imagenet-lars.json \
	scenarios/profiles/resnet50-imagenet-sgd.json \
	scenarios/profiles/teacher-mlp-lamb.json \
	scenarios/profiles/teacher-mlp-lars.json \
	scenarios/profiles/vit-b32-imagenet-lamb.json

tracesdir = $(pkgdatadir)/scenarios/traces
dist_traces_DATA = \
	scenarios/traces/bert-large-seq512.json \
	scenarios/traces/bert-large.json \
	scenarios/traces/dlrm-mlperf.json \
	scenarios/traces/dlrm-dcnv2.json \
	scenarios/traces/llama2-7b.json \
	scenarios/traces/llama3-8b.json \
	scenarios/traces/mpt-1b.json \
	scenarios/traces/mpt-1b-seq8192.json \
	scenarios/traces/mpt-7b.json \
	scenarios/traces/resnet50.json \
	scenarios/traces/resnet50-lars.json \
	scenarios/traces/resnet50-per-param.json \
	scenarios/traces/vit-b32.json

publisheddir = $(pkgdatadir)/scenarios/published
dist_published_DATA = scenarios/published/README.md \
	scenarios/published/interruptions-llama3-405b-16kxh100.json \
	scenarios/published/bert-adamw-512.json \
	scenarios/published/bert-lamb-16k.json \
	scenarios/published/bert-lamb-1k.json \
	scenarios/published/bert-lamb-2k.json \
	scenarios/published/bert-lamb-32k.json \
	scenarios/published/bert-lamb-4k.json \
	scenarios/published/bert-lamb-512.json \
	scenarios/published/bert-lamb-64k.json \
	scenarios/published/bert-lamb-8k.json \
	scenarios/published/dlrm-mlperf07-pytorch-dgxa100.json \
	scenarios/published/dlrm-mlperf10-hugectr-14xdgxa100.json \
	scenarios/published/dlrm-mlperf10-hugectr-8xdgxa100.json \
	scenarios/published/dlrm-mlperf10-hugectr-dgxa100.json \
	scenarios/published/dlrm-mlperf20-hugectr-14xdgxa100.json \
	scenarios/published/dlrm-mlperf20-hugectr-8xdgxa100.json \
	scenarios/published/dlrm-mlperf20-hugectr-dgxa100.json \
	scenarios/published/dlrm-mlperf21-hugectr-4xdgxh100.json \
	scenarios/published/dlrm-ngc-pytorch-amp-8xa100.json \
	scenarios/published/dlrm-ngc-tf2-amp-8xa100.json \
	scenarios/published/bert-mlperf10-8xdgxa100.json \
	scenarios/published/resnet50-mlperf10-8xdgxa100.json \
	scenarios/published/dlrm-dcnv2-mlperf31-hugectr-xe9680-h100.json \
	scenarios/published/resnet50-mlperf30-64xdgxh100.json \
	scenarios/published/resnet50-mlperf10-tpu-v4-128.json \
	scenarios/published/bert-mlperf10-tpu-v4-128.json \
	scenarios/published/bert-mlperf10-dgxa100.json \
	scenarios/published/bert-mlperf31-xe9680-h100.json \
	scenarios/published/bert-mlperf40-hgxh200.json \
	scenarios/published/bert-mlperf31-8xdgxh100.json \
	scenarios/published/dlrm-dcnv2-mlperf40-hugectr-hgxh200.json \
	scenarios/published/resnet50-mlperf07-tpu-v3-32.json \
	scenarios/published/bert-mlperf07-tpu-v3-32.json \
	scenarios/published/resnet50-mlperf07-dgx1-v100.json \
	scenarios/published/resnet50-mlperf07-dgxa100.json \
	scenarios/published/resnet50-mlperf30-dgxh100.json \
	scenarios/published/resnet50-mlperf30-8xdgxh100.json \
	scenarios/published/bert-mlperf07-dgxa100.json \
	scenarios/published/dlrm-dcnv2-mlperf30-hugectr-dgxh100.json \
	scenarios/published/resnet50-akiba-2017.json \
	scenarios/published/resnet50-goyal-2017.json \
	scenarios/published/resnet50-he-2016.json \
	scenarios/published/resnet50-jia-2018.json \
	scenarios/published/resnet50-mikami-2018.json \
	scenarios/published/resnet50-mlperf07-tpu-v3-4096.json \
	scenarios/published/resnet50-smith-2017.json \
	scenarios/published/resnet50-yamazaki-2019.json \
	scenarios/published/resnet50-ying-2018.json \
	scenarios/published/resnet50-you-2017.json \
	scenarios/published/resnet50-you-2018.json \
	scenarios/published/vit-b32-128gpu.json \
	scenarios/published/vit-b32-16gpu.json \
	scenarios/published/vit-b32-1gpu.json \
	scenarios/published/vit-b32-200gpu.json \
	scenarios/published/vit-b32-4gpu.json \
	scenarios/published/vit-b32-64gpu.json

examplesdir = $(pkgdatadir)/scenarios/examples
dist_examples_DATA = \
	scenarios/examples/ci-expect.json \
	scenarios/examples/dgx-a100-dlrm-auto.json \
	scenarios/examples/dgx-a100-dlrm-dcnv2.json \
	scenarios/examples/dgx-a100-dlrm-plans.json \
	scenarios/examples/dgx-h100-dlrm-dcnv2.json \
	scenarios/examples/frontier-resnet50-131k-h100.json \
	scenarios/examples/gpt3-175b-1k-a100.json \
	scenarios/examples/llama3-8b-tta-h100.json \
	scenarios/examples/purchase-fattree.json \
	scenarios/examples/purchase-h100-rail.json \
	scenarios/examples/purchase-torus2d.json \
	scenarios/examples/tpu-v3-batch-sweep.json \
	scenarios/examples/tpu-v3-4096-multipod.json \
	scenarios/examples/zion-dlrm-host.json \
	scenarios/examples/zion-dlrm-plans-16gb.json \
	scenarios/examples/zion-dlrm-plans.json \
	scenarios/examples/zion-dlrm.json

collectivesdir = $(pkgdatadir)/scenarios/collectives
dist_collectives_DATA = scenarios/collectives/README.md \
	scenarios/collectives/dgx-a100-2n-allgather-1g.json \
	scenarios/collectives/dgx-a100-2n-allgather-4g.json \
	scenarios/collectives/dgx-a100-2n-allreduce-1g.json \
	scenarios/collectives/dgx-a100-2n-allreduce-4g.json \
	scenarios/collectives/dgx-a100-2n-alltoall-1g.json \
	scenarios/collectives/dgx-a100-allreduce-32b-2gpu.json \
	scenarios/collectives/dgx-a100-allreduce-8g.json \
	scenarios/collectives/dgx-h100-10n-allgather-16g.json \
	scenarios/collectives/dgx-h100-10n-allreduce-16g.json \
	scenarios/collectives/dgx-h100-10n-allreduce-4g.json \
	scenarios/collectives/dgx-h100-10n-alltoall-16g.json \
	scenarios/collectives/dgx-h100-10n-reducescatter-16g.json \
	scenarios/collectives/dgx-h100-2n-allreduce-16g.json \
	scenarios/collectives/dgx-h100-4n-allreduce-16g.json \
	scenarios/collectives/dgx-h100-8n-collnetchain-1g.json \
	scenarios/collectives/dgx-h100-8n-collnetchain-512m.json \
	scenarios/collectives/dgx-h100-8n-collnetchain-8g.json \
	scenarios/collectives/dgx-h100-allgather-8g.json \
	scenarios/collectives/dgx-h100-allreduce-nvls-8g.json \
	scenarios/collectives/dgx-h100-allreduce-ring-8g.json \
	scenarios/collectives/dgx1-cluster-allreduce.json \
	scenarios/collectives/gb200-nvl72-2tray-allreduce-8g.json \
	scenarios/collectives/hgx-a100-4hdr-3node-allreduce-128m.json \
	scenarios/collectives/hgx-a100-80gb-allreduce-1g.json \
	scenarios/collectives/mi300x-2n-allreduce-16g.json \
	scenarios/collectives/mi300x-allreduce-8m.json

EXTRA_DIST += scenarios/published/validate.sh scenarios/collectives/validate.sh \
	scenarios/examples/dlrm-plan-table.sh scenarios/examples/dlrm-plans.md scenarios/generated.sh \
	scenarios/examples/frontier-table.sh scenarios/examples/frontier-table.md

# The generated tables: scenarios/published/README.md (and ../published-validation.json, its rows as data),
# scenarios/collectives/README.md
# (predicted against published), scenarios/examples/dlrm-plans.md (the sharding plans).
validation-table: ttasim$(EXEEXT)
	$(SHELL) $(srcdir)/scenarios/published/validate.sh $(abs_top_builddir)/ttasim
	$(SHELL) $(srcdir)/scenarios/collectives/validate.sh $(abs_top_builddir)/ttasim
	$(SHELL) $(srcdir)/scenarios/examples/dlrm-plan-table.sh $(abs_top_builddir)/ttasim

.PHONY: validation-table

# Leave-one-out validation of steps to target (issue 16): every published scenario with a
# step count predicted from its profile without that row, then every profile point from
# the others; exits 1 when the median error over the scenarios exceeds 15 %.
leave-one-out: ttasim$(EXEEXT)
	./ttasim$(EXEEXT) profile loo $(srcdir)/scenarios/published/*.json
	./ttasim$(EXEEXT) profile loo $(srcdir)/scenarios/profiles/*.json

.PHONY: leave-one-out
