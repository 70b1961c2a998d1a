#!/usr/bin/env python3
"""clang-tidy's command line with clang-tidy's meaning (issue 33), held to
the real clang-tidy-16 with our module loaded wherever the two are meant to
agree.

1. Options parse as LLVM tools' do (-checks= and --checks=, -p dir), and an
   unknown option is a usage error (exit 2) with the nearest option only
   when it is close: never the help (LLVM read --h... as -h), never an
   unrelated option.
2. Check globs that enable nothing: exit 1 as clang-tidy-16's "no checks
   enabled", with the registered check nearest a misspelt one, or none;
   "-*" alone and other tools' globs in a shared .clang-tidy stay fine.
3. --list-checks prints byte for byte what clang-tidy-16 prints.
4. --dump-config: the effective configuration, with the torch-* options
   clang-tidy-16 dumps, at the same values.
5. One file through both tools with the same flags (--warnings-as-errors,
   --header-filter, --extra-arg, --extra-arg-before, --export-fixes): the
   same findings, as errors with the [check,-warnings-as-errors] suffix,
   the same exit status, "N warnings treated as errors" after the findings;
   the two --export-fixes files agree, and clang-apply-replacements-16 on
   ours makes the file our --fix makes.
6. --quiet drops the summary line, not the findings or the exit status.
7. --extra-arg and --extra-arg-before with a -p database, and the
   commands docs/usage.md gives for --export-fixes.

LibTorch is parsed by clang-tidy once, and by the CLI a few times (one
--cache-dir, so repeated commands are cache hits).

usage: test_tidy_flags.py <tensor-accountant> <source dir> <build dir>
       <clang-tidy-16> <TensorAccountantTidyModule.so>
       <clang-apply-replacements-16>
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

TOOL, SRC, BUILD, TIDY, MODULE, APPLY = sys.argv[1:7]
TORCH = "/usr/include/torch/csrc/api/include"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(cmd, cwd=None, merge=False):
    return subprocess.run(cmd, capture_output=not merge, text=True, timeout=900, cwd=cwd,
                          stdout=subprocess.PIPE if merge else None,
                          stderr=subprocess.STDOUT if merge else None)


work = tempfile.mkdtemp(prefix="tma-tidy-flags-")
cache = ["--cache-dir", os.path.join(work, "cache")]
tidy = [TIDY, "--load=" + MODULE]

# 1. Unknown options, and the spellings LLVM tools accept.
for arg, suggestion in [("--header-fliter=.*", "--header-filter=.*"),
                        ("--quite", "--quiet"),
                        ("--export-fix=out.yaml", "--export-fixes=out.yaml"),
                        ("-chekcs=-*", "-checks=-*"),
                        ("--hxyz", None), ("--help-me-please", None),
                        ("--zzzzzzzz", None), ("-q", None)]:
    p = run([TOOL, arg, "model.cpp"])
    said = re.search(r"did you mean '([^']*)'", p.stderr)
    check(p.returncode == 2 and "unknown option '%s'" % arg in p.stderr and
          "OVERVIEW" not in p.stdout + p.stderr and
          (said.group(1) if said else None) == suggestion,
          "%s: exit 2, %s:\n%s%s" % (arg, "suggests " + suggestion if suggestion
                                     else "no suggestion", p.stdout, p.stderr))
# --header-filter itself (before, any --h... printed the help and exited 0),
# single dashes, and -p's value in the next argument.
p = run([TOOL, "-checks=-*,torch-reshape-copy", "-header-filter=.*", "-p", work,
         "--list-checks"])
check(p.returncode == 0 and p.stdout == "Enabled checks:\n    torch-reshape-copy\n\n",
      "-checks=, -header-filter= and -p dir parse as LLVM options:\n%s%s" %
      (p.stdout, p.stderr))
p = run([TOOL, "--checks", "-*,torch-redundant-copy", "--list-checks"])
check(p.returncode == 0 and "torch-redundant-copy" in p.stdout,
      "--checks takes '-*,...' from the next argument:\n" + p.stderr)
p = run([TOOL, "--header-filter=(", "model.cpp"])
check(p.returncode == 2 and "--header-filter" in p.stderr,
      "a --header-filter that is no regular expression is a usage error:\n" + p.stderr)

# 2. and 3. Which checks: against clang-tidy-16's own answers.
misspelt = "-*,torch-contigous-copy"
mine = run([TOOL, "--checks=" + misspelt, "--list-checks"])
theirs = run(tidy + ["-checks=" + misspelt, "--list-checks"])
check(theirs.returncode == 1 and mine.returncode == theirs.returncode and
      "did you mean 'torch-contiguous-copy'?" in mine.stderr,
      "a misspelt check enables nothing: exit %d as clang-tidy-16's, and the "
      "nearest check:\n%s" % (theirs.returncode, mine.stderr))
probe = os.path.join(work, "probe.cpp")
with open(probe, "w") as f:
    f.write("int main() { return 0; }\n")
mine = run([TOOL, "--checks=" + misspelt, probe] + cache)
theirs = run(tidy + ["-checks=" + misspelt, probe, "--"])
check(theirs.returncode == 1 and mine.returncode == 1 and
      "no checks enabled" in mine.stderr and "torch-contiguous-copy" in mine.stderr,
      "a misspelt check on a file: exit 1 as clang-tidy-16 (%d), before any "
      "analysis:\n%s" % (theirs.returncode, mine.stderr))
p = run([TOOL, "--checks=-*,torch-qqqq-zzzz-wwww", "--list-checks"])
check(p.returncode == 1 and "torch-qqqq-zzzz-wwww" in p.stderr and
      "did you mean" not in p.stderr,
      "a glob near no check gets no suggestion:\n" + p.stderr)
p = run([TOOL, "--checks=-*,torch-reshape-copy,torch-redundnat-copy", "--list-checks"])
check(p.returncode == 1 and "did you mean 'torch-redundant-copy'?" in p.stderr,
      "a misspelt check beside an enabled one is an error too:\n" + p.stderr)
for globs in ["-*", "-*,torch-*", "-*,torch-reshape-copy", "torch-*,-torch-memory-budget"]:
    mine = run([TOOL, "--checks=" + globs, "--list-checks"])
    theirs = run(tidy + ["-checks=-*," + globs if globs.startswith("torch")
                         else "-checks=" + globs, "--list-checks"])
    check(mine.returncode == theirs.returncode and mine.stdout == theirs.stdout,
          "--list-checks --checks=%s as clang-tidy-16 prints it (exit %d):\n"
          "ours:\n%s%s\ntheirs:\n%s%s" % (globs, theirs.returncode, mine.stdout,
                                         mine.stderr, theirs.stdout, theirs.stderr))
shared = os.path.join(work, "shared")
os.makedirs(shared)
with open(os.path.join(shared, ".clang-tidy"), "w") as f:
    f.write("Checks: '-*,clang-analyzer-*'\n")
shutil.copy(probe, shared)
p = run([TOOL, "--format=json", os.path.join(shared, "probe.cpp")] + cache, cwd=shared)
check(p.returncode == 0 and '"functions"' in p.stdout,
      "a shared .clang-tidy naming only other tools' checks still gives the "
      "report:\n" + p.stderr)

# 4. --dump-config, beside clang-tidy-16's.
conf = os.path.join(work, "conf")
os.makedirs(conf)
with open(os.path.join(conf, ".clang-tidy"), "w") as f:
    f.write("Checks: '-*,torch-reshape-copy,torch-memory-budget'\n"
            "HeaderFilterRegex: 'src/.*'\n"
            "CheckOptions:\n"
            "  torch-reshape-copy.MinBytes: '4096'\n"
            "  tensor-accountant.Assume: 'B=16'\n")
shutil.copy(probe, conf)
mine = run([TOOL, "--dump-config", "--warnings-as-errors=torch-memory-budget",
            "probe.cpp"], cwd=conf)
theirs = run(tidy + ["--dump-config", "--warnings-as-errors=torch-memory-budget",
                     "probe.cpp", "--"], cwd=conf)
try:
    ours_yaml, their_yaml = yaml.safe_load(mine.stdout), yaml.safe_load(theirs.stdout)
except yaml.YAMLError as e:
    ours_yaml = their_yaml = None
    check(False, "--dump-config prints YAML: %s\n%s" % (e, mine.stdout))
if ours_yaml is not None:
    torch_options = {k: v for k, v in their_yaml["CheckOptions"].items()
                     if k.startswith("torch-")}
    check(mine.returncode == 0 and mine.stdout.startswith("---\nChecks:          '") and
          {k: v for k, v in ours_yaml["CheckOptions"].items() if k.startswith("torch-")}
          == torch_options and torch_options["torch-reshape-copy.MinBytes"] == "4096" and
          ours_yaml["CheckOptions"]["tensor-accountant.Assume"] == "B=16" and
          ours_yaml["HeaderFilterRegex"] == their_yaml["HeaderFilterRegex"] == "src/.*" and
          ours_yaml["WarningsAsErrors"] == their_yaml["WarningsAsErrors"] and
          ours_yaml["Checks"].endswith("-*,torch-reshape-copy,torch-memory-budget"),
          "--dump-config matches clang-tidy-16's torch-* options and keys:\nours:\n%s\n"
          "theirs (torch-*): %s" % (mine.stdout, torch_options))
    p = run([TOOL, "--config=" + mine.stdout, "--list-checks"])
    check(p.returncode == 0 and p.stdout.split()[2:] ==
          ["torch-memory-budget", "torch-reshape-copy"],
          "--dump-config's output is a configuration --config reads:\n" + p.stderr)

# 5. One file, both tools, the same flags.
SOURCE = r"""#include <torch/torch.h>
#include "helpers.h"

torch::Tensor reshaped() {
  auto x = torch::randn({4, 8, 16});
  return x.permute({1, 0, 2}).reshape({8, 64});
}

torch::Tensor cloned() {
  auto x = torch::randn({256, 256});
  auto y = (x * 2).clone();
  return y;
}

#if TMA_MODE == 2
torch::Tensor gathered() {
  auto emb = torch::randn({100, 8});
  auto ids = torch::randint(0, 100, {4}, torch::kLong);
  return emb[ids];
}
#endif

#ifdef TMA_LATE
torch::Tensor late() {
  auto ids = torch::randint(0, 10, {4, 8}, torch::device(torch::kCPU));
  return ids;
}
#endif
"""
HEADER = r"""#pragma once
#include <torch/torch.h>
inline torch::Tensor in_header() {
  auto x = torch::randn({4, 8, 16});
  return x.permute({1, 0, 2}).reshape({8, 64});
}
"""
copies = {}
for name in ("a", "b"):
    d = os.path.join(work, name)
    os.makedirs(d)
    for fname, text in (("model.cpp", SOURCE), ("helpers.h", HEADER)):
        with open(os.path.join(d, fname), "w") as f:
            f.write(text)
    copies[name] = os.path.join(d, "model.cpp")
fixes_dir = os.path.join(work, "fixes")
os.makedirs(fixes_dir)
flags = ["--warnings-as-errors=torch-reshape-copy,torch-redundant-copy",
         "--header-filter=.*", "--extra-arg-before=-DTMA_MODE=1",
         "--extra-arg=-DTMA_LATE"]
compile_flags = ["--", "-std=c++17", "-DTMA_MODE=2", "-isystem" + TORCH]
model = copies["a"]
their_fixes = os.path.join(work, "clang-tidy-fixes.yaml")
theirs = run(tidy + ["-checks=-*,torch-*", "--export-fixes=" + their_fixes] + flags +
             [model] + compile_flags)
ours_fixes = os.path.join(fixes_dir, "ours.yaml")
mine = run([TOOL, "--format=diagnostics", "--export-fixes=" + ours_fixes] + cache +
           flags + [model] + compile_flags)

FINDING = re.compile(r"^(/\S+):(\d+):(\d+): (warning|error): (.*)$")


def findings(text):
    return [m.groups() for m in map(FINDING.match, text.splitlines()) if m]


ours_found, their_found = findings(mine.stdout), findings(theirs.stdout)
checks_found = sorted(re.search(r"\[([^\[\],]*)(,-warnings-as-errors)?\]$", f[4]).group(1)
                      for f in ours_found)
check(ours_found == their_found and theirs.returncode == 1 and mine.returncode == 1,
      "the same findings and exit status (1) as clang-tidy-16:\nours (%d):\n%s\n"
      "theirs (%d):\n%s%s" % (mine.returncode, mine.stdout + mine.stderr,
                              theirs.returncode, theirs.stdout, theirs.stderr))
check(checks_found == ["torch-randint-default-dtype", "torch-redundant-copy",
                       "torch-reshape-copy", "torch-tensor-subscript"],
      "--extra-arg-before comes before the command's -DTMA_MODE=2 and --extra-arg "
      "after it; nothing from helpers.h, even with --header-filter=.*: %s" % checks_found)
as_errors = [f for f in ours_found if f[3] == "error"]
check(len(as_errors) == 2 and all(f[4].endswith(",-warnings-as-errors]") for f in as_errors),
      "--warnings-as-errors findings print as clang-tidy's errors:\n" + mine.stdout)
check("2 warnings treated as errors\n" in mine.stderr and
      "2 warnings treated as errors\n" in theirs.stderr,
      "the summary line is clang-tidy-16's:\nours: %s\ntheirs: %s" % (mine.stderr, theirs.stderr))
merged = run([TOOL, "--format=diagnostics"] + cache + flags + [model] + compile_flags,
             merge=True)
lines = merged.stdout.splitlines()
check("2 warnings treated as errors" in lines and
      lines.index("2 warnings treated as errors") >
      max(i for i, l in enumerate(lines) if FINDING.match(l)),
      "the summary comes after the findings on one terminal:\n" + merged.stdout)


def fixes_of(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    out = []
    for d in doc["Diagnostics"]:
        m = d["DiagnosticMessage"]
        out.append((d["DiagnosticName"], d["Level"], m["FileOffset"], m["Message"],
                    sorted((r["Offset"], r["Length"], r["ReplacementText"])
                           for r in m["Replacements"])))
    return doc, sorted(out)


try:
    ours_doc, ours_list = fixes_of(ours_fixes)
    their_doc, their_list = fixes_of(their_fixes)
    check(ours_doc["MainSourceFile"] == their_doc["MainSourceFile"] == model and
          ours_list == their_list and len(ours_list) == 4 and
          all(d["BuildDirectory"] for d in ours_doc["Diagnostics"]),
          "--export-fixes writes what clang-tidy-16 writes:\nours: %s\ntheirs: %s" %
          (ours_list, their_list))
except (OSError, yaml.YAMLError, KeyError) as e:
    check(False, "--export-fixes wrote a clang-tidy fixes file: %r" % e)
p = run([APPLY, fixes_dir])
fixed = run([TOOL, "--fix", "--format=diagnostics"] + cache + flags + [copies["b"]] +
            compile_flags)
with open(model) as f:
    applied = f.read()
with open(copies["b"]) as f:
    fixed_text = f.read()
check(p.returncode == 0 and applied == fixed_text and applied != SOURCE and
      ".contiguous().view({8, 64})" in applied,
      "clang-apply-replacements-16 on --export-fixes makes the file --fix makes "
      "(exit %d, %s):\n--- applied\n%s\n--- --fix\n%s" % (p.returncode, p.stderr,
                                                          applied, fixed_text))

# 6. --quiet: the summary lines go, the findings and the exit status stay.
with open(model, "w") as f:
    f.write(SOURCE)  # the unfixed source again
quiet = run([TOOL, "--quiet", "--format=diagnostics"] + cache + flags + [model] +
            compile_flags)
check(quiet.returncode == 1 and findings(quiet.stdout) == ours_found and
      "treated as error" not in quiet.stderr,
      "--quiet keeps the findings and exit 1, not the summary:\n" + quiet.stderr)

# 7. A -p database: the extra arguments on its commands, and docs/usage.md's
# commands as typed there (from the project's root).
proj = os.path.join(work, "proj")
os.makedirs(os.path.join(proj, "src"))
os.makedirs(os.path.join(proj, "build"))
os.makedirs(os.path.join(proj, "fixes"))
for fname, text in (("model.cpp", SOURCE), ("helpers.h", HEADER)):
    with open(os.path.join(proj, "src", fname), "w") as f:
        f.write(text)
with open(os.path.join(proj, "build", "compile_commands.json"), "w") as f:
    json.dump([{"directory": os.path.join(proj, "build"), "file": "../src/model.cpp",
                "arguments": ["c++", "-std=c++17", "-DTMA_MODE=2", "-isystem" + TORCH,
                              "-c", "../src/model.cpp"]}], f)
p = run([TOOL, "--format=json", "-p", "build", "--extra-arg-before=-DTMA_MODE=1",
         "--extra-arg=-DTMA_LATE", "src/model.cpp"] + cache, cwd=proj)
names = sorted(fn["function"] for fn in json.loads(p.stdout)["functions"]) \
    if p.returncode in (0, 1) and p.stdout.startswith("{") else []
check("gathered" in names and "late" in names and "in_header" not in names,
      "-p's commands get --extra-arg-before first and --extra-arg last: %s\n%s" %
      (names, p.stderr))
p = run([TOOL, "--checks=-*,torch-reshape-copy,torch-redundant-copy",
         "--warnings-as-errors=torch-reshape-copy", "--export-fixes=fixes/model.yaml",
         "-p", "build", "src/model.cpp"] + cache, cwd=proj)
applied = run([APPLY, "fixes"], cwd=proj)
with open(os.path.join(proj, "src", "model.cpp")) as f:
    text = f.read()
check(p.returncode == 1 and "1 warning treated as error\n" in p.stderr and
      applied.returncode == 0 and ".contiguous().view({8, 64})" in text and
      "auto y = (x * 2);" in text,
      "docs/usage.md's --export-fixes and clang-apply-replacements-16 commands "
      "(exit %d, then %d):\n%s%s\n%s" % (p.returncode, applied.returncode, p.stderr,
                                         applied.stderr, text))

shutil.rmtree(work, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: clang-tidy's flags, against clang-tidy-16")
