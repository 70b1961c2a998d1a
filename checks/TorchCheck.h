// The base of every torch-* check, shared by the CLI and the clang-tidy
// module (one registry, two front ends).
//
// A check reads one function's analysis trace and reports Diagnostics; it
// never walks the AST. Options are read once in the constructor into const
// members and written back by storeOptions, as clang-tidy checks do, from
// whichever option source the front end provides.
#pragma once

#include "checks/Diagnostic.h"
#include "model/Trace.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tma {

/// Where a check's options come from: `.clang-tidy` CheckOptions in the CLI,
/// ClangTidyCheck::OptionsView in the plugin. Keys are local names
/// ("MinBytes"); the source adds the check's prefix.
class OptionSource {
public:
  virtual ~OptionSource() = default;
  virtual std::optional<std::string> get(const std::string &LocalName) const = 0;
  /// Told when a value is not one the option takes (the check then keeps
  /// its default): the CLI makes it an error, the clang-tidy module a
  /// configuration warning, as clang-tidy does for its own checks.
  virtual void invalidValue(const std::string &LocalName,
                            const std::string &Value,
                            const std::string &Expected) const {
    (void)LocalName, (void)Value, (void)Expected;
  }
};

/// An option source with no options set: every check uses its defaults.
class NoOptions : public OptionSource {
public:
  std::optional<std::string> get(const std::string &) const override {
    return std::nullopt;
  }
};

using OptionMap = std::map<std::string, std::string>;

class TorchCheck {
public:
  explicit TorchCheck(std::string Name) : Name(std::move(Name)) {}
  virtual ~TorchCheck() = default;

  const std::string &name() const { return Name; }
  /// Reports the check's findings in one function.
  virtual void check(const FunctionTrace &T, std::vector<Diagnostic> &Out) const = 0;
  /// check() with the size decisions (model/Decide.h) made against T's own
  /// facts and assumptions, as the analysis made them: what both the CLI
  /// and the clang-tidy module call.
  void checkFunction(const FunctionTrace &T, std::vector<Diagnostic> &Out) const;
  /// Writes the options in effect (local name -> value).
  virtual void storeOptions(OptionMap &Opts) const { (void)Opts; }

protected:
  Diagnostic &report(std::vector<Diagnostic> &Out, const SourceSpan &Where,
                     const std::string &Format) const;
  /// A non-negative integer option (a byte count, a count of notes); any
  /// other value is reported through OptionSource::invalidValue.
  static int64_t intOption(const OptionSource &Opts, const std::string &Key,
                           int64_t Default);
  static double realOption(const OptionSource &Opts, const std::string &Key,
                           double Default);
  /// A boolean option, spelled as clang-tidy spells them: true/false (any
  /// case) or 1/0.
  static bool boolOption(const OptionSource &Opts, const std::string &Key,
                         bool Default);

private:
  std::string Name;
};

} // namespace tma
