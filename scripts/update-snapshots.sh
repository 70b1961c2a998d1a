#!/usr/bin/env bash
# Regenerates testdata/snapshots/ (the golden outputs of the ctest
# `snapshots`, tests/snapshots/snapshots.py) from a build: the seed in each
# format, and one JSON file per other testdata input under
# testdata/snapshots/testdata/ (a golden file no input makes is deleted):
#   scripts/update-snapshots.sh [build dir]     (default: build)
# Review `git diff testdata/snapshots` before committing: every changed byte
# is a change users see.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
cli="$build/driver/tensor-accountant"
if [[ ! -x "$cli" ]]; then
  echo "update-snapshots.sh: no $cli; build first (ninja -C $build)" >&2
  exit 2
fi
exec python3 "$root/tests/snapshots/snapshots.py" --cli "$cli" \
  --source-root "$root" --cache-dir "$build/tests/snapshots/preamble-cache" --update
