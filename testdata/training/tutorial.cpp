// The shape of the pytorch-cpp tutorials' training code: the device picked
// by torch::cuda::is_available(), hyper-parameters as constants, a model,
// an optimizer and a loop over epochs (README's example; docs/modules.md).
// Run with --cuda-available=no, as the CPU harness finds it.
//
// Measured by ctest training_differential_cpu (tests/differential).
#include <torch/torch.h>

void train_linear_regression() {
  auto cuda_available = torch::cuda::is_available();
  torch::Device device(cuda_available ? torch::kCUDA : torch::kCPU);

  const int64_t input_size = 64;
  const int64_t output_size = 8;
  const size_t num_epochs = 60;
  const double learning_rate = 0.001;

  auto x_train = torch::randn({512, input_size}, torch::TensorOptions(torch::kFloat).device(device));
  auto y_train = torch::randn({512, output_size}, torch::TensorOptions(torch::kFloat).device(device));

  torch::nn::Linear model(input_size, output_size);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(),
                              torch::optim::SGDOptions(learning_rate).momentum(0.9));

  for (size_t epoch = 0; epoch != num_epochs; ++epoch) {
    auto output = model->forward(x_train);
    auto loss = torch::nn::functional::mse_loss(output, y_train);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
}
