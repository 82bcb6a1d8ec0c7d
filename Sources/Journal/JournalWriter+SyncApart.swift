import Dispatch
import Foundation
import SwitchyardSynchronization
import SwitchyardTiming

/// Groups committed and not yet forced onto the disk, in the strict mode with an engine that
/// syncs apart (``SyncingApart``), and who forces them out.
struct UnsyncedGroups {
  /// The last change committed, and the timer operations submitted up to it.
  var seq: UInt64?
  var timers: Int
  /// When the first of them began to commit (``MonotonicClock``), and how many changes they hold.
  var started: UInt64
  var changes: Int

  mutating func merge(_ later: UnsyncedGroups) {
    self.seq = later.seq ?? self.seq
    self.timers = later.timers
    self.changes += later.changes
  }
}

/// The sync thread's side of ``JournalWriter/Pending``.
struct SyncApartState {
  var unsynced: UnsyncedGroups?
  /// The sync thread forces groups out, or is woken to: it takes whatever is committed meanwhile.
  var busy = false
  /// The writer is closing: the sync thread ends once nothing is left.
  var stops = false
  /// When the mark beside the journal was last moved (``MonotonicClock``).
  var lastMark: UInt64 = 0
}

extension JournalWriter {
  /// Strict, after `group`'s commit: forces it onto the disk here when it is a lone change and
  /// the sync thread sleeps — a lone request wakes no other thread — or hands it to the sync
  /// thread, which forces out with it every group committed meanwhile, while this thread
  /// commits the next (pipelined group commit).
  func syncApart(_ engine: any SyncingApart, _ group: UnsyncedGroups) {
    let (handOver, wake) = self.pending.withLock { pending -> (Bool, Bool) in
      guard pending.apart.busy || group.changes > 1 || !pending.changes.isEmpty else { return (false, false) }
      if pending.apart.unsynced == nil {
        pending.apart.unsynced = group
      } else {
        pending.apart.unsynced!.merge(group)
      }
      defer { pending.apart.busy = true }
      return (true, !pending.apart.busy)
    }
    if wake { self.syncWake.signal() }
    if !handOver, self.forceOut(group, engine: engine) { self.committed(upTo: group.seq, timers: group.timers) }
  }

  /// The sync thread: forces out what the writer hands it, until the writer closes.
  func runSyncThread(_ engine: any SyncingApart) {
    nameCurrentThread("journal-sync")
    while true {
      let (group, stops) = self.pending.withLock { pending in
        defer { pending.apart.unsynced = nil }
        pending.apart.busy = pending.apart.unsynced != nil
        return (pending.apart.unsynced, pending.apart.stops)
      }
      if let group {
        if self.forceOut(group, engine: engine) { self.committed(upTo: group.seq, timers: group.timers) }
        continue
      }
      if stops {
        self.syncStopped.signal()
        return
      }
      self.syncWake.wait()
    }
  }

  /// Ends the sync thread once it has forced out everything handed to it.
  func stopSyncThread() {
    guard self.apart != nil else { return }
    let wake = self.pending.withLock { pending in
      pending.apart.stops = true
      defer { pending.apart.busy = true }
      return !pending.apart.busy
    }
    if wake { self.syncWake.signal() }
    self.syncStopped.wait()
  }

  /// Forces `group` onto the disk, trying again while it fails (nothing new is accepted
  /// meanwhile, and every reply waiting is told it is applied but not kept); `false` when the
  /// writer closes before it succeeds.
  private func forceOut(_ group: UnsyncedGroups, engine: any SyncingApart) -> Bool {
    var failures = 0
    while true {
      do {
        try engine.syncCommits()
        break
      } catch {
        if failures == 0 { self.unavailable(because: JournalWriteError(.syncFailed, underlying: error)) }
        failures += 1
        if self.pending.withLock({ $0.isClosed }) {
          self.logger.critical(
            "stopping with changes that may not be on the disk: they are not acknowledged",
            metadata: ["changes": "\(group.changes)", "through": "\(group.seq ?? 0)", "error": "\(error)"]
          )
          return false
        }
        Thread.sleep(forTimeInterval: min(0.05 * Double(failures), 1))
      }
    }
    if failures > 0 { self.available(after: failures) }
    let now = MonotonicClock.now
    self.committed?(now &- group.started, group.changes)
    // The mark beside the journal follows, once an interval.
    let marks = self.pending.withLock { pending in
      guard now &- pending.apart.lastMark >= UInt64(Self.nanoseconds(self.interval)) else { return false }
      pending.apart.lastMark = now
      return true
    }
    if marks, let seq = group.seq { self.markReached(seq) }
    return true
  }
}
