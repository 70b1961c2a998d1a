#!/usr/bin/env python3
"""Drives `tensor-accountant --lsp` over pipes, as an editor would.

Server 1 (default LibTorch flags): initialize, initialized, bad requests
(malformed JSON, 200 KB of nesting, unknown method, invalid params: each
answered, the server keeps serving), didOpen of a document whose editor text differs from the
file on disk (the editor's text is what is analysed), didChange and at
once didSave (the changed text is analysed; analysis while typing, without
a save, is test_lsp_didchange.py's),
hover on a tensor name (its table row), codeAction (the fix-it as a quick
fix), a non-C++ document and a non-file URI (no analysis, no crash),
shutdown, exit (status 0).

Server 2 (-p with a broken compile command): a request before initialize
(-32002), didOpen gets one diagnostic saying the file did not compile.

usage: test_lsp.py <tensor-accountant>
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lsp_client  # noqa: E402

TOOL = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


class Client(lsp_client.Client):
    """The shared client (lsp_client.py), uncached: each test here parses."""

    def __init__(self, args, cwd):
        super().__init__(TOOL, ["--no-cache"] + args, cwd, check)

    def diagnostics(self, uri, what):
        return self.published(uri, what)["diagnostics"]


tmp = tempfile.mkdtemp(prefix="tma-lsp-")
path = os.path.join(tmp, "model.cpp")
uri = "file://" + path
# On disk: nothing to report. In the editor: a copy and a randint.
with open(path, "w") as f:
    f.write("#include <torch/torch.h>\nvoid f() {}\n")
TEXT = """#include <torch/torch.h>

void f() {
  auto x = torch::randn({64, 32});
  auto a = x.transpose(0, 1);
  auto b = a.contiguous();
  auto ids = torch::randint(0, 10, {8}, torch::device(torch::kCPU));
}
"""
CHANGED = TEXT.replace("void f() {\n", "void f() {\n  // moved down a line\n")

c = Client([], tmp)
i = c.request("initialize", {"processId": None, "rootUri": "file://" + tmp,
                             "capabilities": {}})
r = c.response(i, "initialize")
caps = r["result"]["capabilities"] if r else {}
check(caps.get("hoverProvider") is True, "hoverProvider")
check(caps.get("textDocumentSync", {}).get("change") == 1, "full sync")
check(caps.get("textDocumentSync", {}).get("save") is not None, "save")
check("codeActionProvider" in caps, "codeActionProvider")
c.notify("initialized", {})

# Bad requests: answered with JSON-RPC errors, and the server keeps going.
c.raw(b'{"jsonrpc": "2.0", "id": 99, "method": ')  # truncated JSON
r = c.wait(lambda m: "error" in m and m.get("id") is None, "parse error")
check(r and r["error"]["code"] == -32700, "malformed JSON -> -32700")
i = c.request("textDocument/definitelyNotAMethod", {})
r = c.response(i, "unknown method")
check(r and r["error"]["code"] == -32601, "unknown method -> -32601")
i = c.request("textDocument/hover", {"textDocument": {"uri": uri}})
r = c.response(i, "hover without position")
check(r and r["error"]["code"] == -32602, "missing position -> -32602")
c.raw(b'[1, 2, 3]')
r = c.wait(lambda m: "error" in m and m.get("id") is None, "invalid request")
check(r and r["error"]["code"] == -32600, "non-object message -> -32600")
# 200 KB of nesting (issue 10, item 10): the recursive JSON parser
# overflowed the stack; now refused before parsing, and the server lives.
c.raw(b'{"jsonrpc": "2.0", "id": 98, "params": ' + b'[' * 100000 + b']' * 100000 + b'}')
r = c.wait(lambda m: "error" in m and m.get("id") is None, "deep JSON refused")
check(r and r["error"]["code"] == -32700 and "nested more than" in r["error"]["message"],
      "deeply nested JSON -> -32700 saying why: %s" % r)
i = c.request("textDocument/definitelyNotAMethod", {})
r = c.response(i, "a request after the deep message")
check(r and r["error"]["code"] == -32601, "the server still answers after deep JSON")

c.notify("textDocument/didOpen", {"textDocument": {
    "uri": uri, "languageId": "cpp", "version": 1, "text": TEXT}})
diags = c.diagnostics(uri, "diagnostics after didOpen")
by_code = {d["code"]: d for d in diags}
check("torch-contiguous-copy" in by_code, "didOpen: the editor's text is "
      "analysed (contiguous copy found): %s" % [d["code"] for d in diags])
d = by_code.get("torch-contiguous-copy")
if d:
    check(d["source"] == "tensor-accountant", "source")
    check(d["severity"] == 2, "severity warning")
    check(d["range"]["start"] == {"line": 5, "character": 13},
          "range of contiguous(): %s" % d["range"])
    rel = d.get("relatedInformation", [])
    check(rel and rel[0]["location"]["uri"] == uri and
          rel[0]["location"]["range"]["start"]["line"] == 4 and
          "transpose" in rel[0]["message"], "note as relatedInformation: %s" % rel)
    check("8 KiB" in d["message"], "bytes in the message: " + d["message"])

c.notify("textDocument/didChange", {
    "textDocument": {"uri": uri, "version": 2},
    "contentChanges": [{"text": CHANGED}]})
c.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
diags = c.diagnostics(uri, "diagnostics after didSave")
by_code = {d["code"]: d for d in diags}
d = by_code.get("torch-contiguous-copy")
check(d and d["range"]["start"]["line"] == 6,
      "didSave analyses the changed text (finding moved to line 7)")
r_d = by_code.get("torch-randint-default-dtype")
check(r_d is not None, "randint finding present")

# Hover on `b` where it is used... and declared: its table row.
i = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                     "position": {"line": 6, "character": 8}})
r = c.response(i, "hover")
value = (r or {}).get("result", {}) or {}
value = value.get("contents", {}).get("value", "")
check("| b |" in value and "(32, 64)" in value and "float32" in value and
      "8 KiB" in value and "copy (contiguous)" in value,
      "hover shows b's row: %r" % value)
i = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                     "position": {"line": 1, "character": 0}})
r = c.response(i, "hover on nothing")
check(r and r.get("result") is None, "hover off a tensor -> null")

# Code action for the randint line: the fix-it as a WorkspaceEdit.
line = r_d["range"]["start"]["line"] if r_d else 7
i = c.request("textDocument/codeAction", {
    "textDocument": {"uri": uri},
    "range": {"start": {"line": line, "character": 0},
              "end": {"line": line, "character": 0}},
    "context": {"diagnostics": [r_d] if r_d else []}})
r = c.response(i, "codeAction")
actions = (r or {}).get("result") or []
check(len(actions) == 1 and actions[0]["kind"] == "quickfix",
      "one quick fix: %s" % actions)
if actions:
    edits = actions[0]["edit"]["changes"][uri]
    lines = CHANGED.split("\n")
    new = lines[line]
    for e in sorted(edits, key=lambda e: -e["range"]["start"]["character"]):
        check(e["range"]["start"]["line"] == line == e["range"]["end"]["line"],
              "edit on the randint line")
        s, t = e["range"]["start"]["character"], e["range"]["end"]["character"]
        new = new[:s] + e["newText"] + new[t:]
    check("dtype(at::kLong)" in new, "the fix asks for kLong: " + new)

# Not C++, not a file: no analysis, no crash.
md_uri = "file://" + os.path.join(tmp, "README.md")
c.notify("textDocument/didOpen", {"textDocument": {
    "uri": md_uri, "languageId": "markdown", "version": 1, "text": "# hi\n"}})
check(c.diagnostics(md_uri, "non-C++ document") == [], "non-C++: no diagnostics")
c.notify("textDocument/didOpen", {"textDocument": {
    "uri": "untitled:Untitled-1", "languageId": "cpp", "version": 1,
    "text": "int main() {}\n"}})
check(c.diagnostics("untitled:Untitled-1", "untitled document") == [],
      "untitled: no diagnostics")

i = c.request("shutdown")
r = c.response(i, "shutdown")
check(r is not None and r.get("result") is None and "error" not in r,
      "shutdown -> null")
c.notify("exit")
try:
    rc = c.p.wait(timeout=30)
except subprocess.TimeoutExpired:
    c.p.kill()
    rc = None
check(rc == 0, "exit after shutdown -> status 0 (got %s)" % rc)

# ---- server 2: a broken compile command -----------------------------------
broken = os.path.join(tmp, "broken")
os.makedirs(broken)
bpath = os.path.join(broken, "b.cpp")
with open(bpath, "w") as f:
    f.write("int main() { return 0; }\n")
with open(os.path.join(broken, "compile_commands.json"), "w") as f:
    json.dump([{"directory": broken, "file": bpath,
                "arguments": ["clang++", "-std=c++17", "--no-such-flag",
                              "-c", bpath]}], f)
c2 = Client(["-p", broken], tmp)
i = c2.request("textDocument/hover", {"textDocument": {"uri": "file://" + bpath},
                                      "position": {"line": 0, "character": 0}})
r = c2.response(i, "request before initialize")
check(r and r["error"]["code"] == -32002, "before initialize -> -32002")
i = c2.request("initialize", {"processId": None, "capabilities": {}})
c2.response(i, "initialize 2")
c2.notify("initialized", {})
c2.notify("textDocument/didOpen", {"textDocument": {
    "uri": "file://" + bpath, "languageId": "cpp", "version": 1,
    "text": "int main() { return 0; }\n"}})
diags = c2.diagnostics("file://" + bpath, "broken command")
check(len(diags) == 1 and "did not compile" in diags[0]["message"],
      "broken compile command -> one clear diagnostic: %s" % diags)
c2.p.stdin.close()  # end of stream without shutdown: status 1, no crash
try:
    rc = c2.p.wait(timeout=30)
except subprocess.TimeoutExpired:
    c2.p.kill()
    rc = None
check(rc == 1, "end of input without shutdown -> status 1 (got %s)" % rc)

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print("server 1 stderr:", b"".join(c.stderr).decode(errors="replace")[-3000:])
    sys.exit("%d failure(s)" % len(failures))
print("ok: lsp")
