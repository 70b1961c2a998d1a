// What Geometry's files share beyond Geometry.h. Not part of the model's
// interface.
#pragma once

#include "model/Geometry.h"

namespace tma {
namespace detail {

/// Each dim of [First, Last) not decided to be 1 or not is assumed not
/// (dimIsOne, stated); false when one stays undecided.
bool dimsAssumedNotOne(Shape::const_iterator First, Shape::const_iterator Last);
bool dimsAssumedNotOne(const Shape &Sizes);

} // namespace detail
} // namespace tma
