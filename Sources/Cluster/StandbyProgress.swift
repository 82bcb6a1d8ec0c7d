import SwitchyardJournal
import SwitchyardSynchronization

/// A standby's ``JournalProgress``: the journal holds every change the standby applied (it
/// applies only what the leader committed), so the standby's reads of the journal — `Get` at a
/// seq, `Journal`, `Replay` — wait for its applier as the leader's wait for its writer.
///
/// ```swift
/// let progress = StandbyProgress(seq: recovered.seq)
/// let reader = JournalReader(journal: journal, progress: progress)
/// StandbyApplier(changeLog: changeLog, view: view, progress: progress)  // moves it on
/// ```
package final class StandbyProgress: JournalProgress {
  private struct Contents {
    var seq: UInt64
    var followers: [(seq: UInt64, body: @Sendable (_ isClosed: Bool) -> Void)] = []
    var isOver = false
  }

  private let contents: Mutex<Contents>

  /// - Parameter seq: The last change the standby's state reflects.
  package init(seq: UInt64) {
    self.contents = Mutex(Contents(seq: seq))
  }

  package var committedSeq: UInt64 { self.contents.withLock { $0.seq } }

  /// A standby keeps nothing of its own: what the leader committed is kept.
  package var keptSeq: UInt64 { self.committedSeq }

  /// A standby writes nothing: its reads never wait for the journal to be writable.
  package var unavailable: String? { nil }

  package func whenCommitted(after seq: UInt64, _ body: @escaping @Sendable (_ isClosed: Bool) -> Void) {
    let now: Bool? = self.contents.withLock { contents in
      if contents.seq > seq { return false }
      if contents.isOver { return true }
      contents.followers.append((seq, body))
      return nil
    }
    if let now { body(now) }
  }

  /// The standby applied the changes through `seq`: whoever waits for one of them reads on.
  package func applied(through seq: UInt64) {
    let woken = self.contents.withLock { contents -> [@Sendable (Bool) -> Void] in
      guard seq > contents.seq else { return [] }
      contents.seq = seq
      let woken = contents.followers.filter { $0.seq < seq }.map(\.body)
      contents.followers.removeAll { $0.seq < seq }
      return woken
    }
    for body in woken { body(false) }
  }

  /// Ends every follower (called with `isClosed`), and those to come: the standby stops.
  package func endFollowing() {
    let followers = self.contents.withLock { contents in
      contents.isOver = true
      defer { contents.followers.removeAll() }
      return contents.followers
    }
    for follower in followers { follower.body(true) }
  }
}
