// Recurrent layers run with a state, as public code runs them (issue 35):
// an LSTM's (h_0, c_0) as a std::tuple, taken apart with std::tie,
// std::get and structured bindings; a GRU's h_0; LSTMCell and GRUCell
// stepping their state. LibTorch checks the state's sizes against
// (num_layers * directions, batch, hidden), a cell's against (batch,
// hidden); the results are fresh tensors of the shapes forward(x) gives.
#include <torch/torch.h>

#include <tuple>

torch::Tensor lstm_with_state() {
  torch::NoGradGuard no_grad;
  torch::nn::Embedding embed(10, 5);
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(5, 7).num_layers(2));
  auto tokens = torch::randint(10, {4, 3});
  auto h0 = torch::zeros({2, 3, 7});
  auto c0 = torch::zeros({2, 3, 7});
  std::tuple<torch::Tensor, torch::Tensor> hx = std::make_tuple(h0, c0);
  torch::Tensor output;
  std::tuple<torch::Tensor, torch::Tensor> state;
  std::tie(output, state) = lstm->forward(embed->forward(tokens), hx);
  auto h_n = std::get<0>(state);
  auto first_output = output.clone(); // a declaration the harness probes
  auto result = lstm->forward(embed->forward(tokens), std::make_tuple(h0, c0));
  auto y = std::get<0>(result);
  auto c_n = std::get<1>(std::get<1>(result));
  auto [again, next] = lstm->forward(y.narrow(2, 0, 5), state);
  auto h_next = std::get<0>(next);
  auto again_output = again.clone();
  return h_next;
}

torch::Tensor bidirectional_lstm_state() {
  torch::NoGradGuard no_grad;
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(5, 4).batch_first(true).bidirectional(true));
  auto x = torch::randn({3, 6, 5});
  auto h0 = torch::randn({2, 3, 4});
  auto c0 = torch::randn({2, 3, 4});
  auto out = lstm->forward(x, std::make_tuple(h0, c0));
  auto seq = std::get<0>(out);
  auto h_n = std::get<0>(std::get<1>(out));
  return seq;
}

torch::Tensor gru_with_state() {
  torch::NoGradGuard no_grad;
  torch::nn::GRU gru(torch::nn::GRUOptions(5, 6).num_layers(2).batch_first(true));
  auto x = torch::randn({3, 4, 5});
  auto h0 = torch::zeros({2, 3, 6});
  torch::Tensor out, h;
  std::tie(out, h) = gru->forward(x, h0);
  auto [out2, h2] = gru->forward(x, h);
  auto first_out = out.clone();
  auto first_h = h.clone();
  auto second_out = out2.clone();
  auto second_h = h2.clone();
  return second_h;
}

torch::Tensor recurrent_cells() {
  torch::NoGradGuard no_grad;
  torch::nn::LSTMCell lstm_cell(5, 7);
  torch::nn::GRUCell gru_cell(torch::nn::GRUCellOptions(5, 6).bias(false));
  auto x = torch::randn({3, 5});
  auto h = torch::zeros({3, 7});
  auto c = torch::zeros({3, 7});
  std::tie(h, c) = lstm_cell->forward(x, std::make_tuple(h, c));
  auto h_step = h.clone();
  auto c_step = c.clone();
  auto first = lstm_cell->forward(x);
  auto h1 = std::get<0>(first);
  auto g = gru_cell->forward(x);
  auto g2 = gru_cell->forward(x, g);
  return g2;
}

// The caller's sizes: the state must be (2, B, H) for LibTorch to go on.
torch::Tensor lstm_state_of(const torch::Tensor& x, const torch::Tensor& h0,
                            const torch::Tensor& c0) {
  torch::NoGradGuard no_grad;
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(5, 3).num_layers(2));
  auto [out, state] = lstm->forward(x, std::make_tuple(h0, c0));
  auto h_n = std::get<0>(state);
  auto output = out.clone();
  return output;
}

torch::Tensor lstm_cell_step(const torch::Tensor& x, const torch::Tensor& h,
                             const torch::Tensor& c) {
  torch::NoGradGuard no_grad;
  torch::nn::LSTMCell cell(4, 6);
  auto [h1, c1] = cell->forward(x, std::make_tuple(h, c));
  auto both = h1 + c1;
  return both;
}
