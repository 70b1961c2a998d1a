#!/usr/bin/env bash
# --verify=cuda over the seed, testdata/cuda and the differential corpora
# (testdata/ops, testdata/schema, testdata/hostile, testdata/symbolic), on
# a machine with a CUDA LibTorch and a GPU (issue 37): every tensor's
# shape, strides and bytes, and for functions with tensors on CUDA the
# caching allocator's peak allocated and reserved bytes (getDeviceStats)
# against summary.cuda_allocator. Prints one line per corpus and every
# CUDA allocator verdict that is not a match; exits 1 on any mismatch,
# 2 when the tool or a harness could not be built or run.
#
#   scripts/device-verify-cuda.sh [build dir]      (default: build-cuda)
#
# LibTorch: $Torch_DIR, $CMAKE_PREFIX_PATH, or an installed PyTorch with
# CUDA (docs/verify.md, "Where LibTorch comes from"); the tool itself
# builds against the LibTorch headers it finds as usual (Debian's
# libtorch-dev, scripts/install-deps.sh --tool). Needs a GPU: not run by
# the test suite.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-cuda}"
out="$build/device-verify-cuda"

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "device-verify-cuda.sh: no GPU visible (nvidia-smi -L failed); --verify=cuda would run on meta" >&2
  exit 2
fi
nvidia-smi -L

# Only the tool: a Release tree without tests (scripts/build.sh --tool).
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null || exit 2
fi
cmake --build "$build" --target tensor-accountant >&2 || exit 2
cli="$build/driver/tensor-accountant"
mkdir -p "$out"

# One harness build per corpus. The GPU has room: let functions with
# peaks up to 16 GiB run (the seed's block3 holds 1.5 GiB).
corpora=(
  "seed:$root/testdata/seed/blocks.cpp"
  "cuda:$root/testdata/cuda/allocator.cpp"
  "ops:$(ls "$root"/testdata/ops/*.cpp | tr '\n' ' ')"
  "schema:$(ls "$root"/testdata/schema/*.cpp | tr '\n' ' ')"
  "hostile:$(ls "$root"/testdata/hostile/*.cpp | tr '\n' ' ')"
  "symbolic:$(ls "$root"/testdata/symbolic/*.cpp | tr '\n' ' ')"
)
worst=0
for entry in "${corpora[@]}"; do
  name="${entry%%:*}"
  # shellcheck disable=SC2206
  files=(${entry#*:})
  (cd "$root" && "$cli" --verify=cuda --verify-max-bytes=16G --verify-timeout=300 \
     --format=json "${files[@]}") >"$out/$name.json" 2>"$out/$name.log"
  rc=$?
  (( rc > worst )) && worst=$rc
  echo "$name: exit $rc (report $out/$name.json, log $out/$name.log)"
done

python3 - "$out" "${corpora[@]%%:*}" <<'PY'
import json, sys, collections
out, names = sys.argv[1], sys.argv[2:]
for name in names:
    try:
        doc = json.load(open("%s/%s.json" % (out, name)))
    except (OSError, ValueError) as e:
        print("%-9s no report (%s)" % (name, e))
        continue
    tally = collections.Counter()
    cuda = collections.Counter()
    bad = []
    for f in doc.get("functions", []):
        for v in f.get("verdicts", []):
            tally[v["result"]] += 1
            if v["field"].startswith("cuda_peak_"):
                cuda[v["result"]] += 1
                if v["result"] != "match":
                    bad.append("  %s %s: %s predicted %s, measured %s (%s)" % (
                        f["function"], v["field"], v["result"], v["predicted"],
                        v["measured"], v["note"]))
    print("%-9s ran on %s: %d match, %d mismatch, %d unverified; CUDA allocator: "
          "%d match, %d mismatch, %d unverified; %d not verified" % (
              name, doc.get("mode"), tally["match"], tally["mismatch"],
              tally["unverified"], cuda["match"], cuda["mismatch"],
              cuda["unverified"], len(doc.get("not_verified", []))))
    for line in bad:
        print(line)
PY
exit "$worst"
