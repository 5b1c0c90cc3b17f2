#!/usr/bin/env bash
# Acceptance test of topsim calibrate (issue 13): change one calibration row's measured value,
# calibrate a copy of models/, and require that exactly the constant the row pins changed.
#   tools/calibrate_one_row.sh TOPSIM ROW_ID NEW_MEASURED CONSTANT_ID [MODELS_DIR ROWS_DIR]
# Run from the repository root. MODELS_DIR and ROWS_DIR (the rows are its *.json files) default
# to models and scenarios/validation. The row's constant must be one no other calibration row's
# prediction depends on, or the constants it couples to move too (as they should).
set -euo pipefail
topsim=$1 row=$2 value=$3 constant=$4 models=${5:-models} rows=${6:-scenarios/validation}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$models" "$tmp/models"
# The repository's layout (models/ beside scenarios/validation/): rows name files relative to
# their own directory (an MLPerf BERT row's seq_dist is ../../models/datasets/...).
mkdir -p "$tmp/scenarios/validation"
cp "$rows"/*.json "$tmp/scenarios/validation/"
python3 - "$tmp/scenarios/validation" "$row" "$value" <<'PY'
import glob, json, sys
folder, row_id, value = sys.argv[1], sys.argv[2], float(sys.argv[3])
for path in glob.glob(folder + "/*.json"):
    text = open(path).read()
    rows = json.loads(text)["rows"]
    for row in rows:
        if row["id"] == row_id:
            old = json.dumps(row, ensure_ascii=False)
            row["measured"] = value
            open(path, "w").write(text.replace(old, json.dumps(row, ensure_ascii=False)))
            sys.exit(0)
sys.exit("no row " + row_id)
PY
"$topsim" --models "$tmp/models" calibrate "$tmp"/scenarios/validation/*.json >"$tmp/out" || { cat "$tmp/out"; exit 1; }
# Constants whose value moved, from the table calibrate prints (columns: constant method old new).
moved=$(awk '$2 ~ /^(exact|least_squares|prior|carried)$/ && $3 != $4 { print $1 }' "$tmp/out")
if [[ "$moved" != "$constant" ]]; then
  echo "expected exactly $constant to move; moved: ${moved:-nothing}"
  cat "$tmp/out"
  exit 1
fi
# And in the files: only that constant's value and its provenance lines differ.
changed=$(diff -r "$models" "$tmp/models" | grep -c '^>' || true)
if [[ $changed -lt 1 || $changed -gt 3 ]]; then
  echo "expected the value and at most its residual to change in $models/, got $changed lines:"
  diff -r "$models" "$tmp/models" || true
  exit 1
fi
echo "ok: only $constant moved"
