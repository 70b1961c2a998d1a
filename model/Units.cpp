#include "model/Units.h"

#include <cstdio>

namespace tma {

std::string formatBytes(int64_t Bytes) {
  struct Unit {
    int64_t Size;
    const char *Name;
  };
  static const Unit Units[] = {{int64_t(1) << 40, "TiB"},
                               {int64_t(1) << 30, "GiB"},
                               {int64_t(1) << 20, "MiB"},
                               {int64_t(1) << 10, "KiB"}};
  for (const Unit &U : Units) {
    if (Bytes < U.Size)
      continue;
    if (Bytes % U.Size == 0)
      return std::to_string(Bytes / U.Size) + " " + U.Name;
    char Buf[64];
    std::snprintf(Buf, sizeof Buf, "%.2f %s (%lld B)",
                  double(Bytes) / double(U.Size), U.Name,
                  static_cast<long long>(Bytes));
    return Buf;
  }
  return std::to_string(Bytes) + " B";
}

std::string formatBytes(const std::optional<int64_t> &Bytes) {
  return Bytes ? formatBytes(*Bytes) : "?";
}

std::string formatBytes(const SymSize &Bytes) {
  if (auto C = Bytes.constant())
    return formatBytes(*C);
  if (Bytes.isError())
    return "?";
  return Bytes.toTable() + " B";
}

std::string formatBytes(const std::optional<SymSize> &Bytes) {
  return Bytes ? formatBytes(*Bytes) : "?";
}

} // namespace tma
