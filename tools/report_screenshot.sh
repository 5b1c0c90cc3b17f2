#!/usr/bin/env bash
# Renders topsim reports in headless Chromium and checks the screenshots show their charts.
#   tools/report_screenshot.sh TOPSIM        (what ctest runs; from the repository root)
set -eu
topsim=${1:?topsim binary}
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "chromium is not installed (bash tools/run.sh test installs it)" >&2
  exit 1
fi
export TOPSIM_DATA_DIR=.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shoot() {  # rows, page, screenshot, colours, pixels
  "$topsim" report "$1" -o "$tmp/$2"
  # HOME and the profile in the temporary folder: Chromium writes there, not in the user's home.
  HOME=$tmp timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$tmp/profile" --window-size=1400,900 --screenshot="$tmp/$3" "file://$tmp/$2" >/dev/null 2>&1
  python3 tools/check_screenshot.py "$tmp/$3" "$4" "$5"
}
# Training: efficiency lines of three variants and four-part bars (blue, orange, green, vermillion).
shoot tests/baselines/gpt-tensor-parallel-dgx-a100.json training.html training.png 4 400
# Collectives: busbw lines of several counts and overrides per server.
shoot tests/baselines/sweep-allreduce-servers.json collectives.html collectives.png 3 150
# Inference: throughput per watt and per dollar as blue bars, latency as math (blue) and memory
# (orange) stacked.
shoot tests/data/report/infer-resnet50.json infer.html infer.png 2 2000
# Link utilisation: the heat map of a DGX-1 ring allreduce, its NVLinks busy (100%, yellow)
# from the first bin on.
"$topsim" coll dgx1-v100 -b 256M -e 256M --link-usage "$tmp/links.json" >/dev/null
shoot "$tmp/links.json" links.html links.png 1 20000
