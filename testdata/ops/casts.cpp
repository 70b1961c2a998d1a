// Layout-sensitive copies and casts: contiguous/clone/to/*_like under the
// Preserve rule, memory formats, reshape/flatten copies, device transfers.
#include <torch/torch.h>

void contiguous_ops() {
  auto x = torch::randn({2, 3, 4});
  auto a = x.contiguous();
  auto t = x.transpose(1, 2);
  auto b = t.contiguous();
  auto n = torch::randn({2, 3, 4, 5});
  auto cl = n.contiguous(at::MemoryFormat::ChannelsLast);
  auto c = cl.contiguous();
  auto d = cl.contiguous(torch::MemoryFormat::ChannelsLast);
  auto odd = torch::randn({2, 1, 4}).as_strided({2, 1, 4}, {4, 999, 1});
  auto e = odd.contiguous();
}

void clone_ops() {
  auto x = torch::randn({2, 3, 4});
  auto t = x.transpose(0, 2);
  auto a = t.clone();
  auto b = t.clone(at::MemoryFormat::Contiguous);
  auto s = x.narrow(2, 0, 2);
  auto c = s.clone();
  auto e = x.unsqueeze(0).expand({2, 2, 3, 4});
  auto d = e.clone();
  auto n = torch::randn({2, 3, 4, 5});
  auto f = n.clone(torch::MemoryFormat::ChannelsLast);
  auto g = x.index({torch::indexing::Slice(), 1}).clone();
}

void reshape_copies() {
  auto x = torch::randn({2, 3, 4});
  auto t = x.transpose(1, 2);
  auto a = t.reshape({8, 3});
  auto b = t.flatten();
  auto s = x.narrow(2, 1, 2);
  auto c = s.reshape({-1});
  auto d = s.reshape({2, 3, 2});
}

void to_dtype() {
  auto x = torch::randn({2, 3});
  auto a = x.to(torch::kFloat64);
  auto b = x.to(torch::kFloat32);
  auto c = x.to(torch::kFloat32, false, true);
  auto t = x.t();
  auto d = t.to(torch::kHalf);
  auto e = t.to(torch::kFloat, false, false, at::MemoryFormat::Contiguous);
  auto f = t.to(torch::kInt, false, false, at::MemoryFormat::Contiguous);
  auto g = x.toType(torch::kBFloat16);
  auto h = x.toType(torch::kFloat);
  auto i = x.to(torch::kBFloat16);
}

void to_other() {
  auto x = torch::randn({2, 3});
  auto ints = torch::zeros({4}, torch::kInt64);
  auto a = x.type_as(ints);
  auto b = x.type_as(x);
  auto c = x.to(ints);
  auto d = x.to(torch::TensorOptions().dtype(torch::kFloat64));
  auto e = x.to(torch::dtype(torch::kFloat32));
  auto f = x.to(torch::TensorOptions().device(torch::kCPU));
}

void transfers() {
  auto x = torch::randn({2, 3});
  auto a = x.cpu();
  auto b = x.to(torch::kCPU);
  auto c = x.to(torch::Device(torch::kCPU), torch::kFloat64);
  auto d = x.to(torch::Device("cpu"), torch::kFloat32, false, true);
}

void like_ops() {
  auto x = torch::randn({2, 3, 4});
  auto t = x.permute({2, 0, 1});
  auto a = torch::zeros_like(t);
  auto b = torch::ones_like(t, torch::kInt32);
  auto c = torch::empty_like(t, torch::MemoryFormat::Contiguous);
  auto d = torch::rand_like(x);
  auto e = torch::randn_like(t.narrow(0, 0, 2));
  auto ints = torch::zeros({3}, torch::kInt32);
  auto f = torch::full_like(ints, 1.5);
  auto g = torch::zeros_like(x.unsqueeze(0).expand({2, 2, 3, 4}));
  auto h = torch::empty_like(t, torch::TensorOptions().dtype(torch::kFloat64));
  auto i = torch::ones_like(ints, torch::dtype(torch::kFloat32));
}

void strided_factories() {
  auto a = torch::empty_strided({2, 3}, {10, 1});
  auto b = torch::empty_strided({2, 3}, {1, 2}, torch::kFloat64);
  auto c = torch::empty_strided({0, 3}, {3, 1});
}

// A cast to a dtype the tool cannot derive must stay unknown.
void cast_unknown(torch::ScalarType t) {
  auto x = torch::randn({2, 3});
  auto y = x.to(t);
  auto z = y.contiguous();
}

// A device chosen at run time: whether to() copies is unknown, but the
// shape and the dense layout are the same either way, and so is every
// shape computed from them.
void to_runtime_device() {
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  auto a = torch::zeros({2, 3}).to(device);
  auto b = torch::ones({4, 2}).to(device).detach();
  auto v = a.view({3, 2});
  auto e = a * 2;
  auto s = b.sum(0);
}
