#!/usr/bin/env python3
"""LSP framing under hostile input (issue 32, item 9): a header block the
server cannot use (no Content-Length, a length that is no number, negative,
too big to parse or over the limit, two different lengths, a header line
that is no header or is too long, a header without its blank line, raw
garbage, a short length) is skipped and logged (stderr and
window/logMessage), and the next valid message is answered: before, one
such block left the reader out of step and nothing after it was answered.
Valid spellings (lower-case header names, LF line endings, stray blank
lines, a Content-Type header) are read as messages.

Each case writes its bad bytes, then one request with a fresh id, and
waits for that id's answer. Then didOpen of a small C++ file (no LibTorch
include: nothing to parse but the file) gets its publishDiagnostics, and
shutdown/exit ends the server with status 0.

usage: test_lsp_framing.py <tensor-accountant>
"""
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading

TOOL = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


tmp = tempfile.mkdtemp(prefix="tma-lsp-framing-")
p = subprocess.Popen([TOOL, "--lsp", "--no-cache"], cwd=tmp,
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
messages = queue.Queue()
stderr = []


def read_stdout():
    out = p.stdout
    while True:
        headers = {}
        while True:
            line = out.readline()
            if not line:
                messages.put(None)
                return
            line = line.decode().rstrip("\r\n")
            if not line:
                break
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        messages.put(json.loads(out.read(int(headers["content-length"]))))


threading.Thread(target=read_stdout, daemon=True).start()
threading.Thread(target=lambda: stderr.extend(p.stderr), daemon=True).start()


def send(data: bytes):
    p.stdin.write(data)
    p.stdin.flush()


def framed(obj, header=b"Content-Length"):
    body = json.dumps(obj).encode()
    return header + b": %d\r\n\r\n" % len(body) + body


next_id = [100]


def request(method, params=None):
    next_id[0] += 1
    msg = {"jsonrpc": "2.0", "id": next_id[0], "method": method}
    if params is not None:
        msg["params"] = params
    return next_id[0], msg


def wait(pred, what, timeout=120):
    """The next message satisfying pred; the messages skipped on the way."""
    seen = []
    while True:
        try:
            m = messages.get(timeout=timeout)
        except queue.Empty:
            check(False, "timed out waiting for " + what)
            return None, seen
        if m is None:
            check(False, "server closed its output waiting for " + what)
            return None, seen
        if pred(m):
            return m, seen
        seen.append(m)


def logged_skip(seen):
    return any(m.get("method") == "window/logMessage" and
               "skipped it" in m["params"]["message"] for m in seen)


# A request answered whatever the state: an unknown method (-32601).
def answered_after(name, bad: bytes, expect_skip_log=True, initialize=False):
    i, msg = request("initialize" if initialize else "tma/noSuchMethod",
                     {"processId": None, "rootUri": None, "capabilities": {}}
                     if initialize else None)
    send(bad + framed(msg))
    r, seen = wait(lambda m: m.get("id") == i and "method" not in m,
                   "the answer after " + name)
    check(r is not None, name + ": the next request is answered")
    if expect_skip_log:
        check(logged_skip(seen), name + ": the skipped block is logged "
              "(window/logMessage)")
    return r


BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tma/lost"}).encode()

# The first message of all: a bad block, then initialize.
r = answered_after("no Content-Length before initialize",
                   b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + BODY,
                   initialize=True)
check(r and "capabilities" in r.get("result", {}), "initialize answered")
send(framed({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

cases = [
    ("a block without Content-Length, body run into the next header",
     b"X-Other: 1\r\n\r\n" + BODY),
    ("a block without Content-Length and without a body", b"X-Other: 1\r\n\r\n"),
    ("an unparsable length", b"Content-Length: abc\r\n\r\n" + BODY),
    ("an empty length", b"Content-Length:\r\n\r\n" + BODY),
    ("a negative length", b"Content-Length: -5\r\n\r\n" + BODY),
    ("a length with a sign", b"Content-Length: +5\r\n\r\n" + BODY),
    ("a hexadecimal length", b"Content-Length: 0x10\r\n\r\n" + BODY),
    ("a length in exponent form", b"Content-Length: 1e3\r\n\r\n" + BODY),
    ("a length too big for 64 bits",
     b"Content-Length: 99999999999999999999999999\r\n\r\n" + BODY),
    ("a length over the 256 MiB limit",
     b"Content-Length: 300000000\r\n\r\n" + BODY),
    ("two different lengths",
     b"Content-Length: 5\r\nContent-Length: 7\r\n\r\n" + BODY),
    ("a header line that is no header", b"hello there\r\n\r\n" + BODY),
    ("a header line of 10 KB", b"X-Long: " + b"A" * 10000 + b"\r\n\r\n" + BODY),
    ("a body without the blank line after its header",
     b"Content-Length: %d\r\n" % len(BODY) + BODY),
    ("garbage bytes", bytes(range(256)) + b"\r\n\r\n\x00\xff{}\n\n"),
    ("garbage with no newline at all", b"\x01\x02garbage{[}]" * 50),
    ("a skipped body that quotes a header in a string",
     b"X-Other: 1\r\n\r\n" + json.dumps(
         {"jsonrpc": "2.0", "method": "x",
          "params": {"text": "Content-Length: 12\r\n\r\n"}}).encode()),
]
for name, bad in cases:
    answered_after(name, bad)

# A length shorter than its body: the short body is no JSON (-32700), what
# is left of it is skipped, and the next message is answered.
i, msg = request("tma/noSuchMethod")
send(b"Content-Length: 10\r\n\r\n" + BODY + framed(msg))
r, seen = wait(lambda m: m.get("id") == i and "method" not in m,
               "the answer after a short length")
check(r is not None, "a short length: the next request is answered")
check(any(m.get("error", {}).get("code") == -32700 for m in seen),
      "a short length: its body is a parse error")

# Valid spellings are messages, not bad blocks.
for name, header, sep in [("lower-case header name", b"content-length", b"\r\n"),
                          ("LF line endings", b"Content-Length", b"\n")]:
    i, msg = request("tma/noSuchMethod")
    body = json.dumps(msg).encode()
    send(b"\r\n\n" + header + b": %d" % len(body) + sep +
         b"Content-Type: application/vscode-jsonrpc; charset=utf-8" + sep + sep + body)
    r, seen = wait(lambda m: m.get("id") == i and "method" not in m, name)
    check(r and r.get("error", {}).get("code") == -32601,
          name + ": read as a message (-32601 for its unknown method)")
    check(not logged_skip(seen), name + ": nothing skipped")

# After all that, a document is still analysed.
path = os.path.join(tmp, "plain.cpp")
with open(path, "w") as f:
    f.write("void f() {}\n")
uri = "file://" + path
send(b"Content-Length: nope\r\n\r\n" + framed(
    {"jsonrpc": "2.0", "method": "textDocument/didOpen",
     "params": {"textDocument": {"uri": uri, "languageId": "cpp", "version": 1,
                                 "text": "void f() {}\n"}}}))
r, _ = wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri, "didOpen's diagnostics")
check(r is not None and r["params"]["diagnostics"] == [],
      "didOpen after a bad block: diagnostics published (none)")

i, msg = request("shutdown")
send(framed(msg))
wait(lambda m: m.get("id") == i, "shutdown")
send(framed({"jsonrpc": "2.0", "method": "exit"}))
try:
    rc = p.wait(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    rc = None
check(rc == 0, "exit status 0 after shutdown and exit (got %r)" % rc)
log = b"".join(stderr).decode(errors="replace")
check(log.count("skipped it") >= len(cases),
      "each skipped block is on stderr (%d lines)" % log.count("skipped it"))

if failures:
    print("\n".join(log.splitlines()[-40:]))
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok: %d hostile framings, each followed by an answered message" %
      (len(cases) + 2))
