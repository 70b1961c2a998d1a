#!/usr/bin/env bash
# Builds the Debian package: tensor-accountant_<version>_<arch>.deb.
#
#   scripts/package.sh [--build-dir DIR] [--output-dir DIR] [--no-build]
#
#   --build-dir DIR   the CMake build tree to pack (default: build); it is
#                     configured (Release, no tests) when it has no CMakeCache.txt
#   --output-dir DIR  where the .deb goes (default: DIR/package)
#   --no-build        pack what is built, without building first (the package
#                     test uses this: it must not rebuild a tree under test)
#
# The version is the project's version plus git describe, stamped at build
# time (cmake/TmaVersion.cmake); the dependencies and why are in
# cmake/TmaPackaging.cmake. The last line of output is the package's path.
# Install it with `sudo apt install ./<file>.deb` (apt resolves the
# dependencies and installs the recommended libtorch-dev), remove it with
# `sudo apt remove tensor-accountant`.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
output_dir=
do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=${2:?--build-dir needs a directory}; shift 2 ;;
    --build-dir=*) build_dir=${1#*=}; shift ;;
    --output-dir) output_dir=${2:?--output-dir needs a directory}; shift 2 ;;
    --output-dir=*) output_dir=${1#*=}; shift ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "package.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
output_dir=${output_dir:-$build_dir/package}

for tool in cmake cpack dpkg-deb dpkg-shlibdeps; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "package.sh: '$tool' is missing (Debian: apt install cmake dpkg-dev)" >&2
    exit 1
  fi
done

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  if [ "$do_build" -eq 0 ]; then
    echo "package.sh: $build_dir is not a configured build tree" >&2
    exit 1
  fi
  gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  cmake -S . -B "$build_dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_TESTING=OFF
fi
if [ "$do_build" -eq 1 ]; then
  cmake --build "$build_dir"
fi

if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  echo "package.sh: warning: the work tree has uncommitted changes; the" \
       "package contains them but its version names only the commit" >&2
fi

mkdir -p "$output_dir"
output_dir=$(cd "$output_dir" && pwd)
# CPack writes its staging tree under the output directory; keep only the
# package so that a second run starts clean.
rm -rf "$output_dir/_CPack_Packages"
(cd "$build_dir" && cpack -G DEB -B "$output_dir") >&2
rm -rf "$output_dir/_CPack_Packages"
version=$(head -n1 "$build_dir/generated/version.txt")
deb=$(ls -t "$output_dir"/tensor-accountant_"$version"_*.deb 2>/dev/null | head -n1)
if [ -z "$deb" ]; then
  echo "package.sh: cpack made no tensor-accountant_${version}_*.deb in $output_dir" >&2
  exit 1
fi
echo "$deb"
