"""A minimal LSP client over pipes, as an editor drives
`tensor-accountant --lsp`: for the tests that need one (test_discovery.py,
test_lsp_didchange.py). Each message the server sends is kept, in order,
so a test can look at what came before and after another.
"""
import json
import queue
import subprocess
import threading


class Client:
    def __init__(self, tool, args, cwd, check):
        self.check = check
        self.p = subprocess.Popen([tool, "--lsp"] + args, cwd=cwd,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.q = queue.Queue()
        self.seen = []  # every message, in arrival order
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.p.stderr),
                         daemon=True).start()
        self.next_id = 1

    def _read(self):
        out = self.p.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.q.put(None)
                    return
                line = line.decode().rstrip("\r\n")
                if not line:
                    break
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
            body = json.loads(out.read(int(headers["content-length"])))
            self.seen.append(body)
            self.q.put(body)

    def raw(self, body: bytes):
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.raw(json.dumps(msg).encode())

    def request(self, method, params=None):
        i = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        self.raw(json.dumps(msg).encode())
        return i

    def wait(self, pred, what, timeout=600):
        """Next message satisfying pred; others are skipped (but kept in
        self.seen). The timeout only catches a hung server."""
        while True:
            try:
                m = self.q.get(timeout=timeout)
            except queue.Empty:
                self.check(False, "timed out waiting for " + what)
                return None
            if m is None:
                self.check(False, "server closed its output waiting for " + what)
                return None
            if pred(m):
                return m

    def response(self, i, what):
        return self.wait(lambda m: m.get("id") == i and "method" not in m, what)

    def published(self, uri, what, version=None):
        """The next publishDiagnostics for uri (with that version, if
        given): its params."""
        m = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == uri and
                      (version is None or m["params"].get("version") == version),
                      what)
        return m["params"] if m else {"diagnostics": []}

    def log_lines(self):
        return [m["params"]["message"] for m in self.seen
                if m.get("method") in ("window/logMessage", "window/showMessage")]

    def initialize(self, root=None):
        params = {"processId": None, "capabilities": {}}
        if root:
            params["rootUri"] = "file://" + root
        r = self.response(self.request("initialize", params), "initialize")
        self.notify("initialized", {})
        return r

    def open(self, path, text, version=1):
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": "file://" + path, "languageId": "cpp", "version": version,
            "text": text}})

    def finish(self):
        """shutdown, exit: the exit status (None if it hung)."""
        self.response(self.request("shutdown"), "shutdown")
        self.notify("exit")
        try:
            return self.p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None
