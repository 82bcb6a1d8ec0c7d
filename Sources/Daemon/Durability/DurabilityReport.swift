import Logging
import SwitchyardRuntime
import SwitchyardSynchronization

/// What the daemon can say of what it acknowledged, for `Status`: what the last stop cost
/// (``LastStop``), the history that ended at this start, the last change forced onto the disk,
/// the changes found lost — at start (``ReachedMark``) or by clients — what SQLite's quick check
/// found at start, and the prunes that failed.
///
/// A client proves a loss when it resumes from a number the journal does not have: a `since`
/// further than the journal went under the current history, or further than a retired history
/// ended. It held a change the daemon had acknowledged, or shown it, and the journal no longer
/// has: the daemon says so (at least `since − last` changes), and the client gets a fresh
/// snapshot. A client can send any number, so this is at least what it claims, never a sum of
/// claims, and the log says it may be the client's number that is wrong.
///
/// ```swift
/// report.resumed(from: 120, of: history, currentHistory: changeLog.historyID, currentSeq: 100)
/// report.lostAtLeast  // 20 when the journal started this run at seq 100
/// ```
final class DurabilityReport: Sendable {
  private struct Contents {
    var synced: UInt64?
    var lostAtLeast: UInt64 = 0
    var limiter = LogRateLimiter(burst: 5, interval: .seconds(60))
    var pruneFailures = 0
    var lastPruneError: String?
  }

  /// What the last run's stop cost; `nil` when it left no record (a new journal).
  let lastStop: LastStop?
  /// The history retired at this start, when the last stop may have lost changes.
  let previousHistory: String?
  /// The seq the journal held when this run started: where the current history's numbers went
  /// on from.
  let startSeq: UInt64
  /// What SQLite's quick check found at start: `ok`, or the damage; `nil` when it was not run.
  let integrity: String?
  /// The histories this journal's numbers belonged to before, and the last seq of each it holds.
  private let retired: [String: UInt64]
  private let contents: Mutex<Contents>
  private let logger: Logger

  /// - Parameter lostAtStart: How many acknowledged changes the start found gone (a journal
  ///   behind where it had reached, ``ReachedMark``).
  ///   - integrity: What SQLite's quick check found at start.
  init(
    lastStop: LastStop?, previousHistory: String?, startSeq: UInt64, lostAtStart: UInt64 = 0, retired: [RetiredHistory],
    integrity: String? = nil, logger: Logger
  ) {
    self.lastStop = lastStop
    self.previousHistory = previousHistory
    self.startSeq = startSeq
    self.integrity = integrity
    self.retired = Dictionary(retired.map { ($0.id, $0.lastSeq) }, uniquingKeysWith: { first, _ in first })
    self.contents = Mutex(Contents(synced: startSeq, lostAtLeast: lostAtStart))
    self.logger = logger
  }

  /// The last change known to be on the disk.
  var syncedSeq: UInt64? {
    self.contents.withLock { $0.synced }
  }

  /// At least this many changes the daemon had acknowledged are not in the journal, as clients
  /// that resumed from further than it went showed.
  var lostAtLeast: UInt64 {
    self.contents.withLock { $0.lostAtLeast }
  }

  /// Everything up to `seq` is on the disk.
  func synced(_ seq: UInt64) {
    self.contents.withLock { $0.synced = max($0.synced ?? 0, seq) }
  }

  /// A subscriber resumed from `since` of `history` and was not replayed from it: when the
  /// journal never went that far in that history, changes are gone, and the log and `Status`
  /// say how many.
  func resumed(from since: UInt64, of history: String, currentHistory: String, currentSeq: UInt64) {
    let last: UInt64
    if history == currentHistory {
      guard since > currentSeq else { return }
      last = self.startSeq
    } else if let retiredLast = self.retired[history] {
      guard since > retiredLast else { return }
      last = retiredLast
    } else {
      return
    }
    let lost = since - last
    let suppressed: Int? = self.contents.withLock { contents in
      contents.lostAtLeast = max(contents.lostAtLeast, lost)
      return contents.limiter.admit(at: .now)
    }
    guard let suppressed else { return }
    var metadata: Logger.Metadata = ["since": "\(since)", "history": "\(history)", "journal": "\(last)", "lost": "\(lost)"]
    if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
    self.logger.warning(
      "a subscriber resumed from a change the journal does not have: at least \(lost) acknowledged changes are gone (or the client's number is wrong); it gets a fresh snapshot",
      metadata: metadata
    )
  }

  /// A prune of the journal failed: retention stops until one succeeds, and the journal grows.
  func pruneFailed(_ error: any Error) {
    self.contents.withLock { contents in
      contents.pruneFailures += 1
      contents.lastPruneError = "\(error)"
    }
  }

  /// What `Status` says, added to the durability object.
  func add(to object: inout JSONObject) {
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
