import SwitchyardChangeFeed
import SwitchyardJSON
import SwitchyardJournal

/// Applies the leader's journaled changes to a standby's change log, in order, without running
/// a reducer: the standby's `Get`, `Subscribe` and `Status` then name the leader's seqs.
///
/// ```swift
/// let applier = StandbyApplier(changeLog: changeLog, view: view, progress: progress)
/// try applier.apply(page)  // each change after the log's seq, once
/// ```
package struct StandbyApplier: Sendable {
  let changeLog: ChangeLog
  let view: ClusterView
  /// Told of each change applied: the standby's reads of the journal reach it.
  let progress: StandbyProgress?

  package init(changeLog: ChangeLog, view: ClusterView, progress: StandbyProgress? = nil) {
    self.changeLog = changeLog
    self.view = view
    self.progress = progress
  }

  /// Applies each change after the log's seq; those it already has are passed over, so a page
  /// read again after a reconnect changes nothing.
  package func apply(_ changes: [JournaledChange]) throws(StandbyError) {
    for change in changes {
      let current = self.changeLog.currentSeq
      guard change.seq > current else { continue }
      guard change.seq == current + 1 else { throw .gap(after: current, next: change.seq) }
      let patch: JSONPatch
      do {
        patch = try JSONPatch(jsonValue: JSONValue(parsing: change.patch))
      } catch {
        throw .doesNotApply(seq: change.seq, reason: "\(error)")
      }
      guard self.changeLog.append(patch, feature: change.feature, cause: change.cause) == change.seq else {
        throw .doesNotApply(seq: change.seq, reason: "the patch does not apply to the standby's state")
      }
      self.view.applied(change.seq, numberedAt: change.time)
      self.progress?.applied(through: change.seq)
    }
  }
}

/// Why a standby could not apply the leader's changes.
package enum StandbyError: Error, Equatable, CustomStringConvertible {
  /// The journal skips from `after` to `next`.
  case gap(after: UInt64, next: UInt64)
  case doesNotApply(seq: UInt64, reason: String)

  package var description: String {
    switch self {
    case let .gap(after, next): "the journal skips from \(after) to \(next)"
    case let .doesNotApply(seq, reason): "the change at \(seq) does not apply: \(reason)"
    }
  }
}
