#include "driver/Analysis.h"
#include "driver/Companions.h"
#include "driver/CudaHostCode.h"
#include "driver/PreambleCache.h"
#include "driver/SourceFiles.h"
#include "driver/Toolchain.h"

#include "clang/Basic/DiagnosticFrontend.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/DiagnosticLex.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

using namespace clang::tooling;

namespace tma {

std::unique_ptr<CompilationDatabase>
makeFixedDatabase(const std::vector<std::string> &UserFlags, bool HaveUserFlags,
                  std::string &Error) {
  std::vector<std::string> Flags = UserFlags;
  if (!HaveUserFlags)
    Flags.push_back("-std=c++17");
  // A LibTorch the flags reach already needs no default one; a flag that
  // merely mentions "torch" (-I src/pytorch-utils) is no such flag.
  auto Torch = findLibTorchHeaders();
  if (!Torch && !commandReachesLibTorch(UserFlags, ".", nullptr)) {
    Error = "LibTorch headers not found: install Debian's libtorch-dev, set "
            "Torch_DIR to a LibTorch, or pass include flags after --";
    return nullptr;
  }
  if (Torch && !commandReachesLibTorch(UserFlags, ".", &*Torch))
    for (std::string &Flag : libTorchFlags(*Torch))
      Flags.push_back(std::move(Flag));
  return std::make_unique<FixedCompilationDatabase>(".", Flags);
}

namespace {

/// A build's compile commands, each with this machine's LibTorch added
/// when its own include directories reach none (a database written by a
/// build that found LibTorch some other way, or none at all), by the same
/// rule as the flags after --.
class DefaultLibTorchDatabase : public CompilationDatabase {
public:
  explicit DefaultLibTorchDatabase(std::unique_ptr<CompilationDatabase> Inner)
      : Inner(std::move(Inner)) {}

  std::vector<CompileCommand>
  getCompileCommands(llvm::StringRef File) const override {
    return adjusted(Inner->getCompileCommands(File));
  }
  std::vector<std::string> getAllFiles() const override {
    return Inner->getAllFiles();
  }
  std::vector<CompileCommand> getAllCompileCommands() const override {
    return adjusted(Inner->getAllCompileCommands());
  }

private:
  std::vector<CompileCommand> adjusted(std::vector<CompileCommand> Commands) const {
    for (CompileCommand &C : Commands) {
      const std::optional<LibTorchHeaders> &Torch = defaultLibTorch();
      if (!Torch || commandReachesLibTorch(C.CommandLine, C.Directory, &*Torch))
        continue;
      // Before a "--": what follows it is input files.
      std::vector<std::string> Flags = libTorchFlags(*Torch);
      C.CommandLine.insert(llvm::find(C.CommandLine, "--"), Flags.begin(),
                           Flags.end());
    }
    return Commands;
  }
  /// Looked for once, on first need (it may run Python).
  const std::optional<LibTorchHeaders> &defaultLibTorch() const {
    std::call_once(Once, [this] { Torch = findLibTorchHeaders(); });
    return Torch;
  }
  std::unique_ptr<CompilationDatabase> Inner;
  mutable std::once_flag Once;
  mutable std::optional<LibTorchHeaders> Torch;
};

} // namespace

std::unique_ptr<CompilationDatabase>
withDefaultLibTorch(std::unique_ptr<CompilationDatabase> DB) {
  if (!DB)
    return DB;
  return std::make_unique<DefaultLibTorchDatabase>(std::move(DB));
}

std::unique_ptr<CompilationDatabase>
loadBuildDatabase(const std::string &BuildPath, std::string &Error) {
  std::string Why;
  auto DB = CompilationDatabase::loadFromDirectory(BuildPath, Why);
  if (DB)
    return withDefaultLibTorch(std::move(DB));
  llvm::SmallString<256> File(BuildPath);
  llvm::sys::path::append(File, "compile_commands.json");
  if (llvm::sys::fs::exists(File)) {
    // Its own error, without the other database kinds' "not found".
    std::string JSONWhy;
    if (!JSONCompilationDatabase::loadFromFile(File, JSONWhy,
                                               JSONCommandLineSyntax::AutoDetect))
      Why = llvm::StringRef(JSONWhy).trim().str();
    Error = "'" + std::string(File) + "' is not a valid compilation database: " +
            Why;
  } else {
    // Why lists each database kind's "No such file": no news.
    Error = "no compile_commands.json in '" + BuildPath +
            "' (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)";
  }
  return nullptr;
}

std::string missingCommandProblem(const CompilationDatabase &DB,
                                  const std::string &File,
                                  const std::string &DatabaseFile) {
  llvm::SmallString<256> Abs(File);
  llvm::sys::fs::make_absolute(Abs);
  if (!DB.getCompileCommands(Abs).empty())
    return "";
  return "no compile command for '" + File + "' in '" + DatabaseFile + "'" +
         (DB.getAllFiles().empty() ? " (it lists no files)" : "");
}

namespace {

/// The compile commands of one file, fetched up front on the calling
/// thread: a compilation database need not be thread-safe.
class OneFileDatabase : public CompilationDatabase {
public:
  explicit OneFileDatabase(std::vector<CompileCommand> Commands)
      : Commands(std::move(Commands)) {}
  std::vector<CompileCommand>
  getCompileCommands(llvm::StringRef) const override {
    return Commands;
  }

private:
  std::vector<CompileCommand> Commands;
};

/// Holds a file's diagnostics until the run reports them in input order,
/// and notices when clang could not load a cached PCH.
class BufferedDiagnostics : public clang::DiagnosticConsumer {
public:
  BufferedDiagnostics() : OS(Text), Printer(OS, makeOptions()) {}

  void BeginSourceFile(const clang::LangOptions &LO,
                       const clang::Preprocessor *PP) override {
    Printer.BeginSourceFile(LO, PP);
  }
  void EndSourceFile() override { Printer.EndSourceFile(); }
  void finish() override { Printer.finish(); }
  void HandleDiagnostic(clang::DiagnosticsEngine::Level Level,
                        const clang::Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    unsigned ID = Info.getID();
    if (Level >= clang::DiagnosticsEngine::Error &&
        ((ID >= clang::diag::DIAG_START_SERIALIZATION &&
          ID < clang::diag::DIAG_START_LEX) ||
         ID == clang::diag::err_fe_unable_to_load_pch))
      PCHFailed = true;
    if (ID == clang::diag::err_pp_file_not_found && Info.getNumArgs() > 0 &&
        Info.getArgKind(0) == clang::DiagnosticsEngine::ak_std_string &&
        MissingHeader.empty()) {
      MissingHeader = Info.getArgStdStr(0);
      MissingHeaderHint = missingHeaderHint(MissingHeader);
    }
    Printer.HandleDiagnostic(Level, Info);
  }

  /// What clang would have printed, with its "N errors generated." line.
  std::string text() {
    unsigned W = getNumWarnings(), E = getNumErrors();
    if (W)
      OS << W << " warning" << (W == 1 ? "" : "s");
    if (W && E)
      OS << " and ";
    if (E)
      OS << E << " error" << (E == 1 ? "" : "s");
    if (W || E)
      OS << " generated.\n";
    OS.flush();
    return Text;
  }
  bool PCHFailed = false;
  /// The first header clang could not find, as the code names it.
  std::string MissingHeader;
  /// Which package a missing header of torch/extension.h comes with.
  std::string MissingHeaderHint;

private:
  static clang::DiagnosticOptions *makeOptions() {
    auto *Opts = new clang::DiagnosticOptions;
    Opts->ShowColors = llvm::errs().has_colors();
    return Opts;
  }
  std::string Text;
  llvm::raw_string_ostream OS;
  clang::TextDiagnosticPrinter Printer;
};

/// Header names clang's driver gives no C++ language: `.h` is C unless the
/// driver is in C++ mode (a database's `c++` is; the default command's
/// `clang-tool` is not), and .inl/.ipp/.tpp are no source at all to it.
bool headerWithoutCxxType(llvm::StringRef File) {
  std::string Ext = llvm::sys::path::extension(File).str();
  return Ext == ".h" || Ext == ".inl" || Ext == ".ipp" || Ext == ".tpp";
}

/// A header analysed on its own is C++ (LibTorch is; issue 10 item 20:
/// `.h` compiled as C gave "-std=c++17 not allowed with 'C'"), unless the
/// command says otherwise: a -x, a C -std, or a C++-mode driver (which
/// takes .h for C++ already). `-x c++-header` goes right before the file.
ArgumentsAdjuster headersAsCxx() {
  return [](const CommandLineArguments &Args, llvm::StringRef File) {
    if (Args.empty() || !headerWithoutCxxType(File))
      return Args;
    llvm::StringRef Driver = llvm::sys::path::filename(Args[0]);
    if (Driver.contains("++"))
      return Args;
    for (llvm::StringRef A : Args) {
      if (A == "--")
        break;
      if (A.startswith("-x") || A.startswith("--driver-mode=") ||
          A.startswith("--language"))
        return Args;
      if (A.consume_front("-std=") && !A.contains("++"))
        return Args; // a C standard: the user means C
    }
    auto It = std::find(Args.rbegin(), Args.rend(), File.str());
    if (It == Args.rend())
      return Args;
    CommandLineArguments Adjusted = Args;
    Adjusted.insert(Adjusted.begin() + (Args.rend() - It - 1),
                    {"-x", "c++-header"});
    return Adjusted;
  };
}

struct FileOutcome {
  std::vector<FileAnalysis> Results;
  /// Parsed as CUDA host code (driver/CudaHostCode.h).
  bool AsCuda = false;
  bool ToolFailed = false;
  std::string Diagnostics;
  std::string Note; // one line about the cache, or empty
  /// One line about companion sources that were left out, or empty.
  std::string CompanionNote;
  /// The main file's bytes as analysed.
  std::string Source;
};

/// The flags of a compile command that another build of the same code
/// needs: include directories (made absolute against the command's
/// directory) and macros; then the source's own directory for `#include
/// "..."`, which a copy of the code elsewhere no longer sits beside.
std::vector<std::string> buildFlagsOf(const CompileCommand *Command,
                                      const std::string &AbsoluteSource) {
  std::vector<std::string> Out;
  auto Absolute = [&](llvm::StringRef Dir) {
    llvm::SmallString<256> P(Dir);
    if (Command && !llvm::sys::path::is_absolute(P))
      llvm::sys::fs::make_absolute(Command->Directory, P);
    llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/true);
    return std::string(P);
  };
  if (Command) {
    const std::vector<std::string> &Args = Command->CommandLine;
    for (size_t K = 0; K < Args.size(); ++K) {
      llvm::StringRef A = Args[K];
      for (llvm::StringRef Flag : {"-isystem", "-iquote", "-idirafter", "-I"}) {
        if (!A.startswith(Flag))
          continue;
        llvm::StringRef Value = A.drop_front(Flag.size());
        if (Value.empty() && K + 1 < Args.size())
          Value = Args[++K];
        if (!Value.empty()) {
          Out.push_back(Flag.str());
          Out.push_back(Absolute(Value));
        }
        break;
      }
      if ((A.startswith("-D") || A.startswith("-U")) && A.size() > 2)
        Out.push_back(A.str());
      else if ((A == "-D" || A == "-U") && K + 1 < Args.size())
        Out.push_back(A.str() + Args[++K]);
    }
  }
  Out.push_back("-iquote");
  Out.push_back(std::string(llvm::sys::path::parent_path(AbsoluteSource)));
  return Out;
}

FileOutcome analyzeOne(const std::vector<CompileCommand> &Commands,
                       const std::string &File,
                       const TranslationUnitCallback &OnTU,
                       PreambleCache *Cache,
                       const std::map<std::string, std::string> &Overlays,
                       const std::shared_ptr<const SourceSnapshot> &Main,
                       const AnalysisOptions &Settings) {
  FileOutcome Out;
  OneFileDatabase DB(Commands);
  // Each tool gets its own file system, so that concurrent tools can sit in
  // different working directories (as AllTUsToolExecutor does).
  // The unsaved documents, and the cached PCH clang is to read: the bytes
  // the cache validated, never the path again (a file swapped in after the
  // check could be anything).
  auto Memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (const auto &[Path, Text] : Overlays)
    Memory->addFile(Path, 0, llvm::MemoryBuffer::getMemBufferCopy(Text, Path));
  // The disk as read into memory, with the main file as it was read before
  // the parse, whatever path the command names it by (driver/SourceFiles.h).
  std::vector<std::shared_ptr<const SourceSnapshot>> Pinned;
  if (Main)
    Pinned.push_back(Main);
  auto Overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      unmappedFileSystem(llvm::vfs::createPhysicalFileSystem(), Pinned));
  Overlay->pushOverlay(Memory);
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS = Overlay;
  ClangTool Tool(DB, {File}, std::make_shared<clang::PCHContainerOperations>(),
                 FS);
  // First, so that nvcc's flags are clang's before anything reads them.
  Out.AsCuda = !Commands.empty() && compilesAsCuda(Commands.front(), File);
  if (Out.AsCuda) {
    addCudaStubHeaders(*Memory);
    Tool.appendArgumentsAdjuster(cudaHostOnly());
  }
  Tool.appendArgumentsAdjuster(getClangStripOutputAdjuster());
  Tool.appendArgumentsAdjuster(getClangSyntaxOnlyAdjuster());
  Tool.appendArgumentsAdjuster(headersAsCxx());
  std::string ResourceDir = clangResourceDir();
  if (!ResourceDir.empty())
    Tool.appendArgumentsAdjuster(getInsertArgumentAdjuster(
        ("-resource-dir=" + ResourceDir).c_str(), ArgumentInsertPosition::END));
  // LibTorch's headers warn under clang; the user's own warnings are not
  // this tool's business.
  Tool.appendArgumentsAdjuster(
      getInsertArgumentAdjuster("-Wno-everything", ArgumentInsertPosition::END));

  // Clang prints "N errors generated." straight to stderr when carets are
  // on; BufferedDiagnostics (its own options, carets on) prints it instead,
  // in order.
  Tool.appendArgumentsAdjuster(getInsertArgumentAdjuster(
      "-fno-caret-diagnostics", ArgumentInsertPosition::END));

  // Last, so the cache keys on the command exactly as it will run.
  std::string UsedPCH;
  std::shared_ptr<llvm::MemoryBuffer> KeepPCH;
  if (Cache)
    Tool.appendArgumentsAdjuster(
        [&](const CommandLineArguments &Args, llvm::StringRef Filename) {
          std::string Note;
          // Overlaid files have no real mtime: their contents join the key
          // (the main file's own overlay need not: only its preamble
          // counts, and that is keyed already).
          std::string ExtraKey;
          std::string Main = getAbsolutePath(File);
          for (const auto &[Path, Text] : Overlays)
            if (Path != Main)
              ExtraKey += Path + "\n" +
                          llvm::utohexstr(llvm::xxHash64(Text)) + "\n";
          auto Use = Cache->prepare(Args, Filename, FS, Note, ExtraKey);
          if (!Note.empty() && Out.Note.empty())
            Out.Note = Note;
          if (!Use)
            return Args;
          UsedPCH = Use->PCHPath;
          KeepPCH = Use->PCHData;
          Memory->addFile(Use->PCHPath, 0,
                          llvm::MemoryBuffer::getMemBuffer(
                              KeepPCH->getMemBufferRef(),
                              /*RequiresNullTerminator=*/false));
          // Before a "--" (an interpolated command ends "-- <file>"): what
          // follows it is input files, whatever it looks like.
          CommandLineArguments Adjusted = Args;
          Adjusted.insert(llvm::find(Adjusted, "--"), Use->ExtraArgs.begin(),
                          Use->ExtraArgs.end());
          return Adjusted;
        });

  BufferedDiagnostics Diags;
  Tool.setDiagnosticConsumer(&Diags);
  Tool.setPrintErrorMessage(false); // printed below, in input order
  auto Factory = makeAnalysisActionFactory(Out.Results, OnTU, Settings);
  Out.ToolFailed = Tool.run(Factory.get()) != 0;
  Out.Diagnostics = Diags.text();

  // A PCH clang would not load: drop it and parse the ordinary way.
  if (!UsedPCH.empty() && (Diags.PCHFailed || Out.Results.empty())) {
    Cache->discard(UsedPCH);
    FileOutcome Retry =
        analyzeOne(Commands, File, OnTU, nullptr, Overlays, Main, Settings);
    Retry.Note = "discarded an unreadable cache entry (" + UsedPCH +
                 "); parsed without it";
    return Retry;
  }
  if (!Diags.MissingHeaderHint.empty())
    Out.Diagnostics +=
        "tensor-accountant: note: " + Diags.MissingHeaderHint + "\n";
  else if (std::string Hint = Out.AsCuda && !Diags.MissingHeader.empty()
                                  ? missingCudaHeaderHint(Diags.MissingHeader)
                                  : "";
           !Hint.empty())
    Out.Diagnostics += "tensor-accountant: note: " + Hint + "\n";
  if (Out.ToolFailed && !Commands.empty())
    Out.Diagnostics += "Error while processing " + getAbsolutePath(File) + ".\n";
  return Out;
}

/// analyzeOne with the file's companion sources appended to it
/// (driver/Companions.h); alone when it has none, or when they do not
/// compile with it (then the combined parse's errors are not the user's).
FileOutcome analyzeWithCompanions(const std::vector<CompileCommand> &Commands,
                                  const std::string &File,
                                  const TranslationUnitCallback &OnTU,
                                  PreambleCache *Cache,
                                  const std::map<std::string, std::string> &Overlays,
                                  bool FollowCompanions,
                                  const AnalysisOptions &Settings) {
  std::string Main = getAbsolutePath(File);
  // The file's bytes, read once: what clang parses, the checks read and
  // --fix compares the file with (an unsaved document is its overlay).
  std::shared_ptr<const SourceSnapshot> Snapshot;
  std::string Text;
  if (auto It = Overlays.find(Main); It != Overlays.end()) {
    Text = It->second;
  } else if (auto Read = readSourceFile(Main)) {
    Snapshot = std::make_shared<const SourceSnapshot>(std::move(*Read));
    Text = Snapshot->Bytes;
  }
  auto Keep = [&](FileOutcome O) {
    O.Source = Text;
    return O;
  };
  std::vector<std::string> Companions;
  if (FollowCompanions && !Commands.empty()) {
    std::vector<std::string> Flags = buildFlagsOf(&Commands.front(), Main);
    std::vector<std::string> Dirs;
    for (size_t K = 0; K + 1 < Flags.size(); ++K)
      if (Flags[K] == "-I" || Flags[K] == "-iquote")
        Dirs.push_back(Flags[++K]);
    Companions = companionSources(Main, Text, Dirs);
  }
  if (Companions.empty())
    return Keep(analyzeOne(Commands, File, OnTU, Cache, Overlays, Snapshot, Settings));
  auto Compiled = [](const FileOutcome &O) {
    bool OK = !O.ToolFailed && !O.Results.empty();
    for (const FileAnalysis &FA : O.Results)
      OK &= !FA.CompileErrors;
    return OK;
  };
  auto With = [&](const std::vector<std::string> &Some,
                  const TranslationUnitCallback &Callback) {
    std::map<std::string, std::string> Files = Overlays;
    Files[Main] = withCompanions(Text, Some);
    return analyzeOne(Commands, File, Callback, Cache, Files, Snapshot, Settings);
  };
  // Checks run only on the parse whose results are kept (a parse that
  // fails to compile never reaches them).
  FileOutcome Out = With(Companions, OnTU);
  if (Compiled(Out))
    return Keep(std::move(Out));
  // Which of them compile with the file, each tried on its own (without
  // the checks); then those together.
  std::vector<std::string> Kept, Dropped;
  if (Companions.size() > 1)
    for (const std::string &C : Companions)
      (Compiled(With({C}, nullptr)) ? Kept : Dropped).push_back(C);
  else
    Dropped = Companions;
  FileOutcome Result;
  bool Done = false;
  if (!Kept.empty()) {
    Result = With(Kept, OnTU);
    Done = Compiled(Result);
    if (!Done)
      Dropped = Companions;
  }
  if (!Done)
    Result = analyzeOne(Commands, File, OnTU, Cache, Overlays, Snapshot, Settings);
  if (Compiled(Result)) {
    std::string Names;
    for (const std::string &C : Dropped)
      Names += (Names.empty() ? "" : ", ") + C;
    Result.CompanionNote =
        File + ": " +
        (Dropped.size() == 1 ? "its companion source " : "its companion sources ") +
        Names + (Dropped.size() == 1 ? " does" : " do") +
        " not compile with it; calls into " +
        (Dropped.size() == 1 ? "it" : "them") + " are not followed";
  }
  return Keep(std::move(Result));
}

} // namespace

AnalysisRun analyzeFiles(const CompilationDatabase &DB,
                         const std::vector<std::string> &Files,
                         TranslationUnitCallback OnTranslationUnit,
                         const RunOptions &Options) {
  std::optional<PreambleCache> Cache;
  if (Options.UseCache)
    Cache.emplace(Options.CacheDir.empty() ? defaultCacheDir()
                                           : Options.CacheDir,
                  Options.CacheMaxBytes);

  unsigned Jobs = Options.Jobs ? Options.Jobs
                               : std::max(1u, std::thread::hardware_concurrency());
  Jobs = std::min<size_t>(Jobs, Files.size());

  // Checks may keep state: call them from one thread at a time.
  std::mutex CallbackMutex;
  TranslationUnitCallback OnTU = OnTranslationUnit;
  if (OnTU && Jobs > 1)
    OnTU = [&CallbackMutex, Inner = OnTranslationUnit](
               clang::ASTContext &Ctx, const std::string &File,
               std::vector<FunctionTrace> &Traces) {
      std::lock_guard<std::mutex> L(CallbackMutex);
      Inner(Ctx, File, Traces);
    };

  // A database may list a file several times (CMake does, for a source in
  // both a static and a shared library); the first command stands for all.
  std::vector<std::vector<CompileCommand>> Commands;
  for (const std::string &F : Files) {
    Commands.push_back(DB.getCompileCommands(getAbsolutePath(F)));
    if (Commands.back().size() > 1)
      Commands.back().resize(1);
  }

  std::vector<FileOutcome> Outcomes(Files.size());
  AnalysisOptions Settings;
  Settings.CudaAvailable = Options.CudaAvailable;
  PreambleCache *CachePtr = Cache ? &*Cache : nullptr;
  std::mutex ProgressMutex;
  size_t Done = 0;
  auto Work = [&](size_t I) {
    Outcomes[I] = analyzeWithCompanions(Commands[I], Files[I], OnTU, CachePtr,
                                        Options.Overlays,
                                        Options.FollowCompanions, Settings);
    if (Options.OnFileDone) {
      std::lock_guard<std::mutex> L(ProgressMutex);
      Options.OnFileDone(++Done, Files.size(), Files[I]);
    }
  };
  if (Jobs <= 1) {
    for (size_t I = 0; I < Files.size(); ++I)
      Work(I);
  } else {
    std::atomic<size_t> Next{0};
    std::vector<llvm::thread> Threads;
    for (unsigned T = 0; T < Jobs; ++T)
      // Clang recurses deeply on template-heavy headers: give each worker
      // the stack a main thread has.
      Threads.emplace_back(std::optional<unsigned>(16u << 20), [&] {
        for (size_t I; (I = Next++) < Files.size();)
          Work(I);
      });
    for (llvm::thread &T : Threads)
      T.join();
  }

  AnalysisRun Run;
  if (Cache) {
    Cache->trim();
    Run.CacheHits = Cache->hits();
    Run.CacheBuilds = Cache->builds();
    // A cache too small for what its users need thrashes silently: every
    // "warm" run rebuilds what the last one evicted. Said once per process
    // (the language server analyses on every change).
    static std::atomic<bool> SizeHintShown{false};
    std::string Hint = Cache->sizeHint();
    if (!Hint.empty() && !SizeHintShown.exchange(true))
      llvm::errs() << Hint;
  }
  std::set<std::string> NotesShown;
  for (size_t I = 0; I < Outcomes.size(); ++I) {
    FileOutcome &O = Outcomes[I];
    llvm::errs() << O.Diagnostics;
    if (O.AsCuda && !Options.Quiet) {
      std::string CudaNote = cudaDeclarationsNote();
      if (!CudaNote.empty() && NotesShown.insert(CudaNote).second)
        llvm::errs() << "tensor-accountant: note: " << CudaNote << "\n";
    }
    if (!O.Note.empty() && !Options.Quiet && NotesShown.insert(O.Note).second)
      llvm::errs() << "tensor-accountant: note: preamble cache: " << O.Note
                   << "\n";
    if (!O.CompanionNote.empty() && !Options.Quiet)
      llvm::errs() << "tensor-accountant: note: " << O.CompanionNote << "\n";
    Run.Failed |= O.ToolFailed;
    // Report each file as the user named it. Clang names it as the compile
    // command does, relative to the command's "directory" (meson writes
    // "../src/m.cpp"): a name that means nothing where the tool runs, and
    // one NOLINT and --fix could not read the file by.
    bool DidNotCompile = false;
    std::vector<std::string> BuildFlags =
        buildFlagsOf(Commands[I].empty() ? nullptr : &Commands[I].front(),
                     getAbsolutePath(Files[I]));
    for (FileAnalysis &FA : O.Results) {
      FA.File = Files[I];
      FA.ParsedAsCuda = O.AsCuda;
      FA.BuildFlags = BuildFlags;
      FA.Source = O.Source;
      for (FunctionTrace &T : FA.Traces)
        T.File = Files[I];
      DidNotCompile |= FA.CompileErrors;
      Run.Files.push_back(std::move(FA));
    }
    if (DidNotCompile)
      Run.Failures.push_back(
          {Files[I], "it did not compile (the compiler's errors are on "
                     "stderr)"});
    else if (Commands[I].empty())
      Run.Failures.push_back({Files[I], "no compile command for it"});
    else if (O.ToolFailed || O.Results.empty())
      Run.Failures.push_back(
          {Files[I], "its compile command failed (the compiler's errors are "
                     "on stderr)"});
  }
  Run.Failed |= !Run.Failures.empty();

  if (Run.Files.size() + Run.Skipped.size() < Files.size())
    Run.Failed = true;
  return Run;
}

} // namespace tma
