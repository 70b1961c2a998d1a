// Helpers of testdata/hostile/handles.cpp that live in a project header:
// followed like the file's own functions, with the same handle semantics.
#pragma once
#include <torch/torch.h>

inline void header_squeeze_by_value(torch::Tensor t) { t.squeeze_(1); }
