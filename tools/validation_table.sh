#!/usr/bin/env bash
# Keeps docs/validation.md equal to what `topsim validate` prints today.
#   tools/validation_table.sh --check  TOPSIM   fails if the table is stale or a row misses its target
#   tools/validation_table.sh --update TOPSIM   rewrites the generated part of docs/validation.md
set -u
mode=${1:-}
topsim=${2:-}
if [[ ( $mode != --check && $mode != --update ) || -z $topsim ]]; then
  echo "usage: $0 --check|--update TOPSIM" >&2
  exit 2
fi
doc=docs/validation.md
begin='<!-- BEGIN topsim validate --format markdown -->'
end='<!-- END topsim validate --format markdown -->'
export TOPSIM_DATA_DIR=$PWD
table=$(mktemp)
trap 'rm -f "$table" "$table.doc"' EXIT
"$topsim" validate --format markdown >"$table"
code=$?
if [[ $code -ne 0 ]]; then
  echo "topsim validate exited $code: a row is outside its target or could not be predicted" >&2
  cat "$table"
  exit 1
fi
# Text before the begin marker, the marker, the table, the end marker, text after it.
awk -v begin="$begin" -v end="$end" -v table="$table" '
  $0 == begin { print; while ((getline line < table) > 0) print line; skipping = 1; next }
  $0 == end { skipping = 0 }
  !skipping { print }' "$doc" >"$table.doc"
if [[ $mode == --update ]]; then
  cp "$table.doc" "$doc"
  echo "updated $doc"
  exit 0
fi
if ! diff -u "$doc" "$table.doc"; then
  echo "docs/validation.md is stale: run tools/validation_table.sh --update build/topsim and commit it" >&2
  exit 1
fi
