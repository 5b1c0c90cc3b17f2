#!/usr/bin/env bash
# train --megatron-args and train with topsim's own flags, on the same layout of a bundled model
# of the same shape, print the same figures byte for byte (CSV: the table without the header,
# whose first line names the model). Run from the repository root: tools/megatron_same_as_flags.sh TOPSIM
set -u
topsim=${1:?usage: $0 TOPSIM}
export TOPSIM_DATA_DIR=.
status=0
compare() {  # NAME, megatron arguments, topsim flags, target options
  local name=$1 megatron=$2 flags=$3 target=$4 a b
  # shellcheck disable=SC2086
  a=$("$topsim" train --megatron-args "$megatron" $target --format csv 2>/dev/null) || { echo "$name: --megatron-args failed"; status=1; return; }
  # shellcheck disable=SC2086
  b=$("$topsim" train $flags $target --format csv 2>/dev/null) || { echo "$name: topsim's flags failed"; status=1; return; }
  if [[ "$a" != "$b" ]]; then
    echo "$name: the two differ"
    diff <(echo "$a") <(echo "$b")
    status=1
  fi
}
# GPT-3 175B (bundled vocab 51200 is 50257 padded for tp 8; 51200 is a multiple of 128 x tp 4 too),
# MLPerf's layout.
compare gpt3-175b \
  "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 --max-position-embeddings 2048 --vocab-size 51200
   --tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 4
   --sequence-parallel --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap
   --bf16 --fp8-format hybrid --micro-batch-size 1 --global-batch-size 1536 --lr 1e-4" \
  "gpt3-175b --tp 4 --pp 8 --vp 3 --sp --zero 1 --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap
   --precision fp8 --micro-batch 1 --global-batch 1536" \
  "--topology dgx-h100 --gpus 256"
# DeepSeek-V3-like (bundled: 3 dense layers, 1 shared expert of 2048), the uneven split, EP over servers.
compare deepseek-v3-like \
  "--num-layers 61 --hidden-size 7168 --num-attention-heads 128 --kv-channels 128 --ffn-hidden-size 18432 --swiglu
   --seq-length 4096 --max-position-embeddings 4096 --vocab-size 129280 --untie-embeddings-and-output-weights --num-experts 256 --moe-router-topk 8
   --moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58)
   --pipeline-model-parallel-size 16 --decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 1
   --expert-model-parallel-size 64 --use-distributed-optimizer --bf16 --grad-reduce-in-bf16 --micro-batch-size 1
   --global-batch-size 1024" \
  "deepseek-v3-like --pp 16 --first-stage-layers 4 --last-stage-layers 1 --ep 64 --zero 1 --precision bf16 --grad-reduce-in-bf16
   --micro-batch 1 --global-batch 1024" \
  "--topology hgx-h800 --gpus 1024 --allow-cross-server-tp"
# A dense model with grouped-query attention, full recomputation and no distributed optimizer.
compare llama3-8b \
  "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8
   --ffn-hidden-size 14336 --swiglu --seq-length 8192 --max-position-embeddings 8192 --vocab-size 128256 --untie-embeddings-and-output-weights
   --tensor-model-parallel-size 2 --recompute-granularity full --recompute-method uniform --recompute-num-layers 1
   --fp16 --micro-batch-size 2 --global-batch-size 64" \
  "llama3-8b --tp 2 --zero 0 --recompute full --precision fp16 --micro-batch 2 --global-batch 64" \
  "--topology dgx-h100 --gpus 16"
[[ $status == 0 ]] && echo "--megatron-args and topsim's flags agree"
exit $status
