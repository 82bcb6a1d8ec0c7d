import SwitchyardJournal

/// One page of the inspector's timeline, newest first: the changes before a seq (paging back)
/// or after one (catching up), of one feature and one action case when asked, read on the
/// journal reader's thread.
///
/// A page holds at most ``limit`` entries and ``maximumBytes`` of them (always one, whatever its
/// size), and looks at no more than ``scanBudget`` changes of the journal for them, so that a
/// filter that matches nothing in a long journal answers in bounded time: `next` says where to
/// go on looking.
///
/// ```swift
/// let page = try await TimelinePage.before(nil, in: reader, filter: .init(feature: "counter", casePath: []), limit: 50)
/// page.entries.first?.change.seq  // the newest change of the counter
/// page.next                         // the seq the next page (further back) comes before
/// ```
struct TimelinePage {
  struct Filter {
    var feature: String?
    var casePath: [String]
  }

  /// Newest first.
  var entries: [TimelineEntry]
  /// Paging back: the `before` of the next page, `nil` when the journal holds nothing older.
  /// Catching up: the `after` of the next page, `nil` when this one reached the last change.
  var next: UInt64?
  /// The last change the journal held when the page was read.
  var latest: UInt64

  static var maximumBytes: Int { 1 << 20 }
  static var scanBudget: Int { 100_000 }

  /// The newest changes before `before` (before every change when `nil`).
  static func before(
    _ before: UInt64?, in reader: JournalReader, filter: Filter, limit: Int
  ) async throws -> TimelinePage {
    let latest = reader.progress.committedSeq
    let oldest = try await reader.journal.extent().firstChange ?? latest + 1
    // Inclusive bounds of what is left to look at, newest down.
    var upper = min(before.map { $0 == 0 ? 0 : $0 - 1 } ?? latest, latest)
    var entries: [TimelineEntry] = []
    var bytes = 0
    var window = UInt64(limit)
    var scanned = 0
    while upper >= max(oldest, 1), entries.count < limit, bytes < Self.maximumBytes, scanned < Self.scanBudget {
      let lower = max(oldest, upper >= window ? upper - window + 1 : 1)
      // The window's matches, oldest first, keeping only the newest that fit what is left.
      var kept: [TimelineEntry] = []
      var keptBytes = 0
      var cut: UInt64?
      try await reader.journal.forEachChange(after: lower - 1, through: upper, feature: filter.feature) { change in
        let entry = TimelineEntry(change)
        guard entry.isOfCase(filter.casePath) else { return true }
        kept.append(entry)
        keptBytes += change.byteCount
        while kept.count > 1, kept.count > limit - entries.count || bytes + keptBytes > Self.maximumBytes {
          cut = kept[0].change.seq
          keptBytes -= kept.removeFirst().change.byteCount
        }
        return true
      }
      scanned += Int(upper - lower + 1)
      entries += kept.reversed()
      bytes += keptBytes
      if cut != nil, let first = kept.first {
        upper = first.change.seq - 1
        break
      }
      upper = lower - 1
      // A filter that matches sparsely looks further back each time.
      window = min(window * 4, UInt64(Self.scanBudget))
    }
    return TimelinePage(entries: entries, next: upper >= max(oldest, 1) ? upper + 1 : nil, latest: latest)
  }

  /// The oldest changes after `after`, newest first.
  static func after(
    _ after: UInt64, in reader: JournalReader, filter: Filter, limit: Int
  ) async throws -> TimelinePage {
    let latest = reader.progress.committedSeq
    let through = min(latest, after + UInt64(Self.scanBudget))
    let changes = try await reader.changes(
      after: after, through: through, feature: filter.feature, limit: limit, maxBytes: Self.maximumBytes
    )
    let full = changes.count == limit || changes.reduce(0) { $0 + $1.byteCount } >= Self.maximumBytes
    let looked = full ? changes.last!.seq : through
    let entries = changes.map(TimelineEntry.init).filter { $0.isOfCase(filter.casePath) }
    return TimelinePage(entries: entries.reversed(), next: looked < latest ? looked : nil, latest: latest)
  }

  /// `{"entries": [...], "next": N, "latest": N}`.
  var json: [UInt8] {
    var bytes = Array("{\"entries\":[".utf8)
    for (index, entry) in self.entries.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: ",")) }
      entry.write(into: &bytes)
    }
    bytes += Array("],\"next\":\(self.next.map(String.init) ?? "null"),\"latest\":\(self.latest)}".utf8)
    return bytes
  }
}
