import Dispatch
import Foundation
import Logging
import SwitchyardJSON
import SwitchyardSynchronization
import SwitchyardTiming

/// Writes the changes the daemon's change log hands it into the journal, so that no event loop
/// ever waits for the disk: whatever has come in since the last write goes into one transaction
/// (group commit), and one fsync serves all of it.
///
/// ```swift
/// writer.submit(change)                        // under the change log's lock, in seq order
/// writer.whenDurable(seq) { answer(seq) }      // strict: once it is on the disk
/// ```
///
/// In the ``DurabilityMode/strict`` and ``DurabilityMode/batched`` modes a change counts only once
/// it is committed (strict: and on the disk): replies wait for it (``whenDurable(_:_:)``) and so
/// do subscribers (the daemon holds them back until `released` is called). With
/// ``DurabilityMode/off`` both go on at once.
///
/// Who commits:
/// - **batched** with a ``RedoLog`` (SQLite's journal, in the daemon): the writer's task, as in
///   `off`; the change counts as kept once ``submit(_:)`` has written it into the redo log, on
///   the thread that made it, so replies and subscribers wait for no commit.
/// - **strict** and **off**: the writer's task, always (`JournalWriter+Thread`), on a
///   ``JournalThread`` of its own: an engine that blocks on the disk blocks that thread only,
///   one that answers asynchronously frees it until the commit is acknowledged. A strict engine
///   that syncs apart (``SyncingApart``, SQLite) has its groups forced out by a sync thread
///   while the writer commits the next (`JournalWriter+SyncApart`); a lone change, by the writer.
/// - **batched** without a redo log, with an engine that commits inline (``InlineCommitting``,
///   SQLite): the event loop the change was made on, at the end of what it is doing, when the change is the only
///   one queued and the writer thread sleeps (`JournalWriter+Loop`): a `write` into the page
///   cache, as Redis's `appendfsync everysec` writes its AOF on its loop, which saves a lone
///   reply two cross-thread wake-ups. Several changes at once mean the loop has other work:
///   their group goes to the writer thread, which commits it on the other core, and takes the
///   next groups too while it is awake. The writer thread also keeps what waits on the disk —
///   the periodic fsync, checkpoints, snapshots, pruning. The loop never waits for the
///   connection: it hands the group over.
package final class JournalWriter: Sendable {
  /// Who has the journal's (one) writing connection.
  enum Holder {
    case nobody
    /// The event loop, committing a group of the batched mode.
    case loop
    /// The writer thread.
    case writer
  }

  struct Pending: ~Copyable {
    var changes: [JournaledChange] = []
    var timers: [TimerOperation] = []
    var snapshots: [JournalSnapshot] = []
    /// Who waits for a change, and for the timer operations submitted before it asked.
    var waiters: [(seq: UInt64, timers: Int, body: @Sendable (String?) -> Void)] = []
    var durableSeq: UInt64
    /// How many timer operations were submitted, and how many of them are kept.
    var submittedTimers = 0
    var durableTimers = 0
    /// The last change committed, in every mode, and who waits for the next commit: readers
    /// of the journal that follow it.
    var committedSeq: UInt64
    var followers: [(seq: UInt64, body: @Sendable (_ isClosed: Bool) -> Void)] = []
    /// The daemon is stopping: nobody follows the journal any more.
    var isFollowingOver = false
    /// Why the journal cannot be written, while it cannot.
    var unavailable: JournalWriteError?
    /// What the changes queued weigh (``JournaledChange/byteCount``), and whether that passed
    /// ``backlogLimit``: new changes are refused until the writer has taken them.
    var backlogBytes = 0
    var isBehind = false
    var closing: CheckedContinuation<Void, Never>?
    var isClosed = false
    var holder = Holder.nobody
    /// The writer thread waits for the loop to hand the connection back.
    var writerWaits = false
    /// A commit on the event loop is scheduled and has not run yet.
    var loopCommitScheduled = false
    /// The next write must be the writer thread's: the checkpoint before it may have emptied
    /// the WAL, and the write that starts it again forces its header onto the disk.
    var writerWritesNext = false
    /// Groups committed since the last fsync: what the batched mode has to force out.
    var unsyncedGroups = 0
    /// The writer thread sleeps: nothing queued for it, no fsync due.
    var writerSleeps = false
    /// A record could not be written to the redo log: changes count as kept once committed,
    /// until SQLite has everything queued and the log goes on.
    var redoSuspended = false
    /// Strict, with an engine that syncs apart: what the sync thread has to force out.
    var apart = SyncApartState()
  }

  package let journal: any Journal
  /// The journal, when it commits on the calling thread: the batched mode commits on the loop.
  let inline: (any InlineCommitting)?
  package let mode: DurabilityMode
  let interval: Duration
  let snapshots: SnapshotPolicy
  /// Where the batched mode commits the changes made on it; `nil`: always the writer thread.
  let loop: (any CommitLoop)?
  /// Where the batched mode writes each change before its reply, when it has one: then the
  /// writer thread commits every group, as in `off` (``RedoLog``).
  let redo: RedoLog?
  /// Mirrors ``Pending/redoSuspended`` for ``repliesWait``, which a `Send` reads without the lock.
  let redoSuspended = Atomic<Bool>(false)
  /// Where the writer's task runs, and waits for work.
  let thread = JournalThread(name: "journal-writer")
  /// This run, as the journal recorded it at start: written again, clean, at the stop.
  let runRecord: RunRecord?
  /// What `Status` says of the disk: the last change forced onto it.
  package let report: DurabilityReport?
  /// Told how far the journal has reached on the disk, at most once an interval.
  let reached: ReachedMark?
  /// What the start could not write (a full disk): the writer thread writes it before anything
  /// else, trying until it can, and nothing is accepted meanwhile.
  let unwrittenStart: (@Sendable () async throws -> Void)?
  let lastSnapshotSeq: Atomic<UInt64>
  /// When the last snapshot was taken, in nanoseconds after `started`.
  let lastSnapshotTime = Atomic<Int64>(0)
  let started = ContinuousClock.now
  /// Where snapshots are serialized: neither on an event loop nor in the way of a group commit.
  let serializer = DispatchQueue(label: "switchyard-snapshot")
  let pending: Mutex<Pending>
  /// Wakes the writer thread: work came in, or an fsync is due.
  let wakeUp = DispatchSemaphore(value: 0)
  /// Wakes the writer thread waiting for the loop to hand the connection back.
  let handedBack = DispatchSemaphore(value: 0)
  /// Strict: the engine, when its commits can be forced out by another thread (`+SyncApart`).
  let apart: (any SyncingApart)?
  /// How many bytes of changes may wait for the writer: past it, new changes are refused until
  /// it has taken them, so a disk slower than the clients bounds the memory they can fill.
  let backlogLimit: Int
  package static let defaultBacklogLimit = 64 << 20
  /// Wakes the sync thread; tells the writer it ended.
  let syncWake = DispatchSemaphore(value: 0)
  let syncStopped = DispatchSemaphore(value: 0)
  let released: @Sendable (UInt64) -> Void
  /// Told of each group commit: how long it took and how many changes it wrote.
  let committed: (@Sendable (_ nanoseconds: UInt64, _ changes: Int) -> Void)?
  /// Told of each prune that failed: for the metrics.
  let pruneFailed: (@Sendable () -> Void)?
  /// Whether the loop has other requests than the one whose change is at hand: then the batched
  /// mode leaves the commit to the writer thread, which makes it on the other CPU meanwhile.
  let loopIsBusy: @Sendable () -> Bool
  let logger: Logger

  /// - Parameters:
  ///   - lastSeq: The last sequence number already in the journal.
  ///   - lastSnapshotSeq: The sequence number of its latest snapshot.
  ///   - loop: The event loop the changes are made on: the batched mode commits there.
  ///   - run: This run's record in the journal, to mark clean at the stop.
  ///   - report: Told of every fsync.
  ///   - reached: Told how far the journal reached on the disk, once an interval.
  ///   - unwrittenStart: What the start could not write, and why: the writer is
  ///     ``unavailable`` for that reason until it has written it.
  ///   - released: Called with the last sequence number kept, each time it moves (not with
  ///     ``DurabilityMode/off``): on the writer's thread, or on the loop that committed it.
  ///   - loopIsBusy: Whether the loop has other requests waiting than the one at hand.
  ///   - committed: Called after each group commit, where it was made, with how long it took
  ///     (its fsync included in ``DurabilityMode/strict``) and how many changes it wrote: for
  ///     the metrics.
  ///   - pruneFailed: Called after each prune that failed, for the metrics (``report`` is told
  ///     the error).
  ///   - backlogLimit: How many bytes of changes may wait for the writer before new ones are
  ///     refused (``unavailable``).
  package init(
    journal: any Journal,
    mode: DurabilityMode,
    interval: Duration,
    snapshots: SnapshotPolicy = SnapshotPolicy(),
    lastSeq: UInt64,
    lastSnapshotSeq: UInt64,
    loop: (any CommitLoop)? = nil,
    redo: RedoLog? = nil,
    run: RunRecord? = nil,
    report: DurabilityReport? = nil,
    reached: ReachedMark? = nil,
    unwrittenStart: (write: @Sendable () async throws -> Void, reason: JournalWriteError)? = nil,
    logger: Logger,
    loopIsBusy: @escaping @Sendable () -> Bool = { false },
    released: @escaping @Sendable (UInt64) -> Void,
    committed: (@Sendable (_ nanoseconds: UInt64, _ changes: Int) -> Void)? = nil,
    pruneFailed: (@Sendable () -> Void)? = nil,
    backlogLimit: Int = JournalWriter.defaultBacklogLimit
  ) {
    self.journal = journal
    self.mode = mode
    self.interval = interval
    self.backlogLimit = backlogLimit
    self.snapshots = snapshots
    self.inline = journal as? any InlineCommitting
    self.redo = mode == .batched ? redo : nil
    self.loop = mode == .batched && self.inline != nil && self.redo == nil ? loop : nil
    self.apart = mode == .strict ? journal as? any SyncingApart : nil
    self.runRecord = run
    self.report = report
    self.reached = reached
    self.unwrittenStart = unwrittenStart?.write
    self.lastSnapshotSeq = Atomic(lastSnapshotSeq)
    var pending = Pending(durableSeq: lastSeq, committedSeq: lastSeq)
    pending.unavailable = unwrittenStart?.reason
    self.pending = Mutex(pending)
    self.released = released
    self.committed = committed
    self.pruneFailed = pruneFailed
    self.loopIsBusy = loopIsBusy
    self.logger = logger
    if let apart = self.apart { Thread { [self] in self.runSyncThread(apart) }.start() }
    Task(executorPreference: self.thread) { [self] in
      await self.run()
      self.thread.stop()
    }
  }

  /// Whether a reply must wait for ``whenDurable(_:_:)``: strict; batched without a redo log, or
  /// while it is suspended. A change made is in the redo log by the time its reply is known.
  package var repliesWait: Bool {
    self.mode == .strict || (self.mode == .batched && (self.redo == nil || self.redoSuspended.load(ordering: .acquiring)))
  }

  /// Queues `change` for the journal; called in sequence order.
  package func submit(_ change: JournaledChange) {
    let onLoop = self.loop?.inEventLoop == true
    let (wasIdle, schedule, redoFailure, fellBehind) = self.pending.withLock { pending in
      pending.changes.append(change)
      pending.backlogBytes += change.byteCount
      let fellBehind = !pending.isBehind && pending.backlogBytes > self.backlogLimit
      if fellBehind { pending.isBehind = true }
      let redoFailure = self.keepInRedo(.change(change), &pending)
      return (pending.changes.count == 1, self.schedulesLoopCommit(onLoop, &pending), redoFailure, fellBehind)
    }
    if fellBehind {
      self.logger.warning(
        "the journal's writer is behind: refusing new changes until it has taken what is queued",
        metadata: ["queued": "\(self.backlogLimit) bytes or more"]
      )
    }
    self.wake(wasIdle: wasIdle, schedule: schedule, redoFailure: redoFailure)
  }

  /// The changes queued were taken, to be committed: what they weighed no longer counts, and
  /// if they had passed the limit, changes are accepted again. Returns whether they had.
  func backlogTaken(_ pending: inout Pending) -> Bool {
    pending.backlogBytes = 0
    defer { pending.isBehind = false }
    return pending.isBehind
  }

  /// Queues a durable timer's scheduling, cancellation or firing for the journal; a reply that
  /// waits for a change made after it waits for it too.
  package func submit(_ operation: TimerOperation) {
    let onLoop = self.loop?.inEventLoop == true
    let (wasIdle, schedule, redoFailure) = self.pending.withLock { pending in
      pending.timers.append(operation)
      pending.submittedTimers += 1
      let redoFailure = self.keepInRedo(.timer(operation), &pending)
      return (pending.changes.isEmpty && pending.timers.count == 1, self.schedulesLoopCommit(onLoop, &pending), redoFailure)
    }
    self.wake(wasIdle: wasIdle, schedule: schedule, redoFailure: redoFailure)
  }

  /// What was just queued is committed on the loop (scheduled once for all that is queued
  /// there meanwhile), or by the writer thread, woken when it had nothing to do.
  private func wake(wasIdle: Bool, schedule: Bool, redoFailure: RedoLog.WriteError?) {
    if let redoFailure { self.unavailable(because: JournalWriteError(.redoFailed, underlying: redoFailure)) }
    if schedule {
      self.loop?.execute { self.commitOnLoop() }
    } else if wasIdle {
      self.wakeUp.signal()
    }
  }

  /// Whether the batched mode should commit what was just queued on the loop it was made on.
  private func schedulesLoopCommit(_ onLoop: Bool, _ pending: inout Pending) -> Bool {
    // A busy loop hands its changes to the writer thread at once, which starts on them while
    // the loop goes on reading.
    guard onLoop, !self.loopIsBusy() else { return false }
    if pending.loopCommitScheduled { return false }
    pending.loopCommitScheduled = true
    return true
  }

  /// Whether the state after the change numbered `seq` should be kept as a snapshot.
  package func isSnapshotDue(at seq: UInt64) -> Bool {
    if seq >= self.lastSnapshotSeq.load(ordering: .relaxed) + UInt64(self.snapshots.every) { return true }
    guard let interval = self.snapshots.interval else { return false }
    return self.elapsed - self.lastSnapshotTime.load(ordering: .relaxed) >= Self.nanoseconds(interval)
  }

  private var elapsed: Int64 {
    Self.nanoseconds(ContinuousClock.now - self.started)
  }

  static func nanoseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
  }

  /// Keeps `state`, the composed state at `seq`, as a snapshot: serialized in the background,
  /// then written after the changes before it. The state is a value, so the change log goes on
  /// changing its own copy meanwhile.
  package func snapshot(_ state: JSONValue, at seq: UInt64) {
    self.lastSnapshotSeq.store(seq, ordering: .relaxed)
    self.lastSnapshotTime.store(self.elapsed, ordering: .relaxed)
    self.serializer.async {
      let snapshot = JournalSnapshot(seq: seq, state: state.serializedBytes())
      self.pending.withLock { $0.snapshots.append(snapshot) }
      self.wakeUp.signal()
    }
  }

  /// Calls `body` once the change numbered `seq` counts as kept: once it is committed (and with
  /// ``DurabilityMode/strict`` on the disk), on the thread that committed it, or at once with
  /// ``DurabilityMode/off``. While the journal cannot be written it is called at once with the
  /// reason: the change stays queued, and is journaled once writes succeed again.
  package func whenDurable(_ seq: UInt64, _ body: @escaping @Sendable (_ unavailable: String?) -> Void) {
    guard self.mode.waitsForTheJournal else { return body(nil) }
    let now: String?? = self.pending.withLock { pending in
      if pending.durableSeq >= seq, pending.durableTimers >= pending.submittedTimers { return .some(nil) }
      if let unavailable = pending.unavailable { return .some(unavailable.description) }
      pending.waiters.append((seq, pending.submittedTimers, body))
      return nil
    }
    if let now { body(now) }
  }

  /// Calls `body` once the journal holds a change after `seq` — at once when it does — on the
  /// thread that committed it; with `isClosed` once the journal closes instead.
  package func whenCommitted(after seq: UInt64, _ body: @escaping @Sendable (_ isClosed: Bool) -> Void) {
    let now: Bool? = self.pending.withLock { pending in
      if pending.committedSeq > seq { return false }
      if pending.isClosed || pending.isFollowingOver { return true }
      pending.followers.append((seq, body))
      return nil
    }
    if let now { body(now) }
  }

  /// Ends every follower of the journal (called with `isClosed`), and those to come: the daemon
  /// is stopping, and waits for no call that would follow it forever.
  package func endFollowing() {
    let followers = self.pending.withLock { pending in
      pending.isFollowingOver = true
      defer { pending.followers.removeAll() }
      return pending.followers
    }
    for follower in followers { follower.body(true) }
  }

  /// The last sequence number the journal holds (committed, if not yet on the disk).
  package var committedSeq: UInt64 {
    self.pending.withLock { $0.committedSeq }
  }

  /// Why the journal cannot be written now, if it cannot: it fails, or its writer is behind.
  package var unavailable: String? {
    self.pending.withLock { pending in
      pending.unavailable?.description
        ?? (pending.isBehind ? "the journal's writer is behind by \(pending.backlogBytes) bytes of changes; try again shortly" : nil)
    }
  }

  /// Writes what is queued, and `final` (the state the daemon stops with) as a snapshot, so that
  /// the next start recovers without replaying; records the stop as clean, forces it all onto
  /// the disk and stops the thread.
  package func close(final: (seq: UInt64, state: JSONValue)?) async {
    let last = final.flatMap { final in
      final.seq > self.lastSnapshotSeq.load(ordering: .relaxed)
        ? JournalSnapshot(seq: final.seq, state: final.state.serializedBytes()) : nil
    }
    await withCheckedContinuation { continuation in
      self.pending.withLock { pending in
        if let last { pending.snapshots.append(last) }
        pending.isClosed = true
        pending.closing = continuation
      }
      self.wakeUp.signal()
    }
  }

  /// The journal failed: every reply waiting for it is told why, and new changes are refused
  /// (``unavailable``) until it works again.
  func unavailable(because error: JournalWriteError) {
    let reason = error.description
    self.logger.error(
      "cannot write the journal; refusing new changes until it can",
      metadata: ["error": "\(error.underlying)", "code": "\(error.code.rawValue)"]
    )
    let waiting = self.pending.withLock { pending in
      pending.unavailable = error
      defer { pending.waiters.removeAll() }
      return pending.waiters
    }
    for waiter in waiting { waiter.body(reason) }
  }

  func available(after failures: Int) {
    self.pending.withLock { $0.unavailable = nil }
    self.logger.notice("the journal is written again; accepting changes", metadata: ["failures": "\(failures)"])
  }
}
