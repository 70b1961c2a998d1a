#!/usr/bin/env bash
# Fresh machine to a full test run: install, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j2 "$@"
