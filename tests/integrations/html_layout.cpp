// Input for the HTML report's layout checks (test_html_report.py): each
// function brings out one problem the page had (issue 33, item 2).
#include <torch/torch.h>

// The peak at the very first statement, 1.5 GiB and one byte: the axis's
// tick at the peak's level read "1.50 GiB (1610612736 B)" and ran off the
// page's left edge; the peak's label sits at the chart's left edge.
void peak_first() {
  {
    auto big = torch::zeros({1610612737}, torch::kByte);
  }
  auto small = torch::zeros({16}, torch::kByte);
  auto more = torch::zeros({32}, torch::kByte);
}

// A module: its constructor runs no tensor op, so its section has a
// sentence instead of a chart; that sentence wrapped one word per line.
struct Net : torch::nn::Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 256));
    fc2 = register_module("fc2", torch::nn::Linear(256, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    return torch::log_softmax(fc2->forward(x), 1);
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

// Fourteen bands of one size stacked close together: their labels, a line
// of text each in bands about as tall, overlapped.
void many_bands() {
  auto a = torch::zeros({1024, 1024}, torch::kFloat);
  auto b = torch::zeros({1024, 1024}, torch::kFloat);
  auto c = torch::zeros({1024, 1024}, torch::kFloat);
  auto d = torch::zeros({1024, 1024}, torch::kFloat);
  auto e = torch::zeros({1024, 1024}, torch::kFloat);
  auto f = torch::zeros({1024, 1024}, torch::kFloat);
  auto g = torch::zeros({1024, 1024}, torch::kFloat);
  auto h = torch::zeros({1024, 1024}, torch::kFloat);
  auto i = torch::zeros({1024, 1024}, torch::kFloat);
  auto j = torch::zeros({1024, 1024}, torch::kFloat);
  auto k = torch::zeros({1024, 1024}, torch::kFloat);
  auto l = torch::zeros({1024, 1024}, torch::kFloat);
  auto m = torch::zeros({1024, 1024}, torch::kFloat);
  auto n = torch::zeros({1024, 1024}, torch::kFloat);
}

// Bands that step down when the ones below them are freed, with labels
// starting beside the step.
void stepping_bands() {
  auto a = torch::zeros({256, 1024}, torch::kFloat);
  auto b = torch::zeros({256, 1024}, torch::kFloat);
  auto c = torch::zeros({256, 1024}, torch::kFloat);
  a = torch::zeros({1}, torch::kFloat);
  auto d = torch::zeros({256, 1024}, torch::kFloat);
  b = torch::zeros({1}, torch::kFloat);
  auto e = torch::zeros({256, 1024}, torch::kFloat);
}
