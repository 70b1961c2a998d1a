#!/usr/bin/env bash
# Fresh machine to the seed's table: install, build, analyse testdata/seed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/driver/tensor-accountant testdata/seed/blocks.cpp "$@"
