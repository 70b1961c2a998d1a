#pragma once
#include <torch/torch.h>

constexpr int64_t kRows = 64;
