#!/usr/bin/env python3
"""CUDA host code (issue 35, item 7; it replaced the skip of issue 32, item
10). A file compiled as CUDA (.cu, .cuh, -x cuda, nvcc's -x cu) is parsed
by clang's CUDA front end in host-only mode: host functions are analysed
like any C++, kernel and device function bodies are not, and a kernel
launch hands the kernel its tensors' memory (each may be read and written,
by bytes unknown). With no CUDA Toolkit Clang 16 reads, the tool's own
declarations stand in (CUDA_HOME here names no toolkit, so every run uses
them on every machine). Checked: testdata/cuda/launchers.cu's rows, from
the command line and from a compile database written by nvcc; nvcc's own
flags; a header the declarations lack (a clear error, exit 1, no crash); a
toolkit newer than Clang reads (a note, then the declarations); -x c++;
mixed runs; the language server. Parses LibTorch twice.

usage: test_cuda.py <tensor-accountant> <source dir> <build dir>
"""
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading

TOOL, SRC, BUILD = sys.argv[1:4]
failures = []
tmp = tempfile.mkdtemp(prefix="tma-cuda-")
# No CUDA Toolkit: the tool's declarations, whatever this machine has.
ENV = dict(os.environ, CUDA_HOME=os.path.join(tmp, "no-toolkit"))
ENV.pop("CUDA_PATH", None)
LAUNCHERS = os.path.join(SRC, "testdata", "cuda", "launchers.cu")
CACHE = os.path.join(BUILD, "tests", "driver", "cuda-preamble-cache")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def write(name, text):
    path = os.path.join(tmp, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(args, cwd=tmp, env=ENV, cache=False):
    flags = ["--cache-dir", CACHE] if cache else ["--no-cache"]
    return subprocess.run([TOOL] + flags + args, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def crashed(p):
    return p.returncode < 0 or "Stack dump" in p.stderr or \
        "PLEASE submit a bug report" in p.stderr


def functions(report):
    return {f["function"]: f for f in report.get("functions", [])}


def tensor(fn, name):
    return next((t for t in fn.get("tensors", []) if t["name"] == name), None)


def check_launchers(report, how):
    fns = functions(report)
    names = sorted(fns)
    check("scale_kernel" not in " ".join(names) and
          "add_bias_kernel" not in names and "square" not in names,
          "%s: kernels and device functions are not analysed: %r" % (how, names))
    check({"scale_cuda", "add_bias_fixed", "staged_copy"} <= set(names),
          "%s: the host launchers are analysed: %r" % (how, names))
    fixed = fns.get("add_bias_fixed", {})
    y, bias = tensor(fixed, "y"), tensor(fixed, "bias")
    check(y is not None and y["shape"] == [64, 128] and y["dtype"] == "float32"
          and y["storage_bytes"] == 64 * 128 * 4 and y["device"] == "cuda",
          "%s: y is (64, 128) float32 on cuda, 32768 B: %r" % (how, y))
    check(bias is not None and bias["shape"] == [128] and
          bias["storage_bytes"] == 512,
          "%s: bias is (128), 512 B: %r" % (how, bias))
    launch = [o for o in fixed.get("ops", []) if o.get("op") == "add_bias_kernel<<<>>>"]
    check(len(launch) == 1 and launch[0]["read_bytes"] is None and
          launch[0]["written_bytes"] is None,
          "%s: the launch moves bytes the analysis does not know (null), "
          "never 0: %r" % (how, fixed.get("ops")))
    check(fixed.get("summary", {}).get("unknowns", 0) >= 1,
          "%s: the launch is counted among the unknowns" % how)
    staged = fns.get("staged_copy", {})
    host = tensor(staged, "host")
    check(host is not None and host["shape"] == [32, 32] and
          host["storage_bytes"] == 4096 and host["device"] == "cpu",
          "%s: staged_copy's host buffer is (32, 32), 4096 B: %r" % (how, host))
    # A dispatch macro pastes its lambda once per dtype: a copy that answers
    # exactly as another is listed once, copies that differ each stay.
    listed = [f["function"] for f in report.get("functions", [])]
    inner = "scale_cuda::lambda@L39::lambda@L39"
    check(listed.count(inner) == 1,
          "%s: %s, pasted once per dtype, is listed once: %d times"
          % (how, inner, listed.count(inner)))
    scratch = sorted(tensor(f, "scratch")["storage_bytes"]
                     for f in report.get("functions", [])
                     if f["function"] == "per_type_scratch::lambda@L87::lambda@L87")
    check(scratch == [256, 512],
          "%s: per_type_scratch's float and double copies differ (256 B, "
          "512 B) and both stay: %r" % (how, scratch))
    same = [f for f in report.get("functions", [])
            if f["function"] == "per_type_scratch::lambda@L91::lambda@L91"]
    check(len(same) == 1,
          "%s: the identical copies of lambda@L91 are listed once: %d"
          % (how, len(same)))
    scale = fns.get("scale_cuda", {})
    out = tensor(scale, "out")
    check(out is not None and out["kind"] == "alloc" and out["op"] == "zeros_like",
          "%s: scale_cuda's out is zeros_like(x): %r" % (how, out))


# testdata/cuda/launchers.cu from the command line: no flags, no database.
p = run(["--format=json", LAUNCHERS], cwd=SRC, cache=True)
check(p.returncode == 0 and not crashed(p),
      "launchers.cu exits 0 (got %d)\n%s" % (p.returncode, p.stderr[-3000:]))
report = json.loads(p.stdout) if p.stdout.startswith("{") else {}
check(report.get("failed_files") == [] and "skipped_files" not in report,
      "launchers.cu is neither failed nor skipped: %r" % report.get("failed_files"))
check_launchers(report, "command line")
# docs/cuda.md's command, as it is written there.
p = run(["testdata/cuda/launchers.cu"], cwd=SRC, cache=True)
check(p.returncode == 0 and "add_bias_fixed" in p.stdout and
      "(64, 128)" in p.stdout, "the table lists add_bias_fixed's y")
check("add_bias_kernel<<<>>>  read ?    written ?" in p.stdout,
      "the table's launch row: bytes unknown, as docs/cuda.md shows")

# A compile database written by nvcc (a CMake CUDA project, torch's
# cpp_extension): nvcc's own flags are dropped, its spellings translated.
proj = os.path.join(tmp, "proj")
os.makedirs(os.path.join(proj, "build"))
shutil.copy(LAUNCHERS, os.path.join(proj, "launchers.cu"))
with open(os.path.join(proj, "host.cpp"), "w") as f:
    f.write("void host() {}\n")
b = os.path.join(proj, "build")
with open(os.path.join(b, "compile_commands.json"), "w") as f:
    json.dump([
        {"directory": b, "file": "../launchers.cu",
         "command": "/usr/local/cuda/bin/nvcc -DTORCH_EXTENSION_NAME=ext "
                    "-I../include --std c++17 -c ../launchers.cu -o launchers.o "
                    "--expt-relaxed-constexpr --expt-extended-lambda "
                    "-gencode arch=compute_70,code=sm_70 -gencode=arch=compute_80,code=sm_80 "
                    "-Xcompiler -fPIC --compiler-options '-Wall' -O3 --use_fast_math "
                    "-lineinfo -ftz=true -D__CUDA_NO_HALF_OPERATORS__ "
                    "-Xptxas -v --threads 4 -x cu"},
        {"directory": b, "file": "../host.cpp",
         "arguments": ["c++", "-std=c++17", "-c", "../host.cpp"]},
    ], f)
p = run(["--format=json", "-p", b], cwd=proj, cache=True)
check(p.returncode == 0 and not crashed(p),
      "the nvcc database exits 0 (got %d)\n%s" % (p.returncode, p.stderr[-3000:]))
report = json.loads(p.stdout) if p.stdout.startswith("{") else {}
check("host" in functions(report), "the database's C++ file is analysed too")
check_launchers(report, "-p with nvcc's command")

# Quick cases: no LibTorch header is parsed.
KERNEL = write("kernel.cu", """
__global__ void scale(float *x) { x[threadIdx.x] *= 2; }
__device__ float twice(float v) { return 2 * v; }
__host__ __device__ float both(float v) { return v + 1; }
void launch(float *x, cudaStream_t s) {
  dim3 grid(4), block(256);
  scale<<<grid, block, 0, s>>>(x);
  cudaError_t e = cudaGetLastError();
  cudaStreamSynchronize(s);
  (void)cudaGetErrorString(e);
}
""")
write("kernel.cuh", "__device__ inline float twice(float v) { return 2 * v; }\n"
      "inline void host_helper() {}\n")
PLAIN = write("plain.cpp", "void plain() {}\n")
BROKEN = write("broken.cpp", "void broken() { return 1 }\n")
MISSING = write("missing.cu", "#include <cufft.h>\n__global__ void k() {}\n"
                "void host() { k<<<1, 1>>>(); }\n")

p = run(["--format=json", "kernel.cu"])
r = json.loads(p.stdout) if p.stdout.startswith("{") else {}
check(p.returncode == 0 and sorted(functions(r)) == ["both", "launch"],
      "kernel.cu: the host functions launch and both are analysed, the "
      "kernel and the device function not (exit %d): %r\n%s"
      % (p.returncode, sorted(functions(r)), p.stderr))
check("skipped" not in p.stderr and "error" not in p.stderr,
      "kernel.cu: nothing skipped, no error: %r" % p.stderr)
p = run(["--format=json", "kernel.cuh"])
r = json.loads(p.stdout) if p.stdout.startswith("{") else {}
check(p.returncode == 0 and sorted(functions(r)) == ["host_helper"],
      "a .cuh is CUDA too (exit %d): %r %s" % (p.returncode, r, p.stderr))
for flags in (["-x", "cuda"], ["-xcuda"], ["--language=cuda"]):
    p = run(["--format=json", "plain.cpp", "--", "-std=c++17"] + flags)
    check(p.returncode == 0 and "plain" in functions(json.loads(p.stdout)),
          "plain.cpp with %s is analysed as CUDA (exit %d) %s"
          % (" ".join(flags), p.returncode, p.stderr))
# Host code in a .cu, given -x c++: C++, as before.
HOST = write("host_only.cu", "void host_only() {}\n")
p = run(["--format=json", "host_only.cu", "--", "-std=c++17", "-x", "c++"])
check(p.returncode == 0 and "host_only" in p.stdout,
      "host_only.cu with -x c++ is analysed (exit %d)\n%s" % (p.returncode, p.stderr))

# Mixed: both analysed; something failing elsewhere still exits 1.
p = run(["--format=json", "plain.cpp", "kernel.cu"])
r = json.loads(p.stdout) if p.stdout.startswith("{") else {}
check(p.returncode == 0 and {"plain", "launch"} <= set(functions(r)),
      "a .cpp and a .cu: both analysed, exit 0 (got %d)" % p.returncode)
p = run(["broken.cpp", "kernel.cu"])
check(p.returncode == 1 and not crashed(p), "a broken .cpp and a .cu: exit 1")

# nvcc's -x cu before a .cpp: CUDA (a kernel and a launch would not parse
# as C++), from a database in "arguments" form.
quick = os.path.join(tmp, "quick")
os.makedirs(os.path.join(quick, "build"))
shutil.copy(KERNEL, os.path.join(quick, "kernel_as_cpp.cpp"))
with open(os.path.join(quick, "build", "compile_commands.json"), "w") as f:
    json.dump([{"directory": os.path.join(quick, "build"), "file": "../kernel_as_cpp.cpp",
                "arguments": ["nvcc", "-x", "cu", "-arch", "sm_80", "--std=c++17",
                              "-Xcompiler=-fPIC,-Wall", "-c", "../kernel_as_cpp.cpp",
                              "-o", "k.o"]}], f)
p = run(["--format=json", "-p", os.path.join(quick, "build")], cwd=quick)
r = json.loads(p.stdout) if p.stdout.startswith("{") else {}
check(p.returncode == 0 and sorted(functions(r)) == ["both", "launch"],
      "nvcc -x cu on a .cpp: parsed as CUDA (exit %d): %r\n%s"
      % (p.returncode, sorted(functions(r)), p.stderr))

# A header the declarations lack: that file fails with a clear reason.
p = run(["--format=json", "missing.cu", "plain.cpp"])
r = json.loads(p.stdout) if p.stdout.startswith("{") else {}
check(p.returncode == 1 and not crashed(p),
      "missing.cu: exit 1, no crash (got %d)" % p.returncode)
check("'cufft.h' file not found" in p.stderr and
      "tensor-accountant: note: 'cufft.h' was not found" in p.stderr and
      "own declarations" in p.stderr,
      "missing.cu: clang's error, then a note naming the header and why: %r"
      % p.stderr)
check([os.path.basename(f["file"]) for f in r.get("failed_files", [])]
      == ["missing.cu"] and "plain" in functions(r),
      "missing.cu is a failed file, plain.cpp still analysed: %r" % r)

# A toolkit newer than Clang 16 reads: said once, then the declarations.
kit = os.path.join(tmp, "cuda-13.0")
os.makedirs(os.path.join(kit, "include"))
with open(os.path.join(kit, "include", "cuda_runtime.h"), "w") as f:
    f.write("#error the tool must not read this toolkit\n")
with open(os.path.join(kit, "include", "cuda.h"), "w") as f:
    f.write("#define CUDA_VERSION 13000\n#error not read either\n")
p = run(["kernel.cu"], env=dict(ENV, CUDA_HOME=kit))
check(p.returncode == 0 and
      "CUDA Toolkit at %s (13.0) is newer than Clang 16 reads" % kit in p.stderr,
      "a CUDA 13 toolkit: a note, then the tool's declarations (exit %d): %r"
      % (p.returncode, p.stderr))

# The language server: a .cu is analysed, no diagnostic.
lsp = subprocess.Popen([TOOL, "--lsp", "--no-cache"], cwd=tmp, env=ENV,
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
msgs = queue.Queue()


def reader():
    while True:
        headers = {}
        while True:
            line = lsp.stdout.readline()
            if not line:
                msgs.put(None)
                return
            line = line.decode().rstrip("\r\n")
            if not line:
                break
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        msgs.put(json.loads(lsp.stdout.read(int(headers["content-length"]))))


threading.Thread(target=reader, daemon=True).start()


def send(obj):
    body = json.dumps(obj).encode()
    lsp.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    lsp.stdin.flush()


send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"processId": None, "rootUri": None, "capabilities": {}}})
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
uri = "file://" + KERNEL
send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": {"textDocument": {"uri": uri, "languageId": "cuda-cpp",
                                  "version": 1, "text": open(KERNEL).read()}}})
diags = None
while True:
    try:
        m = msgs.get(timeout=120)
    except queue.Empty:
        break
    if m is None:
        break
    if m.get("method") == "textDocument/publishDiagnostics" and \
            m["params"]["uri"] == uri:
        diags = m["params"]["diagnostics"]
        break
check(diags == [], "LSP: kernel.cu is analysed, no diagnostic: %r" % diags)
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
send({"jsonrpc": "2.0", "method": "exit"})
check(lsp.wait(timeout=60) == 0, "LSP: exit 0")

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
