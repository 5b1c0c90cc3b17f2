#!/usr/bin/env bash
# Issue 29's speed targets, timed as whole processes (medians of repeated runs in README, Speed):
#   bash bench/scale_targets.sh coll N      # 1 GiB allreduce, NCCL's choice, on N DGX H100 (8N GPUs)
#                                           #   N = 16384: <= 10 s, <= 2 GiB; N = 131072: <= 60 s, <= 8 GiB
#   bash bench/scale_targets.sh train405    # Llama 3 405B on 16,384 H100, tp 8 pp 2 vp 9 sp: <= 5 s
#   bash bench/scale_targets.sh plan405     # every layout of Llama 3 405B on 16,384 H100: <= 5 min
#   bash bench/scale_targets.sh plan70      # Llama 2 70B on 1,024 H100 (the 78 s)
#   bash bench/scale_targets.sh alltoall N  # 32 MiB..8 GiB alltoall (9 sizes) on N DGX H100
#                                           #   N = 32: <= 10 s; N = 128: <= 60 s
# e.g. for i in 1 2 3; do /usr/bin/time -v bash bench/scale_targets.sh coll 2048; done
# TOPSIM=other/build/topsim runs another build (a baseline, timed in turn with this one).
set -euo pipefail
topsim=${TOPSIM:-build/topsim}
case "${1:-}" in
  coll) exec "$topsim" coll dgx-h100 --nodes "${2:?server count}" -o allreduce -b 1G -e 1G ;;
  train405) exec "$topsim" train llama3-405b --topology dgx-h100 --gpus 16384 --tp 8 --pp 2 --vp 9 --sp --global-batch 2048 ;;
  plan405) exec "$topsim" plan llama3-405b --topology dgx-h100 --gpus 16384 --global-batch 2048 ;;
  plan70) exec "$topsim" plan llama2-70b --topology dgx-h100 --gpus 1024 ;;
  alltoall) exec "$topsim" coll dgx-h100 --nodes "${2:?server count}" -o alltoall -b 32M -e 8G ;;
  *) echo "usage: $0 coll N | train405 | plan405 | plan70 | alltoall N" >&2; exit 2 ;;
esac
