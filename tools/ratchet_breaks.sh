#!/usr/bin/env bash
# The accuracy ratchet can fail (issue 49): make one constant worse in a copy of models/ and
# require `validate --cross --ratchet` to exit 1 naming the class it hurt, and the committed
# models to pass on the same rows.
#   tools/ratchet_breaks.sh TOPSIM
# Run from the repository root. The rows are one server's and two servers' published nccl-tests
# tables (scenarios/validation/nccl-public.json): no calibration row there, so --cross solves
# nothing and the check takes seconds; only classes whose rows all lie there are compared (the
# 2080 Ti's). The broken constant is NCCL's PCIe efficiency on Turing (models/nccl.json, 0.7617,
# NCCL's 12.0 of 15.754 GB/s), set to 0.4: large 2080 Ti collectives slow by almost half, far
# beyond the ratchet's 1 point.
set -euo pipefail
topsim=$1
rows=scenarios/validation/nccl-public.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$topsim" validate --cross --ratchet tests/accuracy-ratchet.json --by-class -q "$rows" >"$tmp/good" 2>&1 ||
  { echo "the committed models fail the ratchet on $rows:"; cat "$tmp/good"; exit 1; }
cp -r models "$tmp/models"
python3 - "$tmp/models/nccl.json" <<'PY'
import json, sys
path = sys.argv[1]
d = json.load(open(path))
d["nccl_models"]["turing"]["pcie_efficiency"] = 0.4
json.dump(d, open(path, "w"), indent=1)
PY
set +e
"$topsim" --models "$tmp/models" validate --cross --ratchet tests/accuracy-ratchet.json --by-class -q "$rows" >"$tmp/out" 2>&1
code=$?
set -e
if [[ $code -ne 1 ]] || ! grep -q "turing/pcie/none/busbw>=64MiB: .* (more than 1 point worse)" "$tmp/out"; then
  echo "expected exit 1 naming turing/pcie/none/busbw>=64MiB; got exit $code:"
  cat "$tmp/out"
  exit 1
fi
echo "the ratchet fails as it should:"
grep "turing/pcie/none/busbw>=64MiB: " "$tmp/out"
