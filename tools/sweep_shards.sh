#!/usr/bin/env bash
# A sweep split in N shards and merged must equal the single run, byte for byte.
#   tools/sweep_shards.sh TOPSIM NAME N       (what ctest runs; from the repository root)
set -eu
topsim=${1:?topsim binary}
name=${2:?sweep or scenario}
shards=${3:?number of shards}
export TOPSIM_DATA_DIR=.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$topsim" sweep "$name" -o "$tmp/single.json"
parts=()
for ((i = 1; i <= shards; ++i)); do
  "$topsim" sweep "$name" --shard "$i/$shards" -o "$tmp/part$i.json"
  parts+=("$tmp/part$i.json")
done
# Shards in reverse order: merge sorts by point.
reversed=()
for ((i = ${#parts[@]} - 1; i >= 0; --i)); do reversed+=("${parts[$i]}"); done
"$topsim" merge "${reversed[@]}" -o "$tmp/merged.json"
if ! cmp "$tmp/single.json" "$tmp/merged.json"; then
  diff "$tmp/single.json" "$tmp/merged.json" | head -20 >&2
  exit 1
fi
