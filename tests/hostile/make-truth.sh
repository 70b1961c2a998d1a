#!/usr/bin/env bash
# Regenerates testdata/hostile/measured-cpu.json: what real LibTorch reports
# for every parameterless function of the hostile corpus, run on the CPU
# with the harness's counting allocator (sizes, strides, dtypes, storage
# bytes and sharing after each binding; allocated bytes and peak per
# function; the message when it throws).
#
# The harness is the one --verify writes (--emit-harness), generated in
# meta mode so that no function is left out for an unknown prediction, then
# built against the LibTorch this machine has and run with --mode cpu. Run
# it after editing the corpus (line numbers are part of the truth):
#
#   tests/hostile/make-truth.sh build/driver/tensor-accountant
#
# Functions that fail for want of memory (one asks for 4 TiB on purpose),
# or that the harness stops at its memory limit, are dropped: --verify=cpu skips them by their predicted peak, and their
# outcome depends on the machine, not on LibTorch.
set -euo pipefail
TA=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$ROOT"
"$TA" --no-cache --verify=meta --emit-harness="$work/harness" testdata/hostile/*.cpp >/dev/null
cmake -S "$work/harness" -B "$work/build" -G Ninja >/dev/null
cmake --build "$work/build" >/dev/null
# 16 GB of address space: enough for every function that should run, and a
# guard against one that should not.
(ulimit -v 16000000; "$work/build/harness" --mode cpu >"$work/measured.json")
python3 - "$work/measured.json" testdata/hostile/measured-cpu.json <<'EOF'
import json, sys
measured = json.load(open(sys.argv[1]))
# Dropped by the memory limit (the harness "stops" them) or by the machine.
# Functions with parameters (run on random draws once their answers are
# formulas) are --verify's to compare, expression by expression.
keep = [f for f in measured["functions"]
        if "can't allocate memory" not in (f.get("error") or "")
        and not f.get("stopped") and "draw" not in f]
measured["functions"] = keep
# One function per line, so a change in the truth reads as a short diff.
with open(sys.argv[2], "w") as out:
    head = {k: v for k, v in measured.items() if k != "functions"}
    out.write(json.dumps(head, sort_keys=True)[:-1] + ', "functions": [\n')
    out.write(",\n".join(json.dumps(f, sort_keys=True) for f in keep))
    out.write("\n]}\n")
print("wrote %s: %d functions" % (sys.argv[2], len(keep)))
EOF
