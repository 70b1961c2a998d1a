// The probe runtime: C++ text pasted into every generated harness, between
// <torch/torch.h> and the user's code, inside namespace tma_probe. Its design
// is in verify/ProbeRuntime.cpp.
//
// The harness gets the text from the "// ---- tma_probe:" line on, embedded
// at build time (cmake/TmaEmbedText.cmake); this comment, the #pragma once
// and the #include above that line stay out. It is a header so that editors
// and the verify_probe_runtime_header test compile it as C++ rather than as
// a string.
#pragma once

#include <torch/torch.h>

// ---- tma_probe: probe runtime of the Tensor Memory Accountant harness ----
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <c10/core/CPUAllocator.h>
#include <new>

#include <poll.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#if defined(TMA_PROBE_HAS_CUDA) && defined(__has_include)
#if __has_include(<cuda_runtime_api.h>) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#define TMA_PROBE_CUDA_STATS 1
#endif
#endif

namespace tma_probe {

enum class Mode { Meta, CPU, CUDA };

struct Entry {
  unsigned FileIndex; // position in the generator's file list (--file N)
  const char *File;
  const char *Function;
  void (*Fn)();
  int Draw;           // the draw of inputs; -1: called without arguments
  const char *Inputs; // the draw for people; null without arguments
};

#ifndef TORCH_VERSION
#define TORCH_VERSION "unknown"
#endif

// ---------------------------------------------------------------- device
inline c10::DeviceType &runtime_device() {
  static c10::DeviceType D = c10::DeviceType::Meta;
  return D;
}
/// Replaces expressions such as torch::kCUDA in the user's code.
inline c10::DeviceType device_type() { return runtime_device(); }
/// Replaces device string literals; a CUDA run keeps the user's "cuda:N".
inline const char *device_cstr(const char *Original = "cuda") {
  switch (runtime_device()) {
  case c10::DeviceType::CUDA:
    return std::strncmp(Original, "cuda", 4) == 0 ? Original : "cuda";
  case c10::DeviceType::CPU:
    return "cpu";
  default:
    return "meta";
  }
}
inline const char *device_name(c10::DeviceType T) {
  switch (T) {
  case c10::DeviceType::CPU: return "cpu";
  case c10::DeviceType::CUDA: return "cuda";
  case c10::DeviceType::Meta: return "meta";
  default: return "other";
  }
}

// ---------------------------------------------------------------- JSON text
inline void json_string(std::string &Out, const std::string &S) {
  Out += '"';
  for (unsigned char C : S) {
    switch (C) {
    case '"': Out += "\\\""; break;
    case '\\': Out += "\\\\"; break;
    case '\n': Out += "\\n"; break;
    case '\r': Out += "\\r"; break;
    case '\t': Out += "\\t"; break;
    default:
      if (C < 0x20) {
        char Buf[8];
        std::snprintf(Buf, sizeof Buf, "\\u%04x", C);
        Out += Buf;
      } else {
        Out += static_cast<char>(C);
      }
    }
  }
  Out += '"';
}
inline std::string json_quote(const std::string &S) {
  std::string Out;
  json_string(Out, S);
  return Out;
}
inline std::string json_ints(c10::IntArrayRef V) {
  std::string Out = "[";
  for (size_t I = 0; I < V.size(); ++I) {
    if (I)
      Out += ',';
    Out += std::to_string(V[I]);
  }
  return Out + "]";
}
inline std::string first_line(const char *Msg) {
  std::string S = Msg ? Msg : "";
  size_t NL = S.find('\n');
  return NL == std::string::npos ? S : S.substr(0, NL);
}
/// The first sentence of a long message: LibTorch's "Could not run
/// 'aten::relu' with arguments from the 'Meta' backend." goes on for a
/// kilobyte listing every dispatch key.
inline std::string first_sentence(const std::string &S) {
  if (S.size() <= 240)
    return S;
  size_t Stop = S.find(". ", 20);
  if (Stop != std::string::npos && Stop < 400)
    return S.substr(0, Stop + 1);
  return S.substr(0, 240) + "...";
}

/// The report's dtype names (report-schema.md).
inline std::string dtype_name(c10::ScalarType T) {
  switch (T) {
  case c10::ScalarType::Half: return "float16";
  case c10::ScalarType::BFloat16: return "bfloat16";
  case c10::ScalarType::Float: return "float32";
  case c10::ScalarType::Double: return "float64";
  case c10::ScalarType::Char: return "int8";
  case c10::ScalarType::Byte: return "uint8";
  case c10::ScalarType::Short: return "int16";
  case c10::ScalarType::Int: return "int32";
  case c10::ScalarType::Long: return "int64";
  case c10::ScalarType::Bool: return "bool";
  case c10::ScalarType::ComplexHalf: return "complex32";
  case c10::ScalarType::ComplexFloat: return "complex64";
  case c10::ScalarType::ComplexDouble: return "complex128";
  default: {
    // Newer dtypes (Float8_e4m3fn, ...) lower-cased: "float8_e4m3fn".
    std::string S = c10::toString(T);
    for (char &C : S)
      C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
    return S;
  }
  }
}

// ---------------------------------------------------------------- CPU allocations
struct AllocCounters {
  std::mutex M;
  int64_t Budget = 0; // live-byte limit of this run; 0: none
  int64_t Live = 0, Peak = 0, Bytes = 0, Calls = 0;
  int64_t SinceBytes = 0, SinceCalls = 0;
  std::unordered_map<void *, std::pair<c10::DataPtr, int64_t>> Blocks;
};
inline AllocCounters &counters() {
  // Leaked on purpose: storages may be freed during static destruction.
  static AllocCounters *C = new AllocCounters;
  return *C;
}
inline void counting_delete(void *Ptr) {
  c10::DataPtr Inner;
  {
    AllocCounters &C = counters();
    std::lock_guard<std::mutex> Lock(C.M);
    auto It = C.Blocks.find(Ptr);
    if (It == C.Blocks.end())
      return;
    C.Live -= It->second.second;
    Inner = std::move(It->second.first);
    C.Blocks.erase(It);
  }
  // Inner's own deleter frees the memory here, outside the lock.
}

[[noreturn]] inline void stop_over_budget(int64_t Request, int64_t Live, int64_t Budget);

/// Wraps the default CPU allocator. The returned DataPtr's context is the
/// data pointer itself, so raw_allocate/raw_deallocate keep working.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winconsistent-missing-override"
#endif
struct CountingAllocator final : c10::Allocator {
  c10::Allocator *Inner;
  explicit CountingAllocator(c10::Allocator *I) : Inner(I) {}
  c10::DataPtr allocate_counted(size_t N) const {
    {
      AllocCounters &C = counters();
      std::lock_guard<std::mutex> Lock(C.M);
      int64_t Request = static_cast<int64_t>(N);
      if (C.Budget > 0 && (Request < 0 || Request > C.Budget - C.Live))
        stop_over_budget(Request, C.Live, C.Budget); // does not return
    }
    c10::DataPtr P = Inner->allocate(N);
    void *Data = P.get();
    if (N == 0 || !Data)
      return P; // a 0-byte request holds no memory
    c10::Device Dev = P.device();
    AllocCounters &C = counters();
    std::lock_guard<std::mutex> Lock(C.M);
    int64_t Bytes = static_cast<int64_t>(N);
    C.Live += Bytes;
    C.Peak = std::max(C.Peak, C.Live);
    C.Bytes += Bytes;
    C.Calls += 1;
    C.SinceBytes += Bytes;
    C.SinceCalls += 1;
    C.Blocks.emplace(Data, std::make_pair(std::move(P), Bytes));
    return c10::DataPtr(Data, Data, &counting_delete, Dev);
  }
  // LibTorch < 2.3 declares allocate() const, later versions non-const;
  // declaring both overrides whichever the installed version has.
  c10::DataPtr allocate(size_t N) const { return allocate_counted(N); }
  c10::DataPtr allocate(size_t N) { return allocate_counted(N); }
  c10::DeleterFnPtr raw_deleter() const override { return &counting_delete; }
  // Pure virtual from LibTorch 2.3 on; an unused extra member before that.
  void copy_data(void *Dest, const void *Src, std::size_t Count) const {
    std::memcpy(Dest, Src, Count);
  }
};
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
inline void install_counting_allocator() {
  static CountingAllocator A(c10::GetDefaultCPUAllocator());
  c10::SetCPUAllocator(&A, /*priority=*/255);
}

// ---------------------------------------------------------------- CUDA statistics
/// DeviceStats' allocated_bytes and reserved_bytes (StatType::AGGREGATE, [0])
/// as plain numbers: what a run reports is computed alike with or without CUDA.
struct CudaByteStats {
  int64_t AllocatedNow = 0, AllocatedPeak = 0, ReservedNow = 0, ReservedPeak = 0;
};
/// A function's peaks over what was held when it started (its inputs'), and
/// the segments held then, which it may carve its own blocks from.
struct CudaRunFigures {
  int64_t PeakAllocated = 0, PeakReserved = 0, ReservedAtStart = 0;
};
constexpr CudaRunFigures cuda_run_figures(const CudaByteStats &Start,
                                          const CudaByteStats &End) {
  return CudaRunFigures{End.AllocatedPeak - Start.AllocatedNow,
                        End.ReservedPeak - Start.ReservedNow, Start.ReservedNow};
}
/// The function fields of the harness's output for those figures.
inline std::string cuda_run_fields(const CudaRunFigures &F) {
  return ",\"cuda_peak_allocated_bytes\":" + std::to_string(F.PeakAllocated) +
         ",\"cuda_peak_reserved_bytes\":" + std::to_string(F.PeakReserved) +
         ",\"cuda_reserved_at_start_bytes\":" + std::to_string(F.ReservedAtStart);
}
#if defined(TMA_PROBE_CUDA_STATS)
inline CudaByteStats cuda_byte_stats() {
  auto S = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
  CudaByteStats B;
  B.AllocatedNow = static_cast<int64_t>(S.allocated_bytes[0].current);
  B.AllocatedPeak = static_cast<int64_t>(S.allocated_bytes[0].peak);
  B.ReservedNow = static_cast<int64_t>(S.reserved_bytes[0].current);
  B.ReservedPeak = static_cast<int64_t>(S.reserved_bytes[0].peak);
  return B;
}
/// Starts measuring a function: segments cached by what ran before go back
/// to the driver (emptyCache), so the function starts from nothing cached
/// as the prediction does, and only then are the peaks reset (resetting
/// first would leave the peak at the segments just released).
inline CudaByteStats cuda_start_measuring() {
  c10::cuda::CUDACachingAllocator::emptyCache();
  c10::cuda::CUDACachingAllocator::resetPeakStats(c10::cuda::current_device());
  return cuda_byte_stats();
}
#endif

// ---------------------------------------------------------------- one function run
struct Probed {
  c10::weak_intrusive_ptr<c10::StorageImpl> Storage;
  std::string Name;
};
constexpr int64_t MaxProbesPerRun = 10000;

struct RunState {
  FILE *Out = nullptr;             // pipe to the parent
  int64_t MaxLiveBytes = int64_t(8) << 30; // every run on the CPU
  std::string Reason;              // why this run is not on the device asked for
  int64_t Probes = 0, Dropped = 0;
  std::vector<Probed> Seen;        // this run's probed storages, in order
  c10::DeviceType Device = c10::DeviceType::Meta;
  CudaByteStats CudaStart;         // the allocator when the function started
  int64_t PeakBaseline = 0;        // live CPU bytes not the function's own
};
inline RunState &state() {
  static RunState S;
  return S;
}
inline void emit(const std::string &Line) {
  FILE *Out = state().Out;
  if (!Out)
    return;
  std::fwrite(Line.data(), 1, Line.size(), Out);
  std::fputc('\n', Out);
  std::fflush(Out);
}

/// An allocation past --max-live-bytes: the function ends here. Throwing
/// would not do: user code may catch (...) and go on allocating.
[[noreturn]] inline void stop_over_budget(int64_t Request, int64_t Live, int64_t Budget) {
  RunState &S = state();
  std::string F = "F \"device\":" + json_quote(device_name(S.Device));
  if (!S.Reason.empty())
    F += ",\"fallback_reason\":" + json_quote(S.Reason);
  F += ",\"error\":" +
       json_quote("stopped: an allocation of " + std::to_string(Request) +
                  " bytes would hold " +
                  (Request < 0 ? std::string("more than the limit")
                               : std::to_string(Live + Request) + " bytes") +
                  " of CPU memory live, over the " + std::to_string(S.MaxLiveBytes) +
                  "-byte limit (--verify-max-bytes; the harness's --max-live-bytes)");
  F += ",\"stopped\":\"memory-limit\",\"requested_bytes\":" + std::to_string(Request) +
       ",\"live_bytes\":" + std::to_string(Live) + ",\"max_live_bytes\":" +
       std::to_string(S.MaxLiveBytes);
  (void)Budget; // MaxLiveBytes above what the run started with
  emit(F);
  std::fflush(nullptr);
  _exit(0);
}

/// The address-space backstop of a run on the CPU: what the process maps
/// now, plus the live-byte limit, plus room for thread stacks and malloc
/// arenas (OpenMP starts one thread per core).
inline void limit_address_space(int64_t MaxLive) {
#if defined(__linux__)
  FILE *F = std::fopen("/proc/self/statm", "r");
  if (!F)
    return;
  unsigned long long Pages = 0;
  int Got = std::fscanf(F, "%llu", &Pages);
  std::fclose(F);
  if (Got != 1)
    return;
  long Cores = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned long long Mapped = Pages * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE));
  unsigned long long Room = (2ULL << 30) + (256ULL << 20) * static_cast<unsigned long long>(Cores > 0 ? Cores : 1);
  unsigned long long Limit = Mapped + static_cast<unsigned long long>(MaxLive) + Room;
  rlimit Old;
  if (getrlimit(RLIMIT_AS, &Old) != 0)
    return;
  if (Old.rlim_cur != RLIM_INFINITY && Old.rlim_cur <= Limit)
    return; // never raise a limit the caller set
  rlimit New{static_cast<rlim_t>(Limit), Old.rlim_max};
  if (Old.rlim_max != RLIM_INFINITY && New.rlim_cur > Old.rlim_max)
    New.rlim_cur = Old.rlim_max;
  setrlimit(RLIMIT_AS, &New);
#else
  (void)MaxLive;
#endif
}

/// The probe inserted after each binding.
inline void record(const char *Function, const char *Name, unsigned Line,
                   const at::Tensor &T) {
  RunState &S = state();
  if (++S.Probes > MaxProbesPerRun) {
    ++S.Dropped;
    return;
  }
  std::string J = "{\"function\":" + json_quote(Function) +
                  ",\"name\":" + json_quote(Name) +
                  ",\"line\":" + std::to_string(Line);
  try {
    std::string F;
    if (!T.defined()) {
      F = ",\"defined\":false,\"shape\":null,\"strides\":null,\"dtype\":null,"
          "\"device\":null,\"storage_bytes\":null,\"storage_offset\":null,"
          "\"contiguous\":null,\"view\":false,\"base\":null";
    } else {
      bool Strided = T.layout() == c10::kStrided;
      F += ",\"shape\":" + json_ints(T.sizes());
      F += ",\"strides\":" + (Strided ? json_ints(T.strides()) : std::string("null"));
      F += ",\"dtype\":" + json_quote(dtype_name(T.scalar_type()));
      F += ",\"device\":" + json_quote(device_name(T.device().type()));
      bool HasStorage = Strided && T.has_storage();
      if (HasStorage) {
        F += ",\"storage_bytes\":" + std::to_string(T.storage().nbytes());
        F += ",\"storage_offset\":" + std::to_string(T.storage_offset());
      } else {
        F += ",\"storage_bytes\":null,\"storage_offset\":null";
      }
      F += ",\"contiguous\":" + std::string(Strided ? (T.is_contiguous() ? "true" : "false") : "null");
      const Probed *Base = nullptr;
      if (HasStorage) {
        c10::StorageImpl *Impl = T.storage().unsafeGetStorageImpl();
        for (const Probed &P : S.Seen)
          if (P.Storage._unsafe_get_target() == Impl) {
            Base = &P;
            break;
          }
        std::string BaseName = Base ? Base->Name : std::string();
        F += ",\"view\":" + std::string(Base ? "true" : "false");
        F += ",\"base\":" + (Base ? json_quote(BaseName) : std::string("null"));
        S.Seen.push_back(Probed{T.storage().getWeakStorageImpl(), Name});
      } else {
        F += ",\"view\":null,\"base\":null";
      }
    }
    J += F;
  } catch (const c10::Error &E) {
    J += ",\"probe_error\":" + json_quote(first_line(E.what_without_backtrace()));
  } catch (const std::exception &E) {
    J += ",\"probe_error\":" + json_quote(first_line(E.what()));
  }
  if (S.Device == c10::DeviceType::CPU) {
    AllocCounters &C = counters();
    std::lock_guard<std::mutex> Lock(C.M);
    J += ",\"allocated_bytes_since_last_probe\":" + std::to_string(C.SinceBytes);
    J += ",\"allocations_since_last_probe\":" + std::to_string(C.SinceCalls);
    C.SinceBytes = 0;
    C.SinceCalls = 0;
  }
#if defined(TMA_PROBE_CUDA_STATS)
  if (S.Device == c10::DeviceType::CUDA)
    J += ",\"cuda_allocated_bytes\":" + std::to_string(cuda_byte_stats().AllocatedNow - S.CudaStart.AllocatedNow);
#endif
  emit("T " + J + "}");
}
/// A tensor argument of a function with parameters (design, item 9).
inline at::Tensor make_input(const char *Name, const std::vector<int64_t> &Sizes,
                             c10::ScalarType Type) {
  at::TensorOptions Opts = at::TensorOptions().dtype(Type).device(runtime_device());
  // No shape depends on the contents; zeros are valid indices too.
  at::Tensor T = runtime_device() == c10::DeviceType::Meta ? at::empty(Sizes, Opts)
                                                            : at::zeros(Sizes, Opts);
  RunState &S = state();
  if (T.has_storage())
    S.Seen.push_back(Probed{T.storage().getWeakStorageImpl(), Name});
  return T;
}
/// The inputs are made: what is allocated from here on is the function's.
inline void inputs_ready() {
  RunState &S = state();
  AllocCounters &C = counters();
  {
    std::lock_guard<std::mutex> Lock(C.M);
    S.PeakBaseline = C.Live;
    C.Peak = C.Live;
    C.Bytes = C.Calls = C.SinceBytes = C.SinceCalls = 0;
  }
#if defined(TMA_PROBE_CUDA_STATS)
  if (S.Device == c10::DeviceType::CUDA)
    S.CudaStart = cuda_start_measuring();
#endif
}

/// Bindings that are not tensors (options, modules, vectors) are not probed.
template <class T,
          typename std::enable_if<!std::is_convertible<const T &, const at::Tensor &>::value,
                                  int>::type = 0>
inline void record(const char *, const char *, unsigned, const T &) {}

/// True when a failure on meta says nothing about the user's code: a kernel
/// the Meta backend lacks, or meta mixed with CPU tensors the user created
/// without naming a device.
inline bool is_meta_gap(const std::string &Msg) {
  std::string L = Msg;
  for (char &C : L)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  for (const char *Needle : {"'meta' backend", "meta tensor", "meta and cpu",
                             "cpu and meta", "device meta", "meta device",
                             "notimplementederror", "not implemented for 'meta'"})
    if (L.find(Needle) != std::string::npos)
      return true;
  return false;
}

struct RunResult {
  int64_t Dropped = 0;
  bool Threw = false;
  bool MetaGap = false;
  bool OutOfAddressSpace = false;
  std::string Error;
  int64_t Peak = 0, Bytes = 0, Calls = 0;
  bool HasCudaFigures = false;
  CudaRunFigures Cuda;
};

/// Reason: why this run is not on the requested device (empty if it is);
/// sent with the start line so that it survives a crash.
inline RunResult run_once(const Entry &E, c10::DeviceType Dev,
                          const std::string &Reason) {
  RunState &S = state();
  S.Seen.clear();
  S.Probes = S.Dropped = 0;
  S.Device = Dev;
  S.Reason = Reason;
  runtime_device() = Dev;
  std::string Start = std::string("S {\"device\":\"") + device_name(Dev) + "\"";
  if (!Reason.empty())
    Start += ",\"fallback_reason\":" + json_quote(Reason);
  emit(Start + "}");
  AllocCounters &C = counters();
  int64_t Baseline;
  {
    std::lock_guard<std::mutex> Lock(C.M);
    Baseline = C.Live;
    S.PeakBaseline = Baseline;
    C.Peak = C.Live;
    C.Bytes = C.Calls = C.SinceBytes = C.SinceCalls = 0;
    // Live bytes this run may add; what the parent's statics hold is not
    // the function's. Every mode: a tensor made without a device is a CPU
    // tensor on meta and CUDA runs too.
    C.Budget = S.MaxLiveBytes > 0 ? S.MaxLiveBytes + Baseline : 0;
  }
  // CUDA reserves address space by the terabyte: no backstop there.
  if (Dev != c10::DeviceType::CUDA && S.MaxLiveBytes > 0)
    limit_address_space(S.MaxLiveBytes);
#if defined(TMA_PROBE_CUDA_STATS)
  if (Dev == c10::DeviceType::CUDA)
    S.CudaStart = cuda_start_measuring();
#endif
  RunResult R;
  try {
    E.Fn();
  } catch (const std::bad_alloc &) {
    R.Threw = true;
    R.OutOfAddressSpace = true;
    R.Error = "stopped: out of memory under the harness's address-space limit "
              "(a backstop above --max-live-bytes)";
  } catch (const c10::NotImplementedError &X) {
    R.Threw = true;
    R.Error = first_line(X.what_without_backtrace());
    R.MetaGap = true;
  } catch (const c10::Error &X) {
    R.Threw = true;
    R.Error = first_line(X.what_without_backtrace());
    R.MetaGap = is_meta_gap(X.what_without_backtrace());
  } catch (const std::exception &X) {
    R.Threw = true;
    R.Error = first_line(X.what());
    R.MetaGap = is_meta_gap(X.what());
  } catch (...) {
    R.Threw = true;
    R.Error = "a C++ exception that is not a std::exception";
  }
  if (Dev != c10::DeviceType::Meta)
    R.MetaGap = false;
  {
    std::lock_guard<std::mutex> Lock(C.M);
    R.Peak = C.Peak - S.PeakBaseline;
    R.Bytes = C.Bytes;
    R.Calls = C.Calls;
  }
#if defined(TMA_PROBE_CUDA_STATS)
  if (Dev == c10::DeviceType::CUDA) {
    R.HasCudaFigures = true;
    R.Cuda = cuda_run_figures(S.CudaStart, cuda_byte_stats());
  }
#endif
  R.Dropped = S.Dropped;
  S.Seen.clear();
  return R;
}

[[noreturn]] inline void child_main(const Entry &E, Mode M, int Fd) {
  state().Out = fdopen(Fd, "w");
  // User code printing to stdout would corrupt the parent's JSON.
  dup2(2, 1);
  // A crashing function should not leave a core file in the caller's
  // directory; the parent reports the signal.
  rlimit NoCore{0, 0};
  setrlimit(RLIMIT_CORE, &NoCore);
  install_counting_allocator();
  c10::DeviceType Dev = c10::DeviceType::Meta;
  std::string Reason;
  if (M == Mode::CPU) {
    Dev = c10::DeviceType::CPU;
  } else if (M == Mode::CUDA) {
    if (torch::cuda::is_available())
      Dev = c10::DeviceType::CUDA;
    else
      Reason = "CUDA is not available to this LibTorch or machine; ran on meta";
  }
  RunResult R = run_once(E, Dev, Reason);
  if (Dev == c10::DeviceType::Meta && R.Threw && R.MetaGap) {
    if (!Reason.empty())
      Reason += "; ";
    Reason += "the Meta backend could not run it (" + first_sentence(R.Error) +
              "); reran on CPU";
    emit("R");
    Dev = c10::DeviceType::CPU;
    R = run_once(E, Dev, Reason);
  }
  std::string F = "F \"device\":" + json_quote(device_name(Dev));
  if (!Reason.empty())
    F += ",\"fallback_reason\":" + json_quote(Reason);
  if (R.Threw)
    F += ",\"error\":" + json_quote(first_sentence(R.Error));
  if (R.OutOfAddressSpace)
    F += ",\"stopped\":\"address-space-limit\"";
  if (Dev == c10::DeviceType::CPU && !R.OutOfAddressSpace)
    F += ",\"peak_live_bytes\":" + std::to_string(R.Peak) +
         ",\"allocated_bytes\":" + std::to_string(R.Bytes) +
         ",\"allocations\":" + std::to_string(R.Calls);
  if (R.Dropped > 0)
    F += ",\"dropped_probes\":" + std::to_string(R.Dropped);
  if (R.HasCudaFigures)
    F += cuda_run_fields(R.Cuda);
#if !defined(TMA_PROBE_CUDA_STATS)
  if (Dev == c10::DeviceType::CUDA)
    F += ",\"cuda_stats\":\"not compiled in (needs TMA_PROBE_HAS_CUDA and the CUDA "
         "runtime headers)\"";
#endif
  emit(F);
  std::fflush(nullptr);
  _exit(0); // no static destructors or atexit handlers in the child
}

// ---------------------------------------------------------------- parent
inline double seconds_since(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
}

/// Runs one entry in a child with its own time limit (0: none); returns
/// its JSON object.
inline std::string run_entry(const Entry &E, Mode M, double Limit) {
  bool HasDeadline = Limit > 0;
  double SecondsLeft = Limit;
  std::string Head = "{\"file\":" + json_quote(E.File) + ",\"function\":" + json_quote(E.Function);
  if (E.Inputs)
    Head += ",\"draw\":" + std::to_string(E.Draw) + ",\"inputs\":" + json_quote(E.Inputs);
  int Fds[2];
  if (pipe(Fds) != 0)
    return Head + ",\"device\":null,\"error\":" + json_quote(std::string("pipe failed: ") + std::strerror(errno)) + ",\"tensors\":[]}";
  std::fflush(nullptr);
  pid_t Pid = fork();
  if (Pid < 0) {
    close(Fds[0]);
    close(Fds[1]);
    return Head + ",\"device\":null,\"error\":" + json_quote(std::string("fork failed: ") + std::strerror(errno)) + ",\"tensors\":[]}";
  }
  if (Pid == 0) {
    close(Fds[0]);
#if defined(__linux__)
    prctl(PR_SET_PDEATHSIG, SIGKILL); // die with a killed parent
#endif
    child_main(E, M, Fds[1]);
  }
  close(Fds[1]);
  auto T0 = std::chrono::steady_clock::now();
  std::string Data;
  bool TimedOut = false;
  char Buf[65536];
  for (;;) {
    int Wait = -1;
    if (HasDeadline) {
      double Left = SecondsLeft - seconds_since(T0);
      if (Left <= 0) {
        TimedOut = true;
        break;
      }
      Wait = static_cast<int>(Left * 1000) + 1;
    }
    pollfd P{Fds[0], POLLIN, 0};
    int N = poll(&P, 1, Wait);
    if (N < 0 && errno == EINTR)
      continue;
    if (N == 0)
      continue; // re-check the deadline
    ssize_t Got = read(Fds[0], Buf, sizeof Buf);
    if (Got < 0 && errno == EINTR)
      continue;
    if (Got <= 0)
      break; // EOF: the child is done (or dead)
    Data.append(Buf, static_cast<size_t>(Got));
  }
  close(Fds[0]);
  if (TimedOut)
    kill(Pid, SIGKILL);
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
  }

  std::string Started = "\"device\":null", Final;
  std::vector<std::string> Tensors;
  size_t Pos = 0;
  while (Pos < Data.size()) {
    size_t End = Data.find('\n', Pos);
    if (End == std::string::npos)
      break; // a torn last line from a crash
    std::string L = Data.substr(Pos, End - Pos);
    Pos = End + 1;
    if (L.rfind("T ", 0) == 0) {
      Tensors.push_back(L.substr(2));
    } else if (L == "R") {
      Tensors.clear();
    } else if (L.rfind("S {", 0) == 0 && L.back() == '}') {
      Started = L.substr(3, L.size() - 4); // the object's members
    } else if (L.rfind("F ", 0) == 0) {
      Final = L.substr(2);
    }
  }
  std::string Out = Head;
  if (!Final.empty()) {
    Out += "," + Final;
  } else {
    Out += "," + Started;
    std::string Why;
    if (TimedOut) {
      char Secs[32];
      std::snprintf(Secs, sizeof Secs, "%g", Limit);
      Why = std::string("timed out: still running after ") + Secs +
            " s, the limit per function (--verify-timeout), killed";
    } else if (WIFSIGNALED(Status)) {
      int Sig = WTERMSIG(Status);
      const char *Name = strsignal(Sig);
      Why = "crashed: signal " + std::to_string(Sig) + " (" + (Name ? Name : "?") + ")";
    } else if (WIFEXITED(Status)) {
      Why = "the process exited with status " + std::to_string(WEXITSTATUS(Status)) +
            " before the function returned";
    } else {
      Why = "the process ended without a result";
    }
    Out += ",\"error\":" + json_quote(Why);
  }
  Out += ",\"tensors\":[";
  for (size_t I = 0; I < Tensors.size(); ++I)
    Out += (I ? ",\n  " : "\n  ") + Tensors[I];
  return Out + "]}";
}

inline int harness_main(int Argc, char **Argv, const Entry *Entries, size_t Count,
                        Mode M) {
  double Limit = 0;
  long OnlyFile = -1;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    std::string V = I + 1 < Argc ? Argv[I + 1] : "";
    if (A == "--mode" && I + 1 < Argc) {
      ++I;
      if (V == "meta") M = Mode::Meta;
      else if (V == "cpu") M = Mode::CPU;
      else if (V == "cuda") M = Mode::CUDA;
      else { std::fprintf(stderr, "unknown --mode %s\n", V.c_str()); return 2; }
    } else if (A == "--function-timeout" && I + 1 < Argc) {
      ++I;
      Limit = std::atof(V.c_str());
    } else if ((A == "--max-live-bytes" || A == "--fallback-max-bytes") && I + 1 < Argc) {
      ++I;
      state().MaxLiveBytes = std::atoll(V.c_str());
    } else if (A == "--file" && I + 1 < Argc) {
      ++I;
      OnlyFile = std::atol(V.c_str());
    } else {
      std::fprintf(stderr, "usage: %s [--mode meta|cpu|cuda] [--file N] [--function-timeout S]"
                   " [--max-live-bytes B]\n", Argv[0]);
      return 2;
    }
  }
  const char *ModeName = M == Mode::Meta ? "meta" : M == Mode::CPU ? "cpu" : "cuda";
  std::string Out = std::string("{\"mode\":\"") + ModeName +
                    "\",\"torch_version\":" + json_quote(TORCH_VERSION) + ",\"functions\":[";
  bool FirstOut = true;
  for (size_t I = 0; I < Count; ++I) {
    if (OnlyFile >= 0 && Entries[I].FileIndex != static_cast<unsigned long>(OnlyFile))
      continue;
    Out += FirstOut ? "\n" : ",\n";
    FirstOut = false;
    Out += run_entry(Entries[I], M, Limit);
  }
  Out += "\n]}\n";
  std::fwrite(Out.data(), 1, Out.size(), stdout);
  std::fflush(stdout);
  return 0;
}

} // namespace tma_probe
// ---- end of tma_probe ----
