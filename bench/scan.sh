#!/usr/bin/env bash
# Repository scan (issue 14): a generated LibTorch project of FILES sources
# (bench/gen-project.py: project headers that include LibTorch, a different
# include block in every file, an include directory per module), analysed
# side by side in one run, on the same files and the same JOBS cores, by
#   run-clang-tidy-16 -load <our module> -checks='-*,torch-*'
#   tensor-accountant -p build/, empty cache (cold)
#   tensor-accountant -p build/, warm cache
#   tensor-accountant -p build/ --files-from <one file> after a body edit
# A benchmark, not a test: it prints wall times, ratios, the cache's size
# and each case's peak memory per process (max RSS), and asserts nothing
# but that the cached answers equal the uncached ones (COMPARE=1, default).
#
#   bench/scan.sh
#
# Environment:
#   FILES=<n>     sources to generate (default 40)
#   JOBS=<n>      parallel processes / threads (default 2)
#   TA, MODULE    the tool and the clang-tidy module (default: build/)
#   COMPARE=0     skip the --no-cache comparison run (saves FILES x ~7 s)
#   TIDY_SAMPLE=k run clang-tidy on k evenly spaced files only and scale its
#                 times by FILES/k (for a machine too busy for FILES x ~15 s
#                 of clang-tidy); the output says so. Default: all files.
#   KEEP=1        keep the work directory (its path is printed)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FILES=${FILES:-40}
JOBS=${JOBS:-2}
COMPARE=${COMPARE:-1}
TA=${TA:-$ROOT/build/driver/tensor-accountant}
MODULE=${MODULE:-$(dirname "$TA")/../checks/plugin/libTensorAccountantTidyModule.so}
[[ -x "$TA" ]] || { echo "scan: build tensor-accountant first (or set TA)" >&2; exit 2; }
[[ -f "$MODULE" ]] || { echo "scan: build TensorAccountantTidyModule first (or set MODULE)" >&2; exit 2; }
command -v run-clang-tidy-16 > /dev/null || { echo "scan: run-clang-tidy-16 not found (clang-tidy-16)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "scan: /usr/bin/time not found (Debian: time)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tma-scan.XXXXXX")
if [[ ${KEEP:-0} == 1 ]]; then
  echo "work directory: $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
PROJ=$WORK/project
python3 "$ROOT/bench/gen-project.py" "$FILES" "$PROJ" > /dev/null
CACHE=$WORK/cache

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc -l; }
kb_to_mib() { echo "scale=0; $1 / 1024" | bc; }

echo "repository scan: $FILES generated sources, -j $JOBS"
echo "  machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  tool: $TA"
echo

# clang-tidy through run-clang-tidy, each process's peak RSS recorded by a
# wrapper around the binary.
cat > "$WORK/tidy.sh" <<EOF
#!/bin/sh
case " \$* " in *" -list-checks "*) exec clang-tidy-16 "\$@" ;; esac
exec /usr/bin/time -a -o "$WORK/tidy-mem.txt" -f "%M %U %S" clang-tidy-16 "\$@"
EOF
chmod +x "$WORK/tidy.sh"
TIDY_DB=$PROJ/build
SCALE=1
if [[ -n ${TIDY_SAMPLE:-} ]]; then
  mkdir -p "$WORK/tidy-db"
  python3 -c '
import json, sys
entries = json.load(open(sys.argv[1]))
k = int(sys.argv[3])
step = max(1, len(entries) // k)
json.dump(entries[::step][:k], open(sys.argv[2], "w"))
' "$PROJ/build/compile_commands.json" "$WORK/tidy-db/compile_commands.json" "$TIDY_SAMPLE"
  TIDY_DB=$WORK/tidy-db
  SAMPLED=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$TIDY_DB/compile_commands.json")
  SCALE=$(echo "scale=4; $FILES / $SAMPLED" | bc -l)
fi
T0=$(now)
run-clang-tidy-16 -quiet -p "$TIDY_DB" -j "$JOBS" -load "$MODULE" \
  -checks='-*,torch-*' -clang-tidy-binary "$WORK/tidy.sh" \
  > "$WORK/tidy.out" 2>&1 || true
T1=$(now)
TIDY=$(echo "$(secs "$T0" "$T1") * $SCALE" | bc -l)
TIDY_RUNS=$(wc -l < "$WORK/tidy-mem.txt")
TIDY_MEM=$(cut -d' ' -f1 "$WORK/tidy-mem.txt" | sort -n | tail -n1)
TIDY_CPU=$(awk -v k="$SCALE" '{s += $2 + $3} END {printf "%.1f", s * k}' "$WORK/tidy-mem.txt")
TIDY_WARN=$(grep -c "warning: .*\[torch-" "$WORK/tidy.out" || true)

# ta_run NAME ARGS...: wall time and peak RSS of one tensor-accountant run.
declare -A WALL MEM CPU
ta_run() {
  local name=$1; shift
  local t0 t1
  t0=$(now)
  /usr/bin/time -o "$WORK/mem.txt" -f "%M %U %S" "$TA" "$@" \
    > "$WORK/$name.out" 2> "$WORK/$name.err" || {
      echo "scan: '$name' failed:" >&2; tail -n 20 "$WORK/$name.err" >&2; exit 1; }
  t1=$(now)
  WALL[$name]=$(secs "$t0" "$t1")
  MEM[$name]=$(tail -n1 "$WORK/mem.txt" | cut -d' ' -f1)
  CPU[$name]=$(tail -n1 "$WORK/mem.txt" | awk '{printf "%.2f", $2 + $3}')
}

ta_run cold -p "$PROJ/build" -j "$JOBS" --cache-dir "$CACHE" --format=json --cache-stats
CACHE_BYTES=$(du -sb "$CACHE" | cut -f1)
ta_run warm -p "$PROJ/build" -j "$JOBS" --cache-dir "$CACHE" --format=json --cache-stats
cmp -s "$WORK/cold.out" "$WORK/warm.out" ||
  { echo "scan: warm output differs from cold" >&2; exit 1; }
# The every-save case: one file's body edited, that file alone.
EDITED=$(ls "$PROJ"/src/*/file00.cpp)
printf '\nint tma_scan_edit() { return 1; }\n' >> "$EDITED"
echo "$EDITED" > "$WORK/changed.txt"
ta_run edit -p "$PROJ/build" --files-from "$WORK/changed.txt" --cache-dir "$CACHE"
if [[ $COMPARE == 1 ]]; then
  # The edit above changed one file; compare against the same tree.
  ta_run cold2 -p "$PROJ/build" -j "$JOBS" --cache-dir "$CACHE" --format=json
  ta_run nocache -p "$PROJ/build" -j "$JOBS" --no-cache --format=json
  cmp -s "$WORK/cold2.out" "$WORK/nocache.out" ||
    { echo "scan: cached output differs from --no-cache" >&2; exit 1; }
fi
TA_WARN=$(grep -c '"check": "torch-' "$WORK/cold.out" || true)

ratio() { echo "scale=1; $1 / $2" | bc -l; }
[[ $SCALE != 1 ]] &&
  echo "  (clang-tidy ran on $TIDY_RUNS of the $FILES files; its wall and CPU times are scaled by $SCALE)"
echo "  case                                              wall          CPU (user+sys)   peak memory"
printf '  %-48s %8.1f s   %8.1f s   %5s MiB/process (%d processes)\n' \
  "run-clang-tidy-16 -j $JOBS (our module)" "$TIDY" "$TIDY_CPU" "$(kb_to_mib "$TIDY_MEM")" "$TIDY_RUNS"
printf '  %-48s %8.1f s   %8.1f s   %5s MiB\n' "tensor-accountant -p, empty cache (cold)" "${WALL[cold]}" "${CPU[cold]}" "$(kb_to_mib "${MEM[cold]}")"
printf '  %-48s %8.1f s   %8.1f s   %5s MiB\n' "tensor-accountant -p, warm cache" "${WALL[warm]}" "${CPU[warm]}" "$(kb_to_mib "${MEM[warm]}")"
printf '  %-48s %8.2f s   %8.2f s   %5s MiB\n' "one file after a body edit (--files-from)" "${WALL[edit]}" "${CPU[edit]}" "$(kb_to_mib "${MEM[edit]}")"
[[ $COMPARE == 1 ]] &&
  printf '  %-48s %8.1f s   %8.1f s   %5s MiB   (output identical to the cache'"'"'s)\n' \
    "tensor-accountant -p, --no-cache" "${WALL[nocache]}" "${CPU[nocache]}" "$(kb_to_mib "${MEM[nocache]}")"
echo
echo "  warnings: clang-tidy $TIDY_WARN, tensor-accountant $TA_WARN"
echo "  cache after the cold scan: $(echo "scale=1; $CACHE_BYTES / 1048576" | bc) MiB"
grep -h "shared LibTorch\|per-file\|this run" "$WORK/warm.err" | sed 's/^/  warm: /'
echo
echo "ratios:"
echo "  run-clang-tidy / cold scan:   $(ratio "$TIDY" "${WALL[cold]}")x   (goal >= 8x, aim 15x)"
echo "  run-clang-tidy / warm scan:   $(ratio "$TIDY" "${WALL[warm]}")x   (goal >= 30x)"
echo "  same in CPU seconds:          cold $(ratio "$TIDY_CPU" "${CPU[cold]}")x, warm $(ratio "$TIDY_CPU" "${CPU[warm]}")x"
echo "  clang-tidy per file / edit:   $(ratio "$(echo "$TIDY * $JOBS / $FILES" | bc -l)" "${WALL[edit]}")x   (one file's clang-tidy time, from the scan)"
