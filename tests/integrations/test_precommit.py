#!/usr/bin/env python3
"""The plain git hook (integrations/git-hooks/pre-commit) in a temporary
repository, with the real tool and LibTorch headers.

1. A staged file with a known copy (transpose(...).contiguous()): the
   commit is refused and the hook prints our diagnostic.
2. The same line with // NOLINT(torch-contiguous-copy): accepted.
3. --changed-lines-only: with tensor-accountant.changedLinesOnly, a commit
   that changes another line of a file whose old copy is un-NOLINTed is
   accepted; one that touches the copy's line is refused.
4. Files that are not C++ are not analysed (a staged README is ignored);
   a valid C++ header (.h) is analysed as C++ and committed.
5. The .pre-commit-hooks.yaml manifest has what the framework needs, and,
   when the pre-commit framework is installed, `pre-commit try-repo` runs
   our hook from it and fails on the copy.
6. The framework hook runs an installed tensor-accountant from PATH
   without building, and without one says how to install the package.
7. Pinned at a release tag, the hook's build of pre-commit's shallow,
   tagless clone is stamped with the release's version.

usage: test_precommit.py <tensor-accountant> <source dir>
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

TOOL, SRC = sys.argv[1], sys.argv[2]
HOOK = os.path.join(SRC, "integrations/git-hooks/pre-commit")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


repo = tempfile.mkdtemp(prefix="tma-hook-")
env = dict(os.environ, TENSOR_ACCOUNTANT=TOOL,
           GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
           GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org",
           GIT_CONFIG_NOSYSTEM="1", HOME=repo)


def git(*args, check_rc=True):
    p = subprocess.run(["git"] + list(args), cwd=repo, env=env,
                       capture_output=True, text=True, timeout=600)
    if check_rc and p.returncode != 0:
        sys.exit("git %s failed: %s" % (" ".join(args), p.stderr))
    return p


def write(name, text):
    with open(os.path.join(repo, name), "w") as f:
        f.write(text)


git("init", "-q")
git("config", "tensor-accountant.args", "--no-cache")
shutil.copy(HOOK, os.path.join(repo, ".git/hooks/pre-commit"))
os.chmod(os.path.join(repo, ".git/hooks/pre-commit"), 0o755)

COPY = """#include <torch/torch.h>

void f() {
  auto x = torch::randn({64, 32});
  auto a = x.transpose(0, 1);
  auto b = a.contiguous();%s
}
"""
write("model.cpp", COPY % "")
write("README.md", "not C++\n")
git("add", "model.cpp", "README.md")
p = git("commit", "-m", "copy", check_rc=False)
out = p.stdout + p.stderr
check(p.returncode != 0, "a staged copy refuses the commit")
check("model.cpp:6:14: warning: contiguous() copies 8 KiB" in out and
      "[torch-contiguous-copy]" in out, "the hook prints our diagnostic:\n" + out)
check("commit refused" in out, "the hook says the commit is refused")
check("README" not in out, "README.md is not analysed")

# A valid C++ header is analysed as C++, not C (issue 10, item 20: the hook
# passes .h files, and "-std=c++17 not allowed with 'C'" refused them).
write("shapes.h", "#pragma once\nnamespace shapes {\nstruct Dims { int rank = 0; };\n"
      "inline int rank(const Dims &d) { return d.rank; }\n}  // namespace shapes\n")
git("add", "shapes.h")
git("rm", "-q", "--cached", "model.cpp")
p = git("commit", "-m", "a header", check_rc=False)
check(p.returncode == 0, "a valid C++ header is committed:\n" + p.stdout + p.stderr)
git("add", "model.cpp")

write("model.cpp", COPY.replace("a.contiguous();", "a.contiguous();  "
                                "// NOLINT(torch-contiguous-copy)") % "")
git("add", "model.cpp")
p = git("commit", "-m", "nolint", check_rc=False)
check(p.returncode == 0, "NOLINT: the commit is accepted:\n" + p.stdout + p.stderr)

# --changed-lines-only: the old copy (NOLINT removed, committed without the
# hook) is not on a changed line, so a commit elsewhere in the file passes.
write("model.cpp", COPY % "")
git("add", "model.cpp")
git("commit", "-q", "--no-verify", "-m", "old copy")
git("config", "tensor-accountant.changedLinesOnly", "true")
write("model.cpp", COPY % "\n  auto c = x + 1;")
git("add", "model.cpp")
p = git("commit", "-m", "unrelated line", check_rc=False)
check(p.returncode == 0, "changed lines only: a commit that does not touch the "
      "copy is accepted:\n" + p.stdout + p.stderr)
write("model.cpp", (COPY % "").replace("a.contiguous();", "a.contiguous(); "))
git("add", "model.cpp")
p = git("commit", "-m", "touch the copy", check_rc=False)
check(p.returncode != 0 and "torch-contiguous-copy" in p.stdout + p.stderr,
      "changed lines only: touching the copy's line is refused")

# The framework's manifest.
with open(os.path.join(SRC, ".pre-commit-hooks.yaml")) as f:
    hooks = yaml.safe_load(f)
ids = {h["id"]: h for h in hooks}
check("tensor-accountant" in ids, "manifest has the tensor-accountant hook")
for h in hooks:
    check(all(k in h for k in ("id", "name", "entry", "language")),
          "hook %s has id, name, entry, language" % h.get("id"))
    check(h["language"] in ("script", "system"), "hook language")
    if h["language"] == "script":
        entry = os.path.join(SRC, h["entry"].split()[0])
        check(os.access(entry, os.X_OK), "script entry is executable: " + entry)

# The framework itself, when installed (Debian's pre-commit package): a
# hook repository holding just the manifest and the wrapper, used by path.
if shutil.which("pre-commit"):
    hooks_repo = tempfile.mkdtemp(prefix="tma-hooks-")
    shutil.copy(os.path.join(SRC, ".pre-commit-hooks.yaml"), hooks_repo)
    os.makedirs(os.path.join(hooks_repo, "integrations/pre-commit"))
    shutil.copy(os.path.join(SRC, "integrations/pre-commit/tensor-accountant-hook"),
                os.path.join(hooks_repo, "integrations/pre-commit/"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "hooks"]):
        subprocess.run(["git"] + args, cwd=hooks_repo, env=env, check=True)
    env["PRE_COMMIT_HOME"] = os.path.join(repo, ".pre-commit-home")
    write("model.cpp", COPY % "")
    git("add", "model.cpp")
    p = subprocess.run(["pre-commit", "try-repo", hooks_repo, "tensor-accountant",
                        "--files", "model.cpp"], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    check(p.returncode != 0 and "[torch-contiguous-copy]" in out,
          "pre-commit try-repo runs the hook from the manifest:\n" + out)
    shutil.rmtree(hooks_repo, ignore_errors=True)
else:
    print("note: pre-commit is not installed; the framework run is skipped")

# The framework hook's choice of binary, in a copy of its clone layout (so
# nothing is built in the source tree): an installed tensor-accountant on
# PATH runs as is; with none, the hook says how to install the package
# before building, and again when the build fails (a cmake that fails).
clone = tempfile.mkdtemp(prefix="tma-hook-clone-")
os.makedirs(os.path.join(clone, "integrations/pre-commit"))
wrapper = os.path.join(clone, "integrations/pre-commit/tensor-accountant-hook")
shutil.copy(os.path.join(SRC, "integrations/pre-commit/tensor-accountant-hook"), wrapper)
stub_bin = os.path.join(clone, "stub-bin")
os.makedirs(stub_bin)
with open(os.path.join(stub_bin, "tensor-accountant"), "w") as f:
    f.write('#!/bin/sh\necho "installed tensor-accountant ran: $*"\n')
with open(os.path.join(stub_bin, "cmake"), "w") as f:
    f.write("#!/bin/sh\nexit 1\n")
for name in ("tensor-accountant", "cmake"):
    os.chmod(os.path.join(stub_bin, name), 0o755)
hook_env = {k: v for k, v in env.items() if k != "TENSOR_ACCOUNTANT"}
p = subprocess.run([wrapper, "model.cpp"], cwd=repo, capture_output=True, text=True,
                   env=dict(hook_env, PATH=stub_bin + os.pathsep + os.environ["PATH"]))
check(p.returncode == 0 and "installed tensor-accountant ran: --format=diagnostics "
      "--fail-on=warning model.cpp" in p.stdout,
      "the framework hook prefers the installed binary:\n" + p.stdout + p.stderr)
check(not os.path.exists(os.path.join(clone, "build-pre-commit")),
      "with an installed binary, nothing is built")
os.remove(os.path.join(stub_bin, "tensor-accountant"))
path_without_tool = os.pathsep.join(
    [stub_bin] + [d for d in os.environ["PATH"].split(os.pathsep)
                  if not os.path.exists(os.path.join(d, "tensor-accountant"))])
p = subprocess.run([wrapper, "model.cpp"], cwd=repo, capture_output=True, text=True,
                   env=dict(hook_env, PATH=path_without_tool))
check(p.returncode != 0 and "building it once" in p.stderr and
      "apt install ./tensor-accountant_" in p.stderr and "build failed" in p.stderr,
      "without an installed binary the hook says how to install one:\n" + p.stderr)

# `rev: v<version>` must build <version>, not a snapshot: pre-commit fetches
# only the pinned commit (git fetch --depth=1 origin <rev>), without tags,
# so the hook names the remote's release tags at that commit before its
# build. A hook repository with a tag at HEAD, cloned as pre-commit does;
# the hook's build fails (the cmake stub), then the real cmake/TmaVersion.cmake
# stamps the clone's version.
with open(os.path.join(SRC, "CMakeLists.txt")) as f:
    project_version = re.search(r"project\(TensorMemoryAccountant VERSION ([0-9.]+)",
                                f.read()).group(1)
origin = tempfile.mkdtemp(prefix="tma-hook-origin-")
for rel in ("integrations/pre-commit/tensor-accountant-hook", "cmake/TmaVersion.cmake"):
    os.makedirs(os.path.join(origin, os.path.dirname(rel)), exist_ok=True)
    shutil.copy(os.path.join(SRC, rel), os.path.join(origin, rel))
for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "one"],
             ["commit", "-q", "--allow-empty", "-m", "release"],
             ["tag", "-a", "-m", "release", "v" + project_version]):
    subprocess.run(["git"] + args, cwd=origin, env=env, check=True)
tag_clone = tempfile.mkdtemp(prefix="tma-hook-tag-clone-")
for args in (["init", "-q"], ["remote", "add", "origin", "file://" + origin],
             ["fetch", "-q", "origin", "v" + project_version, "--depth=1"],
             ["checkout", "-q", "FETCH_HEAD"]):
    subprocess.run(["git"] + args, cwd=tag_clone, env=env, check=True)


def clone_version():
    out = os.path.join(tag_clone, "version-out")
    subprocess.run(["cmake", "-DSOURCE_DIR=" + tag_clone, "-DPROJECT_VERSION=" + project_version,
                    "-DOUTPUT_DIR=" + out, "-P",
                    os.path.join(tag_clone, "cmake/TmaVersion.cmake")], check=True,
                   capture_output=True)
    with open(os.path.join(out, "version.txt")) as f:
        return f.read().strip()


before = clone_version()
check(before.startswith(project_version + "~git"),
      "a tagless shallow clone stamps a snapshot (what the hook repairs): " + before)
p = subprocess.run([os.path.join(tag_clone, "integrations/pre-commit/tensor-accountant-hook"),
                    "model.cpp"], cwd=repo, capture_output=True, text=True,
                   env=dict(hook_env, PATH=path_without_tool))
check(p.returncode != 0 and "build failed" in p.stderr,
      "the hook tried to build its clone:\n" + p.stderr)
after = clone_version()
check(after == project_version,
      "pre-commit's clone of the tag v%s builds version %s: %s"
      % (project_version, project_version, after))
for d in (clone, tag_clone, origin):
    shutil.rmtree(d, ignore_errors=True)

shutil.rmtree(repo, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: pre-commit hook")
