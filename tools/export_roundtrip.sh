#!/usr/bin/env bash
# Round trip of topsim topo export: export a topology as a SimGrid platform file, time every
# ordered GPU pair on it with plain SimGrid (topsim_simgrid_p2p, no topsim code), and compare with
# topsim's own engine for the same copies (topsim_p2p_reference: copy time minus the fixed
# software cost, which a platform file does not carry). Fails on any pair whose times differ by
# more than TOLERANCE (relative). Run from the repository root.
#   tools/export_roundtrip.sh TOPSIM SIMGRID_P2P REFERENCE TOPOLOGY [EXPORT OPTIONS...]
# TOPOLOGY is a bundled name; EXPORT OPTIONS (--no-p2p, --nodes N) go to both sides.
set -euo pipefail
if [[ $# -lt 4 ]]; then
  echo "usage: $0 TOPSIM SIMGRID_P2P REFERENCE TOPOLOGY [--no-p2p] [--nodes N]" >&2
  exit 2
fi
topsim=$1 simgrid_p2p=$2 reference=$3 topology=$4
shift 4
sizes=4,65536,160000000   # latency-bound, middle, p2pBandwidthLatencyTest's copy
tolerance=1e-6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TOPSIM_DATA_DIR=.
"$topsim" topo export "$topology" --simgrid-xml "$@" -o "$tmp/platform.xml"
"$simgrid_p2p" "$tmp/platform.xml" --size "$sizes" >"$tmp/simgrid.csv"
"$reference" "topologies/$topology.json" "$@" --size "$sizes" >"$tmp/topsim.csv"
python3 - "$tmp/simgrid.csv" "$tmp/topsim.csv" "$tolerance" "$topology $*" <<'PY'
import csv, sys
simgrid = {(r["src"], r["dst"], r["size_B"]): float(r["time_s"]) for r in csv.DictReader(open(sys.argv[1]))}
topsim = {(r["src"], r["dst"], r["size_B"]): float(r["time_s"]) for r in csv.DictReader(open(sys.argv[2]))}
tolerance, label = float(sys.argv[3]), sys.argv[4].strip()
if simgrid.keys() != topsim.keys():
    sys.exit(f"{label}: the pairs differ: only SimGrid {sorted(simgrid.keys() - topsim.keys())[:5]}, "
             f"only topsim {sorted(topsim.keys() - simgrid.keys())[:5]}")
worst, worst_key, bad = 0.0, None, 0
for key, expected in topsim.items():
    diff = abs(simgrid[key] - expected) / expected
    if diff > worst:
        worst, worst_key = diff, key
    if diff > tolerance:
        bad += 1
        if bad <= 10:
            print(f"{label}: {key[0]} -> {key[1]}, {key[2]} B: SimGrid {simgrid[key]!r} s, topsim {expected!r} s "
                  f"({diff:.3g} relative)")
print(f"{label}: {len(topsim)} copies, max relative difference {worst:.3g}" +
      (f" ({worst_key[0]} -> {worst_key[1]}, {worst_key[2]} B)" if worst_key else ""))
sys.exit(1 if bad else 0)
PY
