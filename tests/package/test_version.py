#!/usr/bin/env python3
"""cmake/TmaVersion.cmake on scratch git repositories: every spelling of
the version it documents, Debian's order of them (dpkg --compare-versions),
and that an unchanged version leaves the generated files untouched (so an
unchanged commit rebuilds nothing).

usage: test_version.py <source dir>
"""
import os
import shutil
import subprocess
import sys
import tempfile

SRC = sys.argv[1]
SCRIPT = os.path.join(SRC, "cmake/TmaVersion.cmake")
failures = []
work = tempfile.mkdtemp(prefix="tma-version-")
repo = os.path.join(work, "repo")
out = os.path.join(work, "out")
os.makedirs(repo)
env = dict(os.environ, HOME=work, GIT_CONFIG_NOSYSTEM="1",
           GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
           GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def git(*args):
    return subprocess.run(["git"] + list(args), cwd=repo, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def version(source=repo, project="0.1.0"):
    subprocess.run(["cmake", "-DSOURCE_DIR=" + source, "-DPROJECT_VERSION=" + project,
                    "-DOUTPUT_DIR=" + out, "-P", SCRIPT], check=True, env=env)
    with open(os.path.join(out, "version.txt")) as f:
        text = f.read().strip()
    with open(os.path.join(out, "TmaVersion.inc")) as f:
        check('#define TMA_VERSION "%s"' % text in f.read(), "TmaVersion.inc says " + text)
    return text


def commit(n):
    for i in range(n):
        with open(os.path.join(repo, "f"), "a") as f:
            f.write("x\n")
        git("add", "f")
        git("commit", "-q", "-m", "c")
    return git("rev-parse", "--short=12", "HEAD")


check(version() == "0.1.0", "no git: the project version")
git("init", "-q")
check(version() == "0.1.0", "no commit yet: the project version")
h = commit(3)
snapshot = version()
check(snapshot == "0.1.0~git3.g" + h, "no tag: a pre-release snapshot: " + snapshot)
git("tag", "v0.0.9")
check(version() == "0.1.0~git3.g" + h, "an older version's tag: still a snapshot")
inc = os.path.join(out, "TmaVersion.inc")
before = os.stat(inc).st_mtime_ns
version()
check(os.stat(inc).st_mtime_ns == before, "an unchanged version is not rewritten")
with open(os.path.join(repo, "f"), "a") as f:
    f.write("uncommitted\n")
check(version() == "0.1.0~git3.g" + h, "uncommitted changes do not change it")
git("checkout", "-q", "f")
h = commit(1)
git("tag", "v0.1.0")
release = version()
check(release == "0.1.0", "at the tag v0.1.0: the release: " + release)
h = commit(2)
after = version()
check(after == "0.1.0+git2.g" + h, "after the tag: a post-release snapshot: " + after)
for a, b in ((snapshot, release), (release, after)):
    p = subprocess.run(["dpkg", "--compare-versions", a, "lt", b])
    check(p.returncode == 0, "Debian orders %s before %s" % (a, b))

shutil.rmtree(work, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: version")
