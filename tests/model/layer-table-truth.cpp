// Prints what LibTorch 1.13 says for the cases of LayerTableTest.cpp (not
// built by the tests: g++ -std=c++17 layer-table-truth.cpp
// -I/usr/include/torch/csrc/api/include -ltorch -ltorch_cpu -lc10).
#include <torch/torch.h>
#include <iostream>
namespace nn = torch::nn;
void params(const char *Name, nn::Module &M) {
  std::cout << Name << " params:";
  for (auto &P : M.named_parameters()) std::cout << " " << P.key() << P.value().sizes();
  std::cout << " buffers:";
  for (auto &B : M.named_buffers()) std::cout << " " << B.key() << B.value().sizes() << B.value().dtype();
  std::cout << "\n";
}
void out(const char *Name, const torch::Tensor &Y) {
  std::cout << Name << " out " << Y.sizes() << " strides " << Y.strides() << " " << Y.dtype() << "\n";
}
int main() {
  nn::Linear fc(784, 500); params("Linear(784,500)", *fc);
  out("Linear fwd [32,784]", fc(torch::randn({32, 784})));
  nn::Linear nb(nn::LinearOptions(4, 8).bias(false)); params("Linear(4,8,nobias)", *nb);
  nn::Conv2d conv(nn::Conv2dOptions(3, 16, 3).stride(2).padding(1)); params("Conv2d(3,16,3)s2p1", *conv);
  out("Conv2d fwd [8,3,32,32]", conv(torch::randn({8, 3, 32, 32})));
  nn::Conv2d gconv(nn::Conv2dOptions(4, 8, {3, 5}).groups(2).bias(false)); params("Conv2d(4,8,{3,5},g2)", *gconv);
  out("Conv2d g fwd [2,4,10,10]", gconv(torch::randn({2, 4, 10, 10})));
  nn::ConvTranspose2d tconv(nn::ConvTranspose2dOptions(16, 8, 4).stride(2).padding(1)); params("ConvT2d(16,8,4)", *tconv);
  out("ConvT2d fwd [2,16,5,5]", tconv(torch::randn({2, 16, 5, 5})));
  nn::Conv1d c1(nn::Conv1dOptions(2, 6, 3).padding(torch::kSame)); params("Conv1d(2,6,3,same)", *c1);
  out("Conv1d same fwd [4,2,9]", c1(torch::randn({4, 2, 9})));
  nn::BatchNorm2d bn(16); params("BatchNorm2d(16)", *bn);
  out("BN2d fwd [4,16,5,5]", bn(torch::randn({4, 16, 5, 5})));
  try { bn(torch::randn({16, 5, 5})); } catch (const c10::Error &E) { std::cout << "BN2d 3D throws: " << E.what_without_backtrace() << "\n"; }
  try { bn(torch::randn({1, 16, 1, 1})); } catch (const c10::Error &E) { std::cout << "BN2d 1 value throws: " << E.what_without_backtrace() << "\n"; }
  nn::BatchNorm1d bn1(nn::BatchNorm1dOptions(6).affine(false)); params("BatchNorm1d(6,noaffine)", *bn1);
  nn::LayerNorm ln(nn::LayerNormOptions({5, 7})); params("LayerNorm({5,7})", *ln);
  out("LN fwd [3,5,7]", ln(torch::randn({3, 5, 7})));
  nn::GroupNorm gn(nn::GroupNormOptions(2, 6)); params("GroupNorm(2,6)", *gn);
  nn::Embedding emb(10, 3); params("Embedding(10,3)", *emb);
  out("Embedding fwd [2,5] long", emb(torch::zeros({2, 5}, torch::kLong)));
  nn::LSTM lstm(nn::LSTMOptions(4, 6).num_layers(2).bidirectional(true)); params("LSTM(4,6,2,bi)", *lstm);
  nn::GRU gru(nn::GRUOptions(3, 5).bias(false)); params("GRU(3,5,nobias)", *gru);
  nn::MaxPool2d mp(nn::MaxPool2dOptions(2)); out("MaxPool2d(2) fwd [1,3,9,8]", mp(torch::randn({1, 3, 9, 8})));
  nn::AvgPool1d ap(nn::AvgPool1dOptions(3).stride(2).padding(1)); out("AvgPool1d(3,s2,p1) fwd [2,4,10]", ap(torch::randn({2, 4, 10})));
  nn::AdaptiveAvgPool2d aap(nn::AdaptiveAvgPool2dOptions({3, 2})); out("AdaptiveAvgPool2d({3,2}) fwd [2,4,7,9]", aap(torch::randn({2, 4, 7, 9})));
  nn::Flatten fl; out("Flatten fwd [2,3,4,5]", fl(torch::randn({2, 3, 4, 5})));
  nn::Unflatten uf(nn::UnflattenOptions(1, {3, 4})); out("Unflatten(1,{3,4}) fwd [2,12,5]", uf(torch::randn({2, 12, 5})));
  nn::Softmax sm(1); out("Softmax(1) fwd [4,6]", sm(torch::randn({4, 6})));
  auto x = torch::randn({4, 6});
  nn::Dropout dr(0.5); dr->eval(); std::cout << "Dropout eval same storage: " << (dr(x).data_ptr() == x.data_ptr()) << "\n";
  dr->train(); std::cout << "Dropout train same storage: " << (dr(x).data_ptr() == x.data_ptr()) << "\n";
  nn::Identity id; std::cout << "Identity same storage: " << (id(x).data_ptr() == x.data_ptr()) << "\n";
  nn::MSELoss mse; out("MSELoss fwd [4,6]", mse(x, x));
  nn::MSELoss msen(nn::MSELossOptions().reduction(torch::kNone)); out("MSELoss none fwd [4,6]", msen(x, x));
  try { nn::Conv2d bad(nn::Conv2dOptions(3, 8, 3).groups(2)); } catch (const c10::Error &E) { std::cout << "Conv2d groups throws: " << E.what_without_backtrace() << "\n"; }
}
