#!/usr/bin/env bash
# Issue 16's speed targets for `topsim train`, timed as whole processes (README's Speed section has
# the medians of repeated runs):
#   bash bench/llm_targets.sh 405b   # Llama 3 405B, one iteration on 16,384 H100 (2,048 DGX H100): <= 60 s, <= 8 GiB
#   bash bench/llm_targets.sh 175b   # GPT-3 175B, one iteration on 1,024 A100 (128 DGX A100): <= 10 s
# e.g. for i in 1 2 3; do /usr/bin/time -v bash bench/llm_targets.sh 405b; done
set -euo pipefail
topsim=${TOPSIM:-build/topsim}
case "${1:-}" in
  405b) exec "$topsim" train llama3-405b --topology dgx-h100 --gpus 16384 --tp 8 --pp 2 --vp 9 --sp \
          --global-batch 2048 --tp-comm-overlap ;;
  175b) exec "$topsim" train gpt3-175b --topology dgx-a100 --gpu a100-80gb --gpus 1024 --tp 8 --pp 8 \
          --global-batch 1536 --recompute full ;;
  *) echo "usage: $0 405b|175b" >&2; exit 2 ;;
esac
