#!/usr/bin/env bash
# Speed of tensor-accountant against the compilers a user already runs on the
# same file (GitHub issue #6). A benchmark, not a test: it asserts nothing and
# prints min / median wall-clock seconds per case and the ratios the issue
# sets goals for. docs/speed.md holds the numbers from one machine.
#
#   bench/bench.sh [file.cpp]            (default: testdata/seed/blocks.cpp)
#
# Environment:
#   TA=<path>        the tool (default: build/driver/tensor-accountant, else
#                    the first build*/driver/tensor-accountant found)
#   RUNS=<n>         runs of each fast case (default 5)
#   SLOW_RUNS=<n>    runs of each slow case: clang++, clang-tidy, cold (default 3)
#   FLAGS="..."      compile flags (default: -std=c++17 and LibTorch's include
#                    dir, as the tool finds them itself)
#
# The cases, all on the same file:
#   clang++-16 -fsyntax-only     a plain parse, header bodies and all
#   clang-tidy-16 --load=<our module> -checks='-*,torch-*'
#   ta --no-cache                our cold path: header bodies skipped
#   ta, empty cache              cold plus building the preamble's PCH
#   ta, warm                     cache hit after an edit to a function body
#                                (the every-save case)
#   8 files -j2, empty cache     8 copies with different bodies, one preamble
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FILE=${1:-$ROOT/testdata/seed/blocks.cpp}
RUNS=${RUNS:-5}
SLOW_RUNS=${SLOW_RUNS:-3}
if [[ -z "${TA:-}" ]]; then
  TA=$ROOT/build/driver/tensor-accountant
  [[ -x $TA ]] || TA=$(ls "$ROOT"/build*/driver/tensor-accountant 2>/dev/null | head -n1)
fi
[[ -x "$TA" ]] || { echo "bench: build tensor-accountant first (or set TA)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench: /usr/bin/time not found (Debian: time)" >&2; exit 2; }
if [[ -z "${FLAGS:-}" ]]; then
  FLAGS="-std=c++17"
  [[ -d /usr/include/torch/csrc/api/include ]] &&
    FLAGS="$FLAGS -isystem /usr/include/torch/csrc/api/include"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tma-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
CACHE=$WORK/cache
MAIN=$WORK/$(basename "$FILE")
cp "$FILE" "$MAIN"

now() { date +%s.%N; }

# stats NAME t1 t2 ...: prints the row, sets MIN_<key> and MED_<key>.
declare -A MIN MED CPU
median() {
  local sorted; sorted=$(printf '%s\n' "$@" | sort -g)
  local n=$#
  if (( n % 2 )); then
    echo "$sorted" | sed -n "$(( n / 2 + 1 ))p"
  else
    echo "$sorted" | sed -n "$(( n / 2 )),$(( n / 2 + 1 ))p" |
      awk '{s += $1} END {printf "%.3f", s / 2}'
  fi
}
stats() {
  local key=$1; shift
  local sorted; sorted=$(printf '%s\n' "$@" | sort -g)
  local n=$#
  local min; min=$(echo "$sorted" | head -n1)
  local med
  if (( n % 2 )); then
    med=$(echo "$sorted" | sed -n "$(( n / 2 + 1 ))p")
  else
    med=$(echo "$sorted" | sed -n "$(( n / 2 )),$(( n / 2 + 1 ))p" |
          awk '{s += $1} END {printf "%.3f", s / 2}')
  fi
  MIN[$key]=$min; MED[$key]=$med
  printf '  %-44s min %7.3f s   median %7.3f s   cpu %7.3f s   (n=%d)\n' \
    "$key" "$min" "$med" "${CPU[$key]}" "$n"
}

# time_runs KEY N SETUP CMD...: runs SETUP (untimed) then CMD, N times.
time_runs() {
  local key=$1 n=$2 setup=$3; shift 3
  local times=() cpus=() i t0 t1
  for (( i = 0; i < n; i++ )); do
    eval "$setup"
    t0=$(now)
    /usr/bin/time -o "$WORK/cpu.txt" -f "%U %S" \
      "$@" > "$WORK/out.txt" 2> "$WORK/err.txt" || {
      echo "bench: '$key' failed:" >&2; cat "$WORK/err.txt" >&2; exit 1; }
    t1=$(now)
    times+=("$(echo "$t1 - $t0" | bc -l)")
    cpus+=("$(tail -n1 "$WORK/cpu.txt" | awk '{printf "%.3f", $1 + $2}')")
  done
  # CPU seconds (user + sys): what a busy machine does not inflate.
  CPU[$key]=$(median "${cpus[@]}")
  stats "$key" "${times[@]}"
}

# A body edit that leaves the preamble alone: the last integer literal of
# the file's last function body changes on every run.
EDIT=0
edit_body() {
  EDIT=$(( EDIT + 1 ))
  cp "$FILE" "$MAIN"
  printf '\nint tma_bench_edit() { return %d; }\n' "$EDIT" >> "$MAIN"
}

echo "tensor-accountant speed on $(basename "$FILE")"
echo "  machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  tool: $TA"
echo "  flags: $FLAGS"
echo

# shellcheck disable=SC2086
time_runs "clang++-16 -fsyntax-only" "$SLOW_RUNS" : \
  clang++-16 -fsyntax-only -Wno-everything $FLAGS "$MAIN"
# clang-tidy-16 running our own checks through the plugin module: the way a
# user runs them without this CLI.
MODULE=${MODULE:-$(dirname "$TA")/../checks/plugin/libTensorAccountantTidyModule.so}
[[ -f "$MODULE" ]] || { echo "bench: build TensorAccountantTidyModule first (or set MODULE)" >&2; exit 2; }
CT="clang-tidy-16 --load=<module> -checks=-*,torch-*"
# shellcheck disable=SC2086
time_runs "$CT" "$SLOW_RUNS" : \
  clang-tidy-16 --quiet --load="$MODULE" --checks='-*,torch-*' "$MAIN" -- $FLAGS
# shellcheck disable=SC2086
time_runs "ta --no-cache (cold)" "$SLOW_RUNS" : \
  "$TA" --no-cache "$MAIN" -- $FLAGS
cp "$WORK/out.txt" "$WORK/nocache.txt"
# shellcheck disable=SC2086
time_runs "ta, empty cache (cold + build PCH)" "$SLOW_RUNS" 'rm -rf "$CACHE"' \
  "$TA" --cache-dir "$CACHE" "$MAIN" -- $FLAGS
cmp -s "$WORK/out.txt" "$WORK/nocache.txt" ||
  { echo "bench: cached output differs from --no-cache" >&2; exit 1; }
# shellcheck disable=SC2086
time_runs "ta, warm (after a body edit)" "$RUNS" edit_body \
  "$TA" --cache-dir "$CACHE" "$MAIN" -- $FLAGS

# 8 files sharing a preamble, bodies differing, two at a time, cold.
EIGHT=()
for i in 1 2 3 4 5 6 7 8; do
  cp "$FILE" "$WORK/copy$i.cpp"
  printf '\nint tma_bench_copy() { return %d; }\n' "$i" >> "$WORK/copy$i.cpp"
  EIGHT+=("$WORK/copy$i.cpp")
done
# shellcheck disable=SC2086
time_runs "8 files -j2, empty cache" "$SLOW_RUNS" 'rm -rf "$CACHE"' \
  "$TA" -j 2 --cache-dir "$CACHE" "${EIGHT[@]}" -- $FLAGS
# shellcheck disable=SC2086
time_runs "8 files -j2, warm" "$SLOW_RUNS" : \
  "$TA" -j 2 --cache-dir "$CACHE" "${EIGHT[@]}" -- $FLAGS

ratio() { echo "scale=1; $1 / $2" | bc -l; }
echo
echo "ratios (medians):"
echo "  clang-tidy / warm:                      $(ratio "${MED[$CT]}" "${MED[ta, warm (after a body edit)]}")x   (goal >= 40x, aim 60x)"
echo "  clang-tidy / warm, CPU seconds:         $(ratio "${CPU[$CT]}" "${CPU[ta, warm (after a body edit)]}")x"
echo "  clang++ -fsyntax-only / --no-cache:     $(ratio "${MED[clang++-16 -fsyntax-only]}" "${MED[ta --no-cache (cold)]}")x   (goal >= 1x)"
echo "  clang++ -fsyntax-only / empty cache:    $(ratio "${MED[clang++-16 -fsyntax-only]}" "${MED[ta, empty cache (cold + build PCH)]}")x   (goal >= 1x)"
echo "  8 files -j2 / one file, empty cache:    $(ratio "${MED[8 files -j2, empty cache]}" "${MED[ta, empty cache (cold + build PCH)]}")x   (goal < 3x)"
echo "  8 files -j2 / one file, --no-cache:     $(ratio "${MED[8 files -j2, empty cache]}" "${MED[ta --no-cache (cold)]}")x"
