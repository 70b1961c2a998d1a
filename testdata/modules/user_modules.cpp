// User modules the way model files write them (issue 13): a
// torch::nn::Module subclass whose constructor builds its layers, and a
// forward defined out of the class. In forward the layers are the ones the
// constructor builds; the constructor's integer parameters are symbols.
//
// Input shapes and constructor arguments for the differential test:
// testdata/modules/inputs.json.
#include <torch/torch.h>

#include <sstream>

struct TwoLayerNetImpl : torch::nn::Module {
  TwoLayerNetImpl(int64_t input_size, int64_t hidden_size, int64_t num_classes)
      : fc1(input_size, hidden_size), fc2(hidden_size, num_classes) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};
TORCH_MODULE(TwoLayerNet);

torch::Tensor TwoLayerNetImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "x must be (batch, features)");
  auto hidden = fc1->forward(x);
  auto activated = torch::relu(hidden);
  auto logits = fc2->forward(activated);
  auto probabilities = torch::softmax(logits, 1);
  return probabilities;
}

struct SmallConvNetImpl : torch::nn::Module {
  explicit SmallConvNetImpl(int64_t num_classes) {
    conv = register_module(
        "conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).padding(1)));
    head = register_module("head", torch::nn::Linear(8 * 8 * 8, num_classes));
  }
  torch::Tensor forward(torch::Tensor images);

  torch::nn::Conv2d conv{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(SmallConvNet);

torch::Tensor SmallConvNetImpl::forward(torch::Tensor images) {
  TORCH_CHECK(images.dim() == 4 && images.size(1) == 3 && images.size(2) == 16 &&
                  images.size(3) == 16,
              "images must be (N, 3, 16, 16)");
  auto features = conv(images);
  auto pooled = torch::max_pool2d(torch::relu(features), 2);
  auto flat = pooled.view({pooled.size(0), -1});
  auto scores = head(flat);
  return scores;
}

// A forward that calls another method of the same module: encode() sees the
// layers forward sees.
struct AutoencoderImpl : torch::nn::Module {
  AutoencoderImpl(int64_t image_size, int64_t z_dim)
      : enc(image_size, z_dim), dec(z_dim, image_size) {
    register_module("enc", enc);
    register_module("dec", dec);
  }
  torch::Tensor encode(torch::Tensor x);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Linear enc, dec;
};

torch::Tensor AutoencoderImpl::encode(torch::Tensor x) {
  return torch::relu(enc->forward(x));
}

torch::Tensor AutoencoderImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat,
              "x must be (batch, image_size) float");
  auto code = encode(x);
  auto reconstruction = torch::sigmoid(dec->forward(code));
  auto squared_error = (reconstruction - x).pow(2);
  return squared_error;
}

// Modules a function constructs and runs: forward is followed with the
// layers the constructor builds from these arguments (a holder, the Impl
// itself, std::make_shared), a default argument included. (Their forwards
// name no tensor: the harness records named tensors wherever they run.)
struct WideHeadImpl : torch::nn::Module {
  explicit WideHeadImpl(int64_t in_features, int64_t out_features = 6)
      : proj(register_module("proj", torch::nn::Linear(in_features, out_features))) {}
  torch::Tensor forward(torch::Tensor x) { return torch::tanh(proj->forward(x)); }

  torch::nn::Linear proj;
};
TORCH_MODULE(WideHead);

struct PatchClassifierImpl : torch::nn::Module {
  PatchClassifierImpl(int64_t channels, int64_t classes);
  torch::Tensor forward(torch::Tensor images);

  torch::nn::Conv2d conv{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(PatchClassifier);

PatchClassifierImpl::PatchClassifierImpl(int64_t channels, int64_t classes) {
  conv = register_module(
      "conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, channels, 4).stride(4)));
  head = register_module("head", torch::nn::Linear(channels * 4 * 4, classes));
}

torch::Tensor PatchClassifierImpl::forward(torch::Tensor images) {
  return head->forward(torch::relu(conv->forward(images)).flatten(1));
}

torch::Tensor modules_built_and_run() {
  torch::NoGradGuard no_grad;
  PatchClassifier classifier(8, 5);
  auto images = torch::randn({2, 3, 16, 16});
  auto scores = classifier->forward(images);
  WideHeadImpl head(5);
  auto squashed = head.forward(scores);
  auto shared = std::make_shared<WideHeadImpl>(6, 3);
  auto small = shared->forward(squashed);
  WideHead holder(3, 4);
  auto wide = holder->forward(small);
  return wide;
}

// A module printed, copied into a holder from a temporary (`Net net =
// Net(...)`), and whose parameters and gradients are read through it: each
// leaves it as constructed, so its forward is still followed.
torch::Tensor modules_printed_and_inspected() {
  WideHead head = WideHead(4);
  std::ostringstream log;
  log << head;
  auto x = torch::randn({3, 4}, torch::requires_grad());
  auto y = head->forward(x);
  y.sum().backward();
  log << head->proj->weight.sizes() << head->proj->bias.grad();
  torch::nn::Linear probe(4, 2);
  log << probe->weight;
  auto z = probe->forward(x);
  return z;
}

// Methods of a user module besides forward (an autoencoder's encode and
// decode) leave it as constructed when they call nothing on `this` that
// could change it, so they are followed with its construction. One that
// switches the module to eval mode inside is not.
struct CoderImpl : torch::nn::Module {
  CoderImpl(int64_t features, int64_t code)
      : enc(features, code), dec(code, features) {
    register_module("enc", enc);
    register_module("dec", dec);
  }
  torch::Tensor encode(torch::Tensor x) { return torch::relu(enc->forward(x)); }
  torch::Tensor decode(torch::Tensor z) { return torch::sigmoid(dec->forward(z)); }
  torch::Tensor forward(torch::Tensor x) { return decode(encode(x)); }
  torch::Tensor quiet_decode(torch::Tensor z) {
    eval();
    return decode(z);
  }

  torch::nn::Linear enc, dec;
};
TORCH_MODULE(Coder);

torch::Tensor coder_methods() {
  torch::NoGradGuard no_grad;
  Coder coder(6, 3);
  auto x = torch::randn({4, 6});
  auto code = coder->encode(x);
  auto back = coder->decode(code);
  auto round = coder->forward(x);
  return back + round;
}

torch::Tensor coder_switched_inside() {
  torch::NoGradGuard no_grad;
  Coder coder(6, 3);
  auto z = torch::randn({4, 3});
  auto quiet = coder->quiet_decode(z);
  return quiet;
}

// A variational autoencoder written the way tutorials write one: forward
// hands x to a helper method whose Linear fixes its rank (so forward's x is
// a batch of rows too), and reparameterize returns a fresh tensor in
// training and its argument otherwise: the same shape either way, so the
// shape is answered and which tensor it is is not. The helpers name no
// tensors (the harness records every named tensor where it runs).
struct VariationalImpl : torch::nn::Module {
  VariationalImpl(int64_t image_size, int64_t h_dim, int64_t z_dim)
      : hidden(image_size, h_dim), to_mu(h_dim, z_dim), to_log_var(h_dim, z_dim),
        out(z_dim, image_size) {
    register_module("hidden", hidden);
    register_module("to_mu", to_mu);
    register_module("to_log_var", to_log_var);
    register_module("out", out);
  }
  std::pair<torch::Tensor, torch::Tensor> encode(torch::Tensor x) {
    return {to_mu->forward(torch::relu(hidden->forward(x))),
            to_log_var->forward(torch::relu(hidden->forward(x)))};
  }
  torch::Tensor reparameterize(torch::Tensor mu, torch::Tensor log_var) {
    if (is_training())
      return torch::randn_like(mu).mul(log_var.div(2).exp()).add(mu);
    return mu;
  }
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Linear hidden, to_mu, to_log_var, out;
};
TORCH_MODULE(Variational);

torch::Tensor VariationalImpl::forward(torch::Tensor x) {
  auto encoded = encode(x);
  auto mu = encoded.first;
  auto log_var = encoded.second;
  auto z = reparameterize(mu, log_var);
  auto picked = z.size(0) > 2 ? mu : log_var;
  torch::Tensor chosen;
  if (z.size(1) > 2) {
    chosen = mu;
  } else {
    chosen = log_var.exp();
  }
  auto chosen_twice = chosen * 2;
  auto recon = torch::sigmoid(out->forward(z));
  return recon + chosen_twice.sum() + picked.sum();
}

// A sequence classifier whose LSTM depth is a constructor argument (the
// tutorials' RNN): the output and the final states have shapes, h_n with
// num_layers rows; which parameters the layers hold is not listed, so the
// module's parameter bytes are unknown.
struct SequenceClassifierImpl : torch::nn::Module {
  SequenceClassifierImpl(int64_t input_size, int64_t hidden_size, int64_t num_layers,
                         int64_t num_classes);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::LSTM lstm{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(SequenceClassifier);

SequenceClassifierImpl::SequenceClassifierImpl(int64_t input_size, int64_t hidden_size,
                                               int64_t num_layers, int64_t num_classes)
    : lstm(torch::nn::LSTMOptions(input_size, hidden_size).num_layers(num_layers).batch_first(true)),
      fc(hidden_size, num_classes) {
  register_module("lstm", lstm);
  register_module("fc", fc);
}

torch::Tensor SequenceClassifierImpl::forward(torch::Tensor x) {
  auto result = lstm->forward(x);
  auto out = std::get<0>(result);
  auto h_n = std::get<0>(std::get<1>(result));
  auto last = out.index({torch::indexing::Slice(), -1});
  auto logits = fc->forward(last);
  auto depth_mean = h_n.mean(0);
  return logits + depth_mean.sum();
}

// A layer's options read through the member (`head->options.out_features()`,
// a getter) leave the layer as constructed: forward is still followed.
struct OptionsReaderImpl : torch::nn::Module {
  explicit OptionsReaderImpl(int64_t features)
      : head(register_module("head", torch::nn::Linear(features, 2 * features))) {}
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(OptionsReader);

torch::Tensor OptionsReaderImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "x must be (batch, features)");
  auto y = head->forward(x);
  auto width = head->options.out_features();
  auto scaled = y / static_cast<double>(width);
  return scaled;
}

// A module with an empty default constructor beside the one that builds
// its layers (the TORCH_MODULE idiom): forward runs on the layers the
// building one makes, as an object the empty one made throws at its first
// layer (an empty holder).
struct TwoConstructorsImpl : torch::nn::Module {
  TwoConstructorsImpl() {}
  explicit TwoConstructorsImpl(int64_t width) {
    proj = register_module("proj", torch::nn::Linear(width, 2 * width));
  }
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear proj{nullptr};
};
TORCH_MODULE(TwoConstructors);

torch::Tensor TwoConstructorsImpl::forward(torch::Tensor x) {
  auto y = proj->forward(x);
  auto z = torch::relu(y);
  return z;
}

// Not so when a member is built in the class: the default constructor
// builds it too, and which constructor made the object is not known.
struct BuiltInClassImpl : torch::nn::Module {
  BuiltInClassImpl() {}
  explicit BuiltInClassImpl(int64_t width) {
    proj = register_module("proj", torch::nn::Linear(width, 3));
  }
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear proj{4, 3};
};

torch::Tensor BuiltInClassImpl::forward(torch::Tensor x) {
  auto y = proj->forward(x);
  return y;
}

// A user module as a member of another (`Block block;` built by the
// outer constructor from its arguments, in the initializer list or the
// body): the outer forward follows block->forward with the layers that
// construction builds.
struct ScaledBlockImpl : torch::nn::Module {
  ScaledBlockImpl(int64_t in, int64_t out)
      : fc(register_module("fc", torch::nn::Linear(in, out))) {}
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear fc;
};
TORCH_MODULE(ScaledBlock);

torch::Tensor ScaledBlockImpl::forward(torch::Tensor x) {
  auto a = fc->forward(x);
  return a * a;
}

struct NestedBlocksImpl : torch::nn::Module {
  explicit NestedBlocksImpl(int64_t width)
      : first(register_module("first", ScaledBlock(width, 2 * width))) {
    second = register_module("second", ScaledBlock(2 * width, 3));
  }
  torch::Tensor forward(torch::Tensor x);
  ScaledBlock first;
  ScaledBlock second{nullptr};
};

torch::Tensor NestedBlocksImpl::forward(torch::Tensor x) {
  auto h = first->forward(x);
  auto y = second->forward(h);
  auto z = y.sum(1);
  return z;
}

// A module template whose constructor is defined out of the class (as
// pytorch-cpp's ResNetImpl<Block>), made through its holder: only
// LibTorch's holder and std::make_shared call the constructor, so the
// analysis instantiates it itself.
template <typename Tag>
struct TemplatedNetImpl : torch::nn::Module {
  explicit TemplatedNetImpl(int64_t width);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Linear fc{nullptr};
};

template <typename Tag>
TemplatedNetImpl<Tag>::TemplatedNetImpl(int64_t width) {
  fc = register_module("fc", torch::nn::Linear(width, 3));
}

template <typename Tag>
torch::Tensor TemplatedNetImpl<Tag>::forward(torch::Tensor x) {
  return torch::relu(fc->forward(x));
}

template <typename Tag = int>
class TemplatedNet : public torch::nn::ModuleHolder<TemplatedNetImpl<Tag>> {
public:
  using torch::nn::ModuleHolder<TemplatedNetImpl<Tag>>::ModuleHolder;
};

torch::Tensor run_templated_net() {
  TemplatedNet<> net(6);
  auto x = torch::randn({2, 6});
  auto y = net->forward(x);
  auto z = y.sum(0);
  return z;
}
