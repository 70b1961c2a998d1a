#!/usr/bin/env bash
# Installs what building and testing need from Debian's packages, only if
# something is missing (so a warm machine pays nothing).
set -euo pipefail
packages=(
  cmake ninja-build ccache g++ python3
  neovim  # the editor guide's Neovim config, run headless by integrations_neovim
  clang-16 libclang-16-dev libclang-cpp16-dev llvm-16-dev clang-tidy-16
  clang-tools-16  # clang-apply-replacements-16: applies --export-fixes in the tests
  libtorch-dev libgtest-dev python3-jsonschema python3-yaml git pre-commit
  dpkg-dev file shellcheck curl jq  # the Debian package (CPack), the action's script and its PR comment
  chromium fonts-dejavu-core  # the HTML report's browser test (headless) and its screenshot
  python3-dev pybind11-dev  # what torch/extension.h includes besides LibTorch
)
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
