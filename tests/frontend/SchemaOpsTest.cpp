// Ops no hand rule models (testdata/schema/unmodelled.cpp), answered from
// their ATen schemas as the parsed LibTorch headers carry them: views of
// their input (base, storage kept alive), new storage, out= and in-place
// results that are the written tensor. --verify checks the same rows
// against LibTorch (ctest differential_meta / differential_cpu). The file
// is parsed once for all tests.
#include "driver/Analysis.h"
#include "report/Report.h"
#include "tests/frontend/TraceLookup.h"

#include <gtest/gtest.h>

using namespace tma;

namespace {

class SchemaOpsTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string Error;
    auto DB = makeFixedDatabase({}, false, Error);
    ASSERT_TRUE(DB) << Error;
    Run = new AnalysisRun(analyzeFiles(
        *DB, {TMA_SOURCE_DIR "/testdata/schema/unmodelled.cpp"}));
  }
  static void TearDownTestSuite() { delete Run; }

  static RowFacts row(const std::string &Function, const std::string &Name) {
    return tma::testing::findRow(tma::testing::findFunction(*Run, Function),
                                 Name);
  }
  static std::string reason(const RowFacts &R) {
    return R.Value ? R.Value->UnknownReason : "";
  }
  static AnalysisRun *Run;
};
AnalysisRun *SchemaOpsTest::Run = nullptr;

TEST_F(SchemaOpsTest, AliasingReturnsAreViewsOfTheirInput) {
  for (const char *Name : {"a", "b", "c", "d", "e", "f", "g"}) {
    RowFacts R = row("schema_views", Name);
    EXPECT_EQ(R.Kind, RowKind::View) << Name;
    EXPECT_EQ(R.Base, "x") << Name;
    EXPECT_EQ(R.OwnerName, "x") << Name; // x's storage is what it keeps alive
    ASSERT_TRUE(R.StorageBytes) << Name;
    EXPECT_EQ(R.StorageBytes->constant(), 48) << Name;
    // The shape has no rule: unknown, with the op's ATen identity.
    EXPECT_FALSE(R.Value->Sizes) << Name;
    EXPECT_NE(reason(R).find("no shape rule for aten::"), std::string::npos)
        << Name;
  }
  EXPECT_EQ(reason(row("schema_views", "a")), "no shape rule for aten::adjoint");
  EXPECT_EQ(reason(row("schema_views", "g")), "no shape rule for aten::matrix_H");
  // conj() of a temporary: a view of a storage no name holds.
  RowFacts H = row("schema_views", "h");
  EXPECT_EQ(H.Kind, RowKind::View);
  EXPECT_EQ(H.Base, "");
}

TEST_F(SchemaOpsTest, AliasedListsArePiecesOfTheirInput) {
  for (const char *Name : {"p", "h", "v"}) {
    RowFacts R = row("schema_list_views", Name);
    EXPECT_EQ(R.Kind, RowKind::View) << Name;
    EXPECT_EQ(R.Base, "x") << Name;
  }
  // Each call found its overload: by the argument's type (an int, a list).
  EXPECT_NE(reason(row("schema_list_views", "p")).find("aten::tensor_split.sections"),
            std::string::npos);
  EXPECT_NE(reason(row("schema_list_views", "h")).find("aten::hsplit.int"),
            std::string::npos);
  EXPECT_NE(reason(row("schema_list_views", "v")).find("aten::vsplit.array"),
            std::string::npos);
}

TEST_F(SchemaOpsTest, UnannotatedReturnsAreNewStorageOfUnknownBytes) {
  for (const char *Name : {"a", "b", "c", "d", "e", "f", "g", "h"}) {
    RowFacts R = row("schema_copies", Name);
    EXPECT_EQ(R.Kind, RowKind::Copy) << Name;
    EXPECT_EQ(R.Base, "") << Name;
    EXPECT_FALSE(R.StorageBytes) << Name; // never a guessed number
  }
  EXPECT_EQ(reason(row("schema_copies", "e")), "no shape rule for aten::kron");
  // What they allocate is unknown, so the totals are.
  const FunctionTrace &T = tma::testing::findFunction(*Run, "schema_copies");
  EXPECT_FALSE(T.Summary.PeakLiveBytes);
}

TEST_F(SchemaOpsTest, AnnotationsTheRegistryDoesNotTrustStayUnknown) {
  EXPECT_EQ(row("schema_not_trusted", "a").Kind, RowKind::Unknown);
  EXPECT_EQ(row("schema_not_trusted", "b").Kind, RowKind::Unknown);
}

TEST_F(SchemaOpsTest, OutFormsReturnTheWrittenOutTensor) {
  // The out argument is found by name whatever its C++ position
  // (mm_out(out, self, mat2) is mm.out(self, mat2, *, out)): the result is
  // the out tensor, unknown after the write.
  EXPECT_EQ(reason(row("schema_out_forms", "r")).rfind("'out' is written by 'mm_out'", 0), 0u);
  EXPECT_EQ(reason(row("schema_out_forms", "q")).rfind("'s' is written by 'add_out'", 0), 0u);
  EXPECT_EQ(reason(row("schema_out_forms", "u")).rfind("'t' is written by 'cumsum_out'", 0), 0u);
}

TEST_F(SchemaOpsTest, InPlaceFormsReturnTheirSelf) {
  EXPECT_EQ(reason(row("schema_in_place", "a")).rfind("'x' is changed in place by 'cumsum_'", 0), 0u);
  EXPECT_EQ(reason(row("schema_in_place", "d")).rfind("'c' is changed in place by 'fmod_'", 0), 0u);
}

} // namespace
