#!/usr/bin/env bash
# Runs topsim's libFuzzer harnesses (docs/fuzzing.md).
#   tools/fuzz.sh [TARGET|all] SECONDS
# TARGET: topology models scenario trace nvidia_smi nccl_xml sweep nccl_tests chakra (default all, one after another).
# Builds build-fuzz/ with clang if needed. Each target starts from its seeds (fuzz/corpus/TARGET/)
# and the saved crashes (tests/data/fuzz/TARGET/); what it finds goes to a scratch directory,
# $TOPSIM_FUZZ_WORK (default build-fuzz/work)/TARGET/{corpus,artifacts,log}, never into the tree.
# The run forks one child at a time and keeps going past crashes, hangs (10 s) and out-of-memory
# (2 GiB), so one run collects them all; each lands in artifacts/ as crash-*, timeout-*, oom-* or
# leak-*. Exit status 1 when any was found.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets="topology models scenario trace nvidia_smi nccl_xml sweep nccl_tests chakra"
if [[ $# -ne 2 ]]; then
  echo "usage: tools/fuzz.sh [TARGET|all] SECONDS   (targets: $all_targets)" >&2
  exit 2
fi
targets=$1
seconds=$2
[[ $targets == all ]] && targets=$all_targets
work=${TOPSIM_FUZZ_WORK:-build-fuzz/work}

# Longest input per format, bytes: a little over the largest seed, so that mutations can grow it
# but time goes into structure rather than into megabytes of text.
max_len() {
  case $1 in
    models) echo 40960 ;;
    topology | nccl_xml) echo 16384 ;;
    chakra) echo 24576 ;;  # the seed head.et is 19.6 KB of protobuf
    *) echo 8192 ;;
  esac
}

if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DTOPSIM_FUZZ=ON -DTOPSIM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi

found=0
for target in $targets; do
  if [[ ! -f fuzz/fuzz_$target.cpp ]]; then
    echo "unknown target '$target' (targets: $all_targets)" >&2
    exit 2
  fi
  cmake --build build-fuzz -j2 --target "fuzz_$target"
  mkdir -p "$work/$target/corpus" "$work/$target/artifacts"
  seeds=(fuzz/corpus/$target)
  [[ -d tests/data/fuzz/$target ]] && seeds+=(tests/data/fuzz/$target)
  dict=()
  [[ -f fuzz/$target.dict ]] && dict=(-dict=fuzz/$target.dict)
  echo "== fuzz_$target for ${seconds}s (log: $work/$target/log)"
  set +e
  build-fuzz/fuzz_$target "$work/$target/corpus" "${seeds[@]}" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")" \
    -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -artifact_prefix="$work/$target/artifacts/" -print_final_stats=1 >"$work/$target/log" 2>&1
  set -e
  grep -E '^#[0-9]+: cov:' "$work/$target/log" | tail -1 || true
  artifacts=$(find "$work/$target/artifacts" -type f | wc -l)
  echo "   artifacts: $artifacts in $work/$target/artifacts"
  [[ $artifacts -gt 0 ]] && found=1
done
exit $found
