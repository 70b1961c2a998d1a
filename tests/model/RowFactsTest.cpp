// Unit tests of the row facts (model/RowFacts.h) on traces built with the
// Interpreter, without Clang: what each name holds, of which base, what it
// keeps alive and the bytes it pins. The table, JSON, HTML, hover and
// torch-view-pins-storage read these; the seed's words for them are tested
// in tests/frontend/SeedTest.cpp.
#include "model/Interpreter.h"
#include "model/Ops.h"
#include "model/RowFacts.h"

#include <gtest/gtest.h>

using namespace tma;

namespace {

class Rows : public ::testing::Test {
protected:
  Interpreter I{"f.cpp", "f", SourceSpan{}};
  void SetUp() override {
    I.enterScope();
    I.beginStatement(Statement{});
  }
  /// A float32 tensor of Rows x 4 elements (16 bytes a row).
  ValueId allocate(int64_t NumRows) {
    return I.apply("zeros", {}, {}, {},
                   factory(Shape{NumRows, 4}, DType::Float32, Device{},
                           FillKind::Filled));
  }
  ValueId firstRows(ValueId Of, int64_t N) {
    return I.apply("narrow", {}, {}, {Of}, narrow(I.value(Of), 0, 0, N));
  }
  void bind(const std::string &Name, ValueId V, bool IsParameter = false) {
    I.bind(Name, Name, V, {}, {}, false, IsParameter);
  }
  const RowFacts &row(const std::vector<RowFacts> &Rows, const std::string &Name) {
    for (const RowFacts &R : Rows)
      if (R.B->Name == Name)
        return R;
    ADD_FAILURE() << "no row " << Name;
    static RowFacts None;
    return None;
  }
};

TEST_F(Rows, AViewOfANamedTensorPinsWhatItDoesNotShow) {
  ValueId X = allocate(8);
  bind("x", X);
  bind("v", firstRows(X, 2));
  bind("c", I.apply("clone", {}, {}, {X},
                    clone(I.value(X), MemoryFormat::Preserve)));
  FunctionTrace T = I.finish();
  std::vector<RowFacts> R = rowFacts(T);
  ASSERT_EQ(R.size(), 3u);

  const RowFacts &XRow = row(R, "x");
  EXPECT_EQ(XRow.Kind, RowKind::Alloc);
  EXPECT_EQ(XRow.Op, "zeros");
  EXPECT_EQ(XRow.Base, "");
  EXPECT_EQ(XRow.StorageBytes, std::optional<int64_t>(128));
  EXPECT_EQ(XRow.Owner, StorageOwner::Named);
  EXPECT_EQ(XRow.OwnerName, "x");
  EXPECT_EQ(XRow.PinnedBytes, std::nullopt); // shows all it holds

  const RowFacts &V = row(R, "v");
  EXPECT_EQ(V.Kind, RowKind::View);
  EXPECT_EQ(V.Base, "x");
  EXPECT_EQ(V.StorageBytes, std::optional<int64_t>(128));
  EXPECT_EQ(V.OwnerName, "x");
  EXPECT_EQ(V.HeldBytes, std::optional<int64_t>(128));
  EXPECT_EQ(V.ShownBytes, std::optional<int64_t>(32));
  EXPECT_EQ(V.PinnedBytes, std::optional<int64_t>(96));
  EXPECT_EQ(pinnedBytes(T, V.B->Value), V.PinnedBytes);

  const RowFacts &C = row(R, "c");
  EXPECT_EQ(C.Kind, RowKind::Copy);
  EXPECT_EQ(C.OwnerName, "c");
  EXPECT_EQ(rowKindName(C.Kind), std::string("copy"));
}

TEST_F(Rows, TheCallersStorageIsPinnedByNobodyHere) {
  ValueId P = I.external(unknownTensor("parameter"));
  bind("p", P, /*IsParameter=*/true);
  bind("w", I.apply("alias", {}, {}, {P}, alias(I.value(P))));
  FunctionTrace T = I.finish();
  std::vector<RowFacts> R = rowFacts(T);
  ASSERT_EQ(R.size(), 1u); // a parameter has no row
  EXPECT_EQ(R[0].Kind, RowKind::View);
  EXPECT_EQ(R[0].Base, "p");
  EXPECT_EQ(R[0].Owner, StorageOwner::Caller);
  EXPECT_EQ(R[0].StorageBytes, std::nullopt);
  EXPECT_EQ(R[0].PinnedBytes, std::nullopt);
}

TEST_F(Rows, NoStorageMeansEveryFactIsUnknown) {
  bind("u", I.unknown("call", "not analysed", SourceSpan{}));
  FunctionTrace T = I.finish();
  std::vector<RowFacts> R = rowFacts(T);
  ASSERT_EQ(R.size(), 1u);
  EXPECT_EQ(R[0].Kind, RowKind::Unknown);
  EXPECT_EQ(rowKindName(R[0].Kind), std::string(""));
  EXPECT_EQ(R[0].Storage, nullptr);
  EXPECT_EQ(R[0].StorageBytes, std::nullopt);
  EXPECT_EQ(R[0].Owner, StorageOwner::Unknown);
  EXPECT_EQ(R[0].PinnedBytes, std::nullopt);
}

TEST_F(Rows, AnUndefinedTensorIsAKnownStateHoldingNothing) {
  // `torch::Tensor out;` then `out = zeros(...)`: two rows, the first no
  // tensor at all (not an unknown), the second the value.
  bind("out", I.undefined("default-constructed"));
  bind("out", allocate(2));
  FunctionTrace T = I.finish();
  std::vector<RowFacts> R = rowFacts(T);
  ASSERT_EQ(R.size(), 2u);
  EXPECT_EQ(R[0].Kind, RowKind::Undefined);
  EXPECT_EQ(rowKindName(R[0].Kind), std::string("undefined"));
  EXPECT_EQ(R[0].Note, "default-constructed");
  EXPECT_EQ(R[0].Owner, StorageOwner::Nothing);
  EXPECT_EQ(R[0].Storage, nullptr);
  EXPECT_EQ(R[0].StorageBytes, std::nullopt);
  EXPECT_EQ(R[1].Kind, RowKind::Alloc);
  EXPECT_EQ(R[1].StorageBytes, std::optional<int64_t>(32));
  // An op on it cannot be answered, and says why.
  EXPECT_EQ(T.value(R[0].B->Value).UnknownReason,
            "an undefined tensor (default-constructed)");
}

TEST_F(Rows, AReferenceToATemporaryNamesNoOwner) {
  // note(): a row that holds nothing of its own; the storage stays unnamed.
  ValueId Tmp = allocate(8);
  I.note("r", firstRows(Tmp, 1), {}, {});
  FunctionTrace T = I.finish();
  std::vector<RowFacts> R = rowFacts(T);
  ASSERT_EQ(R.size(), 1u);
  EXPECT_EQ(R[0].Kind, RowKind::View);
  EXPECT_EQ(R[0].Base, ""); // a view of a temporary
  EXPECT_EQ(R[0].Owner, StorageOwner::Unnamed);
  EXPECT_EQ(R[0].PinnedBytes, std::optional<int64_t>(112));
}

} // namespace
