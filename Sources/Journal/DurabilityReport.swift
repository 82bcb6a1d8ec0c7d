import Logging
import SwitchyardJSON
import SwitchyardSynchronization
import SwitchyardTiming

/// What the daemon can say of what it acknowledged, for `Status`: what the last stop cost
/// (``LastStop``), the history that ended at this start, the last change forced onto the disk,
/// the changes a start found lost (``ReachedMark``), what SQLite's quick check found at start,
/// and the prunes that failed.
///
/// `lost` counts only what a start found missing. A client that resumes from further than a
/// retired history ended may have seen changes the journal lost — or may have a wrong number:
/// any client can send any number, so the log says what it claims (``resumed(from:of:)``) and
/// no figure moves on it.
///
/// ```swift
/// report.lostAtLeast  // 20 when the journal was found at seq 100 where it had reached 120
/// ```
package final class DurabilityReport: Sendable {
  private struct Contents {
    var synced: UInt64?
    var lostAtLeast: UInt64 = 0
    var limiter = LogRateLimiter(burst: 5, interval: .seconds(60))
    var pruneFailures = 0
    var lastPruneError: String?
    var integrity: String?
  }

  /// What the last run's stop cost; `nil` when it left no record (a new journal).
  package let lastStop: LastStop?
  /// The history retired at this start, when the last stop may have lost changes.
  package let previousHistory: String?
  /// The seq the journal held when this run started: where the current history's numbers went
  /// on from.
  let startSeq: UInt64
  /// What SQLite's quick check found: `ok`, or the damage; `nil` until it has run
  /// (``OpenedJournal/checkIntegrity(logger:then:)``).
  package var integrity: String? {
    self.contents.withLock { $0.integrity }
  }
  /// The histories this journal's numbers belonged to before, and the last seq of each it holds.
  private let retired: [String: UInt64]
  private let contents: Mutex<Contents>
  private let logger: Logger

  /// - Parameter lostAtStart: How many acknowledged changes the start found gone (a journal
  ///   behind where it had reached, ``ReachedMark``).
  ///   - integrity: What SQLite's quick check found, when it has run.
  package init(
    lastStop: LastStop?, previousHistory: String?, startSeq: UInt64, lostAtStart: UInt64 = 0, retired: [RetiredHistory],
    integrity: String? = nil, logger: Logger
  ) {
    self.lastStop = lastStop
    self.previousHistory = previousHistory
    self.startSeq = startSeq
    self.retired = Dictionary(retired.map { ($0.id, $0.lastSeq) }, uniquingKeysWith: { first, _ in first })
    self.contents = Mutex(Contents(synced: startSeq, lostAtLeast: lostAtStart, integrity: integrity))
    self.logger = logger
  }

  /// The last change known to be on the disk.
  var syncedSeq: UInt64? {
    self.contents.withLock { $0.synced }
  }

  /// At least this many changes the daemon had acknowledged are not in the journal: the start
  /// found the journal behind where it had reached.
  var lostAtLeast: UInt64 {
    self.contents.withLock { $0.lostAtLeast }
  }

  /// Everything up to `seq` is on the disk.
  package func synced(_ seq: UInt64) {
    self.contents.withLock { $0.synced = max($0.synced ?? 0, seq) }
  }

  /// A subscriber resumed from `since` of a retired `history`: when that is further than the
  /// history ended, the client saw changes that the journal lost, or its number is wrong. The
  /// log says so, at most a few times a minute; the client gets a fresh snapshot.
  package func resumed(from since: UInt64, of history: String) {
    guard let retiredLast = self.retired[history], since > retiredLast else { return }
    let suppressed: Int? = self.contents.withLock { $0.limiter.admit(at: .now) }
    guard let suppressed else { return }
    var metadata: Logger.Metadata = ["since": "\(since)", "history": "\(history)", "ended": "\(retiredLast)"]
    if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
    self.logger.warning(
      "a subscriber resumed from a change beyond where its history ended: it saw \(since - retiredLast) changes the journal does not have, or its number is wrong; it gets a fresh snapshot",
      metadata: metadata
    )
  }

  /// What the quick check found.
  package func checked(_ integrity: String) {
    self.contents.withLock { $0.integrity = integrity }
  }

  /// A prune of the journal failed: retention stops until one succeeds, and the journal grows.
  package func pruneFailed(_ error: any Error) {
    self.contents.withLock { contents in
      contents.pruneFailures += 1
      contents.lastPruneError = "\(error)"
    }
  }

  /// What `Status` says, added to the durability object.
  package func add(to object: inout JSONObject) {
    let (synced, lost, pruneFailures, lastPruneError) = self.contents.withLock {
      ($0.synced, $0.lostAtLeast, $0.pruneFailures, $0.lastPruneError)
    }
    if let synced { object["synced"] = .int(Int64(clamping: synced)) }
    if let lastStop = self.lastStop { object["lastStop"] = lastStop.json }
    if let previousHistory = self.previousHistory { object["previousHistory"] = .string(previousHistory) }
    if lost > 0 { object["lost"] = .int(Int64(clamping: lost)) }
    if let integrity = self.integrity { object["integrity"] = .string(integrity) }
    if pruneFailures > 0 {
      object["pruneFailures"] = .int(Int64(pruneFailures))
      if let lastPruneError { object["lastPruneError"] = .string(lastPruneError) }
    }
  }
}
