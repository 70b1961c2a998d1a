#!/usr/bin/env python3
"""README's first command in a clean clone prints the seed's table (issue 33).

1. The command is read from README.md (the first command under "On a fresh
   Debian 12 machine"), never written here, so the test follows the README.
2. A clean clone of the repository: `git clone` of the source tree, plus the
   work tree's uncommitted changes and new files (a developer tests what
   they have; in CI the clone has none), so nothing built or cached in the
   source tree helps.
3. The command runs there with ccache off (CCACHE_DISABLE=1): a cold build,
   as on a fresh machine with the Debian packages present.
4. Its standard output is exactly testdata/snapshots/seed.table.txt (the
   snapshot test checks that golden table against the tool), its exit
   status 0, and it built only the tool: no test was configured or built.

No time limit: how long the command takes is bench/first-table.sh's to say.

    test_first_table.py <source root> [<scratch parent directory>]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SECTION = "## On a fresh Debian 12 machine"
GOLDEN = "testdata/snapshots/seed.table.txt"


def first_command(readme_text):
    """The first command line README's fresh-machine section tells a user to
    type: the first line of its first indented code block."""
    lines = readme_text.split("\n")
    try:
        start = lines.index(SECTION)
    except ValueError:
        sys.exit("README.md has no section %r" % SECTION)
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        # A code block inside a numbered list item: indented past the item.
        if re.match(r"^ {7,}\S", line):
            return line.strip()
    sys.exit("README.md's section %r has no indented command" % SECTION)


def git(*args, cwd):
    return subprocess.run(["git"] + list(args), cwd=cwd, check=True,
                          stdout=subprocess.PIPE).stdout


def clean_clone(src, dest):
    git("clone", "-q", "--no-hardlinks", src, dest, cwd=src)
    # HEAD plus what the work tree has not committed yet.
    changed = git("ls-files", "-z", "--modified", "--others",
                  "--exclude-standard", cwd=src).decode().split("\0")
    deleted = set(git("ls-files", "-z", "--deleted", cwd=src).decode().split("\0"))
    for rel in filter(None, changed):
        target = os.path.join(dest, rel)
        if rel in deleted:
            if os.path.lexists(target):
                os.remove(target)
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(src, rel), target)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[-1])
    src = os.path.realpath(sys.argv[1])
    scratch_parent = sys.argv[2] if len(sys.argv) == 3 else None
    if not os.path.exists(os.path.join(src, ".git")):
        print("skipped: %s is not a git checkout, so there is nothing to clone" % src)
        return 77
    with open(os.path.join(src, "README.md")) as f:
        command = first_command(f.read())
    with open(os.path.join(src, GOLDEN), "rb") as f:
        expected = f.read()

    if scratch_parent:
        os.makedirs(scratch_parent, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="first-table-", dir=scratch_parent)
    try:
        clone = os.path.join(scratch, "clone")
        clean_clone(src, clone)
        env = dict(os.environ, CCACHE_DISABLE="1")
        print("running README's first command in a clean clone (%s), ccache off: %s"
              % (clone, command), flush=True)
        done = subprocess.run(["bash", "-c", command], cwd=clone, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        failures = []
        if done.returncode != 0:
            failures.append("exit status %d" % done.returncode)
        if done.stdout != expected:
            failures.append("standard output is not %s" % GOLDEN)
            print("--- standard output (%d bytes, expected %d):\n%s" % (
                len(done.stdout), len(expected),
                done.stdout.decode("utf-8", "replace")[-4000:]))
        built = os.path.join(clone, "build")
        if not os.path.isfile(os.path.join(built, "driver", "tensor-accountant")):
            failures.append("no build/driver/tensor-accountant in the clone")
        if os.path.isdir(os.path.join(built, "tests")):
            failures.append("the tests were configured too (build/tests exists)")
        else:
            print("built the tool only: no tests configured")
        if failures:
            print("--- standard error (last 4000 characters):\n%s" %
                  done.stderr.decode("utf-8", "replace")[-4000:])
            print("FAILED: " + "; ".join(failures))
            return 1
        print("the seed's table, exactly %s (%d bytes), exit status 0" %
              (GOLDEN, len(expected)))
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
