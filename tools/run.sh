#!/usr/bin/env bash
# The two Quick start commands of the README; .ci/run calls the second.
#   bash tools/run.sh demo   install what is missing, build the topsim binary alone, show DGX A100
#                            and its p2p matrices
#   bash tools/run.sh test   install what is missing, build everything (tests, fuzz replays,
#                            benchmarks), run every test, then again under ASan and UBSan, in
#                            build-asan
# Works as root on a fresh Debian 12 (bookworm); elsewhere install the packages yourself.
set -euo pipefail
cd "$(dirname "$0")/.."

# ninja-build: Ninja compiles the objects of a library and of the libraries above it side by side
# (Make waits for each library before starting the next), which keeps both cores busy.
# protobuf-compiler and libprotobuf-dev: Chakra execution traces (src/interop/chakra) are protobuf
# messages; protoc generates their C++ from topsim's et_def.proto at build time.
packages=(g++ cmake make ninja-build pkg-config libsimgrid-dev libboost-graph-dev nlohmann-json3-dev libcli11-dev catch2 libpugixml-dev
          protobuf-compiler libprotobuf-dev)
# The tests also need python3 (generators and checks under tools/), chromium (the report
# screenshot test), and dpkg-dev and file (cpack's .deb, whose dependencies dpkg-shlibdeps finds).
test_packages=(python3 chromium dpkg-dev file)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "missing Debian packages: ${missing[*]} (run as root, or install them with apt-get)" >&2
    exit 2
  fi
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# configure DIR ARGS...: a new build tree uses Ninja; an existing one keeps its generator.
configure() {
  local dir=$1
  shift
  local generator=()
  [[ -f $dir/CMakeCache.txt ]] || generator=(-G Ninja)
  cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
}

# build [TARGET]: configure build/ and build TARGET (default: everything).
build() {
  configure build
  cmake --build build -j "$(nproc)" ${1:+--target "$1"}
}

# The same suite again on an ASan+UBSan build (docs/limits.md, "Sanitizers"); tests labelled
# no-sanitize are left out there (see tests/CMakeLists.txt for which and why).
test_sanitized() {
  configure build-asan -DTOPSIM_SANITIZE=ON
  cmake --build build-asan -j "$(nproc)"
  # SimGrid keeps the netzones of a process's later Simulators until exit (tools/lsan.supp).
  (cd build-asan && LSAN_OPTIONS="suppressions=$(pwd)/../tools/lsan.supp:print_suppressions=0" \
    ctest -j "$(nproc)" --output-on-failure -LE no-sanitize)
}

case "${1:-}" in
  demo)
    install_missing
    echo "building the topsim binary in build/ (about 3 minutes on 2 cores; build/.ninja_log has the steps)" >&2
    build topsim >/dev/null
    build/topsim topo show dgx-a100
    echo
    build/topsim p2p dgx-a100
    ;;
  test)
    packages+=("${test_packages[@]}")
    install_missing
    build
    (cd build && ctest -j "$(nproc)" --output-on-failure)
    test_sanitized
    ;;
  *)
    echo "usage: bash tools/run.sh demo|test" >&2
    exit 2
    ;;
esac
