#!/usr/bin/env python3
"""Generates a LibTorch C++ project for bench/scan.sh: N sources in several
modules, each with its own include directory, project headers that include
LibTorch (as real projects do: "model.h" first, <torch/torch.h> inside it),
include blocks that differ from file to file, and a CMake-style
compile_commands.json with absolute paths. Generated, so the benchmark
needs no download and no third-party code.

usage: gen-project.py <files> <output dir> [<LibTorch API include dir>]
"""
import json
import os
import random
import sys

count = int(sys.argv[1])
root = os.path.abspath(sys.argv[2])
torch_api = sys.argv[3] if len(sys.argv) > 3 else \
    "/usr/include/torch/csrc/api/include"
rng = random.Random(14)
modules = ["data", "layers", "train", "eval", "serve"]


def write(path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)
    return full


write("include/project/common.h", """#pragma once
// Project-wide helpers every module uses.
#include <torch/torch.h>

#include <string>

namespace project {
constexpr int64_t kBatch = 32;
constexpr int64_t kHidden = 256;
inline torch::TensorOptions halfOn(torch::Device d) {
  return torch::TensorOptions().dtype(torch::kHalf).device(d);
}
}  // namespace project
""")
write("include/project/layers.h", """#pragma once
#include "project/common.h"

namespace project {
struct Block : torch::nn::Module {
  Block() : fc(register_module("fc", torch::nn::Linear(kHidden, kHidden))) {}
  torch::Tensor forward(torch::Tensor x) { return torch::relu(fc(x)); }
  torch::nn::Linear fc;
};
}  // namespace project
""")
for m in modules:
    guard = m.upper() + "_MODULE_H"
    write("src/%s/include/%s/module.h" % (m, m), """#ifndef %s
#define %s
#include "project/layers.h"

#include <vector>

namespace %s {
std::vector<torch::Tensor> run(const std::vector<torch::Tensor> &xs);
}  // namespace %s
#endif
""" % (guard, guard, m, m))

# Function bodies: the copies the tool exists to find, with shapes that vary
# from file to file.
BODIES = [
    """  auto x = torch::randn({{{a}, {b}, {c}}});
  auto y = x.transpose(1, 2).contiguous();
  auto z = y.reshape({{{a} * {c}, {b}}});
  return z.sum();""",
    """  auto x = torch::randn({{{a}, {b}}}, torch::kHalf);
  auto w = x.to(torch::kFloat);
  auto s = w.slice(1, 0, {half});
  return s.clone();""",
    """  auto x = torch::zeros({{{a}, {b}}});
  auto p = x.permute({{1, 0}});
  auto r = p.reshape({{{a} * {b}}});
  return r;""",
    """  auto q = torch::ones({{{a}, {c}}}, torch::kDouble);
  auto k = torch::ones({{{c}, {b}}}, torch::kDouble);
  auto o = torch::matmul(q, k);
  return o.to(torch::kFloat);""",
    """  auto big = torch::randn({{{a}, {b}, {c}}});
  auto row = big.select(0, 1);
  auto copy = row.contiguous();
  return copy * 2;""",
]

entries = []
for i in range(count):
    m = modules[i % len(modules)]
    style = i % 4
    if style == 0:
        head = '#include "%s/module.h"\n\n#include <iostream>\n' % m
    elif style == 1:
        head = ('// File %d of the %s module.\n#include <torch/torch.h>\n'
                '#include <iomanip>\n\n#include "project/layers.h"\n' % (i, m))
    elif style == 2:
        head = ('#include <vector>\n#include <torch/torch.h>\n\n'
                '#include "project/common.h"\n#include "%s/module.h"\n' % m)
    else:
        head = '#include "project/common.h"\n#include <map>\n#include <random>\n'
    funcs = []
    for f in range(4):
        a, b, c = (rng.choice([2, 4, 8, 16, 32, 64]) for _ in range(3))
        body = BODIES[(i + f) % len(BODIES)].format(a=a, b=b, c=c,
                                                      half=max(1, b // 2))
        funcs.append("torch::Tensor f%d_%d() {\n%s\n}\n" % (i, f, body))
    text = head + "\nnamespace %s {\n\n%s\n}  // namespace %s\n" % (
        m, "\n".join(funcs), m)
    src = write("src/%s/file%02d.cpp" % (m, i), text)
    obj = "CMakeFiles/%s.dir/file%02d.cpp.o" % (m, i)
    entries.append({
        "directory": os.path.join(root, "build"),
        "command": "/usr/bin/c++ -DPROJECT_VERSION=3 -I%s/include -I%s/src/%s/"
                   "include -isystem %s -O2 -g -std=gnu++17 -fPIC -o %s -c %s"
                   % (root, root, m, torch_api, obj, src),
        "file": src,
        "output": obj,
    })
os.makedirs(os.path.join(root, "build"), exist_ok=True)
with open(os.path.join(root, "build", "compile_commands.json"), "w") as f:
    json.dump(entries, f, indent=2)
print(root)
