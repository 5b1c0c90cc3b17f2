#!/usr/bin/env bash
# Issue 51's growth table: the 1 GiB allreduce (NCCL's choice) on N DGX H100 servers, N doubling
# from FIRST to LAST (default 2048 to 131072, i.e. 16,384 to 1,048,576 GPUs), each a whole
# process timed RUNS times (default 1). Prints per N the median wall time, its peak memory and the
# growth over the previous N (target <= 2.0x a doubling).
#   bash bench/growth.sh [FIRST [LAST [RUNS]]]
# TOPSIM=other/build/topsim times another build.
set -euo pipefail
topsim=${TOPSIM:-build/topsim}
first=${1:-2048}
last=${2:-131072}
runs=${3:-1}
printf '| servers | GPUs | wall (s) | peak (MiB) | growth |\n|---|---|---|---|---|\n'
previous=""
for ((n = first; n <= last; n *= 2)); do
  walls=()
  peak=0
  for ((r = 0; r < runs; r++)); do
    out=$( { /usr/bin/time -f '%e %M' "$topsim" coll dgx-h100 --nodes "$n" -o allreduce -b 1G -e 1G > /dev/null; } 2>&1 | tail -1)
    walls+=("${out% *}")
    kib=${out#* }
    ((kib > peak)) && peak=$kib
  done
  median=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}')
  growth=""
  [[ -n "$previous" ]] && growth=$(awk -v a="$median" -v b="$previous" 'BEGIN {printf "%.2fx", a / b}')
  printf '| %d | %d | %s | %d | %s |\n' "$n" "$((8 * n))" "$median" "$((peak / 1024))" "$growth"
  previous=$median
done
