import Dependencies
import Foundation
import SwitchyardSynchronization

/// The date and UUIDs a reduction reads when `Replay` reduces a journaled action again: those
/// the journal recorded it reading (``DependencyReadings``), in order. Past them — or for a
/// change journaled without readings, by an older daemon — the change's own time stands in for
/// the date and new UUIDs are made, and the reads are counted, so that a replay that still
/// differs can say which dependency it read otherwise than production did (``mismatch``).
///
/// ```swift
/// let replay = DependencyReplay(recorded: change.cause?.dependencies, time: changeTime)
/// let after = withDependencies(replay.install) { reduce(state, action) }
/// replay.mismatch   // nil: it read just what was recorded
/// ```
package final class DependencyReplay: Sendable {
  private struct Reads {
    var dates = 0
    var uuids = 0
  }

  private let recorded: DependencyReadings?
  private let time: Date
  private let reads = Mutex(Reads())

  package init(recorded: DependencyReadings?, time: Date) {
    self.recorded = recorded
    self.time = time
  }

  @Sendable package func install(in dependencies: inout DependencyValues) {
    dependencies.date = DateGenerator { [self] in
      self.reads.withLock { reads in
        defer { reads.dates += 1 }
        return self.recorded.flatMap { reads.dates < $0.dates.count ? $0.dates[reads.dates] : nil } ?? self.time
      }
    }
    dependencies.uuid = UUIDGenerator { [self] in
      self.reads.withLock { reads in
        defer { reads.uuids += 1 }
        return self.recorded.flatMap { reads.uuids < $0.uuids.count ? $0.uuids[reads.uuids] : nil } ?? UUID()
      }
    }
  }

  /// Which dependency the reduction read otherwise than the journal recorded; `nil` when it
  /// read each as many times as recorded.
  package var mismatch: String? {
    let reads = self.reads.withLock { $0 }
    guard let recorded else {
      var read: [String] = []
      if reads.dates > 0 { read.append("the date (date.now) \(Self.times(reads.dates))") }
      if reads.uuids > 0 { read.append("UUIDs (uuid()) \(Self.times(reads.uuids))") }
      guard !read.isEmpty else { return nil }
      return """
        it read \(read.joined(separator: " and ")), and the journal kept none of what it read (journaled by a \
        daemon that did not record it): the change's time and new UUIDs stood in
        """
    }
    var differences: [String] = []
    if reads.dates != recorded.dates.count {
      differences.append("the date (date.now) \(Self.times(reads.dates)) where it read it \(Self.times(recorded.dates.count))")
    }
    if reads.uuids != recorded.uuids.count {
      differences.append("UUIDs (uuid()) \(Self.times(reads.uuids)) where it read them \(Self.times(recorded.uuids.count))")
    }
    guard !differences.isEmpty else { return nil }
    let kept = max(recorded.dates.count, recorded.uuids.count) >= DependencyReadings.limit
    return "it read \(differences.joined(separator: ", and ")) when the change was made"
      + (kept ? " (the journal keeps a reduction's first \(DependencyReadings.limit) readings of each)" : "")
  }

  private static func times(_ count: Int) -> String {
    count == 1 ? "once" : "\(count) times"
  }
}
