// Differential test: model/Geometry and model/DType against real LibTorch.
//
// A fixed-seed generator builds a few thousand small CPU tensors (rank 0-5,
// sizes 0-4, size-1 dims common) with varied layouts: contiguous,
// channels-last, permuted, sliced with steps, expanded, as_strided with
// arbitrary (even overlapping) strides, then further transposed, permuted,
// sliced, selected, unsqueezed, expanded or diagonalised. For each tensor the
// model's answer is compared with what ATen itself does:
//
//   computeStride / inferSize   Tensor::view (success, sizes, strides, offset)
//   computeStride               Tensor::reshape (alias vs copy, layout, bytes)
//   isContiguous ...            is_contiguous(), is_contiguous(ChannelsLast),
//                               is_non_overlapping_and_dense(),
//                               suggest_memory_format()
//   preserveFormatStrides       clone(), empty_like(), contiguous()
//   inferDenseStrides           at::infer_dense_strides
//   storageBytesFor             empty_strided(...).storage().nbytes()
//   tensorIteratorOutputStrides a.exp(), a + b (broadcast, permuted,
//                               expanded and channels-last operands)
//   broadcastShapes             at::infer_size(a, b)
//   promoteTypes, itemSize ...  c10::promoteTypes, elementSize, toString
//
// Every property collects its mismatches; the first few are printed with
// the tensor that caused them and the test fails on any. Each property also
// asserts that the generator reached the interesting cases (views that fail,
// reshapes that copy, non-dense inputs, ...), so a generator regression
// cannot make the test pass vacuously.
#include "tests/model/ModelVsATenSupport.h"

using namespace tma_diff;

namespace {

// ---------------------------------------------------------------- tests --

// Failed views throw c10::Error, whose constructor symbolises a backtrace
// (milliseconds each). Thousands of expected failures need a cheap fetcher.
class CheapErrors : public ::testing::Environment {
public:
  void SetUp() override {
    c10::SetStackTraceFetcher([] { return std::string(); });
  }
};
const auto *const CheapErrorsEnv =
    ::testing::AddGlobalTestEnvironment(new CheapErrors);

TEST(ModelVsATen, ViewAndInferSize) {
  Rng R(seed(1));
  Tally View("view: computeStride(inferSize(shape)) vs Tensor::view");
  Tally Infer("inferSize vs at::infer_size");
  int64_t Ok = 0, Failed = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    for (int J = 0; J < 4; ++J) {
      Dims Shape = randomViewShape(S, R);
      std::optional<Dims> Inferred = model::inferSize(Shape, T.numel());
      std::optional<Dims> AtenInferred;
      try {
        AtenInferred = at::infer_size(Shape, T.numel());
      } catch (const std::exception &) {
      }
      Infer.expect(Inferred == AtenInferred, [&] {
        return "infer_size(" + str(Shape) + ", " + std::to_string(T.numel()) +
               "): model " + str(Inferred) + " aten " + str(AtenInferred);
      });

      std::optional<Dims> Model =
          Inferred ? model::computeStride(S, St, *Inferred) : std::nullopt;
      std::optional<at::Tensor> V;
      try {
        V = T.view(Shape);
      } catch (const std::exception &) {
      }
      (V ? Ok : Failed) += 1;
      bool Match = Model.has_value() == V.has_value();
      if (Match && V)
        Match = toDims(V->strides()) == *Model &&
                toDims(V->sizes()) == *Inferred &&
                V->storage_offset() == T.storage_offset() &&
                sameStorage(*V, T);
      View.expect(Match, [&] {
        return describe(T) + " .view(" + str(Shape) + "): model " +
               str(Model) + " aten " +
               (V ? describe(*V) : std::string("throws"));
      });
    }
  }
  EXPECT_NO_MISMATCHES(View);
  EXPECT_NO_MISMATCHES(Infer);
  // The generator must reach both outcomes in earnest.
  EXPECT_GT(Ok, NumTensors);
  EXPECT_GT(Failed, NumTensors / 2);
}

TEST(ModelVsATen, ReshapeAliasOrCopy) {
  Rng R(seed(2));
  Tally Reshape("reshape: view iff computeStride, else a contiguous copy");
  int64_t Aliases = 0, Copies = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    for (int J = 0; J < 3; ++J) {
      Dims Shape = randomViewShape(S, R);
      std::optional<Dims> Inferred = model::inferSize(Shape, T.numel());
      if (!Inferred)
        continue; // covered by ViewAndInferSize
      std::optional<Dims> Model = model::computeStride(S, St, *Inferred);
      at::Tensor Out = T.reshape(Shape);
      bool Alias = sameStorage(Out, T);
      (Alias ? Aliases : Copies) += 1;
      bool Match = Alias == Model.has_value() &&
                   toDims(Out.sizes()) == *Inferred;
      if (Match && Alias)
        Match = toDims(Out.strides()) == *Model &&
                Out.storage_offset() == T.storage_offset();
      if (Match && !Alias) {
        Dims Contig = model::contiguousStrides(*Inferred);
        Match = toDims(Out.strides()) == Contig && Out.storage_offset() == 0 &&
                static_cast<int64_t>(Out.storage().nbytes()) ==
                    model::storageBytesFor(*Inferred, Contig, 4);
      }
      Reshape.expect(Match, [&] {
        return describe(T) + " .reshape(" + str(Shape) + "): model " +
               (Model ? "view " + str(Model) : std::string("copy")) +
               " aten " + (Alias ? "view " : "copy ") + describe(Out) +
               " nbytes=" + std::to_string(Out.storage().nbytes());
      });
    }
  }
  EXPECT_NO_MISMATCHES(Reshape);
  EXPECT_GT(Aliases, NumTensors);
  EXPECT_GT(Copies, NumTensors / 4);
}

TEST(ModelVsATen, ContiguityAndMemoryFormat) {
  Rng R(seed(3));
  Tally Contig("isContiguous vs is_contiguous()");
  Tally CL("isChannelsLastContiguous vs is_contiguous(ChannelsLast)");
  Tally Dense("isNonOverlappingAndDense vs is_non_overlapping_and_dense()");
  Tally Suggest("suggestsChannelsLast vs suggest_memory_format()");
  Tally SelfContig("contiguous() returns self iff isContiguous");
  Tally SelfCL("contiguous(ChannelsLast) returns self iff "
               "isChannelsLastContiguous");
  int64_t NumContig = 0, NumDenseOnly = 0, NumNonDense = 0, NumCL = 0,
          NumSuggest = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    auto Desc = [&] { return describe(T); };
    bool C = model::isContiguous(S, St);
    bool D = model::isNonOverlappingAndDense(S, St);
    bool L = model::isChannelsLastContiguous(S, St);
    bool G = model::suggestsChannelsLast(S, St);
    Contig.expect(C == T.is_contiguous(), Desc);
    CL.expect(L == T.is_contiguous(at::MemoryFormat::ChannelsLast), Desc);
    Dense.expect(D == T.is_non_overlapping_and_dense(), Desc);
    Suggest.expect(G == (T.suggest_memory_format() ==
                         at::MemoryFormat::ChannelsLast),
                   Desc);
    at::Tensor Self = T.contiguous();
    SelfContig.expect(
        (Self.unsafeGetTensorImpl() == T.unsafeGetTensorImpl()) == C, Desc);
    if (S.size() == 4) {
      at::Tensor SelfL = T.contiguous(at::MemoryFormat::ChannelsLast);
      SelfCL.expect(
          (SelfL.unsafeGetTensorImpl() == T.unsafeGetTensorImpl()) == L, Desc);
    }
    NumContig += C;
    NumDenseOnly += D && !C;
    NumNonDense += !D;
    NumCL += L && !C;
    NumSuggest += G;
  }
  EXPECT_NO_MISMATCHES(Contig);
  EXPECT_NO_MISMATCHES(CL);
  EXPECT_NO_MISMATCHES(Dense);
  EXPECT_NO_MISMATCHES(Suggest);
  EXPECT_NO_MISMATCHES(SelfContig);
  EXPECT_NO_MISMATCHES(SelfCL);
  EXPECT_GT(NumContig, 100);
  EXPECT_GT(NumDenseOnly, 100);
  EXPECT_GT(NumNonDense, 100);
  EXPECT_GT(NumCL, 20);
  EXPECT_GT(NumSuggest, 20);
}

TEST(ModelVsATen, ClonePreserveAndEmptyLike) {
  Rng R(seed(4));
  Tally Clone("preserveFormatStrides vs clone().strides()");
  Tally Like("preserveFormatStrides vs empty_like().strides()");
  Tally To("preserveFormatStrides vs to(kDouble).strides() (_to_copy)");
  Tally Infer("inferDenseStrides vs at::infer_dense_strides");
  Tally CloneContig("contiguousStrides vs clone(Contiguous).strides()");
  Tally CloneCL("channelsLastStrides vs clone(ChannelsLast).strides()");
  int64_t NonDense = 0;
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    Dims Model = model::preserveFormatStrides(S, St);
    NonDense += !T.is_non_overlapping_and_dense();
    at::Tensor C = T.clone();
    Clone.expect(toDims(C.strides()) == Model && C.storage_offset() == 0, [&] {
      return describe(T) + ": model " + str(Model) + " aten " + describe(C);
    });
    at::Tensor E = at::empty_like(T);
    Like.expect(toDims(E.strides()) == Model, [&] {
      return describe(T) + ": model " + str(Model) + " aten " + describe(E);
    });
    at::Tensor D = T.to(at::kDouble);
    To.expect(toDims(D.strides()) == Model && D.storage_offset() == 0, [&] {
      return describe(T) + ": model " + str(Model) + " aten " + describe(D);
    });
    Dims MI = model::inferDenseStrides(S, St);
    Dims AI = at::infer_dense_strides(T.sizes(), T.strides());
    Infer.expect(MI == AI, [&] {
      return describe(T) + ": model " + str(MI) + " aten " + str(AI);
    });
    at::Tensor CC = T.clone(at::MemoryFormat::Contiguous);
    CloneContig.expect(toDims(CC.strides()) == model::contiguousStrides(S), [&] {
      return describe(T) + ": model " + str(model::contiguousStrides(S)) +
             " aten " + describe(CC);
    });
    if (S.size() == 4) {
      at::Tensor CL = T.clone(at::MemoryFormat::ChannelsLast);
      Dims ML = model::channelsLastStrides(S);
      CloneCL.expect(toDims(CL.strides()) == ML, [&] {
        return describe(T) + ": model " + str(ML) + " aten " + describe(CL);
      });
    }
  }
  EXPECT_NO_MISMATCHES(Clone);
  EXPECT_NO_MISMATCHES(Like);
  EXPECT_NO_MISMATCHES(To);
  EXPECT_NO_MISMATCHES(Infer);
  EXPECT_NO_MISMATCHES(CloneContig);
  EXPECT_NO_MISMATCHES(CloneCL);
  EXPECT_GT(NonDense, 200);
}

TEST(ModelVsATen, StorageBytes) {
  Rng R(seed(5));
  Tally Bytes("storageBytesFor vs empty_strided(...).storage().nbytes()");
  for (int I = 0; I < NumTensors; ++I) {
    at::Tensor T = randomTensor(R);
    Dims S = toDims(T.sizes()), St = toDims(T.strides());
    tma::DType Type = AllTypes[R.range(0, std::size(AllTypes) - 1)];
    at::Tensor E = at::empty_strided(S, St, at::TensorOptions(toC10(Type)));
    int64_t Model = model::storageBytesFor(S, St, tma::itemSize(Type));
    int64_t Aten = E.storage().nbytes();
    Bytes.expect(Model == Aten, [&] {
      return describe(T) + " " + tma::dtypeName(Type) + ": model " +
             std::to_string(Model) + " aten " + std::to_string(Aten);
    });
  }
  EXPECT_NO_MISMATCHES(Bytes);
}

TEST(ModelVsATen, FactoryStrides) {
  Rng R(seed(6));
  Tally Contig("contiguousStrides vs empty(sizes).strides()");
  Tally CL("channelsLastStrides vs empty(sizes, ChannelsLast).strides()");
  for (int I = 0; I < NumTensors; ++I) {
    Dims S = randomShape(R, 0, MaxRank);
    Dims AC = toDims(at::empty(S).strides());
    Contig.expect(AC == model::contiguousStrides(S), [&] {
      return str(S) + ": model " + str(model::contiguousStrides(S)) + " aten " +
             str(AC);
    });
    S.resize(4, 2);
    Dims AL = toDims(
        at::empty(S, at::TensorOptions().memory_format(
                         at::MemoryFormat::ChannelsLast))
            .strides());
    CL.expect(AL == model::channelsLastStrides(S), [&] {
      return str(S) + ": model " + str(model::channelsLastStrides(S)) +
             " aten " + str(AL);
    });
  }
  EXPECT_NO_MISMATCHES(Contig);
  EXPECT_NO_MISMATCHES(CL);
}

} // namespace
