// Data loaders whose batches the differential test cannot check (a symbol
// for the short last batch) or the analysis does not follow; read by
// tests/symbolic/test_data_loaders.py. Never run.
#include <torch/torch.h>

// 10000 test images in batches of 64: the last has 16, so the batch
// dimension is a symbol, batch.data.size(0), between 1 and 64.
void short_last_batch() {
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("mnist", torch::data::datasets::MNIST::Mode::kTest)
          .map(torch::data::transforms::Stack<>()),
      64);
  for (auto &batch : *loader) {
    auto images = batch.data.flatten(1);
    auto labels = batch.target;
  }
}

// A lambda transform may change anything: not followed.
void lambda_transform() {
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("mnist")
          .map(torch::data::transforms::Lambda<torch::data::Example<>>(
              [](torch::data::Example<> e) { return e; }))
          .map(torch::data::transforms::Stack<>()),
      100);
  for (auto &batch : *loader) {
    auto images = batch.data;
  }
}

// Without Stack<> a batch is a std::vector of examples.
void unstacked() {
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("mnist"), 100);
  for (auto &batch : *loader) {
    auto first = batch[0].data;
  }
}

// A batch size the analysis cannot derive.
void unknown_batch_size(int64_t n) {
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("mnist").map(torch::data::transforms::Stack<>()), n);
  for (auto &batch : *loader) {
    auto images = batch.data;
  }
}
