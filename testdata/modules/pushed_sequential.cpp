// A torch::nn::Sequential member whose layers the constructor adds with
// push_back (issue 35), some only when a constructor argument says so, as
// application code builds its blocks. The member is the Sequential of the
// layers pushed, in order, named "0", "1", ...; a push_back under a
// condition the analysis cannot decide, in a loop, or outside the
// constructor leaves it unknown, with the reason.
//
// Input shapes and constructor arguments for the differential test:
// testdata/modules/inputs.json.
#include <torch/torch.h>

// Pushed at the top level of the constructor's body.
struct PushedStackImpl : torch::nn::Module {
  torch::nn::Sequential sq;
  PushedStackImpl(int64_t in, int64_t hidden) {
    sq->push_back(torch::nn::Linear(in, hidden));
    sq->push_back(torch::nn::ReLU());
    sq->push_back(torch::nn::Linear(hidden, 2));
    register_module("sq", sq);
  }
  torch::Tensor forward(torch::Tensor x);
};
TORCH_MODULE(PushedStack);

torch::Tensor PushedStackImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "x must be (batch, features)");
  auto y = sq->forward(x);
  return y;
}

// Layers pushed only when the constructor's flags say so. Analysed on its
// own, forward does not know BN or SiLU: the member is unknown, and says
// which condition it could not decide.
struct ConvUnitImpl : torch::nn::Module {
  torch::nn::Sequential sq;
  ConvUnitImpl(const size_t in_nc, const size_t out_nc, const size_t kernel,
               const bool BN, const bool SiLU, const bool bias,
               const bool downsample = false) {
    this->sq->push_back(torch::nn::Conv2d(
        torch::nn::Conv2dOptions(in_nc, out_nc, kernel).padding(kernel / 2).bias(bias)));
    if (BN) {
      this->sq->push_back(torch::nn::BatchNorm2d(out_nc));
    }
    if (SiLU)
      this->sq->push_back(torch::nn::SiLU());
    else
      this->sq->push_back(torch::nn::Tanh());
    if (downsample && !BN)
      this->sq->push_back(torch::nn::AvgPool2d(2));
    else if (downsample)
      this->sq->push_back(torch::nn::MaxPool2d(2));
    register_module("ConvUnit", this->sq);
  }
  torch::Tensor forward(torch::Tensor x);
};
TORCH_MODULE(ConvUnit);

torch::Tensor ConvUnitImpl::forward(torch::Tensor x) {
  return this->sq->forward(x);
}

// Built by an outer module with literal flags: both ways of each branch.
struct ConvStackImpl : torch::nn::Module {
  explicit ConvStackImpl(int64_t width) {
    first = register_module("first", ConvUnit(3, width, 3, /*BN=*/true, /*SiLU=*/true,
                                              /*bias=*/false, /*downsample=*/true));
    second = register_module("second", ConvUnit(width, 4, 1, /*BN=*/false,
                                                /*SiLU=*/false, /*bias=*/true));
  }
  torch::Tensor forward(torch::Tensor x);
  ConvUnit first{nullptr};
  ConvUnit second{nullptr};
};

torch::Tensor ConvStackImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 4, "x must be (N, 3, H, W)");
  auto h = first->forward(x);
  auto y = second->forward(h);
  auto z = y.sum(1);
  return z;
}

// Built by a free function with literal arguments.
torch::Tensor conv_unit_literal() {
  ConvUnit unit(3, 5, 3, /*BN=*/false, /*SiLU=*/false, /*bias=*/true,
                /*downsample=*/true);
  auto x = torch::randn({2, 3, 6, 6});
  auto y = unit->forward(x);
  auto z = y.mean();
  return z;
}

// An integer condition on a constructor argument, and a member assigned a
// Sequential before layers are pushed onto it.
struct HeadedImpl : torch::nn::Module {
  torch::nn::Sequential model{nullptr};
  HeadedImpl(int64_t in, int64_t classes, int64_t extra) {
    this->model = torch::nn::Sequential(torch::nn::Linear(in, 6), torch::nn::Tanh());
    if (extra > 0) {
      this->model->push_back(torch::nn::Linear(6, 6));
      this->model->push_back(torch::nn::ReLU());
    } else {
      this->model->push_back(torch::nn::Dropout(0.5));
    }
    this->model->push_back(torch::nn::Linear(6, classes));
    if (extra > 0)
      this->model->push_back(torch::nn::Linear(classes, classes + extra));
    register_module("model", this->model);
  }
  torch::Tensor forward(torch::Tensor x);
};
TORCH_MODULE(Headed);

torch::Tensor HeadedImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "x must be (batch, features)");
  auto logits = model->forward(x);
  return torch::softmax(logits, 1);
}

torch::Tensor headed_literal() {
  Headed with_extra(4, 3, 1);
  Headed without_extra(4, 5, 0);
  auto x = torch::randn({3, 4});
  auto a = with_extra->forward(x);
  auto b = without_extra->forward(x);
  auto s = a.sum(1) + b.sum(1);
  return s;
}

// Pushed in a loop: how many layers is not followed.
struct RepeatedImpl : torch::nn::Module {
  torch::nn::Sequential layers;
  RepeatedImpl(int64_t width, int64_t depth) {
    for (int64_t k = 0; k < depth; ++k)
      layers->push_back(torch::nn::Linear(width, width));
    register_module("layers", layers);
  }
  torch::Tensor forward(torch::Tensor x);
};

torch::Tensor RepeatedImpl::forward(torch::Tensor x) {
  auto y = layers->forward(x);
  return y;
}

// Pushed again by another method, after the construction: which layers
// forward runs is not followed.
struct GrowingImpl : torch::nn::Module {
  torch::nn::Sequential body;
  explicit GrowingImpl(int64_t width) {
    body->push_back(torch::nn::Linear(width, width));
    register_module("body", body);
  }
  void widen(int64_t width) { body->push_back(torch::nn::Linear(width, width)); }
  torch::Tensor forward(torch::Tensor x);
};

torch::Tensor GrowingImpl::forward(torch::Tensor x) {
  auto y = body->forward(x);
  return y;
}

// Layers pushed onto a local Sequential the member is then assigned: not
// followed.
struct LocalBuiltImpl : torch::nn::Module {
  torch::nn::Sequential model;
  explicit LocalBuiltImpl(int64_t width) {
    torch::nn::Sequential seq;
    seq->push_back(torch::nn::Linear(width, 3));
    this->model = seq;
    register_module("model", this->model);
  }
  torch::Tensor forward(torch::Tensor x);
};

torch::Tensor LocalBuiltImpl::forward(torch::Tensor x) {
  auto y = model->forward(x);
  return y;
}
