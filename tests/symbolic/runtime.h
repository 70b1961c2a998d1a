// The runtime of the symbolic differential harness (pasted into the
// generated program by make_harness.py, after <torch/torch.h>).
//
// stdin: one block per run, each line one item, sizes chosen by the checker:
//   RUN <function> <draw>
//   T <name> <dtype> randn <rank> <size>...            a tensor parameter
//   T <name> <dtype> randint <low> <high> <rank> <size>...
//   I <name> <value>                                   an integer parameter
//   C <name> <value>        a user module's constructor argument, in order
//   GO                      construct the module if any, call the function
//   BUILD                   only construct the module (no call): the checker
//                           reads its parameters to evaluate assumptions
// stdout: one JSON object per run, on one line:
//   {"function": .., "draw": .., "error": null | "message",
//    "params": [{"name", "shape", "dtype", "storage_bytes"}...],
//    "module": null | {"parameters": [M...], "buffers": [M...],
//                      "parameter_bytes": <sum of nbytes over parameters>},
//    "layers": [{"name", "line", "parameter_bytes", "gradient_bytes"}...]
//              each torch::nn layer the function declares, read when it
//              has returned (gradient_bytes: sum of p.grad().nbytes() over
//              parameters with a gradient),
//    "optimizers": [{"name", "line", "state_bytes", "gradient_bytes",
//                    "entries"}...] each optimizer after its last step():
//              the nbytes of the tensors in its state(), its parameters'
//              gradients, the number of state entries,
//    "tensors": [{"name", "line", "shape", "strides", "storage_offset",
//                 "dtype", "storage_bytes", "contiguous", "base"}...],
//    "integers": {name: value} each integer local the function binds with
//              `auto n = ...;` (the last value; a report names a run-time
//              integer it cannot derive after its variable)}
// with M = {"name" (dotted, "fc1.weight"), "shape", "dtype", "nbytes",
// "storage_bytes"}. "module" is null for a free function.
// "base" is the first probed name (parameters first, in order, then the
// module's parameters and buffers as "fc1->weight") whose storage this
// tensor shares, or null: the storage is new. Storages are held for the
// whole run, so an address is never reused by a later one.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace tma_sym {

struct Args {
  std::vector<at::Tensor> Tensors;
  std::vector<int64_t> Integers;
  std::vector<int64_t> Ctor; // a module's constructor arguments (C lines)
  bool BuildOnly = false;    // BUILD: construct the module, call nothing
  at::Tensor tensor(size_t I) const { return Tensors.at(I); }
  int64_t integer(size_t I) const { return Integers.at(I); }
  int64_t ctor(size_t I) const { return Ctor.at(I); }
};

struct Entry {
  const char *Function;
  const char *File;
  void (*Call)(Args &);
};

struct Seen {
  at::Storage Storage;
  std::string Name;
};

struct Layer {
  std::string Name;
  unsigned Line;
  std::shared_ptr<torch::nn::Module> Module;
};

struct Run {
  std::vector<Seen> Storages;
  std::vector<std::string> Tensors;
  std::vector<std::string> Params;
  /// Integer locals by name, as `"n":5`, the last value of each.
  std::vector<std::pair<std::string, std::string>> Integers;
  std::string Module = "null"; // recordModule's JSON object
  /// The torch::nn layers the function declares, kept alive past its
  /// return, so their parameters' gradients are read when it has run.
  std::vector<Layer> Layers;
  /// Per optimizer variable: its JSON object after its last step().
  std::vector<std::pair<std::string, std::string>> Optimizers;
};

inline Run *&current() {
  static Run *R = nullptr;
  return R;
}

inline std::string quote(const std::string &S) {
  std::string Out = "\"";
  for (unsigned char C : S) {
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += static_cast<char>(C);
    } else if (C < 0x20) {
      char Buf[8];
      std::snprintf(Buf, sizeof Buf, "\\u%04x", C);
      Out += Buf;
    } else {
      Out += static_cast<char>(C);
    }
  }
  return Out + "\"";
}

inline std::string ints(c10::IntArrayRef V) {
  std::string Out = "[";
  for (size_t I = 0; I < V.size(); ++I)
    Out += (I ? "," : "") + std::to_string(V[I]);
  return Out + "]";
}

inline std::string dtypeName(c10::ScalarType T) {
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
  case c10::ScalarType::ComplexFloat: return "complex64";
  case c10::ScalarType::ComplexDouble: return "complex128";
  default: return c10::toString(T);
  }
}

inline c10::ScalarType dtypeOf(const std::string &Name) {
  for (c10::ScalarType T :
       {c10::ScalarType::Half, c10::ScalarType::BFloat16, c10::ScalarType::Float,
        c10::ScalarType::Double, c10::ScalarType::Char, c10::ScalarType::Byte,
        c10::ScalarType::Short, c10::ScalarType::Int, c10::ScalarType::Long,
        c10::ScalarType::Bool})
    if (dtypeName(T) == Name)
      return T;
  throw std::runtime_error("unknown dtype " + Name);
}

/// The storage's first probed name, or "" (new storage); remembers it.
inline std::string baseOf(const at::Tensor &T, const std::string &Name) {
  Run &R = *current();
  std::string Base;
  for (const Seen &S : R.Storages)
    if (S.Storage.unsafeGetStorageImpl() == T.storage().unsafeGetStorageImpl()) {
      Base = S.Name;
      break;
    }
  R.Storages.push_back({T.storage(), Name});
  return Base;
}

inline void recordTensor(const char *Name, unsigned Line, const at::Tensor &T) {
  Run *R = current();
  if (!R)
    return;
  std::string J = "{\"name\":" + quote(Name) + ",\"line\":" + std::to_string(Line);
  if (!T.defined()) {
    J += ",\"defined\":false}";
  } else {
    std::string Base = baseOf(T, Name);
    J += ",\"shape\":" + ints(T.sizes()) + ",\"strides\":" + ints(T.strides()) +
         ",\"storage_offset\":" + std::to_string(T.storage_offset()) +
         ",\"dtype\":" + quote(dtypeName(T.scalar_type())) +
         ",\"storage_bytes\":" + std::to_string(T.storage().nbytes()) +
         ",\"contiguous\":" + (T.is_contiguous() ? "true" : "false") +
         ",\"base\":" + (Base.empty() ? std::string("null") : quote(Base)) + "}";
  }
  R->Tensors.push_back(J);
}

/// The probe after each binding statement of the corpus.
inline void record(const char *, const char *Name, unsigned Line, const at::Tensor &T) {
  recordTensor(Name, Line, T);
}
/// An integer local: its value, for the report's symbols named after it.
template <class T, typename std::enable_if<std::is_integral<T>::value &&
                                               !std::is_same<T, bool>::value,
                                           int>::type = 0>
inline void record(const char *, const char *Name, unsigned, const T &V) {
  Run *R = current();
  if (!R)
    return;
  std::string Value = std::to_string(V);
  for (auto &Entry : R->Integers)
    if (Entry.first == Name) {
      Entry.second = Value;
      return;
    }
  R->Integers.push_back({Name, Value});
}
template <class T, typename std::enable_if<
                       !std::is_convertible<const T &, const at::Tensor &>::value &&
                           !(std::is_integral<T>::value && !std::is_same<T, bool>::value),
                       int>::type = 0>
inline void record(const char *, const char *, unsigned, const T &) {}

/// "fc1.weight" -> "fc1->weight": how the report names a member layer's
/// parameter in a module method's expressions and bases.
inline std::string memberPath(const std::string &Dotted) {
  std::string Out;
  for (char C : Dotted)
    Out += C == '.' ? std::string("->") : std::string(1, C);
  return Out;
}

inline std::string moduleTensors(const torch::OrderedDict<std::string, at::Tensor> &Named,
                                 int64_t *Bytes) {
  std::string Out = "[";
  bool First = true;
  for (const auto &Item : Named) {
    const at::Tensor &T = Item.value();
    if (!T.defined())
      continue;
    // Probed like a parameter, so a tensor of the method that shares a
    // module parameter's storage has that member as its base.
    baseOf(T, memberPath(Item.key()));
    Out += std::string(First ? "" : ",") + "{\"name\":" + quote(Item.key()) +
           ",\"shape\":" + ints(T.sizes()) + ",\"dtype\":" + quote(dtypeName(T.scalar_type())) +
           ",\"nbytes\":" + std::to_string(T.nbytes()) +
           ",\"storage_bytes\":" + std::to_string(T.storage().nbytes()) + "}";
    First = false;
    if (Bytes)
      *Bytes += static_cast<int64_t>(T.nbytes());
  }
  return Out + "]";
}

/// After a user module is constructed: its named parameters and buffers
/// (recursively, "fc1.weight") and the sum of the parameters' nbytes, the
/// figure issue 13 checks a module's parameter bytes against.
inline void recordModule(const torch::nn::Module &M) {
  Run *R = current();
  if (!R)
    return;
  int64_t Bytes = 0;
  std::string Params = moduleTensors(M.named_parameters(true), &Bytes);
  std::string Buffers = moduleTensors(M.named_buffers(true), nullptr);
  R->Module = "{\"parameters\":" + Params + ",\"buffers\":" + Buffers +
              ",\"parameter_bytes\":" + std::to_string(Bytes) + "}";
}

/// After a layer's declaration `torch::nn::Linear fc(...);`: the module,
/// kept for recordLayers (an empty holder, `{nullptr}`, has none).
template <class Impl>
inline void recordLayer(const char *Name, unsigned Line,
                        const torch::nn::ModuleHolder<Impl> &H) {
  Run *R = current();
  if (!R || H.is_empty())
    return;
  R->Layers.push_back({Name, Line, H.ptr()});
}

inline int64_t gradientBytes(const std::vector<at::Tensor> &Params) {
  int64_t Bytes = 0;
  for (const at::Tensor &P : Params)
    if (P.grad().defined())
      Bytes += static_cast<int64_t>(P.grad().nbytes());
  return Bytes;
}

/// When the function has returned: each layer's sum of p.nbytes() over
/// parameters() and of p.grad().nbytes() over those with a gradient.
inline std::string recordLayers(const Run &R) {
  std::string Out = "[";
  for (size_t I = 0; I < R.Layers.size(); ++I) {
    const Layer &L = R.Layers[I];
    std::vector<at::Tensor> Params = L.Module->parameters();
    int64_t Bytes = 0;
    for (const at::Tensor &P : Params)
      Bytes += static_cast<int64_t>(P.nbytes());
    Out += std::string(I ? "," : "") + "{\"name\":" + quote(L.Name) +
           ",\"line\":" + std::to_string(L.Line) +
           ",\"parameter_bytes\":" + std::to_string(Bytes) +
           ",\"gradient_bytes\":" + std::to_string(gradientBytes(Params)) + "}";
  }
  return Out + "]";
}

/// The tensors of one parameter's optimizer state, by the state's type;
/// a type not listed throws, so a new optimizer is not silently 0 bytes.
inline int64_t stateBytes(const torch::optim::OptimizerParamState &S) {
  int64_t Bytes = 0;
  auto Add = [&](const at::Tensor &T) {
    if (T.defined())
      Bytes += static_cast<int64_t>(T.nbytes());
  };
  using namespace torch::optim;
  if (auto *P = dynamic_cast<const SGDParamState *>(&S)) {
    Add(P->momentum_buffer());
  } else if (auto *P = dynamic_cast<const AdamParamState *>(&S)) {
    Add(P->exp_avg()), Add(P->exp_avg_sq()), Add(P->max_exp_avg_sq());
  } else if (auto *P = dynamic_cast<const AdamWParamState *>(&S)) {
    Add(P->exp_avg()), Add(P->exp_avg_sq()), Add(P->max_exp_avg_sq());
  } else if (auto *P = dynamic_cast<const RMSpropParamState *>(&S)) {
    Add(P->square_avg()), Add(P->momentum_buffer()), Add(P->grad_avg());
  } else if (auto *P = dynamic_cast<const AdagradParamState *>(&S)) {
    Add(P->sum());
  } else {
    throw std::runtime_error("an optimizer state the harness does not read");
  }
  return Bytes;
}

/// After `opt.step();`: the bytes of every tensor in opt.state(), and of
/// the gradients of its parameters.
inline void recordOptimizer(const char *Name, unsigned Line,
                            torch::optim::Optimizer &O) {
  Run *R = current();
  if (!R)
    return;
  int64_t State = 0;
  for (const auto &Entry : O.state())
    State += stateBytes(*Entry.second);
  std::string J = "{\"name\":" + quote(Name) + ",\"line\":" + std::to_string(Line) +
                  ",\"state_bytes\":" + std::to_string(State) +
                  ",\"gradient_bytes\":" + std::to_string(gradientBytes(O.parameters())) +
                  ",\"entries\":" + std::to_string(O.state().size()) + "}";
  for (auto &P : R->Optimizers)
    if (P.first == Name) {
      P.second = J; // the last step()'s
      return;
    }
  R->Optimizers.push_back({Name, J});
}

inline at::Tensor makeTensor(std::istringstream &In, std::string &Name) {
  std::string DType, Fill;
  In >> Name >> DType >> Fill;
  int64_t Low = 0, High = 0;
  if (Fill == "randint")
    In >> Low >> High;
  size_t Rank = 0;
  In >> Rank;
  std::vector<int64_t> Sizes(Rank);
  for (int64_t &S : Sizes)
    In >> S;
  if (!In)
    throw std::runtime_error("bad tensor line for " + Name);
  auto Options = at::TensorOptions().dtype(dtypeOf(DType));
  if (Fill == "randint")
    return torch::randint(Low, High, Sizes, Options);
  return torch::randn(Sizes, Options.dtype(at::kFloat)).to(dtypeOf(DType));
}

inline int run(const Entry *Entries, size_t Count) {
  torch::set_num_threads(1);
  std::string Line;
  const Entry *E = nullptr;
  std::string Draw;
  Args A;
  Run R;
  while (std::getline(std::cin, Line)) {
    std::istringstream In(Line);
    std::string Tag;
    In >> Tag;
    if (Tag == "RUN") {
      std::string Function;
      In >> Function >> Draw;
      E = nullptr;
      for (size_t I = 0; I < Count; ++I)
        if (Function == Entries[I].Function)
          E = &Entries[I];
      if (!E) {
        std::cerr << "no function " << Function << "\n";
        return 2;
      }
      A = Args();
      R = Run();
      current() = &R;
      torch::manual_seed(std::hash<std::string>()(Function + "#" + Draw) % 100003);
    } else if (Tag == "T") {
      std::string Name;
      at::Tensor T = makeTensor(In, Name);
      baseOf(T, Name);
      R.Params.push_back("{\"name\":" + quote(Name) + ",\"shape\":" + ints(T.sizes()) +
                         ",\"dtype\":" + quote(dtypeName(T.scalar_type())) +
                         ",\"storage_bytes\":" + std::to_string(T.storage().nbytes()) + "}");
      A.Tensors.push_back(T);
      A.Integers.push_back(0);
    } else if (Tag == "I") {
      std::string Name;
      int64_t V = 0;
      In >> Name >> V;
      A.Tensors.push_back(at::Tensor());
      A.Integers.push_back(V);
    } else if (Tag == "C") {
      std::string Name;
      int64_t V = 0;
      In >> Name >> V;
      A.Ctor.push_back(V);
    } else if (Tag == "GO" || Tag == "BUILD") {
      if (!E)
        return 2;
      A.BuildOnly = Tag == "BUILD";
      std::string Error = "null";
      try {
        E->Call(A);
      } catch (const c10::Error &X) {
        std::string Msg = X.what_without_backtrace();
        Error = quote(Msg.substr(0, Msg.find('\n')));
      } catch (const std::exception &X) {
        Error = quote(X.what());
      }
      std::string Out = "{\"function\":" + quote(E->Function) + ",\"file\":" + quote(E->File) +
                        ",\"draw\":" + quote(Draw) + ",\"error\":" + Error +
                        ",\"module\":" + R.Module + ",\"layers\":" + recordLayers(R) +
                        ",\"optimizers\":[";
      for (size_t I = 0; I < R.Optimizers.size(); ++I)
        Out += (I ? "," : "") + R.Optimizers[I].second;
      Out += "],\"params\":[";
      for (size_t I = 0; I < R.Params.size(); ++I)
        Out += (I ? "," : "") + R.Params[I];
      Out += "],\"tensors\":[";
      for (size_t I = 0; I < R.Tensors.size(); ++I)
        Out += (I ? "," : "") + R.Tensors[I];
      Out += "],\"integers\":{";
      for (size_t I = 0; I < R.Integers.size(); ++I)
        Out += (I ? "," : "") + quote(R.Integers[I].first) + ":" + R.Integers[I].second;
      Out += "}}\n";
      std::fwrite(Out.data(), 1, Out.size(), stdout);
      std::fflush(stdout);
      current() = nullptr;
      E = nullptr;
    }
  }
  return 0;
}

} // namespace tma_sym
