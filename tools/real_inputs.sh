#!/usr/bin/env bash
# Issue 18's acceptance on the real captures in tests/data/real-inputs: each topology a sample
# imports to (the import itself checks every topo -m cell against the input, docs/import.md)
# loads and runs: `coll` for the NCCL XML dumps, `p2p` for the topo -m matrices.
# The imports' own output (the topology, the notes, the refusals) is checked by tests/golden/real-*.
#   tools/real_inputs.sh TOPSIM        (run from the repository root; ctest does)
set -u
topsim=${1:?usage: $0 TOPSIM}
export TOPSIM_DATA_DIR=.
dir=tests/data/real-inputs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
run() {  # NAME FORMAT FILE COMMAND [IMPORT OPTIONS...]
  local name=$1 format=$2 file=$3 command=$4
  shift 4
  if ! "$topsim" import "$format" "$dir/$file" -o "$tmp/$name.json" "$@" 2>"$tmp/$name.log"; then
    echo "$file: import failed:"; cat "$tmp/$name.log"; status=1; return
  fi
  local -a args=(p2p "$tmp/$name.json")
  [[ $command == coll ]] && args=(coll "$tmp/$name.json" -b 1M -e 64M -f 8)
  if ! "$topsim" "${args[@]}" >"$tmp/$name.out" 2>&1; then
    echo "$file: topsim ${args[*]} failed:"; cat "$tmp/$name.out"; status=1; return
  fi
  echo "$file: imported, $command runs ($(grep -c . "$tmp/$name.out") lines)"
}
run a100pcie nccl-xml a100pcie-2gpu-cx6dx.xml coll
run simai nccl-xml simai-hgx-a100-5nic.xml coll
run t600 nccl-xml t600-1gpu-roce.xml coll --gpu t4
run b300 nvidia-smi b300-sglang-ansi-9nic.topo.txt p2p --gpu b300
run dgx-a100 nvidia-smi dgx-a100-10nic.topo.txt p2p
run p100 nvidia-smi dgx1-p100-sheffield.topo.txt p2p
run mp nvidia-smi dgx1-topo-mp.topo.txt p2p --gpu v100 --pcie-only
run v100 nvidia-smi dgx1-v100-msccl.topo.txt p2p
run della nvidia-smi h100-della-snc-6nic.topo.txt p2p --gpu h100
run h200 nvidia-smi hgx-h200-12nic.topo.txt p2p --gpu h200
run rtx4090 nvidia-smi rtx4090-8x-1nic.topo.txt p2p --gpu rtx4090
run v100x4 nvidia-smi v100sxm2-4x-nv2-2nic.topo.txt p2p
# Refused, each for its real cause (the messages are in the goldens).
for refused in "nvidia-smi a100-8x-brev-phb-garbled.topo.txt" "nvidia-smi dgx1-topo-mp.topo.txt" "nccl-xml t600-1gpu-roce.xml"; do
  set -- $refused
  "$topsim" import "$1" "$dir/$2" -o "$tmp/refused.json" >/dev/null 2>&1
  code=$?
  if [[ $code != 2 || -e $tmp/refused.json ]]; then echo "$2: expected exit 2 and no file, got $code"; status=1; fi
done
exit $status
