import Dispatch
import Foundation
import Logging
import SwitchyardRuntime
import SwitchyardSynchronization

/// When the composed state is written as a snapshot, and how much of the journal is kept.
struct SnapshotPolicy: Sendable, Equatable {
  /// A snapshot every this many changes (`snapshots.every`).
  var every: Int = 10_000
  /// And, when set, a snapshot with the first change once this much time has passed since the
  /// last one (`snapshots.interval`).
  var interval: Duration?
  /// How many snapshots are kept (`snapshots.keep`).
  var keep: Int = 2
  /// How many changes are kept even behind the oldest snapshot (`journal.retention`), for
  /// subscribers that resume and for the history.
  var retention: Int = 100_000
  /// When set, changes behind the oldest snapshot kept that are older than this are pruned too,
  /// however few (`journal.retentionAge`).
  var retentionAge: Duration?
}

/// Writes the changes the ``ChangeLog`` hands it into the journal, from a thread of its own, so
/// no event loop ever waits for the disk: whatever has come in since the last write goes into
/// one transaction (group commit), and one fsync serves all of it.
///
/// ```swift
/// writer.submit(change)                        // under the change log's lock, in seq order
/// writer.whenDurable(seq) { answer(seq) }      // strict: once it is on the disk
/// ```
///
/// In the ``DurabilityMode/strict`` and ``DurabilityMode/batched`` modes a change counts only once
/// it is committed (strict: and on the disk): replies wait for it (``whenDurable(_:_:)``) and so
/// do subscribers (``Subscriptions`` hold changes back until `released` is called). With
/// ``DurabilityMode/off`` both go on at once.
final class JournalWriter: Sendable {
  private struct Queue: ~Copyable {
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
    var unavailable: String?
    var closing: CheckedContinuation<Void, Never>?
    var isClosed = false
  }

  let journal: any Journal
  let mode: DurabilityMode
  private let interval: Duration
  private let snapshots: SnapshotPolicy
  private let lastSnapshotSeq: Atomic<UInt64>
  /// When the last snapshot was taken, in nanoseconds after `started`.
  private let lastSnapshotTime = Atomic<Int64>(0)
  private let started = ContinuousClock.now
  /// Where snapshots are serialized: neither on an event loop nor in the way of a group commit.
  private let serializer = DispatchQueue(label: "switchyard-snapshot")
  private let queue: Mutex<Queue>
  private let wakeUp = DispatchSemaphore(value: 0)
  private let released: @Sendable (UInt64) -> Void
  private let committed: (@Sendable (_ nanoseconds: UInt64, _ changes: Int) -> Void)?
  private let logger: Logger

  /// - Parameters:
  ///   - lastSeq: The last sequence number already in the journal.
  ///   - lastSnapshotSeq: The sequence number of its latest snapshot.
  ///   - released: Called on the writer's thread with the last sequence number kept, each time
  ///     it moves (not with ``DurabilityMode/off``).
  ///   - committed: Called on the writer's thread after each group commit with how long it took
  ///     and how many changes it wrote: for the metrics.
  init(
    journal: any Journal,
    mode: DurabilityMode,
    interval: Duration,
    snapshots: SnapshotPolicy = SnapshotPolicy(),
    lastSeq: UInt64,
    lastSnapshotSeq: UInt64,
    logger: Logger,
    released: @escaping @Sendable (UInt64) -> Void,
    committed: (@Sendable (_ nanoseconds: UInt64, _ changes: Int) -> Void)? = nil
  ) {
    self.journal = journal
    self.mode = mode
    self.interval = interval
    self.snapshots = snapshots
    self.lastSnapshotSeq = Atomic(lastSnapshotSeq)
    self.queue = Mutex(Queue(durableSeq: lastSeq, committedSeq: lastSeq))
    self.released = released
    self.committed = committed
    self.logger = logger
    let thread = Thread { [self] in self.run() }
    thread.name = "switchyard-journal"
    thread.start()
  }

  /// Queues `change` for the journal; called in sequence order.
  func submit(_ change: JournaledChange) {
    let wasIdle = self.queue.withLock { queue in
      queue.changes.append(change)
      return queue.changes.count == 1
    }
    if wasIdle { self.wakeUp.signal() }
  }

  /// Queues a durable timer's scheduling, cancellation or firing for the journal; a reply that
  /// waits for a change made after it waits for it too.
  func submit(_ operation: TimerOperation) {
    let wasIdle = self.queue.withLock { queue in
      queue.timers.append(operation)
      queue.submittedTimers += 1
      return queue.changes.isEmpty && queue.timers.count == 1
    }
    if wasIdle { self.wakeUp.signal() }
  }

  /// Whether the state after the change numbered `seq` should be kept as a snapshot.
  func isSnapshotDue(at seq: UInt64) -> Bool {
    if seq >= self.lastSnapshotSeq.load(ordering: .relaxed) + UInt64(self.snapshots.every) { return true }
    guard let interval = self.snapshots.interval else { return false }
    return self.elapsed - self.lastSnapshotTime.load(ordering: .relaxed) >= Self.nanoseconds(interval)
  }

  private var elapsed: Int64 {
    Self.nanoseconds(ContinuousClock.now - self.started)
  }

  private static func nanoseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
  }

  /// Keeps `state`, the composed state at `seq`, as a snapshot: serialized in the background,
  /// then written after the changes before it. The state is a value, so the change log goes on
  /// changing its own copy meanwhile.
  func snapshot(_ state: JSONValue, at seq: UInt64) {
    self.lastSnapshotSeq.store(seq, ordering: .relaxed)
    self.lastSnapshotTime.store(self.elapsed, ordering: .relaxed)
    self.serializer.async {
      let snapshot = JournalSnapshot(seq: seq, state: state.serializedBytes())
      self.queue.withLock { $0.snapshots.append(snapshot) }
      self.wakeUp.signal()
    }
  }

  /// Calls `body` once the change numbered `seq` counts as kept: on the writer's thread once it
  /// is committed (and with ``DurabilityMode/strict`` on the disk), or at once with
  /// ``DurabilityMode/off``. While the journal cannot be written it is called at once with the
  /// reason: the change stays queued, and is journaled once writes succeed again.
  func whenDurable(_ seq: UInt64, _ body: @escaping @Sendable (_ unavailable: String?) -> Void) {
    guard self.mode.waitsForTheJournal else { return body(nil) }
    let now: String?? = self.queue.withLock { queue in
      if queue.durableSeq >= seq, queue.durableTimers >= queue.submittedTimers { return .some(nil) }
      if let unavailable = queue.unavailable { return .some(unavailable) }
      queue.waiters.append((seq, queue.submittedTimers, body))
      return nil
    }
    if let now { body(now) }
  }

  /// Calls `body` once the journal holds a change after `seq` — at once when it does — on the
  /// writer's thread; with `isClosed` once the journal closes instead.
  func whenCommitted(after seq: UInt64, _ body: @escaping @Sendable (_ isClosed: Bool) -> Void) {
    let now: Bool? = self.queue.withLock { queue in
      if queue.committedSeq > seq { return false }
      if queue.isClosed || queue.isFollowingOver { return true }
      queue.followers.append((seq, body))
      return nil
    }
    if let now { body(now) }
  }

  /// Ends every follower of the journal (called with `isClosed`), and those to come: the daemon
  /// is stopping, and waits for no call that would follow it forever.
  func endFollowing() {
    let followers = self.queue.withLock { queue in
      queue.isFollowingOver = true
      defer { queue.followers.removeAll() }
      return queue.followers
    }
    for follower in followers { follower.body(true) }
  }

  /// The last sequence number the journal holds (committed, if not yet on the disk).
  var committedSeq: UInt64 {
    self.queue.withLock { $0.committedSeq }
  }

  /// Why the journal cannot be written now, if it cannot: new changes are refused meanwhile.
  var unavailable: String? {
    self.queue.withLock { $0.unavailable }
  }

  /// Writes what is queued, and `final` (the state the daemon stops with) as a snapshot, so that
  /// the next start recovers without replaying; forces it onto the disk and stops the thread.
  func close(final: (seq: UInt64, state: JSONValue)?) async {
    let last = final.flatMap { final in
      final.seq > self.lastSnapshotSeq.load(ordering: .relaxed)
        ? JournalSnapshot(seq: final.seq, state: final.state.serializedBytes()) : nil
    }
    await withCheckedContinuation { continuation in
      self.queue.withLock { queue in
        if let last { queue.snapshots.append(last) }
        queue.isClosed = true
        queue.closing = continuation
      }
      self.wakeUp.signal()
    }
  }

  private func run() {
    var lastSync = ContinuousClock.now
    var unsynced = false
    var failures = 0
    while true {
      // The batched mode wakes up at least once an interval to force out what it wrote.
      if self.mode == .batched, unsynced {
        _ = self.wakeUp.wait(timeout: .now() + .milliseconds(Int(self.interval.components.seconds * 1000 + self.interval.components.attoseconds / 1_000_000_000_000_000)))
      } else {
        self.wakeUp.wait()
      }
      let (batch, timers, timersTaken, snapshots, isClosed) = self.queue.withLock { queue in
        defer {
          queue.changes.removeAll(keepingCapacity: true)
          queue.timers.removeAll()
          queue.snapshots.removeAll()
        }
        return (queue.changes, queue.timers, queue.submittedTimers, queue.snapshots, queue.isClosed)
      }
      if !batch.isEmpty || !timers.isEmpty {
        var written = false
        while !written {
          do {
            let start = MonotonicClock.now
            try self.journal.append(batch, timers: timers)
            self.committed?(MonotonicClock.now &- start, batch.count)
            if failures > 0 { self.available(after: failures) }
            failures = 0
            written = true
          } catch {
            if failures == 0 { self.unavailable(because: error) }
            failures += 1
            if self.queue.withLock({ $0.isClosed }) {
              self.logger.critical(
                "stopping with changes the journal could not take: they are lost",
                metadata: [
                  "changes": "\(batch.count)", "from": "\(batch.first?.seq ?? 0)", "timers": "\(timers.count)",
                  "error": "\(error)",
                ]
              )
              break
            }
            // Tried again, more slowly the longer it fails, until the disk takes it.
            Thread.sleep(forTimeInterval: min(0.05 * Double(failures), 1))
          }
        }
        // A group given up at the stop was never journaled: nothing may count it as kept.
        if written {
          unsynced = true
          if let last = batch.last { self.committed(upTo: last.seq) }
          self.advance(to: batch.last?.seq, timers: timersTaken)
        }
      }
      if !snapshots.isEmpty {
        // After the changes taken with them, which include every change before each snapshot.
        do {
          for snapshot in snapshots { try self.journal.write(snapshot) }
          try self.journal.prune(
            keepingSnapshots: self.snapshots.keep, keepingChanges: self.snapshots.retention,
            changedBefore: self.snapshots.retentionAge.map { Date().timeIntervalSince1970 - Double(Self.nanoseconds($0)) / 1e9 }
          )
          unsynced = true
        } catch {
          // The journal still holds every change since the last snapshot: nothing is lost, the
          // next start only replays more.
          self.logger.error("cannot write a snapshot", metadata: ["error": "\(error)", "seq": "\(snapshots.last!.seq)"])
        }
      }
      if unsynced, self.mode != .off, isClosed || (self.mode == .batched && ContinuousClock.now - lastSync >= self.interval) {
        do {
          try self.journal.sync()
          if failures > 0 { self.available(after: failures) }
          failures = 0
          unsynced = false
          lastSync = .now
        } catch {
          // The batched mode: changes were committed but may not be on the disk; nothing new is
          // accepted until an fsync succeeds (tried again each interval).
          if failures == 0 { self.unavailable(because: error) }
          failures += 1
          lastSync = .now
        }
      }
      if isClosed {
        let closing = self.queue.withLock { queue in
          // Whatever came in after the last batch was taken gets written first.
          queue.changes.isEmpty && queue.snapshots.isEmpty ? queue.closing.take() : nil
        }
        if let closing {
          let followers = self.queue.withLock { queue in
            defer { queue.followers.removeAll() }
            return queue.followers
          }
          for follower in followers { follower.body(true) }
          closing.resume()
          return
        }
        self.wakeUp.signal()
      }
    }
  }

  /// The journal failed: every reply waiting for it is told why, and new changes are refused
  /// (``unavailable``) until it works again.
  private func unavailable(because error: any Error) {
    let reason = "the journal cannot be written: \(error)"
    self.logger.error("cannot write the journal; refusing new changes until it can", metadata: ["error": "\(error)"])
    let waiting = self.queue.withLock { queue in
      queue.unavailable = reason
      defer { queue.waiters.removeAll() }
      return queue.waiters
    }
    for waiter in waiting { waiter.body(reason) }
  }

  private func available(after failures: Int) {
    self.queue.withLock { $0.unavailable = nil }
    self.logger.notice("the journal is written again; accepting changes", metadata: ["failures": "\(failures)"])
  }

  /// Everything up to `seq` is committed: whoever follows the journal reads on.
  private func committed(upTo seq: UInt64) {
    let ready = self.queue.withLock { queue in
      queue.committedSeq = seq
      let ready = queue.followers.filter { $0.seq < seq }
      queue.followers.removeAll { $0.seq < seq }
      return ready
    }
    for follower in ready { follower.body(false) }
  }

  /// Everything up to `seq` is kept: the replies waiting for it go, and so do the subscribers'
  /// changes.
  private func advance(to seq: UInt64?, timers: Int) {
    guard self.mode.waitsForTheJournal else { return }
    let (ready, durableSeq) = self.queue.withLock { queue in
      if let seq { queue.durableSeq = seq }
      queue.durableTimers = timers
      let durableSeq = queue.durableSeq
      let ready = queue.waiters.filter { $0.seq <= durableSeq && $0.timers <= timers }
      queue.waiters.removeAll { $0.seq <= durableSeq && $0.timers <= timers }
      return (ready, durableSeq)
    }
    if seq != nil { self.released(durableSeq) }
    for waiter in ready { waiter.body(nil) }
  }
}
