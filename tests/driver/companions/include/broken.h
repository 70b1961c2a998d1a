#pragma once

#include <torch/torch.h>

torch::Tensor from_disk(const std::string &path);
