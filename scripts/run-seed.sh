#!/usr/bin/env bash
# Fresh machine to the seed's table: installs only what the tool needs,
# builds only the tool, analyses testdata/seed/blocks.cpp. The table is all
# that goes to standard output; installing and building report on standard
# error.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --tool >&2
./build/driver/tensor-accountant testdata/seed/blocks.cpp "$@"
