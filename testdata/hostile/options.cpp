// Hostile corpus, part 5: where tensor options come from.
//
// Options kept in a namespace-scope constant, a class member, a local built
// by a constructor (`torch::TensorOptions(torch::kBFloat16)`) or from a
// Device must be followed (issue 10 item 18), like options built inline.
#include <torch/torch.h>

namespace config {
const auto kHalfOptions = torch::TensorOptions().dtype(torch::kHalf);
const torch::TensorOptions kDoubleOptions(torch::kFloat64);
constexpr auto kIndexType = torch::kLong;
} // namespace config

static const torch::TensorOptions kFileOptions =
    torch::TensorOptions().dtype(torch::kInt32).device(torch::kCPU);

struct LayerConfig {
  static inline const torch::TensorOptions options =
      torch::TensorOptions().dtype(torch::kFloat64);
  static constexpr c10::ScalarType kType = torch::kBFloat16;
};

void options_namespace_constant() {
  auto x = torch::zeros({1024}, config::kHalfOptions);
  auto y = torch::ones({1024}, config::kDoubleOptions);
  auto i = torch::zeros({16}, config::kIndexType);
}

void options_file_static() {
  auto x = torch::zeros({1024}, kFileOptions);
}

void options_class_member() {
  auto x = torch::zeros({1024}, LayerConfig::options);
  auto y = torch::zeros({1024}, LayerConfig::kType);
}

void options_constructed_from_dtype() {
  auto x = torch::zeros({1024}, torch::TensorOptions(torch::kBFloat16));
  torch::TensorOptions local(torch::kFloat64);
  auto y = torch::ones({1024}, local);
}

void options_from_device() {
  auto x = torch::zeros({1024}, torch::TensorOptions(torch::Device(torch::kCPU)));
  torch::Device cpu(torch::kCPU);
  auto y = torch::zeros({1024}, torch::TensorOptions(cpu).dtype(torch::kHalf));
  auto z = torch::zeros({1024}, torch::TensorOptions().device(cpu));
}

void options_free_functions() {
  auto x = torch::zeros({1024}, torch::dtype(torch::kHalf).device(torch::kCPU));
  auto y = torch::zeros({1024}, torch::device(torch::kCPU).dtype(torch::kInt8));
}

void options_copied_and_modified() {
  auto base = torch::TensorOptions().dtype(torch::kFloat64);
  auto half = base.dtype(torch::kHalf);
  auto x = torch::zeros({1024}, base);
  auto y = torch::zeros({1024}, half);
}

void options_from_tensor() {
  auto a = torch::zeros({16}, torch::kFloat64);
  auto x = torch::zeros({1024}, a.options());
  auto y = torch::empty_like(a, a.options().dtype(torch::kHalf));
}

void options_reassigned_in_branch() {
  auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  bool half = true;
  if (half)
    opts = opts.dtype(torch::kHalf);
  auto x = torch::zeros({1024}, opts);
}
