extension JournalWriter {
  /// The last change counted as kept: in the batched mode with a redo log, SQLite may not have
  /// committed it yet.
  package var keptSeq: UInt64 {
    self.pending.withLock { $0.durableSeq }
  }

  /// Writes `record` into the redo log, under the lock, when the batched mode has one: once
  /// written it counts as kept, and its reply need wait for no commit. Returns why it could not
  /// be written; then the log is suspended and changes count as kept once SQLite commits them,
  /// as without a log, until SQLite holds everything queued (``resumeRedo(_:)``): a record after
  /// one the log lacks would count a change as kept with one before it missing.
  func keepInRedo(_ record: RedoRecord, _ pending: inout Pending) -> RedoLog.WriteError? {
    guard let redo = self.redo, !pending.redoSuspended else { return nil }
    do {
      try redo.append(record)
    } catch {
      pending.redoSuspended = true
      self.redoSuspended.store(true, ordering: .releasing)
      return error
    }
    switch record {
    case let .change(change): pending.durableSeq = change.seq
    case .timer: pending.durableTimers = pending.submittedTimers
    }
    return nil
  }

  /// After a commit: a suspended redo log goes on once SQLite holds everything queued, and the
  /// refusal it caused ends. Returns whether it did.
  func resumeRedo(_ pending: inout Pending) -> Bool {
    guard pending.redoSuspended, pending.changes.isEmpty, pending.timers.isEmpty else { return false }
    pending.redoSuspended = false
    self.redoSuspended.store(false, ordering: .releasing)
    guard pending.unavailable?.code == .redoFailed else { return false }
    pending.unavailable = nil
    return true
  }

  /// Deletes the redo log's segments whose records are all numbered `record` or lower: SQLite
  /// has committed them.
  func reclaimRedo(upTo record: UInt64?) {
    guard let redo = self.redo, let record else { return }
    let done = self.pending.withLock { _ in redo.reclaim(upTo: record) }
    if !done.isEmpty { redo.remove(done) }
  }

  /// Deletes the whole redo log: SQLite has all of it on the disk (a clean stop).
  func removeRedo() {
    guard let redo = self.redo else { return }
    redo.remove(self.pending.withLock { _ in redo.reclaimAll() })
  }
}
