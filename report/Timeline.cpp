// The memory timeline (Timeline.h): bands from the trace's storages and
// their recorded releases, stacked per column in allocation order.
#include "report/Timeline.h"
#include "model/Geometry.h"
#include "model/RowFacts.h"
#include "model/Units.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tma {

namespace {

std::vector<TimelineColumn> columnsOf(const FunctionTrace &T) {
  std::vector<TimelineColumn> Columns;
  for (unsigned I = 0; I < T.Statements.size(); ++I) {
    const Statement &S = T.Statements[I];
    TimelineColumn C;
    C.Statement = I;
    C.Line = S.Where.Line;
    // The drawing is to scale in numbers: a formula counts as a size not
    // known here (the report prints it; --assume binds it).
    if (S.LiveKnown)
      C.LiveAfter = S.LiveBytesAfter.constant();
    C.InLoop = S.InLoop;
    C.InBranch = S.InBranch;
    for (OpId Id : S.Ops) {
      auto B = knownBytes(T.Ops[Id].TransientBytes);
      auto Sum = B ? checkedAdd(C.TransientBytes, *B) : std::nullopt;
      C.TransientUnknown |= !Sum;
      if (Sum)
        C.TransientBytes = *Sum;
    }
    Columns.push_back(C);
  }
  return Columns;
}

std::vector<TimelineBand> bandsOf(const FunctionTrace &T, unsigned LastColumn) {
  std::vector<TimelineBand> Bands;
  for (const StorageInfo &S : T.Storages) {
    if (S.External || S.Producer == NoOp)
      continue;
    const OpEvent &Op = T.Ops[S.Producer];
    TimelineBand B;
    B.Storage = S.Id;
    B.Name = S.FirstName;
    B.Op = Op.Name;
    B.Copy = Op.Kind == OpKind::Copy;
    B.Bytes = knownBytes(S.Bytes);
    B.First = std::min(Op.Statement, LastColumn);
    if (S.ReleasedAfter) {
      B.Last = std::min(std::max(*S.ReleasedAfter, B.First), LastColumn);
      B.EndsAtScopeEnd = S.ReleasedAtScopeEnd;
    } else {
      B.Last = LastColumn;
      B.ReleaseUnknown = true;
    }
    B.AtPeak = T.Summary.PeakLiveBytes &&
               std::find(T.Summary.PeakLive.begin(), T.Summary.PeakLive.end(),
                         S.Id) != T.Summary.PeakLive.end();
    Bands.push_back(B);
  }
  return Bands;
}

} // namespace

Timeline memoryTimeline(const FunctionTrace &T) {
  Timeline TL;
  TL.Columns = columnsOf(T);
  if (TL.Columns.empty())
    return TL;
  unsigned LastColumn = static_cast<unsigned>(TL.Columns.size() - 1);
  TL.Bands = bandsOf(T, LastColumn);

  // Heights: bytes, or a stated nominal height for an unknown size.
  int64_t LargestKnown = 0;
  for (const TimelineBand &B : TL.Bands) {
    if (B.Bytes)
      LargestKnown = std::max(LargestKnown, *B.Bytes);
    else
      ++TL.UnknownSizeBands;
  }
  TL.ToScale = TL.UnknownSizeBands == 0;
  TL.NominalHeight = std::max<int64_t>(LargestKnown, 1);
  for (TimelineBand &B : TL.Bands)
    B.Height = B.Bytes ? *B.Bytes : TL.NominalHeight;

  // Stack each column in allocation order (storage ids grow with it).
  for (TimelineColumn &C : TL.Columns) {
    int64_t Height = 0;
    std::optional<int64_t> Bytes = 0;
    for (TimelineBand &B : TL.Bands) {
      if (C.Statement < B.First || C.Statement > B.Last)
        continue;
      B.Below.push_back(Height);
      Height += B.Height;
      Bytes = Bytes && B.Bytes ? checkedAdd(*Bytes, *B.Bytes) : std::nullopt;
    }
    C.Stacked = Height + C.TransientBytes;
    if (Bytes && !C.TransientUnknown)
      C.LiveDuring = checkedAdd(*Bytes, C.TransientBytes);
    TL.MaxStacked = std::max(TL.MaxStacked, C.Stacked);
  }

  if (T.Summary.PeakLiveBytes && T.Summary.PeakStatementKnown &&
      T.Summary.PeakStatement <= LastColumn) {
    TL.PeakBytes = knownBytes(T.Summary.PeakLiveBytes);
    TL.PeakColumn = T.Summary.PeakStatement;
  }

  // Views: inside the band of the storage they share, while named.
  std::map<StorageId, size_t> BandOf;
  for (size_t I = 0; I < TL.Bands.size(); ++I)
    BandOf[TL.Bands[I].Storage] = I;
  for (const RowFacts &R : rowFacts(T)) {
    if (R.Kind != RowKind::View)
      continue;
    auto It = R.Storage ? BandOf.find(R.Storage->Id) : BandOf.end();
    if (It == BandOf.end())
      continue;
    const TimelineBand &Band = TL.Bands[It->second];
    TimelineView V;
    V.Name = R.B->Name;
    V.Op = R.Op;
    V.Band = It->second;
    V.First = std::clamp(R.B->Statement, Band.First, Band.Last);
    V.Last = std::clamp(R.B->HeldUntil.value_or(Band.Last), V.First, Band.Last);
    V.ShownBytes = knownBytes(R.ShownBytes);
    if (V.ShownBytes && Band.Bytes && *Band.Bytes > 0 &&
        *V.ShownBytes <= *Band.Bytes) {
      V.FractionKnown = true;
      V.Fraction = double(*V.ShownBytes) / double(*Band.Bytes);
    }
    TL.Views.push_back(V);
  }
  return TL;
}

std::string sparkline(const Timeline &TL, size_t MaxWidth) {
  if (TL.Columns.empty() || MaxWidth == 0)
    return "";
  // Merge columns into at most MaxWidth cells, each the maximum of its run.
  size_t N = TL.Columns.size();
  size_t Cells = std::min(N, MaxWidth);
  std::vector<std::optional<int64_t>> Values;
  for (size_t Cell = 0; Cell < Cells; ++Cell) {
    size_t Begin = Cell * N / Cells, End = (Cell + 1) * N / Cells;
    std::optional<int64_t> Max = 0;
    for (size_t K = Begin; K < End; ++K) {
      const auto &Live = TL.Columns[K].LiveDuring;
      if (Max && Live)
        Max = std::max(*Max, *Live);
      else
        Max.reset();
    }
    Values.push_back(Max);
  }
  int64_t Top = 0;
  for (const auto &V : Values)
    if (V)
      Top = std::max(Top, *V);
  static const char *const Blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                       "\u2585", "\u2586", "\u2587", "\u2588"};
  std::string Out;
  for (const auto &V : Values) {
    if (!V) {
      Out += "?";
      continue;
    }
    // Nothing live is the lowest block; anything else at least the
    // second, so a small live set is not drawn as nothing.
    long Level = 0;
    if (Top > 0 && *V > 0)
      Level = std::max(1L, std::lround(double(*V) / double(Top) * 7));
    Out += Blocks[std::min(Level, 7L)];
  }
  return Out;
}

} // namespace tma
