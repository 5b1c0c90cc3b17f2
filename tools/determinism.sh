#!/usr/bin/env bash
# The same inputs give byte-identical outputs across runs, environments and shard splits.
#   tools/determinism.sh TOPSIM [CASE...]     (what ctest runs; from the repository root)
# Every case runs twice and both runs' stdout, stderr, exit status and written files must match
# byte for byte. The two runs differ in everything that must not matter: the working directory
# (the repository root, then an empty temporary folder, with the data directory fixed by
# TOPSIM_DATA_DIR and file arguments made absolute), the locale (C, then C.UTF-8 where
# installed) and address-space randomisation (on, then off with setarch -R where it works).
set -u
topsim=${1:?topsim binary}
shift
root=$(pwd)
[[ $topsim == /* ]] || topsim=$root/$topsim
export TOPSIM_DATA_DIR=$root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/elsewhere"

utf8=C
locale -a 2>/dev/null | grep -qix 'c.utf-\?8' && utf8=C.UTF-8
norandom=()
setarch "$(uname -m)" -R true 2>/dev/null && norandom=(setarch "$(uname -m)" -R)

# NAME|ARGS: ARGS are shell words; @OUT@ is a file the command writes (compared too), @ROOT@ the
# repository root (absolute, so that both working directories find the file).
cases=(
  "topo-show|topo show dgx-a100"
  "topo-list|topo list"
  "models-list|models list gpus --format json"
  "topo-show-cluster|topo show dgx-a100 --nodes 4 --format json"
  "p2p|p2p dgx1-v100 --format json"
  "coll|coll dgx-a100 -o allreduce -b 1K -e 1G -f 32"
  "coll-nodes|coll dgx-a100 --nodes 4 -o allreduce -b 1M -e 1G -f 32 --format json"
  "coll-steps|coll dgx1-v100 -o allgather -b 1M -e 1M --model steps"
  "scale|scale dgx-a100 -o allreduce -b 1G --nodes 1,2,4,8"
  "nccl-tuner-conf|nccl tuner-conf dgx-h100 --nodes 2"
  "run-scenario|run @ROOT@/scenarios/resnet50-dgx1.json --format json"
  "run-trace|run @ROOT@/scenarios/traces/pipeline-tp2-pp2.json --topology dgx-a100"
  "compare|compare @ROOT@/scenarios/bert-large-pretrain-dgx-a100.json --topologies dgx-a100,dgx2 --nodes 1,4"
  "validate|validate --format json"
  "sweep|sweep sweep-allreduce-servers -o @OUT@"
  "report|report @ROOT@/tests/baselines/sweep-allreduce-servers.json -o @OUT@"
  "link-usage-coll|coll dgx1-v100 -b 64M -e 64M --link-usage @OUT@"
  "link-usage-run|run @ROOT@/scenarios/traces/pipeline-tp2-pp2.json --topology dgx-a100 --link-usage @OUT@"
  "export|topo export --simgrid-xml dgx-a100 --nodes 2"
  "import-nvidia-smi|import nvidia-smi @ROOT@/tests/data/import/dgx-a100.txt"
  "import-nccl-xml|import nccl-xml @ROOT@/tests/data/import/dgx1-v100.xml"
)

run_case() {  # name, args, run number, working directory, environment and wrapper...
  local name=$1 args=$2 n=$3 dir=$4
  shift 4
  local out=$tmp/$name.$n
  local -a words
  args=${args//@ROOT@/$root}
  args=${args//@OUT@/$out.file}
  eval "words=($args)"
  (cd "$dir" && "$@" "$topsim" "${words[@]}" >"$out.stdout" 2>"$out.stderr"; echo $? >"$out.code")
  # The written file's path differs between the runs by design; cut it wherever it is echoed.
  local part
  for part in stdout stderr file; do
    [[ -f $out.$part ]] && sed -i "s#$out\.file#OUT#g" "$out.$part"
  done
  return 0
}

status=0
ran=0
for entry in "${cases[@]}"; do
  name=${entry%%|*}
  args=${entry#*|}
  if [[ $# -gt 0 ]]; then
    wanted=0
    for w in "$@"; do [[ $w == "$name" ]] && wanted=1; done
    [[ $wanted -eq 1 ]] || continue
  fi
  run_case "$name" "$args" 1 "$root" env LC_ALL=C
  ran=$((ran + 1))
  run_case "$name" "$args" 2 "$tmp/elsewhere" env LC_ALL=$utf8 "${norandom[@]}"
  if [[ $(cat "$tmp/$name.1.code") != 0 ]]; then
    echo "case '$name' failed (exit $(cat "$tmp/$name.1.code")):" >&2
    head -5 "$tmp/$name.1.stderr" >&2
    status=1
  fi
  for part in stdout stderr code file; do
    [[ -f $tmp/$name.1.$part || -f $tmp/$name.2.$part ]] || continue
    if ! cmp -s "$tmp/$name.1.$part" "$tmp/$name.2.$part"; then
      echo "case '$name': $part differs between the two runs:" >&2
      diff "$tmp/$name.1.$part" "$tmp/$name.2.$part" | head -10 >&2
      status=1
    fi
  done
done
[[ $status -eq 0 ]] && echo "$ran cases, each byte-identical in both runs (second run: LC_ALL=$utf8, ${norandom[*]:-ASLR as is})"
exit $status
