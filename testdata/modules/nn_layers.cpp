// Built-in torch::nn layers beyond Linear and Conv (issue 13): activation
// modules, pooling, Flatten/Unflatten/Identity, the norms, Embedding,
// Dropout in training and eval mode, ConvTranspose, layers built inside
// the expression that runs them, and Sequential (in a function and as
// brace-initialised members of a user module, the way
// prabhuomkar/pytorch-cpp writes its ConvNet, here for 3x32x32 images).
// Each forward is the layer's functional op with its parameters.
//
// Input shapes and constructor arguments for the differential test:
// testdata/modules/inputs.json.
#include <torch/torch.h>

torch::Tensor activation_layers() {
  torch::nn::ReLU relu;
  torch::nn::LeakyReLU leaky(torch::nn::LeakyReLUOptions().negative_slope(0.2));
  torch::nn::GELU gelu;
  torch::nn::SiLU silu;
  torch::nn::Sigmoid sigmoid;
  torch::nn::Tanh tanh_layer;
  torch::nn::ReLU6 relu6;
  torch::nn::ELU elu(torch::nn::ELUOptions().alpha(0.5));
  torch::nn::Hardtanh clip(torch::nn::HardtanhOptions().min_val(-2.0).max_val(2.0));
  torch::nn::Softmax softmax(1);
  torch::nn::LogSoftmax log_softmax(1);
  auto x = torch::randn({8, 16});
  auto a = relu(x);
  auto b = leaky->forward(x);
  auto c = gelu(b);
  auto d = silu(c);
  auto e = sigmoid->forward(d);
  auto f = tanh_layer(e);
  auto g = relu6(f);
  auto h = elu(g);
  auto i = clip(h);
  auto probs = softmax(i);
  auto log_probs = log_softmax->forward(i);
  return probs + log_probs + a;
}

torch::Tensor activations_on_a_parameter(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2, "x must be (batch, features)");
  torch::nn::ReLU relu;
  torch::nn::GELU gelu;
  torch::nn::Softmax softmax(-1);
  auto r = relu(x);
  auto g = gelu->forward(r);
  auto p = softmax(g);
  return p;
}

torch::Tensor pooling_layers() {
  torch::nn::MaxPool2d max_pool(torch::nn::MaxPool2dOptions(2));
  torch::nn::AvgPool2d avg_pool(torch::nn::AvgPool2dOptions(3).stride(2).padding(1));
  torch::nn::AdaptiveAvgPool2d global_pool(torch::nn::AdaptiveAvgPool2dOptions({1, 1}));
  torch::nn::MaxPool1d max_pool_1d(torch::nn::MaxPool1dOptions(3).stride(2));
  torch::nn::AvgPool1d avg_pool_1d(2);
  torch::nn::Flatten flatten;
  torch::nn::Unflatten unflatten(torch::nn::UnflattenOptions(1, {4, 4}));
  torch::nn::Identity identity;
  auto images = torch::randn({4, 16, 32, 32});
  auto pooled = max_pool(images);
  auto averaged = avg_pool->forward(pooled);
  auto global = global_pool(averaged);
  auto flat = flatten(global);
  auto grid = unflatten->forward(flat);
  auto same = identity(grid);
  auto signal = torch::randn({2, 8, 50});
  auto peaks = max_pool_1d(signal);
  auto smooth = avg_pool_1d(peaks);
  return same.sum() + smooth.sum();
}

torch::Tensor pooling_on_a_parameter(const torch::Tensor& x) {
  torch::nn::MaxPool2d pool(torch::nn::MaxPool2dOptions(2).stride(2));
  torch::nn::AdaptiveAvgPool2d squeeze(torch::nn::AdaptiveAvgPool2dOptions({1, 1}));
  torch::nn::Flatten flatten;
  auto pooled = pool->forward(x);
  auto squeezed = squeeze(pooled);
  auto features = flatten(squeezed);
  return features;
}

torch::Tensor norm_layers() {
  torch::nn::BatchNorm2d bn2d(16);
  torch::nn::BatchNorm1d bn1d(torch::nn::BatchNorm1dOptions(32).affine(false));
  torch::nn::LayerNorm ln(torch::nn::LayerNormOptions({32}));
  torch::nn::GroupNorm gn(torch::nn::GroupNormOptions(4, 16));
  auto images = torch::randn({4, 16, 8, 8});
  auto normalized = bn2d(images);
  auto grouped = gn->forward(images);
  auto tokens = torch::randn({4, 10, 32});
  auto layer_normed = ln(tokens);
  auto rows = torch::randn({6, 32});
  auto batch_normed = bn1d->forward(rows);
  return normalized.sum() + grouped.sum() + layer_normed.sum() + batch_normed.sum();
}

torch::Tensor norms_in_eval_mode(const torch::Tensor& x) {
  torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(8).eps(1e-3));
  bn->eval();
  auto y = bn(x);
  auto z = torch::relu(y);
  return z;
}

torch::Tensor embedding_layers() {
  torch::nn::Embedding embed(100, 16);
  torch::nn::Embedding padded(torch::nn::EmbeddingOptions(50, 8).padding_idx(0));
  auto ids = torch::randint(0, 50, {4, 10});
  auto vectors = embed(ids);
  auto padded_vectors = padded->forward(ids);
  auto pooled = vectors.mean(1);
  return pooled.sum() + padded_vectors.sum();
}

torch::Tensor dropout_layers() {
  torch::nn::Dropout dropout(0.3);
  torch::nn::Dropout eval_dropout(torch::nn::DropoutOptions(0.5));
  torch::nn::Dropout2d channel_dropout(0.2);
  eval_dropout->eval();
  auto x = torch::randn({4, 8, 6, 6});
  auto dropped = dropout(x);
  auto kept = eval_dropout->forward(x);
  auto channels = channel_dropout(x);
  return dropped + kept + channels;
}

torch::Tensor transposed_convolutions() {
  torch::nn::ConvTranspose2d up(torch::nn::ConvTranspose2dOptions(16, 8, 2).stride(2));
  torch::nn::ConvTranspose1d up_1d(torch::nn::ConvTranspose1dOptions(4, 2, 3).stride(2).padding(1).output_padding(1).bias(false));
  auto features = torch::randn({2, 16, 5, 5});
  auto upsampled = up(features);
  auto sequence = torch::randn({3, 4, 7});
  auto longer = up_1d->forward(sequence);
  return upsampled.sum() + longer.sum();
}

torch::Tensor temporary_layers(const torch::Tensor& x) {
  auto pooled = torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2))->forward(x);
  auto activated = torch::nn::ReLU()(pooled);
  auto projected = torch::nn::Linear(8, 4)(activated);
  return projected;
}

torch::Tensor sequential_layers() {
  torch::nn::Sequential mlp(torch::nn::Linear(4, 8), torch::nn::ReLU(),
                            torch::nn::Dropout(0.5), torch::nn::Linear(8, 2));
  torch::nn::Sequential head(torch::nn::Linear(2, 3), torch::nn::Softmax(1));
  mlp->eval();
  auto x = torch::randn({5, 4});
  auto hidden = mlp->forward(x);
  auto probs = head->forward(hidden);
  return probs;
}

struct ConvNetImpl : torch::nn::Module {
  explicit ConvNetImpl(int64_t num_classes) : fc(8 * 8 * 32, num_classes) {
    register_module("layer1", layer1);
    register_module("layer2", layer2);
    register_module("fc", fc);
  }
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential layer1{
      torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 5).stride(1).padding(2)),
      torch::nn::BatchNorm2d(16),
      torch::nn::ReLU(),
      torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2))};
  torch::nn::Sequential layer2{
      torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 5).stride(1).padding(2)),
      torch::nn::BatchNorm2d(32),
      torch::nn::ReLU(),
      torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2))};
  torch::nn::Linear fc;
};
TORCH_MODULE(ConvNet);

torch::Tensor ConvNetImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 4 && x.size(1) == 3 && x.size(2) == 32 && x.size(3) == 32, "x must be (N, 3, 32, 32)");
  auto out = layer1->forward(x);
  out = layer2->forward(out);
  out = out.view({-1, 8 * 8 * 32});
  auto scores = fc->forward(out);
  return scores;
}

struct TextClassifierImpl : torch::nn::Module {
  TextClassifierImpl(int64_t vocab_size, int64_t embed_dim, int64_t num_classes)
      : embed(vocab_size, embed_dim),
        norm(torch::nn::LayerNormOptions({embed_dim})),
        dropout(0.1),
        head(embed_dim, num_classes) {
    register_module("embed", embed);
    register_module("norm", norm);
    register_module("dropout", dropout);
    register_module("head", head);
  }
  torch::Tensor forward(torch::Tensor tokens);

  torch::nn::Embedding embed;
  torch::nn::LayerNorm norm;
  torch::nn::Dropout dropout;
  torch::nn::Linear head;
};
TORCH_MODULE(TextClassifier);

torch::Tensor TextClassifierImpl::forward(torch::Tensor tokens) {
  TORCH_CHECK(tokens.dim() == 2, "tokens must be (batch, length)");
  auto vectors = embed(tokens);
  auto normed = norm->forward(vectors);
  auto pooled = normed.mean(1);
  auto regularized = dropout(pooled);
  auto logits = head(regularized);
  return logits;
}

torch::Tensor classifier_head_in_eval(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == 32, "x must be (N, 32)");
  torch::nn::Sequential head(torch::nn::Linear(32, 16), torch::nn::BatchNorm1d(16),
                             torch::nn::ReLU(), torch::nn::Dropout(0.2),
                             torch::nn::Linear(16, 4));
  head->train(false);
  auto logits = head->forward(x);
  auto probs = torch::softmax(logits, 1);
  auto top = probs.argmax(1);
  return top;
}

torch::Tensor norms_on_a_parameter(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 3 && x.size(1) == 8, "x must be (N, 8, L)");
  torch::nn::BatchNorm1d bn(8);
  torch::nn::GroupNorm gn(torch::nn::GroupNormOptions(2, 8).affine(false));
  torch::nn::Dropout dropout(torch::nn::DropoutOptions().p(0.25));
  auto normalized = bn->forward(x);
  auto grouped = gn(normalized);
  auto dropped = dropout(grouped);
  auto channels_last = dropped.transpose(1, 2);
  return channels_last;
}

torch::Tensor token_embeddings(const torch::Tensor& ids) {
  TORCH_CHECK(ids.dim() == 2, "ids must be (batch, length)");
  torch::nn::Embedding embed(torch::nn::EmbeddingOptions(100, 32));
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({32}).eps(1e-6));
  torch::nn::Linear to_vocab(32, 100);
  auto vectors = embed(ids);
  auto normed = norm(vectors);
  auto logits = to_vocab(normed);
  auto log_probs = torch::nn::LogSoftmax(-1)(logits);
  auto flat = log_probs.view({-1, 100});
  return flat;
}

torch::Tensor upsampling_block(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4 && x.size(1) == 8, "x must be (N, 8, H, W)");
  torch::nn::Sequential up(
      torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(8, 4, 2).stride(2)),
      torch::nn::BatchNorm2d(4), torch::nn::ReLU(),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(4, 4, 3).padding(1)));
  auto y = up->forward(x);
  auto pooled = torch::nn::AvgPool2d(torch::nn::AvgPool2dOptions(2))(y);
  auto skip = pooled + torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 4, 1))(x);
  return skip;
}

struct MlpImpl : torch::nn::Module {
  MlpImpl(int64_t in_features, int64_t hidden, int64_t out_features)
      : body(torch::nn::Linear(in_features, hidden), torch::nn::ReLU(),
             torch::nn::Linear(hidden, hidden), torch::nn::GELU()),
        out(hidden, out_features) {
    register_module("body", body);
    register_module("out", out);
  }
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential body;
  torch::nn::Linear out;
};
TORCH_MODULE(Mlp);

torch::Tensor MlpImpl::forward(torch::Tensor x) {
  auto features = body->forward(x);
  auto scores = out(features);
  auto probs = torch::nn::Softmax(1)(scores);
  return probs;
}

// Dropout whose p is a constructor argument: whatever p is, forward gives
// a tensor of its input's shape and dtype (its input itself when p == 0 or
// in eval mode), so the shape is answered and whether it copies is not.
struct DropHeadImpl : torch::nn::Module {
  DropHeadImpl(int64_t features, double p) : fc(features, features), drop(p) {
    register_module("fc", fc);
    register_module("drop", drop);
  }
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Linear fc;
  torch::nn::Dropout drop;
};
TORCH_MODULE(DropHead);

torch::Tensor DropHeadImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "x must be (N, features)");
  auto h = fc->forward(x);
  auto dropped = drop->forward(h);
  auto scaled = dropped * 2;
  return scaled;
}

// Layers a helper of the file builds (conv3x3 in ResNets): its return
// expression is read with its parameters bound to the call's arguments.
// The stride is the block's constructor argument, so the output's spatial
// sizes are (H - 1) / stride + 1.
torch::nn::Conv2d conv3x3(int64_t in_channels, int64_t out_channels, int64_t stride = 1) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in_channels, out_channels, 3)
                               .stride(stride)
                               .padding(1)
                               .bias(false));
}

struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(int64_t in_channels, int64_t out_channels, int64_t stride)
      : conv1(conv3x3(in_channels, out_channels, stride)),
        bn1(out_channels),
        conv2(conv3x3(out_channels, out_channels)),
        bn2(out_channels) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("bn2", bn2);
  }
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
};
TORCH_MODULE(BasicBlock);

torch::Tensor BasicBlockImpl::forward(torch::Tensor x) {
  auto out = torch::relu(bn1->forward(conv1->forward(x)));
  auto second = bn2->forward(conv2->forward(out));
  auto pooled = torch::adaptive_avg_pool2d(second, {1, 1});
  return pooled;
}

torch::Tensor helper_built_layers() {
  torch::NoGradGuard no_grad;
  torch::nn::Conv2d stem = conv3x3(3, 8, 2);
  auto image = torch::randn({2, 3, 9, 9});
  auto features = stem(image);
  torch::nn::Conv2d keep = conv3x3(8, 4);
  auto refined = keep->forward(features);
  return refined;
}

// LSTM and GRU (torch/csrc/api/src/nn/modules/rnn.cpp): the output is laid
// out (seq, batch, D*H) and transposed when batch_first; h_n is (D*layers,
// batch, H). Their parameters: w_ih, w_hh and two biases per layer and
// direction.
torch::Tensor recurrent_layers() {
  torch::NoGradGuard no_grad;
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(5, 7).num_layers(2).batch_first(true));
  auto x = torch::randn({3, 4, 5});
  auto out = std::get<0>(lstm->forward(x));
  auto last = out.index({torch::indexing::Slice(), -1});
  torch::nn::GRU gru(torch::nn::GRUOptions(5, 6).bidirectional(true));
  auto seq = torch::randn({4, 3, 5});
  auto gru_out = std::get<0>(gru->forward(seq));
  auto h_n = std::get<1>(gru->forward(seq));
  torch::nn::LSTM plain(5, 8);
  auto plain_out = std::get<0>(plain->forward(seq));
  auto flat = plain_out.contiguous();
  torch::nn::GRU stacked(torch::nn::GRUOptions(5, 4).num_layers(3).bias(false).batch_first(true));
  auto stacked_out = std::get<0>(stacked->forward(x));
  auto state = std::get<1>(plain->forward(seq));
  auto h_last = std::get<0>(state);
  auto c_last = std::get<1>(std::get<1>(lstm->forward(x)));
  return last;
}

// A GRU whose depth is the caller's: h_n has 2 * layers rows (two
// directions); its parameters are not listed.
torch::Tensor gru_of_depth(const torch::Tensor& seq, int64_t layers) {
  torch::NoGradGuard no_grad;
  torch::nn::GRU gru(torch::nn::GRUOptions(5, 4).num_layers(layers).bidirectional(true));
  auto result = gru->forward(seq);
  auto out = std::get<0>(result);
  auto h_n = std::get<1>(result);
  auto last_layer = h_n.narrow(0, h_n.size(0) - 2, 2);
  return out.sum() + last_layer.sum();
}

// Loss modules (torch/csrc/api/src/nn/modules/loss.cpp): forward(input,
// target) is the functional loss with the module's options; Mean and Sum
// write the 0-d result into the unreduced loss's storage where ATen does.
torch::Tensor loss_modules() {
  auto pred = torch::randn({4, 10}, torch::requires_grad());
  auto target = torch::randn({4, 10});
  auto labels = torch::randint(10, {4});
  torch::nn::MSELoss criterion;
  auto mse = criterion(pred, target);
  torch::nn::CrossEntropyLoss ce;
  auto xent = ce(pred, labels);
  torch::nn::L1Loss l1(torch::nn::L1LossOptions().reduction(torch::kSum));
  auto summed = l1->forward(pred, target);
  torch::nn::MSELoss unreduced{torch::nn::MSELossOptions(torch::kNone)};
  auto per_element = unreduced(pred, target);
  torch::nn::BCEWithLogitsLoss bce;
  auto logits_loss = bce(pred, target.sigmoid());
  torch::nn::NLLLoss nll;
  auto log_probs = pred.log_softmax(1);
  auto nll_loss = nll(log_probs, labels);
  torch::nn::SmoothL1Loss smooth;
  auto smooth_loss = smooth(pred, target);
  auto total = mse + xent + summed + logits_loss + nll_loss + smooth_loss;
  total.backward();
  return per_element;
}

// ReLU with inplace(true) is torch::relu_(input): its output is its input,
// changed in place, inside a Sequential (no buffer for it) or called alone.
torch::Tensor relu_in_place() {
  torch::nn::Sequential seq(torch::nn::Linear(4, 8), torch::nn::ReLU(torch::nn::ReLUOptions().inplace(true)),
                     torch::nn::Linear(8, 2));
  auto x = torch::randn({3, 4});
  auto y = seq->forward(x);
  torch::nn::ReLU act(torch::nn::ReLUOptions(true));
  auto h = torch::randn({5, 2});
  auto z = act(h);
  auto w = act->forward(h.t());
  return w;
}

// The rank of forward()'s input, from the layer a Sequential member's
// constructor builds first by a statement of its body (an assignment, or
// the first push_back): Conv2d's batch is 4-d, stated as `x.dim() == 4`.
struct BodyBuiltBlockImpl : torch::nn::Module {
  torch::nn::Sequential layers;
  BodyBuiltBlockImpl(int64_t channels) {
    this->layers = torch::nn::Sequential(
        torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, channels, 3).padding(1)),
        torch::nn::ReLU());
    register_module("layers", this->layers);
  }
  torch::Tensor forward(torch::Tensor x);
};

torch::Tensor BodyBuiltBlockImpl::forward(torch::Tensor x) {
  auto out = this->layers->forward(x);
  auto skip = x * 2;
  auto sum = out + skip;
  return sum;
}

// A run-time integer local named like a constructor argument is not that
// argument's symbol (`width` in forward() is 3 here, whatever the module
// was built with): it stays unknown rather than borrow the name.
struct LocalNamedLikeArgImpl : torch::nn::Module {
  torch::nn::Linear fc{nullptr};
  LocalNamedLikeArgImpl(int64_t width) : fc(width, 2) { register_module("fc", fc); }
  torch::Tensor forward(torch::Tensor x);
};

torch::Tensor LocalNamedLikeArgImpl::forward(torch::Tensor x) {
  std::vector<int64_t> picked(3);
  auto width = static_cast<int64_t>(picked.size());
  auto y = fc->forward(x);
  auto pad = torch::zeros({width, 2});
  return y;
}
