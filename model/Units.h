// Byte counts as people read them: binary units, exact when they divide.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tma {

/// "128 MiB", "64 KiB", "52 B"; an inexact value carries its exact count:
/// "1.50 GiB (1610612736 B)". "?" for an unknown count.
std::string formatBytes(int64_t Bytes);
std::string formatBytes(const std::optional<int64_t> &Bytes);

} // namespace tma
