// Gradients taken with torch::autograd::grad the way training code writes
// them: a gradient penalty (the norm of d output / d input), gradients of a
// reduction (an expanded view in LibTorch, whose layout the analysis must
// not claim), several inputs of different dtypes, a list kept in a local and
// read by index, and allow_unused. Each element of the result has its
// input's shape, dtype and device; its strides and storage are left unknown.
//
// Input shapes for the differential test: testdata/autograd/inputs.json.
#include <torch/torch.h>

using torch::autograd::grad;

// A gradient penalty on a linear map, as WGAN-GP computes it.
torch::Tensor gradient_penalty(torch::Tensor x, const torch::Tensor& w) {
  x.requires_grad_(true);
  auto out = torch::mm(x, w.t());
  auto grad_out = torch::ones_like(out);
  auto gradient = torch::autograd::grad({out}, {x}, {grad_out}, true, true)[0];
  auto norms = gradient.norm(2, 1);
  auto penalty = torch::pow(norms - 1, 2).mean();
  return penalty;
}

// d sum(x) / dx is ones expanded to x's shape: stride 0, one element of
// storage. Only its shape and dtype are claimed.
torch::Tensor gradient_of_sum(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "expected a matrix");
  x.requires_grad_();
  auto total = x.sum();
  auto g = torch::autograd::grad({total}, {x})[0];
  auto doubled = g * 2;
  return doubled;
}

// One gradient per input, each with its own input's shape and dtype
// (float32 and float64 here: the graph casts, the gradient is cast back).
torch::Tensor gradients_of_two_inputs(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 1, "expected a matrix and a vector");
  a.requires_grad_(true);
  b.requires_grad_(true);
  auto prod = a * b.to(torch::kFloat);
  auto loss = prod.sum();
  auto grads = grad({loss}, {a, b}, {}, /*retain_graph=*/true);
  auto ga = grads[0];
  auto gb = grads.at(1);
  auto gb_last = grad({loss}, {a, b}).back();
  auto joined = torch::cat({ga.flatten(), gb.to(torch::kFloat)});
  return joined;
}

// A gradient with respect to an intermediate result (not a leaf).
torch::Tensor gradient_of_intermediate(torch::Tensor x, int64_t k) {
  TORCH_CHECK(x.dim() == 2, "expected a matrix");
  x.requires_grad_(true);
  auto hidden = x.unsqueeze(0).expand({k, -1, -1}) * 3;
  auto act = hidden.relu();
  auto loss = act.pow(2).sum();
  auto gh = torch::autograd::grad({loss}, {hidden})[0];
  auto summed = gh.sum(0);
  return summed;
}

// The dtype of the gradient follows the input's, whatever it is.
torch::Tensor gradient_of_any_float(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "expected a matrix");
  x.requires_grad_(true);
  auto y = (x * x).mean();
  auto g = torch::autograd::grad({y}, {x})[0];
  return g;
}

// allow_unused: an input the outputs do not reach has an undefined
// gradient; the one that is reached is defined, but the analysis answers
// neither.
torch::Tensor unused_input(torch::Tensor x, torch::Tensor z) {
  TORCH_CHECK(x.dim() == 1 && z.dim() == 2, "expected a vector and a matrix");
  x.requires_grad_(true);
  z.requires_grad_(true);
  auto y = x.exp().sum();
  auto gs = torch::autograd::grad({y}, {x, z}, {}, c10::nullopt, false, true);
  auto gx = gs[0];
  return x;
}

// A Hessian-vector product: the gradient is taken with create_graph, so
// the gradient of its dot product with v is a second derivative.
torch::Tensor hessian_vector_product(torch::Tensor x, const torch::Tensor& v) {
  TORCH_CHECK(x.dim() == 1 && v.dim() == 1, "expected vectors");
  x.requires_grad_(true);
  auto y = x.pow(3).sum();
  auto g = torch::autograd::grad({y}, {x}, {}, true, true)[0];
  auto gv = (g * v).sum();
  auto hv = torch::autograd::grad({gv}, {x})[0];
  auto scaled = hv / 6;
  return scaled;
}

// A saliency map: the gradient of the top score per row with respect to
// the input, reduced over the features.
torch::Tensor saliency(torch::Tensor x, const torch::Tensor& w) {
  x.requires_grad_(true);
  auto logits = torch::mm(x, w.t());
  auto top = std::get<0>(logits.max(1));
  auto score = top.sum();
  auto sal = torch::autograd::grad({score}, {x})[0].abs();
  auto per_row = sal.amax(1);
  return per_row;
}

// The gradients of a two-layer network's weights, read from a list local
// and compared by their norms.
torch::Tensor weight_gradient_norms(const torch::Tensor& x, torch::Tensor w1,
                                    torch::Tensor w2) {
  w1.requires_grad_(true);
  w2.requires_grad_(true);
  auto h = torch::relu(torch::mm(x, w1.t()));
  auto out = torch::mm(h, w2.t());
  auto loss = out.pow(2).mean();
  std::vector<torch::Tensor> weights = {w1, w2};
  auto grads = torch::autograd::grad({loss}, weights);
  auto g1 = grads[0];
  auto g2 = grads[1];
  auto n1 = g1.norm();
  auto n2 = g2.norm();
  auto norms = torch::stack({n1, n2});
  auto step1 = w1.detach() - g1 * 0.1;
  return norms;
}

// Custom autograd functions: apply(args...) runs forward(ctx, args...) and
// returns what it returned; forward is followed as a call, with forward's
// default for an argument apply was not given.
class Cube : public torch::autograd::Function<Cube> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto x = ctx->get_saved_variables()[0];
    return {grads[0] * 3 * x * x};
  }
};

class RowAffine : public torch::autograd::Function<RowAffine> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x,
                               torch::Tensor w, double scale = 1.0) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["scale"] = scale;
    auto out = torch::matmul(x, w) * scale;
    return out;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    auto scale = ctx->saved_data["scale"].toDouble();
    auto gx = torch::matmul(grads[0], saved[1].t()) * scale;
    auto gw = torch::matmul(saved[0].t(), grads[0]) * scale;
    return {gx, gw, torch::Tensor()};
  }
};

// forward returns its input: apply hands back view_as(x), x's storage.
class Identity : public torch::autograd::Function<Identity> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {
    return x;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    return {grads[0]};
  }
};

torch::Tensor custom_cube(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "expected a matrix");
  x.requires_grad_(true);
  auto y = Cube::apply(x);
  auto total = y.sum();
  total.backward();
  auto again = Cube::apply(y.detach());
  return again;
}

torch::Tensor custom_affine(const torch::Tensor& x, const torch::Tensor& w) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2, "expected matrices");
  auto plain = RowAffine::apply(x, w);
  auto halved = RowAffine::apply(x, w, 0.5);
  auto both = plain + halved;
  return both;
}

torch::Tensor custom_identity(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 1, "expected a vector");
  auto y = Identity::apply(x);
  auto doubled = y * 2;
  return doubled;
}
