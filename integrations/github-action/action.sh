#!/usr/bin/env bash
# The steps of the GitHub composite action (action.yml at the repository
# root); each step of action.yml runs one subcommand:
#
#   action.sh install   install the .deb named by TMA_PACKAGE (a URL or a
#                       path), or use a tensor-accountant already on PATH
#   action.sh prepare   choose the files and write the arguments every
#                       later step uses into TMA_DIR (a directory under
#                       RUNNER_TEMP); outputs dir, count, base
#   action.sh sarif     TMA_DIR/tensor-accountant.sarif, for code scanning
#   action.sh summary   the markdown summary: to the job summary and, when
#                       TMA_COMMENT is true in a pull request, as a comment
#   action.sh check     annotations on the diff; the exit status is the
#                       gate (TMA_FAIL_ON, TMA_WARNINGS_AS_ERRORS)
#
# Inputs arrive as environment variables (action.yml maps them), never
# pasted into the script text, so a file name or an input cannot inject
# shell. Step outputs go to $GITHUB_OUTPUT, the summary to
# $GITHUB_STEP_SUMMARY, as in any action. tests/integrations/test_action.py
# runs these steps through action.yml on a scratch repository.
set -euo pipefail

die() {
  echo "::error title=tensor-accountant action::$*"
  exit 1
}

# Runs as root in containers, through sudo on GitHub's hosted runners.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "installing the package needs root or sudo"
  fi
}

cmd_install() {
  local package=${TMA_PACKAGE:-} deb
  if [ -z "$package" ]; then
    command -v tensor-accountant >/dev/null 2>&1 ||
      die "no tensor-accountant: give the action 'package:' (the .deb's URL" \
          "or path, see docs/integrations/ci.md) or install it in an earlier step"
    echo "Using the installed $(command -v tensor-accountant)"
  else
    if [[ "$package" =~ ^https?:// ]]; then
      deb="$RUNNER_TEMP/tensor-accountant-package/${package##*/}"
      mkdir -p "${deb%/*}"
      if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 3 -o "$deb" "$package" || die "cannot download $package"
      elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$deb" "$package" || die "cannot download $package"
      else
        die "neither curl nor wget is installed to download $package"
      fi
    else
      deb=$(realpath -e -- "$package" 2>/dev/null) || die "no such package file: $package"
    fi
    [[ "$deb" == *.deb ]] || die "'$package' is not a .deb"
    local recommends=()
    [ "${TMA_INSTALL_RECOMMENDS:-true}" = true ] || recommends=(--no-install-recommends)
    as_root apt-get update -qq
    # A path makes apt install the file and resolve its dependencies.
    as_root env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq "${recommends[@]}" "$deb"
  fi
  tensor-accountant --version
}

# C and C++ sources and headers, as the pre-commit hook takes them.
is_cxx() {
  case "$1" in
    *.c|*.cc|*.cpp|*.cxx|*.c++|*.cp|*.cu|*.cuh|*.h|*.hh|*.hpp|*.hxx|*.h++|*.inl|*.ipp|*.tpp|*.C|*.H)
      return 0 ;;
  esac
  return 1
}

# The files of a compile database that belong to this repository (not to a
# fetched dependency under the build directory), one per line.
database_files() {
  command -v python3 >/dev/null 2>&1 ||
    die "reading compile-database needs python3 on the runner"
  python3 - "$1/compile_commands.json" "$PWD" "$(realpath -m -- "$1")" <<'EOF'
import json, os, sys
db, top, build = sys.argv[1:]
seen = set()
for entry in json.load(open(db)):
    path = os.path.realpath(os.path.join(entry.get("directory", ""), entry["file"]))
    if path.startswith(top + os.sep) and not path.startswith(build + os.sep) \
            and path not in seen:
        seen.add(path)
        print(os.path.relpath(path, top))
EOF
}

cmd_prepare() {
  local dir="$RUNNER_TEMP/tensor-accountant"
  rm -rf "$dir"
  mkdir -p "$dir"
  # Containers check out as another user than the one running the steps.
  git config --global --get-all safe.directory 2>/dev/null | grep -qxF "$PWD" ||
    git config --global --add safe.directory "$PWD"

  # The base the changes are measured from: the input, else the pull
  # request's base branch, else the push's previous head, else HEAD^.
  local base=${TMA_BASE:-}
  if [ -z "$base" ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
    base="origin/$GITHUB_BASE_REF"
  fi
  if [ -z "$base" ] && [ -n "${TMA_EVENT_BEFORE:-}" ] &&
     [ "${TMA_EVENT_BEFORE//0/}" != "" ]; then
    base=$TMA_EVENT_BEFORE
  fi
  [ -n "$base" ] || base=HEAD^
  local scope=${TMA_SCOPE:-changed} merge_base=""
  case "$scope" in
    changed|all) ;;
    *) die "scope must be 'changed' or 'all', not '$scope'" ;;
  esac
  if [ "$scope" = changed ] && [ -z "${TMA_FILES:-}" ]; then
    git rev-parse --verify --quiet "$base^{commit}" >/dev/null ||
      die "the base revision '$base' is not in this clone; check out with" \
          "'fetch-depth: 0' (actions/checkout) or set the action's 'base'"
    merge_base=$(git merge-base "$base" HEAD) ||
      die "'$base' and HEAD have no common history"
  fi

  local database=${TMA_COMPILE_DATABASE:-}
  if [ -n "$database" ] && [ ! -f "$database/compile_commands.json" ]; then
    die "no compile_commands.json in '$database' (configure with" \
        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON before this step)"
  fi

  local candidates=() f
  if [ -n "${TMA_FILES:-}" ]; then
    while IFS= read -r f; do
      [ -n "$f" ] && candidates+=("$f")
    done <<<"$TMA_FILES"
  elif [ "$scope" = all ]; then
    if [ -n "$database" ]; then
      mapfile -t candidates < <(database_files "$database")
    else
      while IFS= read -r -d '' f; do candidates+=("$f"); done < <(git ls-files -z)
    fi
  else
    while IFS= read -r -d '' f; do candidates+=("$f"); done \
      < <(git diff --name-only --diff-filter=ACMR -z "$merge_base" HEAD)
  fi

  # Keep existing C/C++ files; with a compile database, only its files
  # (headers and files it does not build have no compile command).
  local in_database=""
  [ -n "$database" ] && in_database=$(database_files "$database")
  local count=0
  : >"$dir/files"
  for f in "${candidates[@]}"; do
    if ! is_cxx "$f" || [ ! -f "$f" ]; then
      continue
    fi
    if [ -n "$database" ] && ! grep -qxF -- "$f" <<<"$in_database"; then
      echo "skipping $f: not in $database/compile_commands.json"
      continue
    fi
    [[ "$f" == -* ]] && f="./$f" # not an option
    printf '%s\0' "$f" >>"$dir/files"
    count=$((count + 1))
  done

  # The arguments every run shares, NUL-separated.
  {
    [ -n "$database" ] && printf '%s\0' -p "$database"
    printf '%s\0' --cache-dir "${TMA_CACHE_DIR:-$RUNNER_TEMP/tensor-accountant-cache}"
    if [ -n "${TMA_ARGS:-}" ]; then
      local extra
      read -r -a extra <<<"$TMA_ARGS" # split on spaces, as the git hook does
      printf '%s\0' "${extra[@]}"
    fi
  } >"$dir/args"
  # Annotations, the summary and the gate speak of the changed lines only.
  : >"$dir/changed-lines"
  if [ "${TMA_CHANGED_LINES_ONLY:-true}" = true ] && [ -n "$merge_base" ]; then
    printf '%s\0' "--changed-lines-only=$merge_base" >"$dir/changed-lines"
  fi

  echo "tensor-accountant: $count file(s) to analyse${merge_base:+ (changed since $base, merge base $merge_base)}"
  tr '\0' '\n' <"$dir/files"
  {
    echo "dir=$dir"
    echo "count=$count"
    echo "base=$merge_base"
  } >>"$GITHUB_OUTPUT"
}

# Runs tensor-accountant on the prepared files with the shared arguments,
# then "$@" (and the changed-lines filter when $1 is "changed-lines").
run_tool() {
  local dir=${TMA_DIR:?TMA_DIR is the prepare step\'s dir output}
  local files=() args=() changed=()
  mapfile -d '' files <"$dir/files"
  mapfile -d '' args <"$dir/args"
  if [ "$1" = changed-lines ]; then
    mapfile -d '' changed <"$dir/changed-lines"
  fi
  shift
  tensor-accountant "${args[@]}" "${changed[@]}" "$@" "${files[@]}"
}

cmd_sarif() {
  local out="$TMA_DIR/tensor-accountant.sarif" rc=0
  # Exit status 1 here means a file did not compile (with --fail-on=none);
  # its errors are in the log, and the gate step fails for it. 3: CUDA
  # sources were skipped (listed in the SARIF as file-skipped).
  run_tool all --format=sarif --fail-on=none >"$out" || rc=$?
  [ "$rc" -le 1 ] || [ "$rc" -eq 3 ] || die "tensor-accountant failed (exit status $rc)"
  echo "file=$out" >>"$GITHUB_OUTPUT"
}

cmd_summary() {
  local out="$TMA_DIR/summary.md" rc=0
  run_tool changed-lines --format=markdown --fail-on=none >"$out" || rc=$?
  [ "$rc" -le 1 ] || [ "$rc" -eq 3 ] || die "tensor-accountant failed (exit status $rc)"
  cat "$out" >>"$GITHUB_STEP_SUMMARY"
  echo "file=$out" >>"$GITHUB_OUTPUT"
  if [ "${TMA_COMMENT:-false}" = true ] && [ -n "${TMA_PR_NUMBER:-}" ]; then
    if command -v gh >/dev/null 2>&1; then
      gh pr comment "$TMA_PR_NUMBER" --body-file "$out" ||
        echo "::warning title=tensor-accountant action::could not comment on" \
             "the pull request (does the job have 'pull-requests: write'?)"
    else
      echo "::warning title=tensor-accountant action::no gh command to post" \
           "the summary comment; the summary is in the job summary"
    fi
  fi
}

cmd_check() {
  local gate=(--fail-on="${TMA_FAIL_ON:-error}")
  [ -n "${TMA_WARNINGS_AS_ERRORS:-}" ] &&
    gate+=(--warnings-as-errors="$TMA_WARNINGS_AS_ERRORS")
  # 3: only skipped CUDA sources, each annotated with a ::warning; not a
  # failed gate.
  local rc=0
  run_tool changed-lines --format=github "${gate[@]}" || rc=$?
  [ "$rc" -eq 3 ] && rc=0
  return "$rc"
}

case "${1:-}" in
  install) cmd_install ;;
  prepare) cmd_prepare ;;
  sarif) cmd_sarif ;;
  summary) cmd_summary ;;
  check) cmd_check ;;
  *) die "usage: action.sh install|prepare|sarif|summary|check" ;;
esac
