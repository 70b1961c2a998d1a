// The probe runtime: C++ text pasted into every generated harness, between
// <torch/torch.h> and the user's code, inside namespace tma_probe. The text
// is verify/tma_probe.h, embedded at build time as ProbeRuntimeText
// (cmake/TmaEmbedText.cmake, verify/CMakeLists.txt), so that it is edited and
// compiled as C++, not as a string literal.
//
// Design:
//  1. Each user function runs in its own fork()ed child. A segfault, an
//     abort, exit() or a hang in one function then costs that function only;
//     the parent keeps collecting and always prints one valid JSON document.
//     The parent never touches LibTorch ops or CUDA (CUDA cannot be used in a
//     child forked after CUDA was initialised, and an OpenMP pool started in
//     the parent would not survive the fork), so each child starts clean; on
//     CUDA each function also starts with an empty caching allocator, which
//     is the state the static predictions assume.
//  2. The child reports over a pipe, one line per event, flushed at once, so
//     probes recorded before a crash survive it:
//        S {"device":"meta"}   a run starts on this device (with the
//                              "fallback_reason" when it is not the one
//                              asked for, so a crash keeps it)
//        R                     discard the probes so far (meta -> CPU rerun)
//        T {...}               one probed tensor
//        F "k":v,...           final function fields
//     The child's stdout is redirected to stderr: user code that prints must
//     not corrupt the JSON.
//  3. Storage identity: a probe remembers a weak reference to each probed
//     tensor's StorageImpl. A weak intrusive_ptr keeps the StorageImpl object
//     (so its address cannot be reused by a later storage) but not its data,
//     so CPU peak-memory numbers are not inflated by the probes.
//  4. A counting wrapper around the default CPU allocator, installed in the
//     child, counts bytes and calls; it is reported only for runs on CPU.
//  5. A meta run that fails because the Meta backend lacks a kernel (or mixes
//     meta with CPU tensors the user made without a device) is rerun on CPU;
//     the output says so ("device":"cpu", "fallback_reason").
//  6. CPU memory is real in every mode (--mode cpu, the CPU rerun, and a
//     tensor made without a device on a meta or CUDA run), so the counting
//     allocator enforces a live-byte limit (--max-live-bytes, 8 GiB by
//     default; the tool passes --verify-max-bytes). The limit is checked at
//     run time, whatever the prediction said: an allocation that
//     would pass it ends the function on the spot (the child writes its
//     final line and exits), so user code cannot catch it and go on, and
//     the function is reported "stopped": "memory-limit". An address-space
//     limit (RLIMIT_AS) well above it is the backstop for memory that does
//     not come from LibTorch's allocator (a std::vector in user code).
//  7. Each function gets its own time limit (--function-timeout): one that
//     hangs is killed at its limit and the next one starts with a full one.
//  8. A probe in a loop fires every iteration; after 10000 probes in one run
//     the rest are counted ("dropped_probes") but not written.
//  9. A function with parameters is called with inputs the entry makes
//     inside the run (so a meta -> CPU rerun makes them again on the CPU):
//     make_input() registers each tensor's storage under the parameter's
//     name, so a view of it is named by that base (the report has no row
//     for a parameter, so it is not probed); inputs_ready() then
//     starts the function's own peak and allocation counts, while the live
//     inputs still count against --max-live-bytes. Each call is its own
//     entry, with the draw's index and a description in its output.
#include "verify/ProbeRuntime.h"

namespace tma::verify {

extern const char ProbeRuntimeText[];

const char *probeRuntimeSource() { return ProbeRuntimeText; }

} // namespace tma::verify
