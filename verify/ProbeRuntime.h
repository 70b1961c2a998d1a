// Internal to verify/: the probe runtime's C++ text, pasted into every
// generated harness (verify/tma_probe.h; its design is in ProbeRuntime.cpp).
#pragma once

namespace tma::verify {
const char *probeRuntimeSource();
} // namespace tma::verify
