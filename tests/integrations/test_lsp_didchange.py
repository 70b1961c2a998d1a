#!/usr/bin/env python3
"""The language server analyses while the user types (issue 33): after
didChange, once the edits pause, without didSave; a result a newer edit
overtook is never published, and publishDiagnostics carries the version
analysed.

1. didOpen (version 1) starts the first analysis, a cold LibTorch parse
   (seconds). While it runs ("analysing version 1" in the server's log)
   two quick didChange arrive (versions 2 and 3, each moving the copy down
   a line). The published diagnostics: version 3 only, its finding on
   version 3's line. Version 1's result is dropped (the log says so) and
   version 2 is never analysed (the pause after it was cut short).
2. One more didChange (version 4), no didSave: its diagnostics arrive,
   for version 4's text, and nothing older follows them.
3. Hover while the text is newer than the last analysis says so; didClose
   publishes an empty list; shutdown and exit: status 0.

usage: test_lsp_didchange.py <tensor-accountant>
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client  # noqa: E402

TOOL = os.path.abspath(sys.argv[1])
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


tmp = os.path.realpath(tempfile.mkdtemp(prefix="tma-lsp-didchange-"))
path = os.path.join(tmp, "model.cpp")
uri = "file://" + path


def text(blank_lines):
    """The copy on line 6 + blank_lines (0-based: 5 + blank_lines)."""
    return ("#include <torch/torch.h>\n\nvoid f() {\n" + "\n" * blank_lines +
            "  auto x = torch::randn({64, 32});\n"
            "  auto a = x.transpose(0, 1);\n"
            "  auto b = a.contiguous();\n}\n")


with open(path, "w") as f:
    f.write(text(0))

c = Client(TOOL, ["--cache-dir", os.path.join(tmp, "cache")], tmp, check)
c.initialize(tmp)
c.open(path, text(0), version=1)
c.wait(lambda m: m.get("method") == "window/logMessage" and
       "analysing version 1 of" in m["params"]["message"], "version 1's analysis starts")
for version in (2, 3):
    c.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"text": text(version - 1)}]})
got = c.published(uri, "diagnostics after the changes")
check(got.get("version") == 3,
      "the first diagnostics published are version 3's (got version %s)" % got.get("version"))
lines = [d["range"]["start"]["line"] for d in got["diagnostics"]
         if d.get("code") == "torch-contiguous-copy"]
check(lines == [7], "the copy on version 3's line 8 (0-based 7): %s" % lines)
logs = c.log_lines()
check(any("dropped the analysis of version 1" in line for line in logs),
      "version 1's result, overtaken, is dropped: %s" % logs)
check(not any("analysing version 2 of" in line for line in logs),
      "version 2 is never analysed (the pause after it was cut short): %s" % logs)

# Typing on, no save: version 4 is analysed and published.
c.notify("textDocument/didChange", {
    "textDocument": {"uri": uri, "version": 4},
    "contentChanges": [{"text": text(5)}]})
# Answered at once (the analysis of version 4 waits for the pause), from
# version 3's analysis: x's row, with a note that it is from before.
i = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                     "position": {"line": 8, "character": 7}})
r = c.response(i, "hover before version 4 is analysed")
value = ((r or {}).get("result") or {}).get("contents", {}).get("value", "")
check("| x |" in value and "earlier version" in value,
      "hover on a changed text: the last row, marked as older: %r" % value)
got = c.published(uri, "diagnostics after didChange, no didSave", version=4)
lines = [d["range"]["start"]["line"] for d in got["diagnostics"]
         if d.get("code") == "torch-contiguous-copy"]
check(lines == [10], "didChange without didSave: version 4's line 11: %s" % lines)

c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
closed = c.published(uri, "diagnostics cleared on close")
check(closed["diagnostics"] == [] and "version" not in closed,
      "didClose publishes an empty list: %s" % closed)
check(c.finish() == 0, "shutdown, exit: status 0")

# Every publish for the document, in order: versions never go back.
versions = [m["params"].get("version") for m in c.seen
            if m.get("method") == "textDocument/publishDiagnostics"]
check(versions == [3, 4, None],
      "published versions in order: 3, 4, then the close: %s" % versions)

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print("stderr:", b"".join(c.stderr).decode(errors="replace")[-3000:])
    sys.exit("%d failure(s)" % len(failures))
print("ok: lsp didChange")
