// Lookups the frontend tests share: a function's trace by name across an
// analysis run, and the Nth report row of a name (reassignments are
// separate rows). A missing one is a test failure, not a crash.
#pragma once

#include "driver/Analysis.h"
#include "report/Report.h"

#include <gtest/gtest.h>

#include <string>

namespace tma::testing {

inline const FunctionTrace &findFunction(const AnalysisRun &Run,
                                         const std::string &Name) {
  for (const FileAnalysis &F : Run.Files)
    for (const FunctionTrace &T : F.Traces)
      if (T.Name == Name)
        return T;
  ADD_FAILURE() << "no function " << Name;
  static FunctionTrace Empty;
  return Empty;
}

inline RowFacts findRow(const FunctionTrace &T, const std::string &Name,
                         int Nth = 0) {
  for (const RowFacts &R : rowFacts(T))
    if (R.B->Name == Name && Nth-- == 0)
      return R;
  ADD_FAILURE() << "no row " << Name << " in " << T.Name;
  return {};
}

} // namespace tma::testing
