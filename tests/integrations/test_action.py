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
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

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


def run_action(repo, given, github, stop_after=None):
    """Runs the composite's steps like a runner. Returns (ok, ctx, logs)."""
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
        env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"],
                   GITHUB_ACTION_PATH=SRC, RUNNER_TEMP=temp, GITHUB_OUTPUT=out_file,
                   GITHUB_STEP_SUMMARY=summary, HOME=WORK,
                   GITHUB_EVENT_NAME=github.get("event_name", "push"),
                   GIT_CONFIG_NOSYSTEM="1")
        if github.get("base_ref"):
            env["GITHUB_BASE_REF"] = github["base_ref"]
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

shutil.rmtree(WORK, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: action")
