#!/usr/bin/env bash
# The analysis's share of the run time (issue 12: "the analysis itself, not
# the parse, stays under 10% of the run time on every testdata file"). A
# benchmark, not a test: it asserts nothing. For each file it runs the tool
# once, cold (--no-cache: the parse of <torch/torch.h> included), and prints
# the analysis time --analysis-stats reports next to the wall time of that
# same run, with the share.
#
#   bench/analysis-share.sh [files...]   (default: testdata/*/*.cpp)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TA=${TA:-$ROOT/build/driver/tensor-accountant}
[[ -x "$TA" ]] || { echo "bench: build tensor-accountant first (or set TA)" >&2; exit 2; }
if [[ $# -gt 0 ]]; then FILES=("$@"); else FILES=("$ROOT"/testdata/*/*.cpp); fi

now() { date +%s.%N; }
printf '%-34s %6s %6s %12s %10s %7s\n' file funcs stmts "analysis ms" "wall (s)" share
worst=0
for f in "${FILES[@]}"; do
  t0=$(now)
  stats=$("$TA" --no-cache --analysis-stats --format=json "$f" 2>&1 >/dev/null | grep 'analysed' || true)
  t1=$(now)
  [[ -n "$stats" ]] || { printf '%-34s (no statistics: the file did not parse)\n' "${f#$ROOT/}"; continue; }
  funcs=$(sed -E 's/.*analysed ([0-9]+) functions.*/\1/' <<<"$stats")
  stmts=$(sed -E 's/.* ([0-9]+) statements in.*/\1/' <<<"$stats")
  secs=$(sed -E 's/.* statements in ([0-9.]+) s of analysis.*/\1/' <<<"$stats")
  ms=$(printf '%.1f' "$(echo "1000 * $secs" | bc -l)")
  wall=$(echo "$t1 - $t0" | bc)
  share=$(echo "100 * $secs / $wall" | bc -l)
  worst=$(echo "if ($share > $worst) $share else $worst" | bc -l)
  printf '%-34s %6s %6s %12s %10.2f %6.2f%%\n' "${f#$ROOT/}" "$funcs" "$stmts" "$ms" "$wall" "$share"
done
printf 'largest share: %.2f%% (analysis ms from --analysis-stats / wall time of the same run)\n' "$worst"
