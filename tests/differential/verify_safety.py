#!/usr/bin/env python3
"""--verify and --emit-harness keep their safety promises (issue 10 items 8,
12-16), through the real tool on tests/differential/data/safety.cpp:

  8   --emit-harness refuses a non-empty directory unless --force, and even
      then replaces only files an earlier --emit-harness wrote;
  12  the time limit is per function: a hang costs only its own function;
  13  the memory limit holds at run time, even where the prediction is a
      wrong 0 and the code catches (...);
  14  a function with no tensor work is not called (it would write a file);
  15  killing the tool (SIGTERM, SIGINT, even SIGKILL) while it compiles or
      runs the harness leaves no process and no temporary directory behind;
  16  on the CPU, a function's peak and allocated bytes are compared (a
      planted measurement one byte off must fail).

Every run gets its own TMPDIR, so what a run leaves behind is visible, and
the processes still alive are found by their working directory. One harness
is compiled (about 30 s); later runs of the same program are ccache hits.

Exit status 0 when all hold, 1 otherwise (each failure names its item).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FAILURES = []


def check(ok, item, what):
    print("%s: item %s: %s" % ("ok" if ok else "FAIL", item, what))
    if not ok:
        FAILURES.append("item %s: %s" % (item, what))
    return ok


def processes_under(path):
    """Pids of processes working in path, or run from it, or naming it."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            places = [os.readlink("/proc/%s/cwd" % entry), os.readlink("/proc/%s/exe" % entry)]
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                places += f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(p == path or p.startswith(path + "/") or (path + "/") in p for p in places):
            found.append(int(entry))
    return found


def wait_for(pred, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


class Tool:
    def __init__(self, cli, cache_dir, source, work):
        self.cli, self.cache_dir, self.source, self.work = cli, cache_dir, source, work
        self.runs = 0

    def env(self, name):
        """A private TMPDIR and mark directory for one run."""
        self.runs += 1
        tmp = os.path.join(self.work, "%s-tmp" % name)
        marks = os.path.join(self.work, "%s-marks" % name)
        os.makedirs(tmp)
        os.makedirs(marks)
        env = dict(os.environ, TMPDIR=tmp, TMA_SAFETY_DIR=marks)
        return env, tmp, marks

    def command(self, *args):
        return [self.cli, "--cache-dir", self.cache_dir] + list(args) + [self.source]

    def run(self, name, *args):
        env, tmp, marks = self.env(name)
        proc = subprocess.run(self.command(*args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=900)
        return proc, tmp, marks


def emit_harness(tool):
    """Item 8."""
    base = os.path.join(tool.work, "emit")
    os.makedirs(base)

    # A directory that holds the user's own build files.
    user = os.path.join(base, "user-project")
    os.makedirs(user)
    mine = os.path.join(user, "CMakeLists.txt")
    with open(mine, "w") as f:
        f.write("# the user's own build\nproject(mine)\n")
    proc, _, _ = tool.run("emit1", "--verify=cpu", "--emit-harness=" + user)
    check(proc.returncode == 2, 8, "a non-empty directory is refused (exit %d)" % proc.returncode)
    check("is not empty" in proc.stderr and "--force" in proc.stderr, 8,
          "the refusal says why and names --force: " + proc.stderr.strip()[-200:])
    check(open(mine).read() == "# the user's own build\nproject(mine)\n", 8,
          "the user's CMakeLists.txt is untouched")
    check(not os.path.exists(os.path.join(user, "harness.cpp")), 8,
          "nothing is written into it")
    proc, _, _ = tool.run("emit2", "--verify=cpu", "--force", "--emit-harness=" + user)
    check(proc.returncode == 2 and "not written by --emit-harness" in proc.stderr, 8,
          "--force still refuses to replace a file it did not write (exit %d)"
          % proc.returncode)
    check(open(mine).read() == "# the user's own build\nproject(mine)\n" and
          not os.path.exists(os.path.join(user, "harness.cpp")), 8,
          "and writes nothing at all")

    # A new directory, then the same one again.
    out = os.path.join(base, "out")
    proc, _, _ = tool.run("emit3", "--verify=cpu", "--emit-harness=" + out)
    names = sorted(os.listdir(out)) if os.path.isdir(out) else []
    check(proc.returncode == 0 and names == ["CMakeLists.txt", "harness.cpp", "predicted.json"],
          8, "a new directory gets the three files (exit %d, %s)" % (proc.returncode, names))
    harness = os.path.join(out, "harness.cpp")
    with open(harness, "a") as f:
        f.write("// an edit of the generated file\n")
    notes = os.path.join(out, "notes.txt")
    with open(notes, "w") as f:
        f.write("mine\n")
    proc, _, _ = tool.run("emit4", "--verify=cpu", "--emit-harness=" + out)
    check(proc.returncode == 2 and open(harness).read().endswith("// an edit of the generated file\n"),
          8, "emitting again without --force is refused and changes nothing")
    proc, _, _ = tool.run("emit5", "--verify=cpu", "--force", "--emit-harness=" + out)
    check(proc.returncode == 0, 8, "--force replaces an earlier --emit-harness's files (exit %d: %s)"
          % (proc.returncode, proc.stderr.strip()[-200:]))
    check("an edit of the generated file" not in open(harness).read(), 8,
          "harness.cpp was regenerated")
    check(open(notes).read() == "mine\n" and
          sorted(os.listdir(out)) == ["CMakeLists.txt", "harness.cpp", "notes.txt",
                                      "predicted.json"],
          8, "a file it did not write is left alone, and no temporary file remains")

    # A symbolic link in place of harness.cpp must not be followed.
    linked = os.path.join(base, "linked")
    shutil.copytree(out, linked, symlinks=True)
    victim = os.path.join(base, "victim.cpp")
    with open(victim, "w") as f:
        f.write(open(os.path.join(linked, "harness.cpp")).read())
    os.remove(os.path.join(linked, "harness.cpp"))
    os.symlink(victim, os.path.join(linked, "harness.cpp"))
    before = open(victim).read()
    proc, _, _ = tool.run("emit6", "--verify=cpu", "--force", "--emit-harness=" + linked)
    check(proc.returncode == 2 and open(victim).read() == before and
          os.path.islink(os.path.join(linked, "harness.cpp")), 8,
          "--force does not write through a symbolic link (exit %d)" % proc.returncode)


def parse_report(proc, item):
    try:
        return json.loads(proc.stdout)
    except ValueError:
        check(False, item, "the tool printed no JSON report: %s" % proc.stderr.strip()[-300:])
        return None


def function(report, name):
    for fn in report["functions"]:
        if fn["function"] == name:
            return fn
    return None


def skipped(report, name):
    for s in report["not_verified"]:
        if s["function"] == name:
            return s["reason"]
    return None


def limits(tool):
    """Items 12, 13, 14 on meta, then 13 and 14 on the CPU."""
    proc, tmp, marks = tool.run("meta", "--verify=meta", "--format=json",
                                "--verify-timeout=3", "--verify-max-bytes=268435456")
    if not check(proc.returncode in (0, 1), "12-14", "--verify=meta ran (exit %d)"
                 % proc.returncode):
        sys.stderr.write(proc.stderr)
        return
    report = parse_report(proc, "12-14")
    if report is None:
        return
    spins, after = function(report, "spins"), function(report, "after_spin")
    check(spins is not None and (spins.get("error") or "").startswith("timed out: still running after 3 s"),
          12, "the hang is killed at its own limit: %s" % (spins or {}).get("error"))
    check(after is not None and not after.get("error") and
          all(v["result"] == "match" for v in after["verdicts"]) and after["verdicts"], 12,
          "the function after the hang runs and matches: %s"
          % (after or {}).get("error"))
    swallows = function(report, "swallows_a_huge_allocation")
    check(swallows is not None and swallows.get("stopped") == "memory-limit", 13,
          "on meta, the 4 GiB CPU tensor is stopped at the 256 MiB limit: %s"
          % (swallows or {}).get("error"))
    reason = skipped(report, "writes_a_file")
    check(reason is not None and "no tensor work" in reason, 14,
          "a function with no tensor work is listed as not run: %s" % reason)
    check(not os.path.exists(os.path.join(marks, "written-by-writes_a_file")), 14,
          "and it did not run")
    check(os.listdir(tmp) == [], 15, "the temporary directory is removed: %s" % os.listdir(tmp))

    proc, tmp, marks = tool.run("cpu", "--verify=cpu", "--format=json",
                                "--verify-timeout=3", "--verify-max-bytes=268435456")
    if not check(proc.returncode in (0, 1), "13", "--verify=cpu ran (exit %d)" % proc.returncode):
        sys.stderr.write(proc.stderr)
        return
    report = parse_report(proc, "13")
    if report is None:
        return
    swallows = function(report, "swallows_a_huge_allocation")
    why = skipped(report, "swallows_a_huge_allocation")
    check((swallows is not None and swallows.get("stopped") == "memory-limit") or
          (why is not None and ("over --verify-max-bytes" in why or "unknown" in why)),
          13, "on the CPU, the 4 GiB allocation is stopped or not run: %s"
          % ((swallows or {}).get("error") or why))
    check(not os.path.exists(os.path.join(marks, "written-by-writes_a_file")), 14,
          "--verify=cpu did not run writes_a_file either")


def interrupted(tool, name, sig, during, extra_env=None):
    """Item 15: kill the tool mid-run; nothing may remain."""
    env, tmp, marks = tool.env(name)
    env.update(extra_env or {})
    proc = subprocess.Popen(tool.command("--verify=meta", "--verify-timeout=600"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if during == "run":
        ready = wait_for(lambda: os.path.exists(os.path.join(marks, "spinning")), 300)
    else:  # the compiler is working in the harness directory
        ready = wait_for(lambda: any(os.path.exists(os.path.join(tmp, d, "harness.cpp"))
                                     for d in os.listdir(tmp)) and processes_under(tmp), 300)
    check(ready, 15, "%s: the tool reached the %s" % (name, during))
    time.sleep(0.3)
    proc.send_signal(sig)
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        check(False, 15, "%s: the tool did not end within 60 s of the signal" % name)
    check(proc.returncode == -sig, 15, "%s: the tool died of signal %d (returncode %s)"
          % (name, sig, proc.returncode))
    gone = wait_for(lambda: not processes_under(tmp), 10)
    left = processes_under(tmp)
    check(gone, 15, "%s: no process is left in the harness directory %s" % (name, left))
    for pid in left:  # the test's own leftovers, by pid
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    clean = wait_for(lambda: os.listdir(tmp) == [], 10)
    check(clean, 15, "%s: the temporary directory is removed (%s)" % (name, os.listdir(tmp)))


def totals(tool, source_dir):
    """Item 16 without a build: a planted CPU measurement one byte off."""
    truth_path = os.path.join(source_dir, "testdata/hostile/measured-cpu.json")
    corpus = os.path.join(source_dir, "testdata/hostile/expressions.cpp")
    with open(truth_path) as f:
        truth = json.load(f)
    keep = [f for f in truth["functions"] if f["function"] == "op_unary_minus"]
    if not check(len(keep) == 1 and keep[0].get("peak_live_bytes"), 16,
                 "the truth measures op_unary_minus on the CPU"):
        return
    truth["functions"] = keep
    good = os.path.join(tool.work, "measured-good.json")
    bad = os.path.join(tool.work, "measured-bad.json")
    with open(good, "w") as f:
        json.dump(truth, f)
    real_peak = keep[0]["peak_live_bytes"]
    keep[0]["peak_live_bytes"] = real_peak - 1
    with open(bad, "w") as f:
        json.dump(truth, f)
    base = [tool.cli, "--cache-dir", tool.cache_dir]
    proc = subprocess.run(base + ["--compare-measured=" + good, corpus],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = [l for l in proc.stdout.splitlines() if "peak live bytes" in l and "%d" % real_peak in l]
    check(any("[match]" in l for l in lines), 16,
          "the real measurement's peak is compared and matches: %s" % lines)
    proc = subprocess.run(base + ["--compare-measured=" + bad, corpus],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(proc.returncode == 1 and
          "peak live bytes: predicted %d, measured %d  [MISMATCH]" % (real_peak, real_peak - 1)
          in proc.stdout, 16,
          "a peak one byte below the prediction is a mismatch (exit %d)" % proc.returncode)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--only", default="8,12,15,16",
                    help="comma-separated parts: 8, 12 (12-14), 15, 16")
    args = ap.parse_args()
    parts = set(args.only.split(","))
    work = tempfile.mkdtemp(prefix="tma-safety-")
    source = os.path.join(args.source_dir, "tests/differential/data/safety.cpp")
    tool = Tool(os.path.abspath(args.cli), args.cache_dir, source, work)
    try:
        if "16" in parts:
            totals(tool, args.source_dir)
        if "8" in parts:
            emit_harness(tool)
        if "12" in parts:
            limits(tool)
        if "15" in parts:
            interrupted(tool, "sigterm-run", signal.SIGTERM, "run")
            interrupted(tool, "sigkill-run", signal.SIGKILL, "run")
            interrupted(tool, "sigint-compile", signal.SIGINT, "compile",
                        {"CCACHE_DISABLE": "1"})
    finally:
        for pid in processes_under(work):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(work, ignore_errors=True)
    print("%d failures" % len(FAILURES))
    for f in FAILURES:
        print("  " + f)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
