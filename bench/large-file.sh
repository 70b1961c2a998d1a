#!/usr/bin/env bash
# One large file (issue 10, item 9): a generated LibTorch source of LINES
# lines (default 20,000) with thousands of findings and NOLINT comments,
# analysed with every check, against `clang++-16 -fsyntax-only` on the same
# file, side by side in this one run. A benchmark, not a test: it asserts
# nothing and prints min wall-clock seconds per case and the ratios (the
# goal: the tool under twice the compiler's time).
#
#   bench/large-file.sh [lines]
#
# Environment: TA (the tool; default build/driver/tensor-accountant), RUNS
# (runs of each case, default 3).
#
# The cases:
#   clang++-16 -fsyntax-only      the compiler's parse, header bodies and all
#   ta --no-cache                 parse (header bodies skipped), analysis,
#                                 all checks, NOLINT, the diagnostics printed
#   ta, warm cache                the same with the preamble cache hit (the
#                                 LibTorch part of the parse reused)
#   ta --format=sarif, warm       SARIF columns for every finding
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LINES=${1:-20000}
RUNS=${RUNS:-3}
TA=${TA:-$ROOT/build/driver/tensor-accountant}
[[ -x "$TA" ]] || { echo "bench: build tensor-accountant first (or set TA)" >&2; exit 2; }
FLAGS="-std=c++17 -w"
[[ -d /usr/include/torch/csrc/api/include ]] &&
  FLAGS="$FLAGS -isystem /usr/include/torch/csrc/api/include"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tma-large.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FILE=$WORK/large.cpp
python3 "$ROOT/bench/gen-large-file.py" "$LINES" > "$FILE"

now() { date +%s.%N; }
# best NAME command...: runs it RUNS times, prints the row, sets BEST.
best() {
  local name=$1; shift
  local min=""
  for ((r = 0; r < RUNS; r++)); do
    local t0 t1 d
    t0=$(now)
    "$@" > /dev/null 2>&1 || true
    t1=$(now)
    d=$(echo "$t1 - $t0" | bc)
    if [[ -z $min ]] || (( $(echo "$d < $min" | bc) )); then min=$d; fi
  done
  printf '%-34s %8.2f s\n' "$name" "$min"
  BEST=$min
}

FINDINGS=$("$TA" --cache-dir "$WORK/cache" --format=diagnostics "$FILE" 2>/dev/null |
           grep -c ': warning: ' || true)
echo "file: $LINES lines, $FINDINGS findings after NOLINT (cache built by this count)"
best "clang++-16 -fsyntax-only" clang++-16 -fsyntax-only $FLAGS "$FILE"; CLANG=$BEST
best "ta --no-cache (all checks)" "$TA" --no-cache --format=diagnostics "$FILE"; COLD=$BEST
best "ta, warm cache (all checks)" "$TA" --cache-dir "$WORK/cache" --format=diagnostics "$FILE"; WARM=$BEST
best "ta --format=sarif, warm cache" "$TA" --cache-dir "$WORK/cache" --format=sarif "$FILE"; SARIF=$BEST
printf 'ratio ta --no-cache / clang++ -fsyntax-only: %.2f (goal: under 2)\n' "$(echo "$COLD / $CLANG" | bc -l)"
printf 'ratio ta warm / clang++ -fsyntax-only:       %.2f\n' "$(echo "$WARM / $CLANG" | bc -l)"
printf 'ratio ta sarif warm / clang++ -fsyntax-only: %.2f\n' "$(echo "$SARIF / $CLANG" | bc -l)"
