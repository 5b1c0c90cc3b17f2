#!/usr/bin/env bash
# The acceptance check of topsim import: a server's nvidia-smi topo -m text and its NCCL XML
# each import to a topology whose topo -m matrix (GPU/NIC block, affinities, NIC legend) and
# p2p figures (p2pBandwidthLatencyTest, CSV) equal those of the bundled server.
#   tools/import_roundtrip.sh TOPSIM SERVER nvidia-smi|nccl-xml FILE [IMPORT OPTIONS...]
# Run from the repository root (ctest does).
set -u
if [[ $# -lt 4 ]]; then
  echo "usage: $0 TOPSIM SERVER nvidia-smi|nccl-xml FILE [OPTIONS...]" >&2
  exit 2
fi
topsim=$1 server=$2 format=$3 file=$4
shift 4
export TOPSIM_DATA_DIR=.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$topsim" import "$format" "$file" -o "$tmp/imported.json" "$@" 2>"$tmp/import.log"; then
  echo "topsim import $format $file failed:"
  cat "$tmp/import.log"
  exit 1
fi
status=0
"$topsim" topo show "$server" --matrix >"$tmp/want.matrix"
"$topsim" topo show "$tmp/imported.json" --matrix >"$tmp/got.matrix"
if ! diff -u "$tmp/want.matrix" "$tmp/got.matrix"; then
  echo "$server: topo -m of the topology imported from $file differs (expected vs imported)"
  status=1
fi
"$topsim" p2p "$server" --format csv >"$tmp/want.p2p"
"$topsim" p2p "$tmp/imported.json" --format csv >"$tmp/got.p2p"
if ! diff -u "$tmp/want.p2p" "$tmp/got.p2p" | head -n 40; then :; fi
if ! cmp -s "$tmp/want.p2p" "$tmp/got.p2p"; then
  echo "$server: p2p figures of the topology imported from $file differ (expected vs imported)"
  status=1
fi
[[ $status == 0 ]] && echo "$server: $format $file imports to the same matrix and p2p figures"
exit $status
