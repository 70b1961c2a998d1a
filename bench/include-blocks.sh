#!/usr/bin/env bash
# Include blocks (issue 33): a generated project of FILES sources whose
# include blocks differ only in the standard headers they put before
# <torch/torch.h> (<vector>, <iostream>, <string>, ... in a different
# combination per file), analysed with an empty cache (cold) and again
# (warm), by one or two builds of tensor-accountant side by side: before,
# every block was an 80 MB LibTorch entry of its own (34 blocks of a real
# application against the 512 MiB default: a "warm" run as slow as a cold
# one); now the standard headers LibTorch includes itself share its entry.
# Then the same per file, one run each, twice over (as an editor, a CMake
# per-file hook or CI shards run it): a cache too small for the blocks
# thrashes, every "warm" run rebuilding what the one before evicted; the
# runs that see it say so (the hint is printed).
# A benchmark, not a test: it prints wall and CPU times, the cache's
# entries and size, and asserts only that every cached answer equals the
# uncached one.
#
#   bench/include-blocks.sh
#   BEFORE=/path/to/old/tensor-accountant bench/include-blocks.sh
#
# Environment:
#   FILES=<n>     sources, one include block each (default 8)
#   BLOCKS=other  blocks of standard headers LibTorch does not include
#                 (<valarray>, <regex>, ...: an entry each, before and now)
#   PER_FILE=0    skip the per-file runs
#   JOBS=<n>      threads (default 2)
#   TA            the tool (default: build/driver/tensor-accountant)
#   BEFORE        another build to run the same cases with, first
#   KEEP=1        keep the work directory (its path is printed)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FILES=${FILES:-8}
JOBS=${JOBS:-2}
TA=${TA:-$ROOT/build/driver/tensor-accountant}
[[ -x "$TA" ]] || { echo "include-blocks: build tensor-accountant first (or set TA)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "include-blocks: /usr/bin/time not found (Debian: time)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tma-blocks.XXXXXX")
if [[ ${KEEP:-0} == 1 ]]; then
  echo "work directory: $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi

python3 - "$FILES" "$WORK/project" "${BLOCKS:-absorbed}" <<'PY'
import itertools, json, os, sys
count, root, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3]
headers = ["vector", "iostream", "string", "memory", "cmath", "tuple",
           "map", "algorithm", "functional", "unordered_map", "sstream",
           "chrono"]
blocks = [c for n in (2, 3) for c in itertools.combinations(headers, n)]
if kind == "other":
    others = ["valarray", "regex", "random", "fstream", "future",
              "filesystem", "any", "variant", "optional", "cfloat"]
    blocks = [("vector", o) for o in others] + \
        [c for c in itertools.combinations(others, 2)]
os.makedirs(os.path.join(root, "src"), exist_ok=True)
commands = []
for i in range(count):
    block = blocks[(i * 7) % len(blocks)]
    path = os.path.join(root, "src", "f%02d.cpp" % i)
    with open(path, "w") as f:
        f.write("".join("#include <%s>\n" % h for h in block))
        f.write("#include <torch/torch.h>\n\n")
        f.write("torch::Tensor f%d(torch::Tensor x) {\n" % i)
        f.write("  auto y = torch::zeros({%d, 256});\n" % (64 * (i + 1)))
        f.write("  auto z = y.t().contiguous();\n  return z;\n}\n")
    commands.append({"directory": root, "file": path,
                     "command": "/usr/bin/c++ -std=c++17 -isystem "
                     "/usr/include/torch/csrc/api/include -c " + path})
with open(os.path.join(root, "compile_commands.json"), "w") as f:
    json.dump(commands, f, indent=1)
PY

run() { # label tool cache-dir out
  local label=$1 tool=$2 cache=$3 out=$4
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" \
    "$tool" -p "$WORK/project" --cache-dir="$cache" --cache-stats -j "$JOBS" \
    --format=json "$WORK"/project/src/*.cpp > "$out" 2> "$WORK/err"
  read -r wall user sys rss < "$WORK/time"
  local entries size built
  entries=$(grep -E "shared LibTorch entries|per-file preamble entries" "$WORK/err" \
            | awk -F': ' '{printf "%s%s", sep, $2; sep="+"}')
  size=$(grep "size:" "$WORK/err" | sed 's/.*size: //; s/ of .*//')
  built=$(grep "this run:" "$WORK/err" | sed 's/.*this run: //')
  printf "| %s | %.1f s | %.1f s | %s | %s | %s |\n" "$label" "$wall" \
    "$(echo "$user + $sys" | bc)" "$entries" "$size" "$built"
  if grep -q "too small" "$WORK/err"; then
    grep "too small" "$WORK/err" | sed 's/^/    /'
  fi
}

per_file() { # label tool cache-dir
  local label=$1 tool=$2 cache=$3 pass f wall=0 cpu=0 built=0
  for pass in cold warm; do
    wall=0 cpu=0 built=0
    : > "$WORK/hints"
    for f in "$WORK"/project/src/*.cpp; do
      /usr/bin/time -f "%e %U %S" -o "$WORK/time" \
        "$tool" -p "$WORK/project" --cache-dir="$cache" --cache-stats \
        "$f" > /dev/null 2> "$WORK/err"
      read -r w u s < "$WORK/time"
      wall=$(echo "$wall + $w" | bc)
      cpu=$(echo "$cpu + $u + $s" | bc)
      built=$((built + $(grep "this run:" "$WORK/err" | sed 's/.*hits\?, //; s/ built.*//')))
      grep "too small" "$WORK/err" >> "$WORK/hints" || true
    done
    printf "| %s, per file, %s | %.1f s | %.1f s | %s built | %s |\n" "$label" \
      "$pass" "$wall" "$cpu" "$built" "$(wc -l < "$WORK/hints") runs printed the hint"
    sort -u "$WORK/hints" | head -1 | sed 's/^/    /'
  done
}

echo "$FILES files, one include block each (${BLOCKS:-absorbed}), -j $JOBS, default cache size"
echo
"$TA" --no-cache -p "$WORK/project" -j "$JOBS" --format=json \
  "$WORK"/project/src/*.cpp > "$WORK/plain.json" 2> /dev/null
echo "| build, case | wall | CPU | entries (shared+per-file) | cache size | this run |"
echo "|---|---|---|---|---|---|"
for which in before after; do
  if [[ $which == before ]]; then
    [[ -n ${BEFORE:-} ]] || continue
    tool=$BEFORE
  else
    tool=$TA
  fi
  cache="$WORK/cache-$which"
  run "$which, cold" "$tool" "$cache" "$WORK/$which-cold.json"
  run "$which, warm" "$tool" "$cache" "$WORK/$which-warm.json"
  for c in cold warm; do
    cmp -s "$WORK/plain.json" "$WORK/$which-$c.json" || {
      echo "include-blocks: $which $c answers differ from --no-cache" >&2
      exit 1
    }
  done
done
if [[ ${PER_FILE:-1} == 1 ]]; then
  for which in before after; do
    if [[ $which == before ]]; then
      [[ -n ${BEFORE:-} ]] || continue
      per_file before "$BEFORE" "$WORK/per-file-before"
    else
      per_file after "$TA" "$WORK/per-file-after"
    fi
  done
fi
