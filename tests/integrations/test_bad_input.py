#!/usr/bin/env python3
"""Bad input to each entry point: a clear one-line error, no crash.

The CLI (every --format), the --changed-lines-only option and --lsp's
startup. (Malformed LSP messages are in test_lsp.py.) None of these
parses LibTorch, so the test is quick.

Bad values (issue 10, item 24) are refused, never replaced by a default
in silence: check options (in .clang-tidy, --config, and through
clang-tidy-16 with our module, which warns as clang-tidy does for its own
checks), --verify-max-bytes; a malformed compile_commands.json is called
malformed, not missing; an empty one ("[]") is a usage error (exit 2).

usage: test_bad_input.py <tensor-accountant> [<clang-tidy-16> <module>]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOOL = sys.argv[1]
TIDY, MODULE = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else (None, None)
failures = []
tmp = tempfile.mkdtemp(prefix="tma-bad-")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def expect(args, rc, needle, what, stdin=None):
    p = subprocess.run([TOOL] + args, cwd=tmp, capture_output=True, text=True,
                       timeout=300, input=stdin)
    crashed = p.returncode < 0 or "Stack dump" in p.stderr or \
        "PLEASE submit a bug report" in p.stderr
    check(not crashed, what + ": no crash (rc %d)\n%s" % (p.returncode, p.stderr))
    check(p.returncode == rc, what + ": exit status %d, want %d\n%s"
          % (p.returncode, rc, p.stderr))
    check(needle in p.stderr, what + ": stderr says %r\n%s" % (needle, p.stderr))
    return p


cpp = write("ok.cpp", "int main() { return 0; }\n")
write("notes.md", "# not C++\n")
write("script.py", "print('hi')\n")

for fmt in ("diagnostics", "sarif", "github", "markdown"):
    expect(["--format=" + fmt, "missing.cpp"], 2, "no such file: 'missing.cpp'",
           "unknown file (%s)" % fmt)
    expect(["--format=" + fmt, "notes.md"], 2, "is not a C or C++ file",
           "non-C++ file (%s)" % fmt)
expect(["script.py", "--", "-std=c++17"], 2, "is not a C or C++ file",
       "non-C++ file with flags")
expect([tmp], 2, "is a directory", "a directory")
expect(["--format=yaml", "ok.cpp"], 2, "Cannot find option named 'yaml'",
       "unknown format")

# Broken compile commands: flags the compiler refuses, a database that is
# missing or not JSON.
for fmt in ("diagnostics", "sarif"):
    expect(["--format=" + fmt, "ok.cpp", "--", "-std=c++17", "--no-such-flag"],
           1, "the compile command failed", "broken flags (%s)" % fmt)
expect(["-p", os.path.join(tmp, "nodb"), "ok.cpp"], 2,
       "no compile_commands.json", "missing database")
os.makedirs(os.path.join(tmp, "baddb"))
write("baddb/compile_commands.json", "{ this is not json")
expect(["-p", os.path.join(tmp, "baddb"), "ok.cpp"], 2,
       "compile_commands.json' is not a valid compilation database",
       "malformed database")
for name, text in (("emptydb", "[]"), ("numberdb", "[1]"), ("objectdb", "{}")):
    os.makedirs(os.path.join(tmp, name))
    write(name + "/compile_commands.json", text)
expect(["-p", "emptydb", "ok.cpp"], 2,
       "no compile command for 'ok.cpp' in 'emptydb/compile_commands.json' "
       "(it lists no files)", "an empty database with a file")
expect(["-p", "emptydb"], 2, "lists no files", "an empty database")
for name in ("numberdb", "objectdb"):
    expect(["-p", name, "ok.cpp"], 2, "is not a valid compilation database",
           "a database that is not a list of entries (%s)" % name)
expect(["--lsp", "-p", "baddb"], 2, "is not a valid compilation database",
       "--lsp with a malformed database")

# Bad option values.
for value in ("-5", "lots", "0x10", "1e9", "99999999999999999999"):
    expect(["--verify-max-bytes=" + value, "ok.cpp", "--", "-std=c++17"], 2,
           "--verify-max-bytes wants a positive number of bytes", "--verify-max-bytes=" + value)
expect(["--verify-max-bytes=0", "ok.cpp", "--", "-std=c++17"], 2,
       "--verify-max-bytes wants a positive number", "--verify-max-bytes=0")
p = subprocess.run([TOOL, "--verify-max-bytes=1G", "ok.cpp", "--", "-std=c++17"],
                   cwd=tmp, capture_output=True, text=True, timeout=300)
check(p.returncode == 0, "--verify-max-bytes=1G is a size:\n" + p.stderr)
for value in ("lots", "-5", "12abc"):
    config = "{CheckOptions: {torch-memory-budget.MaxPeakBytes: '%s'}}" % value
    expect(["--config=" + config, "ok.cpp", "--", "-std=c++17"], 2,
           "--config: torch-memory-budget.MaxPeakBytes: '%s' is not a "
           "non-negative integer" % value, "--config MaxPeakBytes %r" % value)
os.makedirs(os.path.join(tmp, "cfg"))
write("cfg/ok.cpp", "int main() { return 0; }\n")
write("cfg/.clang-tidy", "CheckOptions:\n  - key: torch-memory-budget.MaxPeakBytes\n"
      "    value: lots\n")
p = expect(["--format=json", "cfg/ok.cpp", "--", "-std=c++17"], 1,
           "cfg/.clang-tidy: torch-memory-budget.MaxPeakBytes: 'lots' is not a "
           "non-negative integer", ".clang-tidy MaxPeakBytes: lots")
report = json.loads(p.stdout) if p.stdout.strip() else {}
check([f["file"] for f in report.get("failed_files", [])] == ["cfg/ok.cpp"] and
      report.get("functions") == [],
      ".clang-tidy with a bad value: the file is failed, not analysed with the "
      "default: %s" % report)
# A disabled check's options are not its business.
expect(["--config={Checks: '-*,torch-reshape-copy', CheckOptions: "
        "{torch-memory-budget.MaxPeakBytes: lots}}", "--list-checks"], 0, "",
       "a bad value of a disabled check")
if TIDY and MODULE:
    p = subprocess.run([TIDY, "--load=" + MODULE, "-checks=-*,torch-*",
                        "--config={CheckOptions: {torch-memory-budget.MaxPeakBytes: lots}}",
                        "ok.cpp", "--", "-std=c++17"],
                       cwd=tmp, capture_output=True, text=True, timeout=300)
    check("invalid configuration value 'lots' for option "
          "'torch-memory-budget.MaxPeakBytes'; expected a non-negative integer"
          in p.stdout + p.stderr,
          "clang-tidy-16 with our module warns about the bad value:\n%s%s"
          % (p.stdout, p.stderr))
os.makedirs(os.path.join(tmp, "flagdb"))
write("flagdb/compile_commands.json", json.dumps([{
    "directory": tmp, "file": cpp,
    "arguments": ["clang++", "--no-such-flag", "-c", cpp]}]))
expect(["-p", os.path.join(tmp, "flagdb"), "ok.cpp"], 1,
       "the compile command failed",
       "database with a broken command")

# --compare-measured with 200 KB of nesting (issue 10, item 10): the
# recursive JSON parser overflowed the stack; now a message and exit 2.
write("deep.json", '{"functions": ' + "[" * 100000 + "]" * 100000 + "}")
expect(["--compare-measured", "deep.json", "ok.cpp", "--", "-std=c++17"], 2,
       "JSON nested more than 512 levels deep", "--compare-measured deep JSON")

# --changed-lines-only with something that is neither a diff nor a revision.
expect(["--changed-lines-only=no-such-revision-xyz", "ok.cpp", "--",
        "-std=c++17"], 2, "--changed-lines-only=no-such-revision-xyz",
       "bad revision")
expect(["--changed-lines-only=", "ok.cpp", "--", "-std=c++17"], 2,
       "--changed-lines-only needs", "empty --changed-lines-only")

# --lsp startup.
expect(["--lsp", "ok.cpp"], 2, "--lsp takes no files", "--lsp with a file")
# A missing -p is logged, not fatal (an editor would show nothing): the
# server reads on and ends with the input (status 1, no shutdown).
expect(["--lsp", "-p", os.path.join(tmp, "nodb")], 1,
       "no compile_commands.json", "--lsp with a missing database")
# Garbage framing: a header block without Content-Length, then the end.
expect(["--lsp"], 1, "without Content-Length", "--lsp garbage framing",
       stdin="hello\r\n\r\n")

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: bad input")
