// Needs a header only its own build target can find: it does not compile
// beside mixed_main.cpp.
#include "broken.h"
#include "third_party_image_reader.h"

torch::Tensor from_disk(const std::string &path) { return read_image(path); }
