// Hostile corpus, part 7: objects that hold tensors. A tuple with an int,
// a c10::optional or a struct keeps the tensors it is given as long as it
// lives, whichever way it is made (an initializer, a call, an assignment),
// which the analysis does not follow: the totals are unknown, never short
// of the tensor they keep.
#include <torch/torch.h>

#include <tuple>

void tuple_keeps_its_tensor() {
  auto x = torch::randn({8, 32});
  auto t = std::make_tuple(torch::sigmoid(x), 1);
  auto after = torch::randn({32, 32});
}

void tuple_assigned_later() {
  auto x = torch::randn({8, 32});
  std::tuple<torch::Tensor, int> t;
  t = std::make_tuple(torch::sigmoid(x), 1);
  auto after = torch::randn({32, 32});
}

void optional_keeps_its_tensor() {
  auto x = torch::randn({8, 32});
  c10::optional<torch::Tensor> o = torch::sigmoid(x);
  auto after = torch::randn({32, 32});
}

struct Boxed {
  torch::Tensor t;
  int k;
};
static Boxed box(torch::Tensor a) { return Boxed{a, 1}; }

void struct_from_a_call_keeps_its_tensor() {
  auto x = torch::randn({8, 32});
  Boxed b = box(torch::sigmoid(x));
  auto after = torch::randn({32, 32});
}

