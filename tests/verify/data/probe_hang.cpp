// A function that never returns, then one that the deadline leaves unrun.
#include <torch/torch.h>
#include <chrono>
#include <thread>

void hangs() {
  auto t = torch::ones({2}, torch::device(torch::kCUDA));
  std::this_thread::sleep_for(std::chrono::hours(1));
}

void after_hang() {
  auto u = torch::ones({1}, torch::device(torch::kCUDA));
}
