#!/usr/bin/env bash
# Configures and builds into build/ (Ninja, ccache when present).
#
#   scripts/build.sh          installs everything, builds the tool, the
#                             clang-tidy module and every test
#   scripts/build.sh --tool   installs and builds only tensor-accountant
#                             (scripts/run-seed.sh): a fresh build/ is a
#                             Release tree with no test configured, so
#                             GoogleTest and the rest need not be installed
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "")
    bash scripts/install-deps.sh
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON >/dev/null
    cmake --build build
    ;;
  --tool)
    bash scripts/install-deps.sh --tool
    fresh=()
    # A tree that scripts/test.sh configured keeps its tests and build type
    # (switching them would only make the next test run rebuild). A fresh
    # one is a Release tree without tests: debug info (-g) is about 60% of
    # the compile time of a frontend batch with GCC 12 (72 s against 45 s
    # for -O2 -g and -O3 alone), and nobody debugs the first table.
    [ -f build/CMakeCache.txt ] || fresh=(-DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF)
    cmake -S . -B build -G Ninja "${fresh[@]}" >/dev/null
    cmake --build build --target tensor-accountant
    ;;
  -h|--help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "build.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
