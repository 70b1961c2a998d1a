#!/usr/bin/env python3
"""The GitHub composite action (action.yml) and the example workflow.

Static: action.yml against the rules GitHub applies to composite-action
metadata (name, description, inputs with descriptions and string defaults,
outputs with values, runs.using: composite, every run step has a shell,
a step is either run or uses, known keys only, unique ids, every
${{ inputs.X }} / ${{ steps.Y }} names a declared input or an earlier step),
plus our own rule that no ${{ }} is pasted into a run script (inputs reach
action.sh through env). docs/ci-github-actions.yml uses the action with
declared inputs only and the permissions its steps need.

Dynamic: a small runner executes action.yml's steps the way GitHub does
(inputs with defaults, env, if conditions, $GITHUB_OUTPUT, the job summary,
$GITHUB_ACTION_PATH) on a scratch git repository with the real tool, and
checks the files it chose, the SARIF, the summary, the annotations on the
changed lines only, and the gate's exit status. `uses` steps are not run;
their inputs are checked (the SARIF file they would upload exists).

usage: test_action.py <tensor-accountant> <source dir>
"""
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import yaml

TOOL, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ACTION_FILE = os.path.join(SRC, "action.yml")
WORKFLOW_FILE = os.path.join(SRC, "docs/ci-github-actions.yml")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


with open(ACTION_FILE) as f:
    ACTION_TEXT = f.read()
ACTION = yaml.safe_load(ACTION_TEXT)

# ---------------------------------------------------------------- static
ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
EXPR_RE = re.compile(r"\$\{\{(.*?)\}\}", re.S)
TOP_KEYS = {"name", "author", "description", "inputs", "outputs", "runs", "branding"}
STEP_KEYS = {"run", "shell", "uses", "with", "name", "id", "if", "env",
             "working-directory", "continue-on-error"}
SHELLS = {"bash", "pwsh", "python", "sh", "cmd", "powershell"}
COLORS = {"white", "black", "yellow", "blue", "green", "orange", "red", "purple",
          "gray-dark"}
CONTEXTS = {"github", "inputs", "steps", "runner", "env", "job", "strategy", "matrix"}

check(isinstance(ACTION, dict), "action.yml is a mapping")
check(set(ACTION) <= TOP_KEYS, "action.yml top-level keys: %s" % (set(ACTION) - TOP_KEYS))
for key in ("name", "description"):
    check(isinstance(ACTION.get(key), str) and ACTION[key].strip(),
          "action.yml has a %s" % key)
inputs = ACTION.get("inputs") or {}
for name, spec in inputs.items():
    check(ID_RE.match(name), "input id %r" % name)
    check(isinstance(spec, dict) and set(spec) <= {"description", "required", "default",
                                                   "deprecationMessage"},
          "input %s has known keys only" % name)
    check(isinstance(spec.get("description"), str) and spec["description"].strip(),
          "input %s has a description" % name)
    # An unquoted true/false/number is not the string the script compares.
    check("default" not in spec or isinstance(spec["default"], str),
          "input %s's default is a string: %r" % (name, spec.get("default")))
    check(not spec.get("required") or "default" not in spec,
          "required input %s has no default" % name)
outputs = ACTION.get("outputs") or {}
for name, spec in outputs.items():
    check(isinstance(spec, dict) and "description" in spec and "value" in spec,
          "composite output %s has a description and a value" % name)
runs = ACTION.get("runs") or {}
check(runs.get("using") == "composite", "runs.using is composite")
steps = runs.get("steps") or []
check(isinstance(steps, list) and steps, "runs.steps is a non-empty list")
step_ids = []
for i, step in enumerate(steps):
    what = "step %d (%s)" % (i, step.get("name", step.get("id", "?")))
    check(set(step) <= STEP_KEYS, "%s has known keys only: %s" % (what, set(step) - STEP_KEYS))
    check(("run" in step) != ("uses" in step), "%s is either run or uses" % what)
    if "run" in step:
        check(step.get("shell") in SHELLS, "%s has a shell" % what)
        check("${{" not in step["run"],
              "%s pastes no ${{ }} into its script (inputs go through env)" % what)
        check("with" not in step, "%s: only uses steps take with" % what)
    else:
        check(re.match(r"^([\w.-]+/[\w./-]+@[\w.-]+|\./.*|docker://.+)$", step["uses"]),
              "%s uses owner/repo@ref: %s" % (what, step["uses"]))
    if "id" in step:
        check(ID_RE.match(step["id"]) and step["id"] not in step_ids,
              "%s has a unique, valid id" % what)
    # Expressions in this step may name inputs and the steps before it.
    for expr in EXPR_RE.findall(json.dumps(step)):
        for ctx, rest in re.findall(r"\b([a-z]+)\.([A-Za-z0-9_.-]+)", expr):
            if ctx == "inputs":
                check(rest in inputs, "%s names a declared input: inputs.%s" % (what, rest))
            if ctx == "steps":
                check(rest.split(".")[0] in step_ids,
                      "%s names an earlier step: steps.%s" % (what, rest))
    cond = step.get("if", "")
    for ctx, rest in re.findall(r"\b(inputs|steps)\.([A-Za-z0-9_-]+)", str(cond)):
        check((ctx == "inputs" and rest in inputs) or (ctx == "steps" and rest in step_ids),
              "%s's if names %s.%s" % (what, ctx, rest))
    if "id" in step:
        step_ids.append(step["id"])
for name, spec in outputs.items():
    for sid in re.findall(r"steps\.([A-Za-z0-9_-]+)\.", str(spec.get("value"))):
        check(sid in step_ids, "output %s names step %s" % (name, sid))
for expr in EXPR_RE.findall(ACTION_TEXT):
    for ctx in re.findall(r"(?<![\w.-])([a-z]+)\.", expr):
        check(ctx in CONTEXTS, "expression context %s is allowed: %s" % (ctx, expr))
branding = ACTION.get("branding") or {}
check(not branding or branding.get("color") in COLORS, "branding color")

# The script the run steps call: there, executable, each subcommand exists.
script = os.path.join(SRC, "integrations/github-action/action.sh")
check(os.access(script, os.X_OK), "action.sh is executable")
with open(script) as f:
    script_text = f.read()
for step in steps:
    m = re.search(r"action\.sh\"? (\w+)", step.get("run", ""))
    if "run" in step:
        check(m and ("%s) cmd_%s" % (m.group(1), m.group(1))) in script_text,
              "run step calls a subcommand of action.sh: %s" % step["run"])
if shutil.which("shellcheck"):
    p = subprocess.run(["shellcheck", script], capture_output=True, text=True)
    check(p.returncode == 0, "shellcheck action.sh:\n" + p.stdout)
else:
    print("note: shellcheck is not installed; action.sh is not linted")

# The example workflow uses the action with declared inputs only.
with open(WORKFLOW_FILE) as f:
    workflow = yaml.safe_load(f)
on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads `on` as true
check(on is not None and "jobs" in workflow, "the workflow has on and jobs")
uses_action = []
for job in workflow.get("jobs", {}).values():
    for step in job.get("steps", []):
        if re.search(r"/tensor-accountant@", step.get("uses", "")):
            uses_action.append((job, step))
        check("cmake" not in step.get("run", ""),
              "the example workflow builds nothing: %s" % step.get("run"))
check(len(uses_action) == 1, "the example workflow uses the action once")
for job, step in uses_action:
    given = set((step.get("with") or {}).keys())
    check(given <= set(inputs), "workflow passes declared inputs only: %s"
          % (given - set(inputs)))
    for name, spec in inputs.items():
        check(not spec.get("required") or name in given, "workflow gives required " + name)
    perms = workflow.get("permissions") or job.get("permissions") or {}
    check(perms.get("security-events") == "write" and
          perms.get("pull-requests") == "write",
          "the workflow grants what SARIF upload and the comment need: %s" % perms)

# ------------------------------------------------- the release and its pins
# One version and one repository, named everywhere a user copies them from:
# CMakeLists.txt's project() VERSION and TMA_REPOSITORY_URL. The docs, the
# action's header, the pre-commit manifest's header and the example
# workflow must name v<that version> of that repository, so that what they
# tell users to pin is the release .github/workflows/release.yml makes.
with open(os.path.join(SRC, "CMakeLists.txt")) as f:
    cmake_text = f.read()
m = re.search(r"^project\(TensorMemoryAccountant VERSION (\d+\.\d+\.\d+)\b", cmake_text, re.M)
check(m, "CMakeLists.txt's project() has a VERSION x.y.z")
VERSION = m.group(1) if m else "?"
m = re.search(r'^set\(TMA_REPOSITORY_URL "(https://github\.com/([\w.-]+/[\w.-]+))"',
              cmake_text, re.M)
check(m, "CMakeLists.txt sets TMA_REPOSITORY_URL to an https GitHub repository")
REPO_URL, REPO = (m.group(1), m.group(2)) if m else ("?", "?")


def text_of(rel):
    with open(os.path.join(SRC, rel)) as f:
        return f.read()


pinned = {rel: text_of(rel) for rel in (
    "docs/integrations/ci.md", "docs/ci-github-actions.yml", "action.yml",
    "docs/integrations/pre-commit.md", ".pre-commit-hooks.yaml", "docs/install.md")}
for rel, text in pinned.items():
    for placeholder in ("your-org", "example.invalid", "<owner>/tensor-accountant@<"):
        check(placeholder not in text, "%s names the real repository, not %r"
              % (rel, placeholder))
    for owner_repo, ref in re.findall(r"([\w.-]+/[\w.-]+)@(v[\w.-]+)", text):
        if owner_repo.endswith("/tensor-accountant"):
            check(owner_repo == REPO and ref == "v" + VERSION,
                  "%s pins %s@%s, the project's %s@v%s"
                  % (rel, owner_repo, ref, REPO, VERSION))
    for url, tag, file_version in re.findall(
            r"(https://[\w./-]+)/releases/download/(v[\w.]+)/tensor-accountant_([\w.~+]+)_",
            text):
        check(url == REPO_URL and tag == "v" + VERSION and file_version == VERSION,
              "%s downloads %s's release %s (%s), the project's %s v%s"
              % (rel, url, tag, file_version, REPO_URL, VERSION))
uses_lines = re.findall(r"uses: (\S+/tensor-accountant@\S+)", pinned["docs/integrations/ci.md"]
                        + pinned["docs/ci-github-actions.yml"] + pinned["action.yml"])
check(len(uses_lines) >= 3 and all(u == "%s@v%s" % (REPO, VERSION) for u in uses_lines),
      "the docs, the example workflow and action.yml use %s@v%s: %s"
      % (REPO, VERSION, uses_lines))
for rel in ("docs/integrations/pre-commit.md", ".pre-commit-hooks.yaml"):
    repos = re.findall(r"repo: (\S+)", pinned[rel])
    revs = re.findall(r"rev: (\S+)", pinned[rel])
    check(repos == [REPO_URL] and revs == ["v" + VERSION],
          "%s pins repo %s, rev v%s: %s %s" % (rel, REPO_URL, VERSION, repos, revs))
check(REPO_URL + "/releases" in pinned["docs/install.md"],
      "install.md links the project's releases")

RELEASE_FILE = os.path.join(SRC, ".github/workflows/release.yml")
with open(RELEASE_FILE) as f:
    release = yaml.safe_load(f)
release_on = release.get("on", release.get(True)) or {}
check(release_on.get("push", {}).get("tags") == ["v*"],
      "the release runs on a pushed tag v*: %s" % release_on)
rjobs = release.get("jobs", {})
check(set(rjobs) >= {"package", "action", "pre-commit"},
      "the release has the package, action and pre-commit jobs: %s" % list(rjobs))
for name, job in rjobs.items():
    check(job.get("container") == "debian:bookworm",
          "release job %s runs on Debian 12 (container debian:bookworm)" % name)
    for step in job.get("steps", []):
        check(("run" in step) != ("uses" in step), "release step is run or uses: %s" % step)
        if "run" in step:
            check("${{" not in step["run"],
                  "release job %s pastes no ${{ }} into a script (env instead)" % name)
    if name != "package":
        check("package" in [job.get("needs")] + list(job.get("needs") or []),
              "release job %s runs after the package is published" % name)
pkg_steps = rjobs.get("package", {}).get("steps", [])


def step_running(steps, needle):
    return [s for s in steps if needle in s.get("run", "")]


checkout = [s for s in pkg_steps if s.get("uses", "").startswith("actions/checkout@")]
check(checkout and (checkout[0].get("with") or {}).get("fetch-depth") == 0,
      "the package job checks out the whole history (the tag for git describe)")
apt = step_running(pkg_steps, "apt-get install")
check(apt and pkg_steps.index(apt[0]) < pkg_steps.index(checkout[0]) and
      " git " in apt[0]["run"],
      "git is installed before the checkout (a clone, not a tarball without tags)")
tag_steps = step_running(pkg_steps, "CMakeLists.txt")
build_steps = step_running(pkg_steps, "scripts/package.sh")
upload_steps = [s for s in step_running(pkg_steps, "gh release")
                if "upload" in s["run"] and "create" in s["run"]]
check(tag_steps and build_steps and upload_steps and
      pkg_steps.index(tag_steps[0]) < pkg_steps.index(build_steps[0]) <
      pkg_steps.index(upload_steps[0]),
      "the package job checks the tag, then builds, then attaches the .deb")
check(rjobs.get("package", {}).get("permissions", {}).get("contents") == "write",
      "the package job may write the release")
if build_steps:
    check('dpkg-deb -f "$deb" Version)" = "$VERSION"' in build_steps[0]["run"],
          "the built package's version is checked against the tag")
if upload_steps:
    check((upload_steps[0].get("env") or {}).get("DEB") ==
          "${{ steps.package.outputs.deb }}" and "$DEB" in upload_steps[0]["run"],
          "the .deb package.sh made is the release asset")
# The tag check, run as GitHub runs it, on this CMakeLists.txt.
if tag_steps:
    step = tag_steps[0]
    check((step.get("env") or {}).get("TAG") == "${{ github.ref_name }}",
          "the tag check reads the pushed tag")
    for tag, want_ok in (("v" + VERSION, True), ("v%s.1" % VERSION, False), ("main", False)):
        out_file = os.path.join(tempfile.mkdtemp(prefix="tma-release-"), "output")
        open(out_file, "w").close()
        p = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=SRC, capture_output=True,
                           text=True, env=dict(os.environ, TAG=tag, GITHUB_OUTPUT=out_file,
                                               GITHUB_WORKSPACE=SRC,
                                               HOME=os.path.dirname(out_file)))
        with open(out_file) as f:
            out = f.read()
        if want_ok:
            check(p.returncode == 0 and out == "version=%s\n" % VERSION,
                  "the tag check accepts %s: %s%s" % (tag, p.stdout, p.stderr))
        else:
            check(p.returncode != 0 and "::error" in p.stdout and not out,
                  "the tag check refuses %s: %s" % (tag, p.stdout))
        shutil.rmtree(os.path.dirname(out_file), ignore_errors=True)
action_steps = rjobs.get("action", {}).get("steps", [])
local_uses = [s for s in action_steps if s.get("uses") == "./"]
check(len(local_uses) == 1 and
      (local_uses[0].get("with") or {}).get("version") == "${{ github.ref_name }}" and
      set(local_uses[0].get("with") or {}) <= set(inputs),
      "the action job runs this tag's action.yml (uses: ./) for this tag's version")
after = action_steps[action_steps.index(local_uses[0]) + 1:] if local_uses else []
check(any('"$(tensor-accountant --version | head -n1)" = "tensor-accountant $VERSION"'
          in s.get("run", "") and (s.get("env") or {}).get("VERSION") ==
          "${{ needs.package.outputs.version }}" for s in after),
      "after the action, tensor-accountant --version is checked to be the tag's")
check(rjobs.get("package", {}).get("outputs", {}).get("version") ==
      "${{ steps.tag.outputs.version }}", "the package job hands the version on")
pc_steps = rjobs.get("pre-commit", {}).get("steps", [])
pc_text = "\n".join(s.get("run", "") for s in pc_steps)
check('"  rev: $TAG"' in pc_text and "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY" in pc_text and
      "'  - id: tensor-accountant'" in pc_text,
      "the pre-commit job pins this repository's hook at the tag")
check(pc_text.count('= "tensor-accountant $VERSION"') >= 2 and "build-pre-commit" in pc_text,
      "the pre-commit job checks the version of the hook's build and of the package")

# ---------------------------------------------------------------- dynamic
def evaluate(expr, ctx):
    """GitHub's expression language, the part action.yml uses: context
    paths, 'strings', ==, != (case-insensitive, as GitHub's), && and ||."""
    tokens = re.findall(r"'(?:[^']|'')*'|&&|\|\||==|!=|[A-Za-z_][\w.-]*", expr)

    def value(tok):
        if tok.startswith("'"):
            return tok[1:-1].replace("''", "'")
        v = ctx
        for part in tok.split("."):
            v = v.get(part, "") if isinstance(v, dict) else ""
        return "" if v is None else str(v)

    def comparison(i):
        left = value(tokens[i])
        if i + 1 < len(tokens) and tokens[i + 1] in ("==", "!="):
            right = value(tokens[i + 2])
            eq = left.lower() == right.lower()
            return (eq if tokens[i + 1] == "==" else not eq), i + 3
        return left, i + 1

    result, i = comparison(0)
    while i < len(tokens):
        op = tokens[i]
        right, i = comparison(i + 1)
        result = (bool(result) and bool(right)) if op == "&&" else (bool(result) or bool(right))
    return result


def substitute(text, ctx):
    return EXPR_RE.sub(lambda m: str(evaluate(m.group(1).strip(), ctx)), text)


def run_action(repo, given, github, stop_after=None, bin_dir=None, extra_env=None):
    """Runs the composite's steps like a runner, with bin_dir (default: the
    real tool's) first on PATH and extra_env in every step's environment.
    Returns (ok, ctx, logs, summary file)."""
    temp = tempfile.mkdtemp(prefix="runner-temp-", dir=WORK)
    summary = os.path.join(temp, "step-summary.md")
    open(summary, "w").close()
    ins = {k: (given[k] if k in given else s.get("default", "")) for k, s in inputs.items()}
    ctx = {"inputs": ins, "steps": {}, "github": dict(github, action_path=SRC),
           "runner": {"temp": temp}}
    ctx["inputs"] = {k: substitute(str(v), ctx) for k, v in ins.items()}
    logs = {}
    for step in steps:
        key = step.get("id", step.get("name"))
        if "if" in step and not evaluate(step["if"], ctx):
            logs[key] = None
            continue
        if "uses" in step:
            logs[key] = {"uses": step["uses"],
                         "with": {k: substitute(str(v), ctx)
                                  for k, v in (step.get("with") or {}).items()}}
            continue
        out_file = os.path.join(temp, "output-%s" % len(logs))
        open(out_file, "w").close()
        env = dict(os.environ, PATH=(bin_dir or BIN) + os.pathsep + os.environ["PATH"],
                   GITHUB_ACTION_PATH=SRC, RUNNER_TEMP=temp, GITHUB_OUTPUT=out_file,
                   GITHUB_STEP_SUMMARY=summary, HOME=WORK,
                   GITHUB_EVENT_NAME=github.get("event_name", "push"),
                   GIT_CONFIG_NOSYSTEM="1")
        if github.get("base_ref"):
            env["GITHUB_BASE_REF"] = github["base_ref"]
        env.update(extra_env or {})
        env.update({k: substitute(str(v), ctx) for k, v in (step.get("env") or {}).items()})
        p = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=900)
        outputs_ = {}
        with open(out_file) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    outputs_[k] = v
        ctx["steps"][step.get("id", "_")] = {"outputs": outputs_}
        logs[key] = p
        print("step %s: exit %d" % (key, p.returncode))
        if p.returncode != 0:
            return False, ctx, logs, summary
        if stop_after and step.get("id") == stop_after:
            break
    return True, ctx, logs, summary


def git(repo, *args):
    p = subprocess.run(["git"] + list(args), cwd=repo, capture_output=True, text=True,
                       env=dict(os.environ, HOME=WORK, GIT_CONFIG_NOSYSTEM="1",
                                GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
                                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org"))
    if p.returncode != 0:
        sys.exit("git %s: %s" % (" ".join(args), p.stderr))
    return p.stdout.strip()


WORK = tempfile.mkdtemp(prefix="tma-action-")
BIN = os.path.join(WORK, "bin")
os.makedirs(BIN)
os.symlink(TOOL, os.path.join(BIN, "tensor-accountant"))
repo = os.path.join(WORK, "repo")
os.makedirs(repo)

# Base: g() has an old copy. Head: f() gains a copy; notes.md changes too;
# other.cpp is untouched.
OLD = """#include <torch/torch.h>

void g() {
  auto y = torch::randn({32, 16});
  auto c = y.transpose(0, 1).contiguous();
}
"""
NEW_F = """
void f() {
  auto x = torch::randn({64, 32});
  auto a = x.transpose(0, 1);
  auto b = a.contiguous();
}
"""
OLD_LINE = (OLD).splitlines().index("  auto c = y.transpose(0, 1).contiguous();") + 1
NEW_LINE = (OLD + NEW_F).splitlines().index("  auto b = a.contiguous();") + 1
with open(os.path.join(repo, "model.cpp"), "w") as f:
    f.write(OLD)
with open(os.path.join(repo, "other.cpp"), "w") as f:
    f.write("#include <torch/torch.h>\nvoid h() { auto z = torch::zeros({2}); }\n")
with open(os.path.join(repo, "notes.md"), "w") as f:
    f.write("notes\n")
git(repo, "init", "-q")
git(repo, "add", "-A")
git(repo, "commit", "-q", "-m", "base")
base = git(repo, "rev-parse", "HEAD")
with open(os.path.join(repo, "model.cpp"), "a") as f:
    f.write(NEW_F)
with open(os.path.join(repo, "notes.md"), "a") as f:
    f.write("more\n")
git(repo, "add", "-A")
git(repo, "commit", "-q", "-m", "head")
push = {"event_name": "push", "event": {"before": base}, "token": "t",
        "repository": "o/r"}
cache = {"cache-dir": os.path.join(WORK, "cache")}

# 1. Defaults, gate off: every step runs and succeeds.
ok, ctx, logs, summary = run_action(repo, dict(cache, **{"fail-on": "none"}), push)
check(ok, "the action succeeds with fail-on: none: %s" %
      {k: (v.stdout + v.stderr)[-2000:] for k, v in logs.items()
       if isinstance(v, subprocess.CompletedProcess) and v.returncode})
prep = ctx["steps"].get("prepare", {}).get("outputs", {})
check(prep.get("count") == "1", "only model.cpp is analysed (changed C++): %s" % prep)
check(prep.get("base") == base, "changes are measured from the push's previous head")
sarif_file = ctx["steps"].get("sarif", {}).get("outputs", {}).get("file", "")
if check(os.path.isfile(sarif_file), "the SARIF file exists: %r" % sarif_file):
    with open(sarif_file) as f:
        sarif = json.load(f)
    lines = sorted(r["locations"][0]["physicalLocation"]["region"]["startLine"]
                   for r in sarif["runs"][0]["results"]
                   if r["ruleId"] == "torch-contiguous-copy")
    check(lines == [OLD_LINE, NEW_LINE],
          "SARIF has every finding, old and new: %s" % lines)
upload = logs.get("Upload SARIF to code scanning")
check(isinstance(upload, dict) and upload["with"].get("sarif_file") == sarif_file
      and upload["with"].get("category") == "tensor-accountant",
      "upload-sarif gets the SARIF file: %s" % upload)
with open(summary) as f:
    summary_text = f.read()
check("### tensor-accountant" in summary_text and "Worst copies" in summary_text,
      "the job summary has the markdown summary:\n" + summary_text)
annotate = logs.get("Annotations and gate")
out = annotate.stdout if isinstance(annotate, subprocess.CompletedProcess) else ""
check("::warning file=model.cpp,line=%d," % NEW_LINE in out and
      "title=torch-contiguous-copy" in out, "the new copy is annotated:\n" + out)
check("line=%d," % OLD_LINE not in out,
      "the old copy (an unchanged line) is not annotated:\n" + out)

# 2. The gate: fail-on warning fails the last step, on the new copy.
ok, ctx, logs, _ = run_action(repo, dict(cache, **{"fail-on": "warning",
                                                   "upload-sarif": "false"}), push)
annotate = logs.get("Annotations and gate")
check(not ok and isinstance(annotate, subprocess.CompletedProcess) and
      annotate.returncode == 1, "fail-on: warning fails the gate step")
check(logs.get("Upload SARIF to code scanning") is None,
      "upload-sarif: 'false' skips the upload")

# 3. Files given explicitly: non-C++ and missing files are dropped.
ok, ctx, logs, _ = run_action(repo, {"files": "model.cpp\nnotes.md\nmissing.cpp\n"},
                              push, stop_after="prepare")
check(ok and ctx["steps"]["prepare"]["outputs"].get("count") == "1",
      "explicit files: only existing C++ files are analysed")

# 4. A compile database, scope all: its files in the repository, not the
# build tree's fetched dependencies.
db_dir = os.path.join(repo, "build")
os.makedirs(os.path.join(db_dir, "_deps"))
entries = [{"directory": repo, "file": name,
            "command": "c++ -std=c++17 -c " + name}
           for name in ("model.cpp", "other.cpp", "build/_deps/dep.cpp")]
with open(os.path.join(db_dir, "compile_commands.json"), "w") as f:
    json.dump(entries, f)
ok, ctx, logs, _ = run_action(repo, {"scope": "all", "compile-database": "build"},
                              push, stop_after="prepare")
prep = ctx["steps"].get("prepare", {}).get("outputs", {})
check(ok and prep.get("count") == "2",
      "scope all + compile-database: the database's files in the repo: %s" % prep)
if ok:
    with open(os.path.join(prep["dir"], "args"), "rb") as f:
        check(f.read().split(b"\0")[:2] == [b"-p", b"build"], "-p build is passed")

# 5. Errors say what to do.
ok, ctx, logs, _ = run_action(repo, {"base": "no-such-revision"}, push,
                              stop_after="prepare")
err = logs.get("prepare")
check(not ok and err is not None and "fetch-depth: 0" in err.stdout,
      "a missing base asks for fetch-depth: 0")
ok, ctx, logs, _ = run_action(repo, {"scope": "everything"}, push, stop_after="prepare")
check(not ok, "an unknown scope is refused")
ok, ctx, logs, _ = run_action(repo, {"package": "missing.deb"}, push,
                              stop_after="prepare")
err = logs.get("Install tensor-accountant")
check(not ok and err is not None and "no such package file" in err.stdout,
      "a missing package file is reported")

# 6. The summary counts as errors exactly what fails the gate: promoted
# checks under fail-on: error, every finding under warning, none under
# none; and the SARIF levels agree.
def summary_counts(text):
    m = re.search(r"(\d+) findings? \((\d+) errors?, (\d+) warnings?\)", text)
    return tuple(int(g) for g in m.groups()) if m else None


for given, want_rc in (({"fail-on": "error", "warnings-as-errors": "torch-contiguous-copy"}, 1),
                       ({"fail-on": "error", "warnings-as-errors": "torch-no-such-check"}, 0),
                       ({"fail-on": "none", "warnings-as-errors": "torch-contiguous-copy"}, 0),
                       ({"fail-on": "warning"}, 1)):
    ok, ctx, logs, summary = run_action(repo, dict(cache, **given), push)
    gate = logs.get("Annotations and gate")
    gate_rc = gate.returncode if isinstance(gate, subprocess.CompletedProcess) else None
    with open(summary) as f:
        counts = summary_counts(f.read())
    gate_errors = len(re.findall(r"^::error file=[^\n]*title=torch-", gate.stdout, re.M)) \
        if gate_rc is not None else -1
    check(gate_rc == want_rc, "%s: the gate exits %d: %s" % (given, want_rc, gate_rc))
    check(counts is not None and counts[1] == gate_errors and
          (counts[1] > 0) == (gate_rc == 1),
          "%s: the summary's errors %s are the gate's %d (exit %s)"
          % (given, counts, gate_errors, gate_rc))
    sarif_file = ctx["steps"].get("sarif", {}).get("outputs", {}).get("file", "")
    if os.path.isfile(sarif_file):
        with open(sarif_file) as f:
            levels = {r["ruleId"]: r["level"] for r in json.load(f)["runs"][0]["results"]}
        check(("error" in levels.values()) == (want_rc == 1),
              "%s: SARIF's levels are the gate's: %s" % (given, levels))

# 7. The install step without a package: the release the action's ref (or
# `version`) names, from the action repository's releases, checked to be
# that version; a clear error when the ref is no release tag. The download
# goes to a local stand-in for the release server (nothing is installed on
# this machine: it answers 404, and the step must say which URL failed).
empty_bin = os.path.join(WORK, "empty-bin")
os.makedirs(empty_bin)
path_has_tool = any(os.path.exists(os.path.join(d, "tensor-accountant"))
                    for d in os.environ["PATH"].split(os.pathsep))
arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                      text=True).stdout.strip()
requests = []


class FakeGitHub(http.server.BaseHTTPRequestHandler):
    """GitHub's release downloads (404 here) and the REST API's issue
    comments, in memory: what action.sh's install and comment code call."""
    comments = []
    fail_writes = False

    def log_message(self, *args):
        pass

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def do_GET(self):
        requests.append(("GET", self.path, self.headers.get("Authorization")))
        m = re.match(r"^/repos/o/r/issues/7/comments\?per_page=(\d+)&page=(\d+)$", self.path)
        if not m:
            return self.reply(404, {"message": "Not Found"})
        size, page = int(m.group(1)), int(m.group(2))
        self.reply(200, FakeGitHub.comments[(page - 1) * size:page * size])

    def do_POST(self):
        requests.append(("POST", self.path, self.headers.get("Authorization")))
        if FakeGitHub.fail_writes:
            return self.reply(403, {"message": "Resource not accessible by integration"})
        if self.path != "/repos/o/r/issues/7/comments":
            return self.reply(404, {"message": "Not Found"})
        comment = {"id": 1000 + len(FakeGitHub.comments), "body": self.body()["body"]}
        FakeGitHub.comments.append(comment)
        self.reply(201, comment)

    def do_PATCH(self):
        requests.append(("PATCH", self.path, self.headers.get("Authorization")))
        m = re.match(r"^/repos/o/r/issues/comments/(\d+)$", self.path)
        found = [c for c in FakeGitHub.comments if m and c["id"] == int(m.group(1))]
        if FakeGitHub.fail_writes or not found:
            return self.reply(403 if FakeGitHub.fail_writes else 404, {"message": "no"})
        found[0]["body"] = self.body()["body"]
        self.reply(200, found[0])


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
threading.Thread(target=server.serve_forever, daemon=True).start()
FAKE = "http://127.0.0.1:%d" % server.server_address[1]
fake_env = {"GITHUB_SERVER_URL": FAKE, "GITHUB_API_URL": FAKE}
release = dict(push, action_ref="v" + VERSION, action_repository="owner/tensor-accountant")
want_url = "%s/owner/tensor-accountant/releases/download/v%s/tensor-accountant_%s_%s.deb" % (
    FAKE, VERSION, VERSION, arch)

# The tool on PATH and no version asked for: it is used, nothing downloaded.
ok, ctx, logs, _ = run_action(repo, {}, release, stop_after="prepare", extra_env=fake_env)
install = logs.get("Install tensor-accountant")
check(ok and "Using the installed" in install.stdout and not requests,
      "with a tensor-accountant on PATH the pinned action uses it:\n%s%s"
      % (install.stdout, install.stderr))
# version: asks for the release even over the tool on PATH (a build: its
# version is a snapshot); the asset URL is the action repository's.
ok, ctx, logs, _ = run_action(repo, {"version": "v" + VERSION}, release,
                              stop_after="prepare", extra_env=fake_env)
install = logs.get("Install tensor-accountant")
check(not ok and "cannot download %s" % want_url in install.stdout and
      ("GET", want_url[len(FAKE):], None) in requests,
      "version: v%s downloads %s:\n%s%s" % (VERSION, want_url, install.stdout, install.stderr))
if not path_has_tool:
    # No tool: the action's own ref names the release.
    del requests[:]
    ok, ctx, logs, _ = run_action(repo, {}, release, stop_after="prepare",
                                  bin_dir=empty_bin, extra_env=fake_env)
    install = logs.get("Install tensor-accountant")
    check(not ok and "Installing tensor-accountant %s from %s" % (VERSION, want_url)
          in install.stdout and ("GET", want_url[len(FAKE):], None) in requests,
          "pinned at v%s, the action downloads that release:\n%s" % (VERSION, install.stdout))
    # `uses: ./` (no action repository): the workflow's repository.
    ok, ctx, logs, _ = run_action(repo, {"version": VERSION},
                                  dict(push, repository="o/r"), stop_after="prepare",
                                  bin_dir=empty_bin, extra_env=dict(fake_env,
                                                                    GITHUB_REPOSITORY="o/r"))
    install = logs.get("Install tensor-accountant")
    check(not ok and "%s/o/r/releases/download/v%s/" % (FAKE, VERSION) in install.stdout,
          "uses: ./ downloads the workflow repository's release:\n" + install.stdout)
    for ref in ("main", "v1.2", "0123456789abcdef0123456789abcdef01234567"):
        ok, ctx, logs, _ = run_action(repo, {}, dict(release, action_ref=ref),
                                      stop_after="prepare", bin_dir=empty_bin,
                                      extra_env=fake_env)
        install = logs.get("Install tensor-accountant")
        check(not ok and "::error" in install.stdout and
              "'%s' (uses: ...@<ref>) is not a release tag" % ref in install.stdout and
              "version: v1.2.3" in install.stdout,
              "pinned at %s, the action says to pin a release:\n%s" % (ref, install.stdout))
else:
    print("note: a tensor-accountant is on this machine's PATH; the no-tool cases are skipped")

# 8. The pull-request comment: one, edited in place. The summary step runs
# as in a pull request, against the stand-in API.
pr = dict(push, event_name="pull_request", event={"before": base, "pull_request": {"number": 7}},
          repository="o/r", token="secret-token")
marker = "<!-- tensor-accountant category=tensor-accountant -->"


def comment_run(given=None):
    del requests[:]
    ok, ctx, logs, _ = run_action(repo, dict(cache, **dict({"fail-on": "none"},
                                                           **(given or {}))),
                                  pr, extra_env=fake_env)
    return ok, logs.get("summary")


others = [{"id": i, "body": "review comment %d" % i} for i in range(1, 4)]
FakeGitHub.comments = list(others)
ok, summary_log = comment_run()
mine = [c for c in FakeGitHub.comments if c["body"].startswith(marker)]
check(ok and len(mine) == 1 and "### tensor-accountant" in mine[0]["body"] and
      [r[0] for r in requests] == ["GET", "POST"] and
      all(r[2] == "Bearer secret-token" for r in requests),
      "the first run posts one comment with the marker: %s\n%s"
      % (requests, summary_log.stdout if summary_log else ""))
first_id = mine[0]["id"] if mine else None
# A reply quoting the marker is not ours; the next push edits our comment.
FakeGitHub.comments.append({"id": 50, "body": "> " + marker + "\n> why?"})
ok, summary_log = comment_run({"warnings-as-errors": "torch-contiguous-copy",
                               "fail-on": "error"})
mine = [c for c in FakeGitHub.comments if c["body"].startswith(marker)]
check(len(mine) == 1 and mine[0]["id"] == first_id and
      ("PATCH", "/repos/o/r/issues/comments/%s" % first_id, "Bearer secret-token")
      in requests and "POST" not in [r[0] for r in requests],
      "a later push edits the same comment, posts none: %s" % requests)
check(mine and summary_counts(mine[0]["body"]) is not None and
      summary_counts(mine[0]["body"])[1] == 1,
      "the edited comment has the new summary (1 error):\n%s" % (mine[0]["body"] if mine else ""))
check(any(c["body"].startswith("> " + marker) for c in FakeGitHub.comments),
      "the quoting reply is left alone")
# Past the first page of 100 comments.
FakeGitHub.comments = [{"id": i, "body": "comment %d" % i} for i in range(1, 121)]
FakeGitHub.comments.insert(110, {"id": 999, "body": marker + "\nold summary"})
ok, summary_log = comment_run()
check(("PATCH", "/repos/o/r/issues/comments/999", "Bearer secret-token") in requests and
      [r[1] for r in requests if r[0] == "GET"] ==
      ["/repos/o/r/issues/7/comments?per_page=100&page=1",
       "/repos/o/r/issues/7/comments?per_page=100&page=2"],
      "the comment on the second page is found and edited: %s" % requests)
# Another category (a second use of the action) has its own comment.
ok, summary_log = comment_run({"sarif-category": "tensor-accountant-gpu"})
check([r[0] for r in requests if r[0] != "GET"] == ["POST"] and
      FakeGitHub.comments[-1]["body"].startswith(
          "<!-- tensor-accountant category=tensor-accountant-gpu -->"),
      "another category posts its own comment: %s" % requests)
# No permission: a warning, and the step still succeeds.
FakeGitHub.fail_writes = True
FakeGitHub.comments = []
ok, summary_log = comment_run()
check(ok and summary_log is not None and summary_log.returncode == 0 and
      "::warning" in summary_log.stdout and "pull-requests: write" in summary_log.stdout and
      "HTTP 403" in summary_log.stdout,
      "a refused comment is a warning, not a failed step:\n%s"
      % (summary_log.stdout if summary_log else ""))
FakeGitHub.fail_writes = False
server.shutdown()


shutil.rmtree(WORK, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: action")
