#!/usr/bin/env bash
# The steps of the GitHub composite action (action.yml at the repository
# root); each step of action.yml runs one subcommand:
#
#   action.sh install   install the .deb named by TMA_PACKAGE (a URL or a
#                       path), else the release TMA_VERSION or the action's
#                       ref names (its GitHub release asset), unless a
#                       tensor-accountant of that version is on PATH
#   action.sh prepare   choose the files and write the arguments every
#                       later step uses into TMA_DIR (a directory under
#                       RUNNER_TEMP); outputs dir, count, base
#   action.sh sarif     TMA_DIR/tensor-accountant.sarif, for code scanning
#   action.sh summary   the markdown summary: to the job summary and, when
#                       TMA_COMMENT is true in a pull request, as the
#                       comment (one per PR and category, edited in place)
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

# The release this action's ref names: the `version` input, else the ref
# the workflow pinned the action at (uses: owner/tensor-accountant@v0.1.0),
# as a tag v<major>.<minor>.<patch>, into release_tag (a variable, not
# output: die must end the script, not a command substitution); dies with
# what to do when there is none.
find_release_tag() {
  local tag=${TMA_VERSION:-${TMA_ACTION_REF:-}} what
  what="the action's ref '${TMA_ACTION_REF:-}' (uses: ...@<ref>)"
  [ -n "${TMA_VERSION:-}" ] && what="'version: $TMA_VERSION'"
  [[ "$tag" =~ ^[0-9] ]] && tag="v$tag"
  if [[ ! "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    die "no 'package:' to install and $what is not a release tag" \
        "(v<major>.<minor>.<patch>) whose .deb could be downloaded: pin the" \
        "action at a release (uses: <owner>/tensor-accountant@v1.2.3), set" \
        "'version: v1.2.3', give 'package:' (a .deb URL or path), or install" \
        "tensor-accountant in an earlier step"
  fi
  release_tag=$tag
}

# The release asset of that tag for this machine's architecture (into
# asset_url), on the repository the action comes from (a fork's action
# downloads the fork's release); `uses: ./` has no action repository, so
# the workflow's own.
find_release_asset() {
  local tag=$1 arch repo
  arch=$(dpkg --print-architecture 2>/dev/null) ||
    die "the release packages are Debian packages; this runner has no dpkg" \
        "(run the job in a Debian 12 container: container: debian:bookworm)"
  repo=${TMA_ACTION_REPOSITORY:-${GITHUB_REPOSITORY:-}}
  [ -n "$repo" ] || die "cannot tell which repository's release to download"
  asset_url="${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download/$tag/tensor-accountant_${tag#v}_$arch.deb"
}

cmd_install() {
  local package=${TMA_PACKAGE:-} deb wanted=""
  if [ -z "$package" ]; then
    # An explicit version is installed even over another one on PATH; the
    # action's own ref only when there is none.
    if [ -z "${TMA_VERSION:-}" ] && command -v tensor-accountant >/dev/null 2>&1; then
      echo "Using the installed $(command -v tensor-accountant)"
      tensor-accountant --version
      return
    fi
    local release_tag asset_url
    find_release_tag
    wanted=${release_tag#v}
    if command -v tensor-accountant >/dev/null 2>&1 &&
       [ "$(tensor-accountant --version | head -n1)" = "tensor-accountant $wanted" ]; then
      echo "Using the installed $(command -v tensor-accountant) ($wanted)"
      tensor-accountant --version
      return
    fi
    find_release_asset "$release_tag"
    package=$asset_url
    echo "Installing tensor-accountant $wanted from $package"
  fi
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
  tensor-accountant --version
  # A release asset must be the release it is named after.
  if [ -n "$wanted" ] &&
     [ "$(tensor-accountant --version | head -n1)" != "tensor-accountant $wanted" ]; then
    die "$package installed '$(tensor-accountant --version | head -n1)', not" \
        "tensor-accountant $wanted"
  fi
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

# The findings that fail the gate are the errors, everywhere: into the
# array severity, --warnings-as-errors with every check under fail-on:
# warning, the promoted checks under error, nothing under none. The SARIF
# levels, the summary's error count, the annotations and the gate's exit
# status all take it, so "N errors" is exactly what fails the step.
set_gate_severity() {
  severity=()
  case "${TMA_FAIL_ON:-error}" in
    warning) severity=(--warnings-as-errors='*') ;;
    error)
      [ -z "${TMA_WARNINGS_AS_ERRORS:-}" ] ||
        severity=(--warnings-as-errors="$TMA_WARNINGS_AS_ERRORS") ;;
    none) ;;
    *) die "fail-on must be 'error', 'warning' or 'none', not '$TMA_FAIL_ON'" ;;
  esac
}

cmd_sarif() {
  local out="$TMA_DIR/tensor-accountant.sarif" rc=0 severity
  set_gate_severity
  # Exit status 1 here means a file did not compile (with --fail-on=none);
  # its errors are in the log, and the gate step fails for it. 3: CUDA
  # sources were skipped (listed in the SARIF as file-skipped).
  run_tool all --format=sarif --fail-on=none "${severity[@]}" >"$out" || rc=$?
  [ "$rc" -le 1 ] || [ "$rc" -eq 3 ] || die "tensor-accountant failed (exit status $rc)"
  echo "file=$out" >>"$GITHUB_OUTPUT"
}

# The pull-request comment carries this first line, so that the next run
# of the same job finds and edits it instead of adding one per push.
# Several uses of the action in one workflow differ by their category.
comment_marker() {
  echo "<!-- tensor-accountant category=${TMA_SARIF_CATEGORY:-tensor-accountant} -->"
}

# curl against the REST API with the job's token; the response body to
# stdout. Fails (non-zero) on an HTTP error, after saying which.
github_api() {
  local method=$1 path=$2 data=${3:-}
  local args=(-sS --retry 2 -X "$method" -o "$TMA_DIR/api-response" -w '%{http_code}'
              -H "Accept: application/vnd.github+json"
              -H "Authorization: Bearer ${GH_TOKEN:-}"
              -H "X-GitHub-Api-Version: 2022-11-28")
  [ -n "$data" ] && args+=(-H "Content-Type: application/json" --data-binary "@$data")
  local status
  status=$(curl "${args[@]}" "${GITHUB_API_URL:-https://api.github.com}$path") || status=000
  if [[ "$status" != 2?? ]]; then
    # To the step's log (fd 3), not into the caller's $(...).
    echo "::warning title=tensor-accountant action::$method $path answered HTTP $status:" \
         "$(head -c 300 "$TMA_DIR/api-response" 2>/dev/null | tr '\n' ' ')" >&3
    return 1
  fi
  cat "$TMA_DIR/api-response"
}

# Posts the summary as the pull request's tensor-accountant comment: edits
# the one an earlier run posted (its first line is the marker), else adds
# one.
post_comment() {
  local summary=$1 marker page=1 id="" comments found count
  local body="$TMA_DIR/comment.json"
  if ! command -v curl >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
    echo "::warning title=tensor-accountant action::the summary comment needs" \
         "curl and jq on the runner (apt-get install curl jq); the summary is" \
         "in the job summary"
    return 0
  fi
  marker=$(comment_marker)
  # Pages of 100 until one is short: the last comment with the marker
  # (a quote of it in someone's reply does not start with it).
  while [ "$page" -le 100 ]; do
    comments=$(github_api GET "/repos/$GH_REPO/issues/$TMA_PR_NUMBER/comments?per_page=100&page=$page") ||
      return 0
    if ! found=$(jq -r --arg m "$marker" --arg old "$id" \
                   '([.[] | select(.body // "" | startswith($m)) | .id] | last) // $old' \
                   <<<"$comments") || ! count=$(jq length <<<"$comments"); then
      echo "::warning title=tensor-accountant action::the pull request's comments" \
           "are not the JSON list GitHub's API returns; no comment posted"
      return 0
    fi
    id=$found
    [ "$count" -eq 100 ] || break
    page=$((page + 1))
  done
  { echo "$marker"; cat "$summary"; } | jq -Rs '{body: .}' >"$body"
  if [ -n "$id" ]; then
    github_api PATCH "/repos/$GH_REPO/issues/comments/$id" "$body" >/dev/null &&
      echo "Updated the pull request's summary comment ($id)"
  else
    github_api POST "/repos/$GH_REPO/issues/$TMA_PR_NUMBER/comments" "$body" >/dev/null &&
      echo "Posted the summary as a pull request comment"
  fi || echo "::warning title=tensor-accountant action::could not comment on" \
              "the pull request (does the job have 'pull-requests: write'?)"
}

cmd_summary() {
  local out="$TMA_DIR/summary.md" rc=0 severity
  set_gate_severity
  run_tool changed-lines --format=markdown --fail-on=none "${severity[@]}" >"$out" || rc=$?
  [ "$rc" -le 1 ] || [ "$rc" -eq 3 ] || die "tensor-accountant failed (exit status $rc)"
  cat "$out" >>"$GITHUB_STEP_SUMMARY"
  echo "file=$out" >>"$GITHUB_OUTPUT"
  if [ "${TMA_COMMENT:-false}" = true ] && [ -n "${TMA_PR_NUMBER:-}" ]; then
    post_comment "$out"
  fi
}

cmd_check() {
  local severity
  set_gate_severity
  # --fail-on decides the exit status; the errors are the summary's.
  # 3: only skipped CUDA sources, each annotated with a ::warning; not a
  # failed gate.
  local rc=0
  run_tool changed-lines --format=github --fail-on="${TMA_FAIL_ON:-error}" \
    "${severity[@]}" || rc=$?
  [ "$rc" -eq 3 ] && rc=0
  return "$rc"
}

exec 3>&1
case "${1:-}" in
  install) cmd_install ;;
  prepare) cmd_prepare ;;
  sarif) cmd_sarif ;;
  summary) cmd_summary ;;
  check) cmd_check ;;
  *) die "usage: action.sh install|prepare|sarif|summary|check" ;;
esac
