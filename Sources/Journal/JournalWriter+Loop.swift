import SwitchyardTiming

extension JournalWriter {
  /// What the event loop does with what the batched mode queued.
  private enum LoopCommit {
    /// Nothing is queued: the writer thread took it meanwhile.
    case nothing
    /// The writer thread is awake or has the connection, the group holds several changes (the
    /// loop has other work), the writer thread must write next, or the journal is failing or
    /// closing: the writer thread takes the group.
    case handOver
    /// The loop has the connection and commits these.
    case commit(journal: any InlineCommitting, changes: [JournaledChange], timers: [TimerOperation], timersTaken: Int)
  }

  /// Commits, on the event loop, the change queued there since the last such commit, in the
  /// batched mode — when it is the only one, the writer thread sleeps and no other request
  /// waits on the loop: a lone request (ping-pong), which would otherwise wait for two
  /// wake-ups. Other requests waiting, or several changes at once, mean the loop has other work
  /// (pipelined sends, several clients): the writer thread
  /// commits them on the other core meanwhile, and stays awake a little after (`linger`), so
  /// that it goes on taking the groups while the load lasts. Then, and if the commit fails, the
  /// group goes to the writer thread: the loop never waits for the connection, nor for the disk.
  ///
  /// What a commit costs the loop: SQLite writes the group's pages into the WAL, which is a
  /// `write` into the kernel's page cache — no fsync (`synchronous=NORMAL`), no checkpoint
  /// (`wal_autocheckpoint=0`), and never the first write after a checkpoint, the one that
  /// starts the WAL again and forces its header out (``Pending/writerWritesNext``). The
  /// periodic fsync takes no lock of SQLite's (``JournalFiles``), so a slow fsync holds up no
  /// commit here.
  func commitOnLoop() {
    let decision = self.pending.withLock { pending -> LoopCommit in
      pending.loopCommitScheduled = false
      if pending.changes.isEmpty, pending.timers.isEmpty { return .nothing }
      guard let inline = self.inline, pending.holder == .nobody, pending.writerSleeps, pending.changes.count <= 1, !pending.writerWritesNext,
        pending.unavailable == nil, !pending.isBehind, !pending.isClosed, !self.loopIsBusy()
      else { return .handOver }
      pending.holder = .loop
      defer {
        pending.changes.removeAll(keepingCapacity: true)
        pending.timers.removeAll()
      }
      _ = self.backlogTaken(&pending)
      return .commit(journal: inline, changes: pending.changes, timers: pending.timers, timersTaken: pending.submittedTimers)
    }
    switch decision {
    case .nothing:
      return
    case .handOver:
      self.wakeUp.signal()
    case let .commit(journal, changes, timers, timersTaken):
      do {
        let start = MonotonicClock.now
        try journal.appendInline(changes, timers: timers)
        self.committed?(MonotonicClock.now &- start, changes.count)
      } catch {
        // Put back in front of what came in meanwhile: the writer thread tries again, and says
        // the journal is unavailable while it stays so.
        self.handBack { pending in
          pending.backlogBytes += changes.reduce(0) { $0 + $1.byteCount }
          pending.changes.insert(contentsOf: changes, at: 0)
          pending.timers.insert(contentsOf: timers, at: 0)
        }
        self.wakeUp.signal()
        self.logger.debug("a commit on the event loop failed; the journal's thread takes it", metadata: ["error": "\(error)"])
        return
      }
      self.handBack { _ in }
      self.committed(upTo: changes.last?.seq, timers: timersTaken)
    }
  }

  /// Gives the connection back after `update`, and wakes the writer thread if it waits for it.
  private func handBack(_ update: (inout Pending) -> Void) {
    let writerWaits = self.pending.withLock { pending in
      update(&pending)
      pending.holder = .nobody
      defer { pending.writerWaits = false }
      return pending.writerWaits
    }
    if writerWaits { self.handedBack.signal() }
  }
}
