// Byte counts as people read them: binary units, exact when they divide.
#pragma once

#include "model/SymSize.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tma {

/// "128 MiB", "64 KiB", "52 B"; an inexact value carries its exact count:
/// "1.50 GiB (1610612736 B)". "?" for an unknown count.
std::string formatBytes(int64_t Bytes);
std::string formatBytes(const std::optional<int64_t> &Bytes);
/// A count that may be symbolic: a number as above, else its formula in
/// the table's form (`8192·B·T B`); "?" for an unknown or error value.
/// ShapeEnv::formatBytes adds display names and bound values.
std::string formatBytes(const SymSize &Bytes);
std::string formatBytes(const std::optional<SymSize> &Bytes);

/// The number a byte count is, when it is one: thresholds (a check's
/// minimum, a memory budget) compare numbers only.
inline std::optional<int64_t> knownBytes(const std::optional<SymSize> &Bytes) {
  if (!Bytes)
    return std::nullopt;
  return Bytes->constant();
}

} // namespace tma
