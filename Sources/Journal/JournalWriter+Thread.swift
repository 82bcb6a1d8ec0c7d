import Dispatch
import Foundation
import SwitchyardTiming

extension JournalWriter {
  /// The writer's task, on its ``JournalThread``: commits what the loop did not (every group in the strict and off modes),
  /// writes snapshots and prunes, forces the batched mode's commits onto the disk every
  /// interval and checkpoints after it, and closes the journal. Everything here may wait on the
  /// disk; none of it runs on an event loop.
  package func run() async {
    var lastSync = ContinuousClock.now
    var lastMark = ContinuousClock.now
    var failures = 0
    // A run whose start was never recorded has no record to mark clean at the stop.
    var gaveUp = !(await self.writeUnwrittenStart())
    var underLoad = false
    while true {
      self.waitForWork(lastSync: lastSync, lingering: underLoad)
      underLoad = false
      self.takeConnection()
      let (batch, timers, timersTaken, snapshots, isClosed, redoTaken, caughtUp) = self.pending.withLock { pending in
        defer {
          pending.changes.removeAll(keepingCapacity: true)
          pending.timers.removeAll()
          pending.snapshots.removeAll()
        }
        let caughtUp = self.backlogTaken(&pending)
        return (pending.changes, pending.timers, pending.submittedTimers, pending.snapshots, pending.isClosed, self.redo?.lastRecord, caughtUp)
      }
      if caughtUp { self.logger.notice("the journal's writer has taken what was queued; accepting changes again") }
      if !batch.isEmpty || !timers.isEmpty {
        var written = false
        var unsynced: UnsyncedGroups?
        while !written {
          do {
            let start = MonotonicClock.now
            if let apart = self.apart {
              try apart.appendUnsynced(batch, timers: timers)
            } else {
              try await self.journal.append(batch, timers: timers)
              self.committed?(MonotonicClock.now &- start, batch.count)
            }
            unsynced = UnsyncedGroups(seq: batch.last?.seq, timers: timersTaken, started: start, changes: batch.count)
            if failures > 0 { self.available(after: failures) }
            failures = 0
            written = true
          } catch {
            if failures == 0 { self.unavailable(because: JournalWriteError(.commitFailed, underlying: error)) }
            failures += 1
            if self.pending.withLock({ $0.isClosed }) {
              self.logger.critical(
                "stopping with changes the journal could not take: they are lost",
                metadata: [
                  "changes": "\(batch.count)", "from": "\(batch.first?.seq ?? 0)", "timers": "\(timers.count)",
                  "error": "\(error)",
                ]
              )
              gaveUp = true
              break
            }
            // Tried again, more slowly the longer it fails, until the disk takes it.
            Self.pause(failures)
          }
        }
        // A group given up at the stop was never journaled: nothing may count it as kept.
        if written {
          // Several changes in one group: requests come in faster than one at a time.
          underLoad = batch.count > 1
          self.pending.withLock { $0.writerWritesNext = false }
          if let apart = self.apart, let unsynced {
            self.syncApart(apart, unsynced)
          } else {
            self.committed(upTo: batch.last?.seq, timers: timersTaken)
          }
          self.reclaimRedo(upTo: redoTaken)
          // Each strict commit is on the disk: the mark follows, once an interval.
          if self.mode == .strict, self.apart == nil, let last = batch.last, ContinuousClock.now - lastMark >= self.interval {
            lastMark = .now
            self.markReached(last.seq)
          }
        }
      }
      if !snapshots.isEmpty {
        // After the changes taken with them, which include every change before each snapshot.
        do {
          for snapshot in snapshots {
            try await self.journal.write(snapshot)
            self.logger.debug("snapshot written", metadata: ["seq": "\(snapshot.seq)"])
          }
          self.pending.withLock { pending in
            pending.unsyncedGroups += 1
            pending.writerWritesNext = false
          }
          await self.prune()
        } catch {
          // The journal still holds every change since the last snapshot: nothing is lost, the
          // next start only replays more.
          self.logger.error("cannot write a snapshot", metadata: ["error": "\(error)", "seq": "\(snapshots.last!.seq)"])
        }
      }
      self.giveConnectionBack()
      if self.mode == .batched, !isClosed, ContinuousClock.now - lastSync >= self.interval,
        self.pending.withLock({ $0.unsyncedGroups > 0 })
      {
        lastSync = .now
        do {
          try await self.syncAndCheckpoint()
          if failures > 0 { self.available(after: failures) }
          failures = 0
        } catch {
          // Changes were committed but may not be on the disk: nothing new is accepted until
          // an fsync succeeds (tried again each interval).
          if failures == 0 { self.unavailable(because: JournalWriteError(.syncFailed, underlying: error)) }
          failures += 1
        }
      }
      if isClosed {
        let closing = self.pending.withLock { pending in
          // Whatever came in after the last batch was taken gets written first.
          pending.changes.isEmpty && pending.timers.isEmpty && pending.snapshots.isEmpty ? pending.closing.take() : nil
        }
        if let closing {
          self.stopSyncThread()
          await self.finish(clean: !gaveUp)
          let followers = self.pending.withLock { pending in
            defer { pending.followers.removeAll() }
            return pending.followers
          }
          for follower in followers { follower.body(true) }
          closing.resume()
          return
        }
        self.wakeUp.signal()
      }
    }
  }

  /// Writes what the start could not (``unwrittenStart``), trying again more slowly the longer
  /// it fails, until it can or the daemon stops; whatever was queued meanwhile is written after
  /// it. Returns whether the start is recorded.
  private func writeUnwrittenStart() async -> Bool {
    guard let write = self.unwrittenStart else { return true }
    // The waits below may take the wake-up of a submit or of the stop: the loop gets one.
    defer { self.wakeUp.signal() }
    var failures = 0
    while !self.pending.withLock({ $0.isClosed }) {
      do {
        try await write()
        self.available(after: failures + 1)
        return true
      } catch {
        failures += 1
        if failures == 1 { self.logger.debug("the start still cannot be recorded", metadata: ["error": "\(error)"]) }
        _ = self.wakeUp.wait(timeout: .now() + min(0.05 * Double(failures), 1))
      }
    }
    return false
  }

  /// Sleeps until something is queued, or until the batched mode's next fsync is due; the loop
  /// commits by itself only meanwhile.
  ///
  /// - Parameter lingering: It just committed a group of several changes: in the batched mode
  ///   it first waits a little while awake, so that under load — requests coming in faster than
  ///   one at a time — the loop goes on handing it groups rather than committing them itself, in
  ///   series with its other work. A lone change it was handed (the loop found the connection
  ///   taken) is no sign of load: after it, the loop commits lone changes itself again.
  private func waitForWork(lastSync: ContinuousClock.Instant, lingering: Bool) {
    if lingering, self.mode == .batched, self.wakeUp.wait(timeout: .now() + Self.linger) == .success { return }
    let unsynced = self.pending.withLock { pending in
      pending.writerSleeps = true
      return pending.unsyncedGroups > 0
    }
    defer { self.pending.withLock { $0.writerSleeps = false } }
    guard self.mode == .batched, unsynced else {
      return self.wakeUp.wait()
    }
    let remaining = lastSync + self.interval - ContinuousClock.now
    guard remaining > .zero else { return }
    _ = self.wakeUp.wait(timeout: .now() + .nanoseconds(Int(Self.nanoseconds(remaining))))
  }

  /// Waits before a failed commit is tried again, longer the longer it fails, holding the
  /// writer's own thread.
  private static func pause(_ failures: Int) {
    Thread.sleep(forTimeInterval: min(0.05 * Double(failures), 1))
  }

  /// Whether the writer thread sleeps, waiting for work or for the next fsync: the only time
  /// the batched mode commits on the loop.
  var isWriterThreadAsleep: Bool {
    self.pending.withLock { $0.writerSleeps }
  }

  /// How long the writer thread stays awake after a commit in the batched mode: long next to the
  /// time between requests under load, short next to a person's pace.
  static var linger: DispatchTimeInterval { .milliseconds(2) }

  /// Forces everything committed so far onto the disk — without the connection, so the loop
  /// goes on committing meanwhile — then checkpoints and records how far the fsync went.
  private func syncAndCheckpoint() async throws {
    let (seq, groups) = self.pending.withLock { ($0.committedSeq, $0.unsyncedGroups) }
    try await self.journal.sync()
    self.pending.withLock { $0.unsyncedGroups -= groups }
    self.report?.synced(seq)
    self.markReached(seq)
    self.takeConnection()
    defer { self.giveConnectionBack() }
    do {
      try await self.journal.checkpoint()
    } catch {
      self.logger.debug("cannot checkpoint the journal now", metadata: ["error": "\(error)"])
    }
    // A write after every checkpoint, here: the one that starts an emptied WAL again forces
    // its header onto the disk, and must not be the loop's.
    do {
      try await self.journal.recordSynced(SyncPoint(seq: seq, time: Date().timeIntervalSince1970))
    } catch {
      self.pending.withLock { $0.writerWritesNext = true }
    }
  }

  /// The last write of the run: it stopped cleanly (unless a group had to be given up), and
  /// everything is forced onto the disk, in every mode.
  private func finish(clean: Bool) async {
    self.takeConnection()
    defer { self.giveConnectionBack() }
    let seq = self.committedSeq
    do {
      if clean, let run = self.runRecord { try await self.journal.endRun(run, synced: SyncPoint(seq: seq, time: Date().timeIntervalSince1970)) }
      // Into the database proper, then onto the disk: the off mode's checkpoints force nothing
      // out themselves.
      try? await self.journal.checkpoint()
      try await self.journal.sync()
      self.report?.synced(seq)
      self.markReached(seq)
      // A group given up keeps its records, for the next start to commit.
      if clean { self.removeRedo() }
    } catch {
      self.logger.error("cannot force the journal onto the disk at the stop", metadata: ["error": "\(error)"])
    }
  }

  /// Records beside the journal that it has `seq` on the disk (``ReachedMark``).
  func markReached(_ seq: UInt64) {
    do {
      try self.reached?.record(history: self.journal.id, seq: seq)
    } catch {
      self.logger.warning("cannot record how far the journal reached", metadata: ["error": "\(error)"])
    }
  }

  /// Takes the journal's connection, waiting for the loop to hand it back if it has it.
  private func takeConnection() {
    while true {
      let taken = self.pending.withLock { pending in
        if pending.holder == .nobody {
          pending.holder = .writer
          return true
        }
        pending.writerWaits = true
        return false
      }
      if taken { return }
      self.handedBack.wait()
    }
  }

  private func giveConnectionBack() {
    self.pending.withLock { $0.holder = .nobody }
  }

  /// Prunes the journal after a snapshot. A prune that fails (a damaged page it reads) loses
  /// nothing, but retention stops and the journal grows until one succeeds: `Status` and the
  /// metrics count the failures.
  private func prune() async {
    do {
      try await self.journal.prune(
        keepingSnapshots: self.snapshots.keep, keepingChanges: self.snapshots.retention,
        changedBefore: self.snapshots.retentionAge.map { Date().timeIntervalSince1970 - Double(Self.nanoseconds($0)) / 1e9 }
      )
    } catch {
      // Logged before it is counted: whoever sees the count finds the line that explains it.
      self.logger.error(
        "cannot prune the journal: it keeps every change until a prune succeeds", metadata: ["error": "\(error)"]
      )
      self.report?.pruneFailed(error)
      self.pruneFailed?()
    }
  }
}
