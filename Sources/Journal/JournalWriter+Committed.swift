extension JournalWriter {
  /// A group up to `seq` (with the timer operations submitted up to `timers`) is committed, by
  /// whichever thread: whoever follows the journal reads on, and the replies and subscribers
  /// waiting for it go.
  func committed(upTo seq: UInt64?, timers: Int) {
    typealias Follower = (seq: UInt64, body: @Sendable (_ isClosed: Bool) -> Void)
    typealias Waiter = (seq: UInt64, timers: Int, body: @Sendable (String?) -> Void)
    let (followers, waiters, durableSeq, firstUnsynced, redoResumes) = self.pending.withLock {
      pending -> ([Follower], [Waiter], UInt64?, Bool, Bool) in
      pending.unsyncedGroups += 1
      let redoResumes = self.resumeRedo(&pending)
      let firstUnsynced = pending.unsyncedGroups == 1
      var followers: [Follower] = []
      if let seq, seq > pending.committedSeq {
        pending.committedSeq = seq
        followers = pending.followers.filter { $0.seq < seq }
        pending.followers.removeAll { $0.seq < seq }
      }
      guard self.mode.waitsForTheJournal else { return (followers, [], nil, firstUnsynced, redoResumes) }
      if let seq { pending.durableSeq = max(pending.durableSeq, seq) }
      pending.durableTimers = max(pending.durableTimers, timers)
      let (durableSeq, durableTimers) = (pending.durableSeq, pending.durableTimers)
      let ready = pending.waiters.filter { $0.seq <= durableSeq && $0.timers <= durableTimers }
      pending.waiters.removeAll { $0.seq <= durableSeq && $0.timers <= durableTimers }
      return (followers, ready, seq == nil ? nil : durableSeq, firstUnsynced, redoResumes)
    }
    if redoResumes { self.logger.notice("the journal is written again; accepting changes", metadata: ["redo": "resumed"]) }
    // The batched mode's fsync is due an interval after the last one: the writer thread waits
    // for it once there is something to force out.
    if firstUnsynced, self.mode == .batched { self.wakeUp.signal() }
    for follower in followers { follower.body(false) }
    if let durableSeq {
      // Each strict commit is its own fsync.
      if self.mode == .strict { self.report?.synced(durableSeq) }
      self.released(durableSeq)
    }
    for waiter in waiters { waiter.body(nil) }
  }
}
