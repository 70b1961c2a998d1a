#!/usr/bin/env bash
# Analysis throughput on the project's own snippets (GitHub issue #3). A
# benchmark, not a test: it asserts nothing. For each testdata file it
# prints the statements analysed per second (analysis only, from --stats),
# and, side by side in this one run, the tool's wall time (--no-cache, a
# cold parse with header bodies skipped) against `clang++-16 -fsyntax-only`
# on the same file, with the ratio.
#
#   bench/throughput.sh [files...]   (default: testdata/seed/*.cpp testdata/ops/*.cpp)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TA=${TA:-$ROOT/build/driver/tensor-accountant}
[[ -x "$TA" ]] || { echo "bench: build tensor-accountant first (or set TA)" >&2; exit 2; }
FLAGS="-std=c++17 -isystem /usr/include/torch/csrc/api/include -w"
if [[ $# -gt 0 ]]; then FILES=("$@"); else FILES=("$ROOT"/testdata/seed/*.cpp "$ROOT"/testdata/ops/*.cpp); fi

now() { date +%s.%N; }
printf '%-28s %6s %6s %12s %10s %10s %7s\n' file funcs stmts "stmts/s" "ta (s)" "clang (s)" ratio
for f in "${FILES[@]}"; do
  t0=$(now)
  stats=$("$TA" --no-cache --analysis-stats --format=json "$f" 2>&1 >/dev/null | grep 'analysed' || true)
  t1=$(now)
  clang++-16 -fsyntax-only $FLAGS "$f"
  t2=$(now)
  funcs=$(sed -E 's/.*analysed ([0-9]+) functions.*/\1/' <<<"$stats")
  stmts=$(sed -E 's/.* ([0-9]+) statements in.*/\1/' <<<"$stats")
  rate=$(sed -E 's/.*\(([0-9]+) statements\/s\).*/\1/' <<<"$stats")
  ta=$(echo "$t1 - $t0" | bc); cl=$(echo "$t2 - $t1" | bc)
  printf '%-28s %6s %6s %12s %10.2f %10.2f %6.2fx\n' "$(basename "$f")" "$funcs" "$stmts" "$rate" "$ta" "$cl" \
    "$(echo "$cl / $ta" | bc -l)"
done
echo "ratio = clang++-16 -fsyntax-only time / tensor-accountant time (higher: the tool is faster)"
