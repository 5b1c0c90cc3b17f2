#!/usr/bin/env bash
# Golden tests of the topsim CLI: a case is tests/golden/NAME.args (the arguments, shell words)
# with the expected NAME.stdout, NAME.stderr and NAME.code. Run from the repository root.
#   tools/golden.sh --check  TOPSIM NAME          compare one case (what ctest runs)
#   tools/golden.sh --update TOPSIM [NAME ...]    rewrite expected outputs on purpose (all if none)
# Review the diff of an update before committing it: a changed figure is a changed model.
set -u
mode=${1:-}
topsim=${2:-}
if [[ ( $mode != --check && $mode != --update ) || -z $topsim ]]; then
  echo "usage: $0 --check|--update TOPSIM [CASE...]" >&2
  exit 2
fi
shift 2
dir=tests/golden
export TOPSIM_DATA_DIR=.

run_case() {
  local name=$1 out=$2
  local -a args
  eval "args=($(cat "$dir/$name.args"))"
  "$topsim" "${args[@]}" >"$out.stdout" 2>"$out.stderr"
  echo $? >"$out.code"
}

status=0
if [[ $mode == --check ]]; then
  name=${1:?case name}
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  run_case "$name" "$tmp/actual"
  for part in stdout stderr code; do
    if ! diff -u "$dir/$name.$part" "$tmp/actual.$part" >"$tmp/diff"; then
      echo "golden case '$name': $part differs (expected vs actual):"
      head -n 60 "$tmp/diff"
      status=1
    fi
  done
  exit $status
fi

cases=("$@")
if [[ ${#cases[@]} -eq 0 ]]; then
  for f in "$dir"/*.args; do cases+=("$(basename "$f" .args)"); done
fi
for name in "${cases[@]}"; do
  run_case "$name" "$dir/$name"
  echo "updated $name (exit $(cat "$dir/$name.code"))"
done
