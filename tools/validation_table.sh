#!/usr/bin/env bash
# Keeps docs/validation.md equal to what `topsim validate --cross` prints today (the
# cross-validation re-solves the constants once per source: this is the CI run of --cross).
#   tools/validation_table.sh --check  TOPSIM   fails if the table is stale
#   tools/validation_table.sh --update TOPSIM   rewrites the generated part of docs/validation.md
set -u
mode=${1:-}
topsim=${2:-}
if [[ ( $mode != --check && $mode != --update ) || -z $topsim ]]; then
  echo "usage: $0 --check|--update TOPSIM" >&2
  exit 2
fi
doc=docs/validation.md
begin='<!-- BEGIN topsim validate --cross --format markdown -->'
end='<!-- END topsim validate --cross --format markdown -->'
export TOPSIM_DATA_DIR=$PWD
table=$(mktemp)
trap 'rm -f "$table" "$table.doc"' EXIT
"$topsim" validate --cross --format markdown >"$table"
code=$?
if [[ $code -ne 0 ]]; then
  echo "topsim validate --cross exited $code: a row could not be predicted" >&2
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
