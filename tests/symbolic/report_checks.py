"""What tests/symbolic's report checks share: run the real tool on one data
file (JSON output), find a function's row by name, and record each check."""
import json
import subprocess

FAILURES = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        FAILURES.append(what)
    return ok


def functions(cli, cache, path):
    """The report's functions by name, or None (a failed check) when the
    tool does not exit 0 or 1."""
    proc = subprocess.run([cli, "--format=json", "--checks=-*", "--cache-dir", cache, path],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=900)
    if not check(proc.returncode in (0, 1), "the tool exits 0 or 1 (got %d): %s"
                 % (proc.returncode, proc.stderr[-2000:])):
        return None
    return {f["function"]: f for f in json.loads(proc.stdout)["functions"]}


def row(fns, fn, name):
    """Function fn's row for the named tensor (the first); {} and a failed
    check when there is none."""
    for t in fns.get(fn, {}).get("tensors", []):
        if t["name"] == name:
            return t
    check(False, "%s has a row %s" % (fn, name))
    return {}


def finish():
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0
