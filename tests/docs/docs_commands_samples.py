"""The sandbox's sample project for the documented commands
(test_docs_commands.py): a model file with one finding, with and without
<torch/torch.h>, a CMake project around it, and a compiler launcher that
skips compiling it.
"""

SAMPLE_ATEN = """\
// A user's model file for the documented commands (tests/docs). It includes
// only <ATen/core/Tensor.h>: clang-tidy has no cache, so the commands that
// lint this file cost a few seconds each instead of a <torch/torch.h> parse.
#include <ATen/core/Tensor.h>

at::Tensor transposed_copy(const at::Tensor &x) {
  auto y = x.t().contiguous();
  return y;
}
"""

SAMPLE_TORCH = """\
// A user's model file for the documented commands (tests/docs).
#include <torch/torch.h>

torch::Tensor transposed_copy() {
  auto x = torch::randn({64, 128});
  auto y = x.t().contiguous();
  return y;
}
"""

SAMPLE_CMAKE = """\
# A user's project for the documented commands (tests/docs).
cmake_minimum_required(VERSION 3.16)
project(docs_sample CXX)
add_library(model OBJECT src/model.cpp)
target_include_directories(model SYSTEM PRIVATE /usr/include/torch/csrc/api/include)
set_target_properties(model PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
"""

# CMAKE_CXX_COMPILER_LAUNCHER for the build action: the lint is under test,
# not the compiler; for the sample it leaves an empty object where the
# compiler would write one (CMake's own compiler checks compile for real).
SKIP_COMPILE = """\
#!/bin/sh
case " $* " in
  *"/src/model.cpp "*) ;;
  *) exec "$@" ;;
esac
out=
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out=$2; fi
  shift
done
[ -n "$out" ] && : > "$out"
exit 0
"""
