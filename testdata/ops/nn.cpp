// Neural-network ops: activations, clamp, masked_fill, tril/triu, dropout,
// comparisons' bool outputs, and their torch::nn::functional spellings.
#include <torch/torch.h>

namespace F = torch::nn::functional;

void activations() {
  auto x = torch::randn({2, 3, 4});
  auto t = x.transpose(1, 2);
  auto a = torch::leaky_relu(x, 0.2);
  auto b = torch::elu(t);
  auto c = torch::silu(t);
  auto d = torch::softplus(x);
  auto e = torch::hardtanh(t, -2, 2);
  auto f = F::relu(t);
  auto g = F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.1));
  auto h = F::silu(x);
  auto i = torch::silu(x.to(torch::kDouble));
  auto j = torch::log_softmax(t, 1);
  auto k = F::log_softmax(x, 2);
  auto l = F::softmax(t, F::SoftmaxFuncOptions(-1));
}

void masks_and_compares() {
  auto x = torch::randn({3, 4});
  auto i = torch::randint(0, 5, {3, 4}, torch::kInt);
  auto m = x.gt(0);
  auto a = x.eq(i);
  auto b = i < 2.5;
  auto c = torch::logical_not(m);
  auto d = x.t().logical_not();
  auto e = x.masked_fill(m, 0.0);
  auto f = x.t().masked_fill(m.t(), -1);
  auto g = torch::masked_fill(x, torch::ones({4}, torch::kBool), 2);
  auto h = torch::randn({4}).masked_fill(m, 1.5);
  auto k = i.masked_fill(m, torch::tensor(3));
}

void masked_fill_int_mask() {
  auto x = torch::randn({3, 4});
  auto bad = x.masked_fill(torch::ones({3, 4}, torch::kInt), 0);
}

void clamps() {
  auto x = torch::randn({3, 4});
  auto i = torch::arange(12).view({3, 4});
  auto a = x.clamp(-1, 1);
  auto b = torch::clamp(x.t(), 0.5);
  auto c = x.clamp_min(0);
  auto d = x.clamp_max(0.5);
  auto e = i.clamp(2, 5);
  auto f = i.clamp(0.5);
  auto g = i.clamp_min(1.5);
  auto h = torch::clamp(x, torch::zeros({4}), torch::ones({3, 1}));
  auto k = x.clamp(c10::nullopt, 2);
  auto l = torch::clip(x, -2, 2);
}

void triangles() {
  auto x = torch::randn({4, 4});
  auto b = torch::randn({2, 3, 3}).transpose(1, 2);
  auto a = torch::tril(x);
  auto c = x.triu(1);
  auto d = b.tril(-1);
  auto e = torch::triu(b);
  auto f = torch::ones({3, 3}, torch::kBool).tril();
}

void tril_of_a_vector() {
  auto v = torch::randn({4});
  auto bad = v.tril();
}

void dropouts() {
  auto x = torch::randn({2, 3, 4});
  auto t = x.transpose(0, 2);
  auto a = torch::dropout(x, 0.5, true);
  auto b = torch::dropout(x, 0.5, false);
  auto c = torch::dropout(t, 0.25, true);
  auto d = torch::dropout(x, 0.0, true);
  auto e = torch::dropout(x, 1.0, true);
  auto f = torch::feature_dropout(x, 0.5, true);
  auto g = F::dropout(x, F::DropoutFuncOptions().p(0.2));
  auto h = F::dropout(x, F::DropoutFuncOptions().p(0.2).training(false));
  auto k = F::dropout(t);
}

void dropout_bad_probability() {
  auto x = torch::randn({2, 3});
  auto bad = torch::dropout(x, 1.5, true);
}

void convolutions() {
  auto x = torch::randn({2, 3, 9, 8});
  auto w = torch::randn({4, 3, 3, 3});
  auto bias = torch::randn({4});
  auto a = torch::conv2d(x, w);
  auto b = torch::conv2d(x, w, bias, 2, 1);
  auto c = torch::conv2d(x, w, {}, {2, 1}, std::vector<int64_t>{0, 1}, 2);
  auto d = torch::conv2d(x, torch::randn({6, 1, 3, 3}), {}, 1, 1, 1, 3);
  auto e = torch::conv2d(x, w, bias, 1, "same");
  auto f = torch::conv2d(x, w, bias, 1, "valid");
  auto g = F::conv2d(x, w, F::Conv2dFuncOptions().stride(2).padding(1));
  auto h = torch::conv2d(x[0], w);
  auto i = torch::conv1d(torch::randn({2, 3, 10}), torch::randn({5, 3, 4}), {}, 3);
  auto k = torch::conv_transpose2d(x, torch::randn({3, 2, 3, 3}), {}, 2, 1, 1);
  auto l = torch::conv2d(torch::randn({1, 6, 5, 5}), torch::randn({4, 3, 1, 1}), {}, 1, 1, 1, 2);
}

void conv_channel_mismatch() {
  auto x = torch::randn({2, 4, 5, 5});
  auto bad = torch::conv2d(x, torch::randn({4, 3, 3, 3}));
}

void poolings() {
  auto x = torch::randn({2, 3, 9, 8});
  auto a = torch::max_pool2d(x, 2);
  auto b = torch::max_pool2d(x, {3, 2}, {2, 2}, 1, 1, true);
  auto c = torch::avg_pool2d(x, 3, 2, 1, true);
  auto d = torch::avg_pool2d(x, 2, {}, 0, false, false);
  auto e = F::max_pool2d(x, F::MaxPool2dFuncOptions(2));
  auto f = F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(2).ceil_mode(true));
  auto g = torch::max_pool1d(torch::randn({2, 3, 11}), 3, 2);
  auto h = torch::avg_pool1d(torch::randn({3, 11}), 4);
  auto i = torch::adaptive_avg_pool2d(x, {3, 2});
  auto k = torch::adaptive_avg_pool2d(x, {1, 1});
  auto l = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(4));
  auto m = torch::adaptive_avg_pool1d(torch::randn({2, 3, 10}), 5);
  auto n = torch::max_pool2d(x[0], 2, 3);
}

void normalisations() {
  auto x = torch::randn({2, 3, 4, 5});
  auto w = torch::randn({3});
  auto mean = torch::zeros({3});
  auto var = torch::ones({3});
  auto a = torch::layer_norm(x, {4, 5});
  auto b = torch::layer_norm(x, {5}, torch::ones({5}), torch::zeros({5}));
  auto c = F::layer_norm(x, F::LayerNormFuncOptions({3, 4, 5}).eps(1e-3));
  auto d = torch::batch_norm(x, w, w, mean, var, false, 0.1, 1e-5, false);
  auto e = torch::batch_norm(x, {}, {}, mean, var, true, 0.1, 1e-5, false);
  auto f = torch::group_norm(x, 3);
  auto g = torch::group_norm(torch::randn({2, 6, 5}), 2, torch::ones({6}), torch::zeros({6}));
  auto h = torch::layer_norm(x.transpose(1, 3), {3});
}

void layer_norm_mismatch() {
  auto x = torch::randn({2, 3, 4});
  auto bad = torch::layer_norm(x, {3});
}

// reflection_pad2d / replication_pad2d (and the 1d ops): the last dims
// padded; a fresh contiguous tensor of self's dtype. A non-contiguous self
// is made contiguous inside the op on the CPU.
void reflection_pad2d_op() {
  auto im = torch::randn({2, 3, 8, 8});
  auto a = torch::reflection_pad2d(im, {1, 2, 3, 4});
  auto b = torch::reflection_pad2d(im.transpose(2, 3), {7, 7, 0, 0});
  auto c = torch::reflection_pad2d(im[0], {1, 1, -2, -2});
  auto d = torch::reflection_pad2d(im.to(torch::kFloat64), {2, 2, 2, 2});
}

void reflection_pad2d_throws_pad() {
  auto im = torch::randn({2, 3, 8, 8});
  auto bad = torch::reflection_pad2d(im, {8, 1, 1, 1});
}

void reflection_pad2d_throws_rank() {
  auto im = torch::randn({8, 8});
  auto bad = torch::reflection_pad2d(im, {1, 1, 1, 1});
}

void reflection_pad1d_op() {
  auto s = torch::randn({2, 3, 8});
  auto a = torch::reflection_pad1d(s, {2, 3});
  auto b = torch::reflection_pad1d(s[0], {7, 0});
}

void replication_pad2d_op() {
  auto im = torch::randn({2, 3, 8, 8});
  auto a = torch::replication_pad2d(im, {10, 2, 3, -4});
  auto b = torch::replication_pad2d(im.permute({0, 2, 3, 1}), {1, 1, 1, 1});
}

void replication_pad2d_throws_dtype() {
  auto im = torch::randn({2, 3, 8, 8}, torch::kFloat16);
  auto bad = torch::replication_pad2d(im, {1, 1, 1, 1});
}

void replication_pad1d_op() {
  auto s = torch::randn({3, 8});
  auto a = torch::replication_pad1d(s, {4, 9});
}

void replication_pad1d_throws_padding_size() {
  auto s = torch::randn({2, 3, 8});
  auto bad = torch::replication_pad1d(s, {1, 1, 1});
}

// F::pad with kReflect / kReplicate reaches reflection_pad1d/2d and
// replication_pad1d/2d through at::_pad_enum (by the padding's length and
// self's rank); at::pad spells the mode as a string.
void pad_functional_op() {
  auto im = torch::randn({2, 3, 8, 8});
  auto a = F::pad(im, F::PadFuncOptions({1, 2, 3, 4}).mode(torch::kReflect));
  auto b = F::pad(im[0], F::PadFuncOptions({2, 2}).mode(torch::kReplicate));
  auto c = at::pad(im, {1, 1, 1, 1}, "reflect");
}

void pad_functional_throws_value() {
  auto im = torch::randn({2, 3, 8, 8});
  auto bad = F::pad(im, F::PadFuncOptions({1, 1, 1, 1}).mode(torch::kReflect).value(1));
}

void pad_functional_throws_rank() {
  auto im = torch::randn({2, 3, 8, 8});
  auto bad = F::pad(im, F::PadFuncOptions({1, 1}).mode(torch::kReflect));
}

// pad's constant mode (constant_pad_nd): each padded size is the input's
// plus its two pads, from the last dim back; the output keeps a
// channels-last input's layout (suggest_memory_format). Nothing transient.
void constant_pad_op() {
  auto im = torch::randn({2, 3, 8, 8});
  auto a = F::pad(im, F::PadFuncOptions({1, 1, 2, 2}));
  auto b = F::pad(im, F::PadFuncOptions({0, 3}).value(-1.5));
  auto c = torch::pad(im.transpose(2, 3), {1, 2, 0, 0, 4, 0});
  auto d = F::pad(im.contiguous(torch::MemoryFormat::ChannelsLast),
                  F::PadFuncOptions({2, 2, 2, 2}));
  auto e = F::pad(torch::randn({5, 7}, torch::kFloat64), F::PadFuncOptions({1, 0, 0, 6}));
}

void constant_pad_throws_length() {
  auto s = torch::randn({4, 4});
  auto bad = F::pad(s, F::PadFuncOptions({1, 1, 1, 1, 1, 1}));
}

// interpolate: nearest and (bi)linear to a size or by a scale factor; the
// generic kernel's index and weight tensors live until it returns, a
// channels-last input's output is channels-last (and its nearest kernel
// makes none).
void interpolate_op() {
  auto im = torch::randn({2, 3, 10, 12});
  auto a = F::interpolate(im, F::InterpolateFuncOptions()
                                  .size(std::vector<int64_t>{20, 18})
                                  .mode(torch::kNearest));
  auto b = F::interpolate(im, F::InterpolateFuncOptions()
                                  .scale_factor(std::vector<double>{2.5, 1.5})
                                  .mode(torch::kNearest));
  auto c = F::interpolate(im, F::InterpolateFuncOptions()
                                  .size(std::vector<int64_t>{7, 30})
                                  .mode(torch::kBilinear)
                                  .align_corners(true));
  auto d = F::interpolate(im.contiguous(torch::MemoryFormat::ChannelsLast),
                          F::InterpolateFuncOptions()
                              .scale_factor(std::vector<double>{2, 2})
                              .mode(torch::kNearest));
  auto e = F::interpolate(im.transpose(2, 3), F::InterpolateFuncOptions()
                                                  .size(std::vector<int64_t>{6, 6})
                                                  .mode(torch::kNearest));
  auto f = F::interpolate(torch::randn({2, 4, 9}), F::InterpolateFuncOptions()
                                                       .size(std::vector<int64_t>{20})
                                                       .mode(torch::kLinear)
                                                       .align_corners(false));
  auto g = torch::upsample_nearest2d(im, {5, 5});
  auto h = torch::upsample_bilinear2d(im, {11, 13}, false);
}

void interpolate_throws_size_and_scale() {
  auto im = torch::randn({1, 1, 4, 4});
  auto bad = F::interpolate(im, F::InterpolateFuncOptions()
                                    .size(std::vector<int64_t>{8, 8})
                                    .scale_factor(std::vector<double>{2, 2}));
}

void interpolate_throws_nearest_align_corners() {
  auto im = torch::randn({1, 1, 4, 4});
  auto bad = F::interpolate(im, F::InterpolateFuncOptions()
                                    .size(std::vector<int64_t>{8, 8})
                                    .align_corners(false));
}
