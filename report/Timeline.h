// The memory timeline of one function: the picture behind the HTML report
// (report/HtmlReport.h) and the markdown summary's sparkline.
//
// Design:
//  - Time is the function's statements in order (the trace's Statements:
//    those that run tensor ops). A column is one statement; what is drawn
//    in it is every storage alive at some moment during it: those alive
//    before it plus those it allocates, until the ledger lets them go. So
//    a temporary is a band one column wide, a reassigned name's old storage
//    ends in the column of the assignment, and a name's storage ends in the
//    last column of its scope.
//  - A band is one storage this function allocated (externals are the
//    caller's and are not counted in its totals, so they are not drawn).
//    Bands stack in allocation order, oldest at the bottom; when a lower
//    one is released, those above drop down (as in PyTorch's memory_viz),
//    so the top edge of a column is the sum of what is drawn in it.
//  - Heights are bytes when every band's size is known. Otherwise the
//    timeline is not to scale: a band of unknown size gets a nominal
//    height (the largest known band, or 1 when none is known) and whoever
//    draws it must say so; columns then have no byte total.
//  - Views are drawn inside their base's band for as long as their name
//    holds them, as the fraction of the storage they show (when both sizes
//    are known).
//  - Transient bytes (allocated and released inside one op: matmul's
//    folding copy) sit on top of their column; they count for the peak.
//
// Nothing here is a new number: lifetimes, bytes and the peak come from the
// trace (model/Trace.h); this file only arranges them.
#pragma once

#include "model/Trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tma {

struct TimelineColumn {
  unsigned Statement = 0; // index into FunctionTrace::Statements
  unsigned Line = 0;
  /// Sum of the bands drawn in the column plus its transient bytes, in
  /// bytes; nullopt when a band's size is unknown.
  std::optional<int64_t> LiveDuring;
  /// The trace's live bytes after the statement (temporaries gone).
  std::optional<int64_t> LiveAfter;
  int64_t TransientBytes = 0;
  /// An op's transient bytes are unknown: LiveDuring is unknown too.
  bool TransientUnknown = false;
  /// Height units stacked in the column (bands + transient).
  int64_t Stacked = 0;
  bool InLoop = false;
  bool InBranch = false;
};

struct TimelineBand {
  StorageId Storage = NoStorage;
  std::string Name;     // the first name bound to it; empty: a temporary
  std::string Op;       // the op that allocated it
  bool Copy = false;    // computed from other tensors (else a factory)
  std::optional<int64_t> Bytes;
  int64_t Height = 0;   // height units: Bytes, or the nominal height
  unsigned First = 0;   // first and last column (inclusive)
  unsigned Last = 0;
  /// Why it ends at Last: its scope ended after it (else the statement
  /// ended its temporary or reassigned its name).
  bool EndsAtScopeEnd = false;
  /// The trace recorded no release (should not happen for an own storage);
  /// drawn to the last column.
  bool ReleaseUnknown = false;
  bool AtPeak = false;
  /// Height units below the band, one per column First..Last.
  std::vector<int64_t> Below;
};

struct TimelineView {
  std::string Name;
  std::string Op;
  size_t Band = 0;      // index into Timeline::Bands
  unsigned First = 0;   // columns (inclusive), within the band's
  unsigned Last = 0;
  /// Bytes the view shows (numel * itemsize); nullopt when unknown.
  std::optional<int64_t> ShownBytes;
  /// ShownBytes / the storage's bytes, in (0, 1]; 1 when unknown.
  double Fraction = 1.0;
  bool FractionKnown = false;
};

struct Timeline {
  std::vector<TimelineColumn> Columns;
  std::vector<TimelineBand> Bands;
  std::vector<TimelineView> Views;
  /// Every band's size is known: heights are bytes.
  bool ToScale = true;
  int64_t NominalHeight = 0; // for bands of unknown size (when !ToScale)
  unsigned UnknownSizeBands = 0;
  int64_t MaxStacked = 0;    // the tallest column, in height units
  /// The trace's peak and the column where it was reached (peak known).
  std::optional<int64_t> PeakBytes;
  unsigned PeakColumn = 0;
};

Timeline memoryTimeline(const FunctionTrace &T);

/// Live bytes per statement as block characters (U+2581..U+2588), '?' for
/// an unknown column; columns beyond MaxWidth are merged (their maximum).
/// Empty when the function has no statements.
std::string sparkline(const Timeline &TL, size_t MaxWidth = 40);

} // namespace tma
