// --verify's safety promises (issue 10 items 12-15), one function each;
// tests/differential/verify_safety.py runs the tool on this file. The
// functions leave marks in $TMA_SAFETY_DIR so the test can see what ran.
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

static std::string mark(const char *Name) {
  const char *Dir = std::getenv("TMA_SAFETY_DIR");
  return std::string(Dir ? Dir : ".") + "/" + Name;
}

// Item 14: no tensor work, so --verify must not call it.
void writes_a_file() { std::ofstream(mark("written-by-writes_a_file")) << "called\n"; }

// Item 12: never returns; the functions after it still get their own time.
// Item 15: the test kills the tool while this runs.
void spins() {
  auto t = torch::ones({4});
  std::ofstream(mark("spinning")) << "x\n";
  std::this_thread::sleep_for(std::chrono::hours(1));
}

void after_spin() {
  auto u = torch::ones({8});
}

// Item 13: 4 GiB that catch (...) must not hide from --verify-max-bytes.
void swallows_a_huge_allocation() {
  auto small = torch::ones({4});
  try {
    auto x = torch::ones({1LL << 30});
  } catch (...) {
  }
}
