#!/usr/bin/env bash
# The cross-machine verification path without a build: --emit-harness writes
# a program, a CMakeLists.txt and the predictions; --compare-measured checks
# a measured output (here: what LibTorch 1.13.1 reported for the seed on the
# meta device) and fails on a planted wrong measurement.
set -u
TA=$1; SRC=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$TA" --verify=cuda --emit-harness="$work/out" "$SRC/testdata/seed/blocks.cpp" || fail "emit-harness exited $?"
for f in harness.cpp CMakeLists.txt predicted.json; do
  [ -s "$work/out/$f" ] || fail "missing $f"
done
grep -q 'find_package(Torch' "$work/out/CMakeLists.txt" || fail "CMakeLists.txt does not find Torch"
grep -q 'tma_probe::record("block1", "x"' "$work/out/harness.cpp" || fail "no probe for block1's x"
grep -q 'tma_probe::device_type()' "$work/out/harness.cpp" || fail "kCUDA not redirected"

out=$("$TA" --compare-measured="$SRC/testdata/seed/blocks.measured-meta.json" "$SRC/testdata/seed/blocks.cpp" 2>&1)
rc=$?
echo "$out" | tail -3
[ $rc -eq 0 ] || fail "compare-measured on the truth exited $rc"
echo "$out" | grep -q "20 match, 0 mismatch" || fail "expected 20 matching tensors"

# One wrong measurement: d's storage is not 256 MiB.
sed 's/"storage_bytes": 268435456/"storage_bytes": 268435457/' \
  "$SRC/testdata/seed/blocks.measured-meta.json" > "$work/wrong.json"
out=$("$TA" --compare-measured="$work/wrong.json" "$SRC/testdata/seed/blocks.cpp" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "a wrong measurement should exit 1, got $rc"
echo "$out" | grep -q "storage_bytes: predicted 268435456, measured 268435457" || fail "mismatch not shown"
echo "emit-harness and compare-measured behave"
