#!/usr/bin/env bash
# SMPI on an exported platform: compile tests/roundtrip/smpi_p2p.c with smpicc, run it with
# smpirun on dgx1-v100's file (rank 0 sends 160 MB to every other rank in turn), and check that
# every rank reports a time within 1e-3 of what plain SimGrid gives on the same file
# (topsim_simgrid_p2p). SMPI's piecewise bandwidth and latency factors are set to 1, as the
# file's own network settings are, since smpirun replaces the network model with its own; the
# remaining gap is SMPI's per-message costs. Exits 77 (skipped) without smpicc or smpirun.
#   tools/export_smpi.sh TOPSIM SIMGRID_P2P
set -euo pipefail
topsim=${1:?usage: $0 TOPSIM SIMGRID_P2P}
simgrid_p2p=${2:?usage: $0 TOPSIM SIMGRID_P2P}
if ! command -v smpicc >/dev/null || ! command -v smpirun >/dev/null; then
  echo "smpicc or smpirun not found (Debian: apt-get install simgrid); skipped"
  exit 77
fi
size_B=160000000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TOPSIM_DATA_DIR=.
"$topsim" topo export dgx1-v100 --simgrid-xml -o "$tmp/platform.xml"
printf 'gpu%d\n' 0 1 2 3 4 5 6 7 >"$tmp/hosts.txt"
smpicc -O1 -o "$tmp/smpi_p2p" tests/roundtrip/smpi_p2p.c
smpirun -platform "$tmp/platform.xml" -hostfile "$tmp/hosts.txt" -np 8 \
  --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 --cfg=smpi/simulate-computation:no \
  --cfg=smpi/host-speed:1Gf --log=root.thresh:warning "$tmp/smpi_p2p" "$size_B" >"$tmp/smpi.txt"
"$simgrid_p2p" "$tmp/platform.xml" --size "$size_B" >"$tmp/simgrid.csv"
python3 - "$tmp/smpi.txt" "$tmp/simgrid.csv" <<'PY'
import csv, re, sys
smpi = {int(m.group(1)): float(m.group(2))
        for m in re.finditer(r"rank 0 -> rank (\d+): \d+ B in ([0-9.]+) s", open(sys.argv[1]).read())}
simgrid = {r["dst"]: float(r["time_s"]) for r in csv.DictReader(open(sys.argv[2])) if r["src"] == "gpu0"}
if sorted(smpi) != list(range(1, 8)):
    sys.exit(f"SMPI reported ranks {sorted(smpi)}, expected 1-7:\n" + open(sys.argv[1]).read())
worst = max(abs(smpi[r] - simgrid[f"gpu{r}"]) / simgrid[f"gpu{r}"] for r in smpi)
print(f"SMPI on dgx1-v100: 7 messages, max relative difference from plain SimGrid {worst:.3g}")
sys.exit(1 if worst > 1e-3 else 0)
PY
