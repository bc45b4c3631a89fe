#!/bin/sh
# Writes every committed workload trace into OUTDIR: one real step of the
# trainer each, with the optimizer the scenarios that use it train with
# (resnet50-lars for the LARS records, LAMB for BERT and ViT); resnet50-per-param
# has one gradient bucket per parameter tensor, as Caffe2 allreduces them (Goyal 2017);
# mpt-* are MosaicML's MPT shapes (a GPT decoder, vocabulary 50,368 tied; the
# parameter counts of llm-foundry's benchmark table, 125m to 13b) and
# llama2-7b and llama3-8b the zoo's, planned at one sequence, for the LLM calibration points.
# Usage: scenarios/traces/make-traces.sh TTASIM OUTDIR
#   make traces (OUTDIR = scenarios/traces); tests/test_traces.sh (a temporary
#   OUTDIR, compared with the committed files).
set -e
ttasim=$1
out=$2
[ -x "$ttasim" ] && [ -d "$out" ] || { echo "usage: $0 TTASIM OUTDIR" >&2; exit 2; }
"$ttasim" trace --model resnet50 --micro-batch 32 --out "$out/resnet50.json"
"$ttasim" trace --model resnet50 --micro-batch 32 --optimizer lars --out "$out/resnet50-lars.json"
"$ttasim" trace --model resnet50 --micro-batch 32 --bucket-bytes 1 --out "$out/resnet50-per-param.json"
"$ttasim" trace --model bert-large --seq-len 128 --dropout 0.1 --micro-batch 8 --run-batch 2 --optimizer lamb \
	--out "$out/bert-large.json"
"$ttasim" trace --model bert-large --seq-len 512 --dropout 0.1 --micro-batch 8 --run-batch 1 --optimizer lamb \
	--out "$out/bert-large-seq512.json"
"$ttasim" trace --model vit-b32 --micro-batch 32 --optimizer lamb --out "$out/vit-b32.json"
"$ttasim" trace --model dlrm-mlperf --micro-batch 2048 --out "$out/dlrm-mlperf.json"
"$ttasim" trace --model dlrm-dcnv2 --micro-batch 8192 --run-batch 1024 --out "$out/dlrm-dcnv2.json"
mpt() { # NAME LAYERS HIDDEN HEADS SEQ
	"$ttasim" trace --model gpt --layers "$2" --hidden "$3" --heads "$4" --vocab 50368 --tied-embeddings 1 \
		--seq-len "$5" --micro-batch 1 --precision bf16 --optimizer adamw --out "$out/$1.json"
}
mpt mpt-125m 12 768 12 2048
mpt mpt-350m 24 1024 16 2048
mpt mpt-760m 24 1536 12 2048
mpt mpt-1b 24 2048 16 2048
mpt mpt-1b-seq8192 24 2048 16 8192
mpt mpt-3b 32 2560 20 2048
mpt mpt-7b 32 4096 32 2048
mpt mpt-13b 40 5120 40 2048
"$ttasim" trace --model llama2-7b --micro-batch 1 --precision bf16 --optimizer adamw --out "$out/llama2-7b.json"
"$ttasim" trace --model llama3-8b --micro-batch 1 --precision bf16 --optimizer adamw --out "$out/llama3-8b.json"
