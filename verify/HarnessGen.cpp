// Harness generation: pure text editing, no Clang and no file system.
//
// Each user file becomes a block of the translation unit with two kinds of
// edits applied at byte offsets the frontend computed: probe statements
// inserted after binding statements, and device expressions replaced by calls
// into the probe runtime. No edit adds a newline, so after a `#line 1 "path"`
// directive every line of the block keeps its number and compiler errors
// point into the user's file.
//
// With several files each block is wrapped in its own namespace so that two
// files may both define block1() or a static helper. The files' top-level
// File-scope #include lines are hoisted above the namespaces (and blanked in
// place, to keep line numbers): headers included inside a namespace would
// declare the standard library or LibTorch inside it. An #include inside a
// function body brings in statements and stays where it is. <torch/torch.h> is already included
// by then, so its include guard makes the user's copy a no-op anyway.
//
// Edits that are out of range or overlap an earlier one are skipped and
// listed in a comment at the top of the output rather than corrupting it.
#include "verify/Harness.h"
#include "verify/ProbeRuntime.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstdio>

namespace tma::verify {

const char *modeName(Mode M) {
  switch (M) {
  case Mode::Meta:
    return "meta";
  case Mode::CPU:
    return "cpu";
  case Mode::CUDA:
    return "cuda";
  }
  return "meta";
}

namespace {

/// A C++ string literal (with quotes) holding S.
std::string cppString(llvm::StringRef S) {
  std::string Out = "\"";
  for (unsigned char C : S) {
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += static_cast<char>(C);
    } else if (C < 0x20 || C == 0x7f) {
      char Buf[8];
      std::snprintf(Buf, sizeof Buf, "\\%03o", C);
      Out += Buf;
    } else {
      Out += static_cast<char>(C);
    }
  }
  return Out + "\"";
}

struct Edit {
  size_t Begin, End; // replaced range; Begin == End for an insertion
  std::string Text;
  std::string What; // for the skipped-sites comment
};

/// Whether each offset of Text is outside every brace: a coarse lexer that
/// skips comments, string and character literals (raw strings are rare
/// enough in LibTorch code to be read as plain ones).
std::vector<bool> outsideBraces(llvm::StringRef Text) {
  std::vector<bool> Out(Text.size() + 1, true);
  int Depth = 0;
  for (size_t K = 0; K < Text.size(); ++K) {
    Out[K] = Depth == 0;
    char C = Text[K];
    if (C == '/' && K + 1 < Text.size() && Text[K + 1] == '/') {
      while (K < Text.size() && Text[K] != '\n')
        Out[K++] = Depth == 0;
      if (K < Text.size())
        Out[K] = Depth == 0;
    } else if (C == '/' && K + 1 < Text.size() && Text[K + 1] == '*') {
      size_t End = Text.find("*/", K + 2);
      End = End == llvm::StringRef::npos ? Text.size() : End + 1;
      for (; K < End && K < Text.size(); ++K)
        Out[K] = Depth == 0;
    } else if (C == '"' || C == '\'') {
      for (++K; K < Text.size() && Text[K] != C && Text[K] != '\n'; ++K) {
        Out[K] = Depth == 0;
        if (Text[K] == '\\')
          ++K;
      }
    } else if (C == '{') {
      ++Depth;
    } else if (C == '}') {
      Depth = std::max(0, Depth - 1);
    }
  }
  return Out;
}

/// Top-level (not inside #if, not inside braces: a function body may
/// #include its statements) #include lines: [Begin, End) of each line
/// without its newline.
std::vector<std::pair<size_t, size_t>> topLevelIncludes(llvm::StringRef Text) {
  std::vector<std::pair<size_t, size_t>> Result;
  std::vector<bool> FileScope = outsideBraces(Text);
  int Depth = 0;
  size_t Pos = 0;
  while (Pos < Text.size()) {
    size_t End = Text.find('\n', Pos);
    if (End == llvm::StringRef::npos)
      End = Text.size();
    llvm::StringRef Line = Text.slice(Pos, End).ltrim(" \t");
    if (!FileScope[Pos]) {
      Pos = End + 1;
      continue;
    }
    if (Line.consume_front("#")) {
      llvm::StringRef Directive = Line.ltrim(" \t");
      if (Directive.startswith("if")) // if, ifdef, ifndef
        ++Depth;
      else if (Directive.startswith("endif"))
        Depth = std::max(0, Depth - 1);
      else if (Depth == 0 && Directive.startswith("include"))
        Result.push_back({Pos, End});
    }
    Pos = End + 1;
  }
  return Result;
}

unsigned lineOfOffset(llvm::StringRef Text, size_t Offset) {
  return 1 + static_cast<unsigned>(Text.take_front(Offset).count('\n'));
}

/// Applies the edits in offset order; skipped ones are described in Skipped.
std::string applyEdits(const HarnessFile &F, std::vector<Edit> Edits,
                       std::vector<std::string> &Skipped) {
  // Stable: probes given for the same offset keep the frontend's order.
  std::stable_sort(Edits.begin(), Edits.end(), [](const Edit &A, const Edit &B) {
    return A.Begin < B.Begin;
  });
  std::string Out;
  Out.reserve(F.Text.size() + Edits.size() * 64);
  size_t Copied = 0;
  for (const Edit &E : Edits) {
    if (E.Begin > E.End || E.End > F.Text.size()) {
      Skipped.push_back(F.Path + ": " + E.What + ": offset past the end of the file");
      continue;
    }
    if (E.Begin < Copied) {
      Skipped.push_back(F.Path + ": " + E.What + ": overlaps an earlier site");
      continue;
    }
    Out.append(F.Text, Copied, E.Begin - Copied);
    Out += E.Text;
    Copied = E.End;
  }
  Out.append(F.Text, Copied, std::string::npos);
  return Out;
}

std::string probeStatement(const ProbeSite &P) {
  return "::tma_probe::record(" + cppString(P.Function) + ", " + cppString(P.Name) +
         ", " + std::to_string(P.Line) + ", " + P.Name + ");";
}

std::string calleeName(const std::string &Function, size_t FileIndex, bool Wrapped) {
  llvm::StringRef F(Function);
  F.consume_front("::");
  std::string Prefix = Wrapped ? "::tma_u" + std::to_string(FileIndex) + "::" : "::";
  return Prefix + F.str();
}

std::string callExpression(const std::string &Function, size_t FileIndex,
                           bool Wrapped) {
  return calleeName(Function, FileIndex, Wrapped) + "()";
}

/// The body of a call's entry: make each argument (a tensor's storage is
/// registered under the parameter's name, so a view of it has that base),
/// mark the inputs made (what they hold counts against the memory limit,
/// but not as the function's allocations), then call. The locals are
/// named tma_aN, not after the parameters, so no name in the user's code
/// can collide with them.
std::string callBody(const HarnessCall &C, size_t FileIndex, bool Wrapped) {
  std::string Body;
  std::string Args;
  for (size_t K = 0; K < C.Args.size(); ++K) {
    const HarnessInput &A = C.Args[K];
    std::string Local = "tma_a" + std::to_string(K);
    if (A.IsTensor) {
      std::string Sizes;
      for (size_t D = 0; D < A.Sizes.size(); ++D)
        Sizes += (D ? ", " : "") + std::to_string(A.Sizes[D]) + "LL";
      Body += " at::Tensor " + Local + " = ::tma_probe::make_input(" +
              cppString(A.Name) + ", std::vector<int64_t>{" + Sizes +
              "}, c10::ScalarType::" + A.ScalarType + ");";
    } else {
      Body += " " + A.IntegerType + " " + Local + " = static_cast<" + A.IntegerType +
              ">(" + std::to_string(A.Value) + "LL);";
    }
    Args += (K ? ", " : "") + (A.Move ? "std::move(" + Local + ")" : Local);
  }
  Body += " ::tma_probe::inputs_ready(); (void)" + calleeName(C.Function, FileIndex, Wrapped) +
          "(" + Args + ");";
  return Body;
}

} // namespace

std::string generateHarness(const std::vector<HarnessFile> &Files, Mode M) {
  const bool Wrap = Files.size() > 1;
  std::vector<std::string> Skipped;
  std::string Hoisted;
  std::vector<std::string> Bodies;

  for (size_t I = 0; I < Files.size(); ++I) {
    const HarnessFile &F = Files[I];
    std::vector<Edit> Edits;
    for (const ProbeSite &P : F.Probes)
      Edits.push_back({P.InsertOffset, P.InsertOffset, probeStatement(P),
                       "probe of '" + P.Name + "' at line " + std::to_string(P.Line)});
    for (const DeviceSite &D : F.Devices) {
      if (D.End > F.Text.size() || D.Begin >= D.End) {
        Skipped.push_back(F.Path + ": device site [" + std::to_string(D.Begin) + ", " +
                          std::to_string(D.End) + "): empty or past the end of the file");
        continue;
      }
      std::string Replacement =
          D.K == DeviceSite::DeviceTypeExpr
              ? std::string("::tma_probe::device_type()")
              // Keep the literal: a CUDA run honours "cuda:1".
              : "::tma_probe::device_cstr(" + F.Text.substr(D.Begin, D.End - D.Begin) + ")";
      Edits.push_back({D.Begin, D.End, Replacement,
                       "device site at line " +
                           std::to_string(lineOfOffset(F.Text, D.Begin))});
    }
    if (Wrap) {
      for (auto [Begin, End] : topLevelIncludes(F.Text)) {
        Hoisted += "#line " + std::to_string(lineOfOffset(F.Text, Begin)) + " " +
                   cppString(F.Path) + "\n" + F.Text.substr(Begin, End - Begin) + "\n";
        Edits.push_back({Begin, End, "", "hoisted #include"});
      }
    }
    Bodies.push_back(applyEdits(F, std::move(Edits), Skipped));
  }

  std::string Out;
  Out += "// Generated by tensor-accountant --verify (default mode: ";
  Out += modeName(M);
  Out += "). Do not edit: regenerate.\n"
         "// Build: g++ -std=c++17 -O0 harness.cpp with LibTorch's include and\n"
         "// library flags (or the CMakeLists.txt from --emit-harness); run:\n"
         "//   ./harness [--mode meta|cpu|cuda] [--file N] [--function-timeout S]\n"
         "//             [--max-live-bytes B]\n";
  for (const std::string &S : Skipped)
    Out += "// tma: skipped " + S + "\n";
  Out += "#include <torch/torch.h>\n";
  Out += probeRuntimeSource();
  if (!Hoisted.empty())
    Out += "// Top-level #include lines of the user files, hoisted out of the\n"
           "// per-file namespaces.\n" +
           Hoisted;
  // A user main() must not clash with the harness's.
  Out += "#define main tma_user_main\n";
  for (size_t I = 0; I < Files.size(); ++I) {
    if (Wrap)
      Out += "namespace tma_u" + std::to_string(I) + " {\n";
    Out += "#line 1 " + cppString(Files[I].Path) + "\n";
    Out += Bodies[I];
    if (Out.empty() || Out.back() != '\n')
      Out += '\n';
    if (Wrap)
      Out += "} // namespace tma_u" + std::to_string(I) + "\n";
  }
  Out += "#undef main\n";
  // Back to the generated file's own numbering: the directive's next line is
  // line (lines so far + 2).
  size_t LinesSoFar = static_cast<size_t>(std::count(Out.begin(), Out.end(), '\n'));
  Out += "#line " + std::to_string(LinesSoFar + 2) + " \"harness.cpp\"\n";

  Out += "static const ::tma_probe::Entry tma_entries[] = {\n";
  size_t Count = 0;
  for (size_t I = 0; I < Files.size(); ++I)
    for (const std::string &Fn : Files[I].Functions) {
      Out += "    {" + std::to_string(I) + "u, " + cppString(Files[I].Path) + ", " +
             cppString(Fn) + ", [] { (void)" + callExpression(Fn, I, Wrap) +
             "; }, -1, nullptr},\n";
      ++Count;
    }
  for (size_t I = 0; I < Files.size(); ++I)
    for (const HarnessCall &C : Files[I].Calls) {
      Out += "    {" + std::to_string(I) + "u, " + cppString(Files[I].Path) + ", " +
             cppString(C.Function) + ", [] {" + callBody(C, I, Wrap) + " }, " +
             std::to_string(C.Draw) + ", " + cppString(C.Inputs) + "},\n";
      ++Count;
    }
  Out += "    {0u, nullptr, nullptr, nullptr, -1, nullptr}, // keeps the array non-empty\n};\n\n";
  Out += "int main(int argc, char **argv) {\n"
         "  return ::tma_probe::harness_main(argc, argv, tma_entries, " +
         std::to_string(Count) + ", ::tma_probe::Mode::" +
         (M == Mode::Meta ? "Meta" : M == Mode::CPU ? "CPU" : "CUDA") + ");\n}\n";
  return Out;
}

std::string generateCMakeLists(const std::vector<std::string> &UserFlags) {
  std::string Text = R"(# Generated by tensor-accountant --emit-harness. Builds harness.cpp:
#   cmake -S . -B build -DCMAKE_PREFIX_PATH=/path/to/libtorch   (or -DTorch_DIR=...)
#   cmake --build build && ./build/harness --mode meta
# Debian's libtorch-dev is found without any hint.
cmake_minimum_required(VERSION 3.18)
project(tma_harness CXX)

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  # The harness measures layouts, not speed; -O0 builds fastest.
  set(CMAKE_BUILD_TYPE Debug)
endif()

find_package(Torch REQUIRED)
# TORCH_CXX_FLAGS carries -D_GLIBCXX_USE_CXX11_ABI=... for PyTorch wheels.
string(APPEND CMAKE_CXX_FLAGS " ${TORCH_CXX_FLAGS}")

add_executable(harness harness.cpp)
target_link_libraries(harness PRIVATE ${TORCH_LIBRARIES})
# Add the include directories your sources need, e.g.:
# target_include_directories(harness PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../include)

# CUDA memory statistics are compiled in only when this LibTorch has CUDA.
if(TORCH_CUDA_LIBRARIES OR CAFFE2_USE_CUDA)
  target_compile_definitions(harness PRIVATE TMA_PROBE_HAS_CUDA=1)
  if(CUDAToolkit_INCLUDE_DIRS)
    target_include_directories(harness PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  endif()
endif()
)";
  if (!UserFlags.empty()) {
    // The analysed files' include directories and macros, as their
    // compile commands had them on this machine.
    Text += "\n# The analysed files' include directories and macros.\n"
            "target_compile_options(harness PRIVATE";
    for (const std::string &F : UserFlags)
      Text += " \"" + F + "\"";
    Text += ")\n";
  }
  return Text;
}

} // namespace tma::verify
