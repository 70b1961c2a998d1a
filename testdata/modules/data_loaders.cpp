// Data loaders over MNIST: each batch's data and target, stacked. The
// differential test (tests/symbolic/check_symbolic.py) writes a synthetic
// copy of MNIST's four files (the real counts: 60000 training and 10000
// test images) into mnist/ in the harness's working directory.
#include <torch/torch.h>

// The test set's 10000 images in batches of 2500: every batch is full.
void mnist_test_batches() {
  auto dataset = torch::data::datasets::MNIST(
                     "mnist", torch::data::datasets::MNIST::Mode::kTest)
                     .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                     .map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(dataset), 2500);
  torch::nn::Linear fc(784, 10);
  torch::NoGradGuard no_grad;
  for (auto &batch : *loader) {
    auto images = batch.data.view({2500, -1});
    auto labels = batch.target;
    auto logits = fc->forward(images);
    auto predicted = logits.argmax(1);
  }
}

// The training set (MNIST's default mode) in batches of 20000, through
// DataLoaderOptions: 60000 is a multiple, so every batch is full.
void mnist_train_options() {
  const int64_t batch_size = 20000;
  auto loader = torch::data::make_data_loader(
      torch::data::datasets::MNIST("mnist").map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions(batch_size).workers(0));
  for (auto &batch : *loader) {
    auto images = batch.data;
    auto flat = images.flatten(1);
    auto labels = batch.target.to(torch::kFloat);
  }
}

// drop_last: 3000 does not divide 10000, but the short batch is dropped.
void mnist_drop_last() {
  auto dataset = torch::data::datasets::MNIST(
                     "mnist", torch::data::datasets::MNIST::Mode::kTest)
                     .map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(dataset),
      torch::data::DataLoaderOptions().batch_size(3000).drop_last(true));
  for (auto &batch : *loader) {
    auto images = batch.data.squeeze(1);
    auto pooled = torch::max_pool2d(batch.data, 2);
    auto labels = batch.target;
  }
}
