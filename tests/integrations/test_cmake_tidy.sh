#!/usr/bin/env bash
# The clang-tidy module as a build action (docs/integrations/ci.md): a real
# CMake project configured with CMAKE_CXX_CLANG_TIDY = clang-tidy-16 loading
# our module; building it must report our warning with its byte estimate,
# and with --warnings-as-errors the build must fail.
#
# usage: test_cmake_tidy.sh <module.so> <source dir of the project>
set -euo pipefail
MODULE=$1
SRC=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tma-cmake-tidy.XXXXXX")
trap "rm -rf \"$WORK\"" EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

configure() { # <build dir> <clang-tidy list>
  cmake -S "$SRC" -B "$1" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$SRC/skip-compile.sh" \
    "-DCMAKE_CXX_CLANG_TIDY=$2" > "$1.configure.log" 2>&1 ||
    { cat "$1.configure.log"; fail "configure"; }
}

configure "$WORK/warn" "clang-tidy-16;--load=$MODULE;--checks=-*,torch-*"
cmake --build "$WORK/warn" > "$WORK/warn.log" 2>&1 ||
  { cat "$WORK/warn.log"; fail "the build failed on a warning"; }
grep -E "model.cpp:5:[0-9]+: warning: contiguous\(\) copies 32 KiB .*\[torch-contiguous-copy\]" \
  "$WORK/warn.log" > /dev/null ||
  { cat "$WORK/warn.log"; fail "no torch-contiguous-copy warning in the build"; }

configure "$WORK/error" \
  "clang-tidy-16;--load=$MODULE;--checks=-*,torch-*;--warnings-as-errors=torch-*"
if cmake --build "$WORK/error" > "$WORK/error.log" 2>&1; then
  cat "$WORK/error.log"; fail "--warnings-as-errors did not fail the build"
fi
grep -q "error: contiguous() copies 32 KiB" "$WORK/error.log" ||
  { cat "$WORK/error.log"; fail "no error in the failing build"; }
echo "ok: CMAKE_CXX_CLANG_TIDY runs the checks in the build"
