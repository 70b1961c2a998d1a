// Hostile corpus, part 2: expression forms: parentheses, macros, templates,
// lambdas, operators and temporaries.
//
// A parenthesised operand is the same expression as the bare one: it must
// be evaluated once (issue 10 item 1: `(b - 1) - (b - 2)` once reported an
// extra temporary). Every parameterless function is judged by what real
// LibTorch measured: shapes, storage bytes, allocations and peak.
#include <torch/torch.h>

#define DOUBLE(t) ((t) + (t))
#define SQUARE(t) ((t) * (t))
#define MAKE_SQUARE(n) torch::zeros({(n), (n)})
#define DECLARE_ONES(name, n) auto name = torch::ones({n})
#define FIRST_ROW(t) ((t).narrow(0, 0, 1))
#define APPLY(f, ...) f(__VA_ARGS__)

// ---- parentheses ------------------------------------------------------------

void paren_sub() {
  auto b = torch::randn({256});
  auto c = (b - 1) - (b - 2);
}

void paren_mul() {
  auto b = torch::randn({256});
  auto c = b * (b * 2);
}

void paren_nested() {
  auto b = torch::randn({256});
  auto c = ((b + 1) * (b + 2)) + ((b + 3));
}

void paren_around_name() {
  auto b = torch::randn({256});
  auto c = ((((b)))).t();
  auto d = (b).clone();
}

void paren_method_on_temporary() {
  auto b = torch::randn({256});
  auto s = (b + 1).sum();
}

void paren_initializer() {
  auto c = (torch::ones({1024, 1024}));
}

// ---- macros -----------------------------------------------------------------

void macro_double() {
  auto t = torch::randn({1024});
  auto u = DOUBLE(t);
}

void macro_square_of_temporary() {
  auto t = torch::randn({1024});
  auto u = SQUARE(t + 1);
}

void macro_factory() {
  auto m = MAKE_SQUARE(512);
  auto r = FIRST_ROW(m);
}

void macro_declaration() {
  DECLARE_ONES(a, 1024);
  DECLARE_ONES(b, 2048);
  auto c = torch::cat({a, b});
}

void macro_variadic() {
  auto x = APPLY(torch::zeros, {64, 64});
  auto y = APPLY(torch::ones, {64}, torch::kFloat64);
}

// ---- operators and temporaries ----------------------------------------------

void op_unary_minus() {
  auto x = torch::randn({1024});
  auto y = -x;
  auto z = -(-x);
}

void op_chain_of_temporaries() {
  auto x = torch::randn({1024});
  auto y = x + x + x + x;
}

void op_comparison_is_bool() {
  auto x = torch::randn({1024});
  auto m = x > 0;
  auto n = (x < 0) | (x == 0);
}

void op_method_chain() {
  auto x = torch::randn({64, 32});
  auto y = x.t().contiguous().view({-1}).narrow(0, 0, 16);
}

void op_integer_arithmetic_sizes() {
  const int64_t rows = 8 * 8;
  constexpr int64_t cols = (1 << 5) + 32;
  auto x = torch::zeros({rows, cols / 2, (cols % 7) + 1});
}

namespace sizes {
constexpr int64_t kBatch = 4;
const int64_t kWidth = 256;
enum { kHeight = 16 };
} // namespace sizes

void op_sizes_from_namespace_constants() {
  auto x = torch::zeros({sizes::kBatch, sizes::kHeight, sizes::kWidth});
  auto y = x.view({sizes::kBatch, -1});
}

void op_sizes_from_sizeof() {
  auto x = torch::zeros({static_cast<int64_t>(sizeof(double)) * 128});
}

// ---- templates --------------------------------------------------------------

template <typename T> T twice(const T &x) { return x * 2; }

template <int64_t N> void make_n() { auto x = torch::zeros({N, N}); }
template void make_n<64>();

void template_caller() {
  auto x = torch::randn({1024});
  auto y = twice(x);
  auto z = x.clone();
}

void template_instantiated_call() {
  make_n<32>();
  auto x = torch::ones({1024});
}

template <typename Scalar> struct Buffer {
  torch::Tensor make() const {
    return torch::zeros({128}, torch::CppTypeToScalarType<Scalar>::value);
  }
};

void template_class_method() {
  Buffer<double> b;
  auto t = b.make();
}

// ---- lambdas ----------------------------------------------------------------

void lambda_immediately_invoked() {
  auto x = torch::randn({1024});
  auto y = [&] { return x.t(); }();
}

void lambda_init_capture() {
  auto f = [t = torch::ones({1024, 1024})] { return t.sum(); };
  auto s = f();
}

void lambda_generic() {
  auto scale = [](const auto &t, double k) { return t * k; };
  auto x = torch::randn({1024});
  auto y = scale(x, 2.0);
}

void lambda_assigns_captured() {
  auto x = torch::zeros({4});
  auto grow = [&] { x = torch::zeros({1024, 1024}); };
  grow();
  auto y = x.clone();
}

void lambda_not_called() {
  auto x = torch::zeros({1024});
  auto never = [&] { x = torch::zeros({1024, 1024}); };
  auto y = x.clone();
}

// ---- helpers the analysis follows into (issue 13) ------------------------------

torch::Tensor hostile_helper() { return torch::ones({1024, 1024}); }

void call_unanalysed_helper() {
  auto a = torch::zeros({1024});
  auto b = hostile_helper();
  auto c = a.clone();
}

void call_helper_discarded() {
  auto a = torch::zeros({1024});
  hostile_helper();
}

void from_blob_then_clone() {
  static float buffer[1024] = {};
  auto t = torch::from_blob(buffer, {1024});
  auto c = t.clone();
}

void sizes_from_runtime_vector() {
  std::vector<int64_t> dims;
  dims.push_back(1024);
  auto x = torch::zeros(dims);
  auto y = torch::zeros({16});
}

void cumsum_half_cpu() {
  auto x = torch::ones({1024}, torch::kHalf);
  auto y = x.cumsum(0);
}

void cumsum_float_cpu() {
  auto x = torch::ones({1024});
  auto y = x.cumsum(0);
  auto z = torch::cumsum(x, 0, torch::kFloat64);
}

// Not run by the differential test (it takes a tensor): the parameter's
// shape is unknown, so the copy's size and the totals are unknown too.
void param_transpose_contiguous(const torch::Tensor &p) {
  auto q = p.t().contiguous();
  auto x = torch::ones({1024});
}

// A lambda without captures is followed like a function of the file: a
// new tensor, or a view of the caller's argument.
void lambda_captureless() {
  auto denorm = [](torch::Tensor t) { return t.add(1).div_(2).clamp_(0, 1); };
  auto rows = [](const torch::Tensor &t) { return t.view({2, 8}); };
  auto x = torch::randn({4, 4});
  auto img = denorm(x);
  auto v = rows(x);
  auto w = rows(img).contiguous();
}

// Pieces of a tensor whose shape is not known: how many pieces there are is
// not known either, so parts[1] is unknown for that reason (not an index
// out of range).
void chunk_of_unknown_shape() {
  std::vector<int64_t> dims = {4, 6};
  if (std::getenv("TMA_HOSTILE_UNSET") == nullptr)
    dims.push_back(2);
  auto x = torch::zeros(dims);
  auto parts = x.chunk(2, 1);
  auto second = parts[1].clone();
}
