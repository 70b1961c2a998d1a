#!/usr/bin/env bash
# Installs from Debian's packages what is missing, and only that (so a warm
# machine pays nothing).
#
#   scripts/install-deps.sh          everything: the tool, the test suite, the
#                                    Debian package (scripts/test.sh, CI)
#   scripts/install-deps.sh --tool   only what building and running
#                                    tensor-accountant needs (scripts/run-seed.sh)
set -euo pipefail

# Building the tool and analysing LibTorch code: the compiler and its
# libstdc++ headers, Clang/LLVM 16's libraries and headers (libclang-16-dev
# brings the Clang resource headers the analysis parses with), LibTorch's
# headers (libtorch-dev brings python3-dev, which torch/extension.h needs).
tool_packages=(
  cmake ninja-build ccache g++
  libclang-16-dev libclang-cpp16-dev llvm-16-dev
  libtorch-dev
)
# Only the tests, the clang-tidy module's test and the package need these.
test_packages=(
  python3 git clang-16 clang-tidy-16
  clang-tools-16  # clang-apply-replacements-16: applies --export-fixes in the tests
  neovim  # the editor guide's Neovim config, run headless by integrations_neovim
  libgtest-dev python3-jsonschema python3-yaml pre-commit
  dpkg-dev file shellcheck curl jq  # the Debian package (CPack), the action's script and its PR comment
  chromium fonts-dejavu-core  # the HTML report's browser test (headless) and its screenshot
  python3-dev pybind11-dev  # what torch/extension.h includes besides LibTorch
)

case "${1:-}" in
  "") packages=("${tool_packages[@]}" "${test_packages[@]}") ;;
  --tool) packages=("${tool_packages[@]}") ;;
  -h|--help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "install-deps.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
