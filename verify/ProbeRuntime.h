// Internal to verify/: the probe runtime's C++ text, pasted into every
// generated harness (see ProbeRuntime.cpp for its design).
#pragma once

namespace tma::verify {
const char *probeRuntimeSource();
} // namespace tma::verify
