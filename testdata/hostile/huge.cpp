// Hostile corpus, part 4: huge and overflowing shapes.
//
// Sizes are int64 and so are LibTorch's: a product that overflows is an
// error in LibTorch ("Storage size calculation overflowed", "numel ...
// overflow") and must be `throws` or unknown in the report, never a wrapped
// number (issue 10 item 3: `randn({1LL << 40, 1LL << 40})` once said 0 B).
// Most of these throw in LibTorch before anything is allocated; the 4 TiB
// one is left out of the measured truth (it depends on the machine).
#include <torch/torch.h>

void huge_square_overflows() {
  auto x = torch::randn({1LL << 40, 1LL << 40});
}

void huge_cube_float64_overflows() {
  auto x = torch::randn({1 << 20, 1 << 20, 1 << 20}, torch::kFloat64);
}

void huge_bytes_overflow_only() {
  // 2^61 elements fit in int64; 2^61 * 8 bytes do not.
  auto x = torch::zeros({1LL << 61}, torch::kFloat64);
}

void huge_expand_is_a_view() {
  auto a = torch::ones({1, 1});
  auto b = a.expand({1LL << 40, 1LL << 40});
}

void huge_expand_then_contiguous() {
  auto a = torch::ones({1, 1});
  auto b = a.expand({1LL << 40, 1LL << 40});
  auto c = b.contiguous();
}

void huge_expand_then_clone() {
  auto a = torch::ones({1});
  auto b = a.expand({1LL << 62});
  auto c = b.clone();
}

void huge_view_product_wraps_to_numel() {
  // (2^62 + 1) * 4 wraps to 4 in int64: a wrapped product must not make
  // this look like a valid view of 4 elements.
  auto a = torch::ones({4});
  auto b = a.view({(1LL << 62) + 1, 4});
}

void huge_reshape_product_wraps() {
  auto a = torch::ones({4});
  auto b = a.reshape({1LL << 32, 1LL << 32, 4});
}

void huge_empty_dimension() {
  auto x = torch::zeros({0, 1LL << 62});
  auto y = x.t();
}

void huge_negative_dimension() { auto x = torch::zeros({-1}); }

void huge_int32_literal_sizes() {
  // int arithmetic in the source: 1 << 31 is UB in C++ but the compiler
  // folds 1u << 31 fine; here the product is done in int64 by LibTorch.
  int64_t n = 1u << 31;
  auto x = torch::empty({n, n, 4}, torch::kFloat64);
}

void huge_fits_but_too_big_to_run() {
  // 4 TiB: a correct prediction, over any --verify-max-bytes.
  auto x = torch::empty({1LL << 40}, torch::kFloat32);
}

void huge_sum_of_expanded() {
  auto a = torch::ones({1024, 1});
  auto b = a.expand({1024, 1024});
  auto s = b.sum();
}

void huge_matmul_dims_overflow() {
  auto a = torch::ones({1, 1}).expand({1LL << 40, 1});
  auto b = torch::ones({1, 1}).expand({1, 1LL << 40});
  auto c = torch::matmul(a, b);
}
