#!/usr/bin/env bash
# The installed topsim runs from outside the source tree with the figures of the build tree.
#   tools/install_check.sh BUILD_DIR TOPSIM      (what ctest runs; from the repository root)
# 1. cmake --install into a temporary prefix; 2. the same prefix moved elsewhere; 3. the .deb
# that cpack -G DEB makes, unpacked with dpkg-deb -x (installing it needs root and changes the
# machine; docs/install.md says how it was checked on a fresh Debian 12). Each runs from a
# directory outside the checkout without TOPSIM_DATA_DIR: `topsim --version` must name the data
# beside the binary, and `coll dgx-a100 -b 1G -e 1G` (a bundled topology and models; in the prefix
# also `run resnet50-dgx-a100`, a bundled scenario) must print
# the stdout, stderr and exit code of the build tree's binary run from the repository root. The
# .deb must declare the libraries it links.
set -euo pipefail
build=${1:-} topsim=${2:-}
if [[ -z $build || -z $topsim ]]; then
  echo "usage: $0 BUILD_DIR TOPSIM" >&2
  exit 2
fi
unset TOPSIM_DATA_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/elsewhere"
status=0

# reference NAME ARGS...: the build tree's output, from the repository root.
reference() {
  local name=$1
  shift
  local code=0
  "$topsim" "$@" >"$tmp/$name.built.out" 2>"$tmp/$name.built.err" || code=$?
  echo $code >"$tmp/$name.built.code"
}
# compare NAME BINARY ARGS...: BINARY's output from elsewhere must equal the reference.
compare() {
  local name=$1 binary=$2
  shift 2
  local code=0
  (cd "$tmp/elsewhere" && "$binary" "$@") >"$tmp/$name.out" 2>"$tmp/$name.err" || code=$?
  echo $code >"$tmp/$name.code"
  for part in out err code; do
    if ! diff -u "$tmp/${name%%@*}.built.$part" "$tmp/$name.$part" >"$tmp/diff"; then
      echo "topsim $* from $binary: std$part differs from the build tree's:"
      head -n 40 "$tmp/diff"
      status=1
    fi
  done
}
# chooses DATA BINARY: the binary says it reads DATA, the folder beside it.
chooses() {
  local want="data: $1 (install prefix)"
  if ! (cd "$tmp/elsewhere" && "$2" --version) | grep -qxF "$want"; then
    echo "$2 did not choose the data beside it: expected '$want', got:"
    (cd "$tmp/elsewhere" && "$2" --version) || true
    status=1
  fi
}

reference coll coll dgx-a100 -b 1G -e 1G
reference run run resnet50-dgx-a100

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
chooses "$tmp/prefix/share/topsim" "$tmp/prefix/bin/topsim"
compare coll@prefix "$tmp/prefix/bin/topsim" coll dgx-a100 -b 1G -e 1G
compare run@prefix "$tmp/prefix/bin/topsim" run resnet50-dgx-a100

mv "$tmp/prefix" "$tmp/moved"
chooses "$tmp/moved/share/topsim" "$tmp/moved/bin/topsim"
compare coll@moved "$tmp/moved/bin/topsim" coll dgx-a100 -b 1G -e 1G

(cd "$build" && cpack -G DEB -B "$tmp/pkg" >"$tmp/cpack.log") || { cat "$tmp/cpack.log"; exit 1; }
debs=("$tmp"/pkg/*.deb)
if [[ ${#debs[@]} -ne 1 || ! -f ${debs[0]} ]]; then
  echo "cpack made no single .deb:"
  ls "$tmp/pkg"
  exit 1
fi
depends=$(dpkg-deb -f "${debs[0]}" Depends)
for lib in libsimgrid libpugixml libprotobuf libstdc++6 libc6; do
  if [[ $depends != *"$lib"* ]]; then
    echo "the package does not declare $lib: Depends: $depends"
    status=1
  fi
done
dpkg-deb -x "${debs[0]}" "$tmp/root"
chooses "$tmp/root/usr/share/topsim" "$tmp/root/usr/bin/topsim"
compare coll@deb "$tmp/root/usr/bin/topsim" coll dgx-a100 -b 1G -e 1G

[[ $status -eq 0 ]] && echo "ok: the prefix, the moved prefix and the .deb ($(basename "${debs[0]}"), Depends: $depends) print what the build tree prints"
exit $status
