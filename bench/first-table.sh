#!/usr/bin/env bash
# How long README's first command takes from a clean clone to the seed's
# table (issue 33: under 6 minutes on 2 cores with the Debian packages
# present and ccache off). A benchmark, not a test: it asserts nothing
# (tests/first-table checks the table itself) and prints, per revision, the
# wall-clock and CPU seconds of the command and the machine's load around it.
#
#   bench/first-table.sh [REV...]     (default: HEAD)
#
# Each REV is cloned afresh from this repository into a scratch directory
# (removed afterwards), its own README's first command is read and run
# there with CCACHE_DISABLE=1, so nothing built or cached before helps.
# Give several revisions to compare them side by side in one period, e.g.
# `bench/first-table.sh 2d51997 HEAD` (the command before and after issue 33).
# Other work on the machine slows every build: compare only runs made side
# by side, and read the load averages printed with them.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ -x /usr/bin/time ]] || { echo "bench: /usr/bin/time not found (Debian: time)" >&2; exit 2; }
[[ $# -gt 0 ]] || set -- HEAD

first_command() {  # README.md on stdin -> its first fresh-machine command
  awk '/^## On a fresh Debian 12 machine/{s=1; next} s && /^## /{exit}
       s && /^       +[^ ]/{sub(/^ +/, ""); print; exit}'
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo); ccache off (CCACHE_DISABLE=1)"
printf '%-12s %9s %9s %-22s %-22s %s\n' rev wall_s cpu_s "load before" "load after" "table printed"
for rev in "$@"; do
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/first-table-bench.XXXXXX")
  git clone -q --no-hardlinks "$ROOT" "$scratch/clone"
  git -C "$scratch/clone" checkout -q "$rev"
  command=$(first_command < "$scratch/clone/README.md")
  [[ -n "$command" ]] || { echo "bench: $rev's README.md has no first command" >&2; exit 2; }
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  (cd "$scratch/clone" &&
   CCACHE_DISABLE=1 /usr/bin/time -f '%e %U %S' -o "$scratch/time" \
     bash -c "$command" > "$scratch/stdout" 2> "$scratch/stderr") || true
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  read -r wall user sys < <(tail -n1 "$scratch/time")
  printed=no
  grep -q '^testdata/seed/blocks.cpp:9: block1$' "$scratch/stdout" && printed=yes
  printf '%-12s %9.0f %9.0f %-22s %-22s %s   (%s)\n' "$(git -C "$scratch/clone" rev-parse --short HEAD)" \
    "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN{print u + s}')" "$load_before" "$load_after" "$printed" "$command"
  rm -rf "$scratch"
done
