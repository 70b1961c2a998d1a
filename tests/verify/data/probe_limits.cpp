// The harness's memory limits hold at run time, whatever the prediction
// said (issue 10 item 13). Run these only with --mode cpu and a small
// --max-live-bytes: without the limits they would really allocate.
#include <torch/torch.h>

// catch (...) must not hide an allocation over the limit: the function ends
// at that allocation, so `after` is never made.
void swallows_over_limit() {
  auto small = torch::ones({4});
  try {
    auto huge = torch::ones({1LL << 30});
  } catch (...) {
  }
  auto after = torch::ones({4});
}

// Under the limit nothing is stopped.
void under_limit() {
  auto fits = torch::ones({1024});
}

// Memory that does not come from LibTorch's allocator meets the
// address-space backstop (64 GiB, never touched but the first byte).
void user_allocation_over_limit() {
  auto t = torch::ones({4});
  char *p = new char[size_t(64) << 30];
  p[0] = 1;
  delete[] p;
}
