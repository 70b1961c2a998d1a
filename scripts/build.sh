#!/usr/bin/env bash
# Configures and builds into build/ (Ninja, ccache when present).
#
#   scripts/build.sh          installs everything, builds the tool, the
#                             clang-tidy module and every test
#   scripts/build.sh --tool   installs and builds only tensor-accountant
#                             (scripts/run-seed.sh): no test is configured
#                             unless build/ already has them, so GoogleTest
#                             and the rest need not be installed
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
    testing=()
    # A tree that scripts/test.sh configured keeps its tests (switching them
    # off would only make the next test run reconfigure).
    [ -f build/CMakeCache.txt ] || testing=(-DBUILD_TESTING=OFF)
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${testing[@]}" >/dev/null
    cmake --build build --target tensor-accountant
    ;;
  -h|--help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "build.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
