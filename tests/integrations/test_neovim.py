#!/usr/bin/env python3
"""The Neovim configuration docs/integrations/editors.md documents, run for
real (issue 33): the Lua block under "## Neovim" is the whole init.lua of
Debian's Neovim (0.7.2 on Debian 12), started headless in a subdirectory
(proj/src) of a project whose build/ holds the compile_commands.json the
file needs (a define and an include directory). tensor-accountant is on
PATH, as the block expects. Neovim waits until our diagnostics arrive
(vim.diagnostic.get) and writes them out; the test checks the finding
made with the database's flags (8 KiB: 64 rows from the header, 32
columns from the define). Then, in the same session, an edit without a
save (nvim_buf_set_lines, which sends didChange) moves the copy down two
lines, and the diagnostics follow it.

Skipped (exit 77) when nvim is not installed (scripts/install-deps.sh
installs it).

usage: test_neovim.py <tensor-accountant> <source dir>
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOOL, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
NVIM = shutil.which("nvim")
if not NVIM:
    print("skipped: nvim is not installed (apt-get install neovim)")
    sys.exit(77)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


with open(os.path.join(SRC, "docs/integrations/editors.md")) as f:
    doc = f.read()
section = doc[doc.index("## Neovim"):]
section = section[:section.index("\n## ", 1)]
blocks = re.findall(r"```lua\n(.*?)```", section, re.S)
if not check(len(blocks) == 1, "editors.md has one Lua block under Neovim"):
    sys.exit(1)

tmp = os.path.realpath(tempfile.mkdtemp(prefix="tma-neovim-"))
proj = os.path.join(tmp, "proj")
src = os.path.join(proj, "src")
for d in ("src", "include", "build", ".git", "bin", "home", "cache"):
    os.makedirs(os.path.join(proj if d not in ("bin", "home", "cache") else tmp, d))
with open(os.path.join(proj, "include/sizes.h"), "w") as f:
    f.write("#pragma once\nconstexpr long kRows = 64;\n")
with open(os.path.join(src, "model.cpp"), "w") as f:
    f.write("""#include <torch/torch.h>
#include "sizes.h"
#ifndef MODEL_COLS
#error "MODEL_COLS comes from the build's compile command"
#endif
void f() {
  auto x = torch::randn({kRows, MODEL_COLS});
  auto a = x.transpose(0, 1);
  auto b = a.contiguous();
}
""")
with open(os.path.join(proj, "build/compile_commands.json"), "w") as f:
    json.dump([{"directory": os.path.join(proj, "build"),
                "file": os.path.join(src, "main.cpp"),
                "arguments": ["c++", "-std=c++17", "-I" + os.path.join(proj, "include"),
                              "-DMODEL_COLS=32", "-c", os.path.join(src, "main.cpp")]}], f)
init = os.path.join(tmp, "init.lua")
with open(init, "w") as f:
    f.write(blocks[0])
# The documented block runs `tensor-accountant`: this build's, by PATH.
os.symlink(TOOL, os.path.join(tmp, "bin", "tensor-accountant"))
out = os.path.join(tmp, "diagnostics.json")

# Waits (only to catch a hang: the first analysis parses LibTorch) for our
# diagnostics, records them, edits without saving, waits for the moved
# finding, records again, quits.
script = """
local function ours()
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.source == "tensor-accountant" then
      table.insert(found, { lnum = d.lnum, code = d.code, message = d.message })
    end
  end
  return found
end
local function copy_line()
  for _, d in ipairs(ours()) do
    if d.code == "torch-contiguous-copy" then return d.lnum end
  end
  return nil
end
local record = { errmsg = vim.v.errmsg }
if record.errmsg ~= "" then
  -- The config failed (an API this Neovim lacks): no server will come.
  vim.fn.writefile({ vim.fn.json_encode(record) }, "%s")
  vim.cmd("qall!")
end
vim.wait(600000, function() return copy_line() ~= nil end, 100)
record.opened = ours()
record.clients = #vim.lsp.buf_get_clients(0)
vim.api.nvim_buf_set_lines(0, 5, 5, false, { "", "" })
vim.wait(600000, function() return copy_line() == 10 end, 100)
record.edited = ours()
record.modified = vim.bo.modified
vim.fn.writefile({ vim.fn.json_encode(record) }, "%s")
vim.cmd("qall!")
""" % (out, out)
lua = os.path.join(tmp, "check.lua")
with open(lua, "w") as f:
    f.write(script)

env = dict(os.environ, PATH=os.path.join(tmp, "bin") + os.pathsep + os.environ["PATH"],
           HOME=os.path.join(tmp, "home"), XDG_CACHE_HOME=os.path.join(tmp, "cache"),
           XDG_CONFIG_HOME=os.path.join(tmp, "home"), XDG_DATA_HOME=os.path.join(tmp, "home"),
           XDG_STATE_HOME=os.path.join(tmp, "home"))
p = subprocess.run([NVIM, "--headless", "-u", init, "model.cpp",
                    "-c", "luafile " + lua],
                   cwd=src, env=env, capture_output=True, text=True, timeout=1800,
                   stdin=subprocess.DEVNULL)
check(p.returncode == 0, "nvim exits 0 (rc %d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
record = {}
if check(os.path.exists(out), "nvim wrote the diagnostics"):
    with open(out) as f:
        record = json.loads(f.read())
check(record.get("errmsg") == "", "the config runs without an error: %s"
      % record.get("errmsg"))
check(record.get("clients") == 1, "one client attached to the buffer: %s" % record)
opened = record.get("opened", [])
check(any(d["code"] == "torch-contiguous-copy" and d["lnum"] == 8 and
          "8 KiB" in d["message"] for d in opened),
      "on open: the copy on line 9 with the database's flags: %s" % opened)
edited = record.get("edited", [])
check(record.get("modified") is True and
      any(d["code"] == "torch-contiguous-copy" and d["lnum"] == 10 for d in edited),
      "after an unsaved edit: the copy on line 11: %s" % record)
if failures:
    log = os.path.join(tmp, "home", "nvim", "lsp.log")
    for candidate in (log, os.path.join(tmp, "cache", "nvim", "lsp.log")):
        if os.path.exists(candidate):
            with open(candidate) as f:
                print("lsp.log:", f.read()[-4000:])
shutil.rmtree(tmp, ignore_errors=True)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok: neovim")
