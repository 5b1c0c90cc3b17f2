#!/usr/bin/env bash
# Scaling-curve baselines of the bundled scenarios: tests/baselines/NAME.json is what
# `topsim sweep NAME` writes today. Run from the repository root.
#   tools/baselines.sh --check  TOPSIM NAME        sweep again; fail on any moved figure (what ctest runs)
#   tools/baselines.sh --update TOPSIM [NAME ...]  accept today's curves (all baselines if none)
# A model change that moves a curve fails --check with topsim regress's report of what moved;
# fix it, or accept it with --update in the same commit and say why.
set -u
mode=${1:-}
topsim=${2:-}
if [[ ( $mode != --check && $mode != --update ) || -z $topsim ]]; then
  echo "usage: $0 --check|--update TOPSIM [NAME...]" >&2
  exit 2
fi
shift 2
dir=tests/baselines
export TOPSIM_DATA_DIR=.

if [[ $mode == --check ]]; then
  name=${1:?baseline name}
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$topsim" sweep "$name" -o "$tmp/current.json" || exit 1
  # Any move is reported (regress lists every figure that changed); worse ones fail regress
  # itself, better ones fail the byte comparison, so that no change slips through unseen.
  "$topsim" regress --baseline "$dir/$name.json" --current "$tmp/current.json" --tolerance 0% || exit 1
  if ! cmp -s "$dir/$name.json" "$tmp/current.json"; then
    echo "baseline '$name': figures moved (for the better or in fields regress does not rank); accept with" >&2
    echo "  bash tools/baselines.sh --update $topsim $name" >&2
    exit 1
  fi
  exit 0
fi

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  for f in "$dir"/*.json; do names+=("$(basename "$f" .json)"); done
fi
for name in "${names[@]}"; do
  "$topsim" sweep "$name" -o "$dir/$name.json" || exit 1
  echo "updated $dir/$name.json"
done
