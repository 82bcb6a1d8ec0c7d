import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardServer
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardJournal
@testable import SwitchyardRuntime

/// Who commits a group, on a real SQLite journal, a real event loop and the writer's own thread:
/// the batched mode commits the changes made on the loop there, so their replies need no hop;
/// the strict mode's commit and fsync stay off the loop, on the writer's and the sync thread.
@Suite struct JournalWriterTests {
  private static let logger = Logger(label: "test")

  private func journal(_ mode: DurabilityMode) throws -> (SQLiteJournal, TemporaryStateDirectory) {
    let directory = TemporaryStateDirectory()
    try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
    let journal = try SQLiteJournal(path: directory.path + "/journal.sqlite", mode: mode, initialState: { Array(#"{"count":0}"#.utf8) })
    return (journal, directory)
  }

  private func setCount(_ seq: UInt64) -> JournaledChange {
    JournaledChange(seq: seq, patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8), time: Date().timeIntervalSince1970)
  }

  /// Submits the change numbered `seq` on `loop` and says on which thread its reply would go
  /// (asked for first, so that it never finds the change committed already).
  private func replyThread(_ writer: JournalWriter, seq: UInt64, on loop: any EventLoop) async -> (onLoop: Bool, unavailable: String?) {
    await withCheckedContinuation { continuation in
      loop.execute {
        writer.whenDurable(seq) { unavailable in continuation.resume(returning: (loop.inEventLoop, unavailable)) }
        writer.submit(self.setCount(seq))
      }
    }
  }

  @Test func theBatchedModeCommitsAChangeMadeOnTheEventLoopThereAndRepliesWithoutAHop() async throws {
    let (journal, directory) = try self.journal(.batched)
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    let released = Mutex<UInt64>(0)
    let writer = JournalWriter(
      journal: journal, mode: .batched, interval: .seconds(60), lastSeq: 0, lastSnapshotSeq: 0, loop: EventLoopCommits(loop),
      logger: Self.logger, released: { seq in released.withLock { $0 = max($0, seq) } }
    )
    for seq in 1...3 as ClosedRange<UInt64> {
      // A lone change, the writer thread asleep: the loop commits it.
      try await eventually { writer.isWriterThreadAsleep }
      let reply = await self.replyThread(writer, seq: seq, on: loop)
      #expect(reply.onLoop && reply.unavailable == nil, "change \(seq) was committed on the loop")
    }
    #expect(released.withLock { $0 } == 3, "subscribers are released by the loop's commit too")
    #expect(writer.committedSeq == 3)
    await #expect(try journal.lastChanges(3).map(\.seq) == [1, 2, 3], "in the journal, before any fsync (the interval is a minute)")
    await writer.close(final: nil)
    _ = directory
  }

  /// A lone change while other requests wait on the loop (pipelined sends, other clients): the
  /// loop goes back to them and the writer thread commits it on the other core.
  @Test func theBatchedModeLeavesALoneChangeToTheWritersThreadWhileOtherRequestsWait() async throws {
    let (journal, directory) = try self.journal(.batched)
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    let requests = RequestsInFlight()
    let writer = JournalWriter(
      journal: journal, mode: .batched, interval: .seconds(60), lastSeq: 0, lastSnapshotSeq: 0, loop: EventLoopCommits(loop),
      logger: Self.logger, loopIsBusy: { requests.othersWaiting }, released: { _ in }
    )
    requests.started()
    requests.started()
    try await eventually { writer.isWriterThreadAsleep }
    let busy = await self.replyThread(writer, seq: 1, on: loop)
    #expect(!busy.onLoop && busy.unavailable == nil, "two requests waiting: the writer thread committed it")
    requests.answered()
    try await eventually { writer.isWriterThreadAsleep }
    let lone = await self.replyThread(writer, seq: 2, on: loop)
    #expect(lone.onLoop, "one request left, the one at hand: the loop committed it")
    await #expect(try journal.lastChanges(2).map(\.seq) == [1, 2])
    await writer.close(final: nil)
    _ = directory
  }

  /// Several changes at once: the loop has other work, and the writer thread commits their
  /// group on the other core.
  @Test func theBatchedModeHandsAGroupOfSeveralChangesToTheWritersThread() async throws {
    let (journal, directory) = try self.journal(.batched)
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    let writer = JournalWriter(
      journal: journal, mode: .batched, interval: .seconds(60), lastSeq: 0, lastSnapshotSeq: 0, loop: EventLoopCommits(loop),
      logger: Self.logger, released: { _ in }
    )
    try await eventually { writer.isWriterThreadAsleep }
    let onLoop: [Bool] = await withCheckedContinuation { continuation in
      loop.execute {
        let replies = Mutex<[Bool]>([])
        for seq in 1...2 as ClosedRange<UInt64> {
          writer.whenDurable(seq) { _ in
            let all = replies.withLock { replies in
              replies.append(loop.inEventLoop)
              return replies
            }
            if all.count == 2 { continuation.resume(returning: all) }
          }
          writer.submit(self.setCount(seq))
        }
      }
    }
    #expect(onLoop == [false, false])
    await writer.close(final: nil)
    _ = directory
  }

  @Test func theStrictModeCommitsAndForcesOnTheWritersThreadNeverOnTheLoop() async throws {
    let (journal, directory) = try self.journal(.strict)
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    let writer = JournalWriter(
      journal: journal, mode: .strict, interval: .seconds(1), lastSeq: 0, lastSnapshotSeq: 0, loop: EventLoopCommits(loop),
      logger: Self.logger, released: { _ in }
    )
    let reply = await self.replyThread(writer, seq: 1, on: loop)
    #expect(!reply.onLoop && reply.unavailable == nil)
    await writer.close(final: nil)
    _ = directory
  }

  /// A writer slower than what is submitted: past its backlog limit (in bytes of changes) the
  /// journal says it is unavailable, which refuses new changes, and once the writer has taken
  /// what was queued it accepts them again; everything queued is committed.
  @Test func pastItsBacklogLimitTheWriterRefusesNewChangesUntilItHasTakenThem() async throws {
    let (journal, directory) = try self.journal(.off)
    let writer = JournalWriter(
      journal: journal, mode: .off, interval: .seconds(60), lastSeq: 0, lastSnapshotSeq: 0, logger: Self.logger,
      released: { _ in }, backlogLimit: 1_024
    )
    #expect(writer.unavailable == nil)
    // Submitted as fast as the test can: the writer commits a group while many more queue.
    var seq: UInt64 = 0
    var refusal: String?
    while refusal == nil, seq < 100_000 {
      seq += 1
      writer.submit(self.setCount(seq))
      refusal = writer.unavailable
    }
    let reason = try #require(refusal, "\(seq) changes never queued 1,024 bytes")
    #expect(reason.contains("the journal's writer is behind by"), "\(reason)")
    let last = seq
    try await eventually { writer.unavailable == nil && writer.committedSeq == last }
    await writer.close(final: nil)
    await #expect(try journal.changes(after: 0, through: nil, feature: nil, limit: .max).map(\.seq) == Array(1...last))
    _ = directory
  }

  /// Strict, under load from two threads and alone: the writer commits a group while the sync
  /// thread forces out the last, and every reply still waits for an fsync of the WAL that
  /// began after its change was submitted; one fsync serves several changes.
  @Test func theStrictModeAnswersAChangeOnlyAfterAnFsyncThatBeganAfterIt() async throws {
    let (journal, directory) = try self.journal(.strict)
    let released = Mutex<UInt64>(0)
    let writer = JournalWriter(
      journal: journal, mode: .strict, interval: .seconds(1), lastSeq: 0, lastSnapshotSeq: 0, logger: Self.logger,
      released: { seq in released.withLock { $0 = max($0, seq) } }
    )
    let seq = Mutex<UInt64>(0)
    let replies = Mutex<(count: Int, early: [UInt64])>((0, []))
    @Sendable func submitNext() {
      seq.withLock { seq in
        seq += 1
        let syncsBefore = journal.logSyncs
        let submitted = seq
        writer.submit(self.setCount(seq))
        writer.whenDurable(seq) { unavailable in
          let late = journal.logSyncs > syncsBefore && unavailable == nil
          replies.withLock { $0 = ($0.count + 1, late ? $0.early : $0.early + [submitted]) }
        }
      }
    }
    let perThread = 500
    let threads = (0..<2).map { _ in Thread { for _ in 0..<perThread { submitNext() } } }
    for thread in threads { thread.start() }
    try await eventually(within: .seconds(30)) { replies.withLock { $0.count } == 2 * perThread }
    // Then one at a time, as a lone client: the writer forces each out itself.
    for _ in 0..<5 {
      let before = replies.withLock { $0.count }
      submitNext()
      try await eventually(within: .seconds(5)) { replies.withLock { $0.count } == before + 1 }
    }
    await writer.close(final: nil)
    let early = replies.withLock { $0.early }
    #expect(early.isEmpty, "answered before an fsync that began after them: \(early.prefix(10))")
    #expect(journal.logSyncs < 2 * perThread, "\(journal.logSyncs) fsyncs for \(2 * perThread) changes")
    #expect(released.withLock { $0 } == UInt64(2 * perThread + 5))
    await #expect(try journal.changes(after: 0, through: nil, feature: nil, limit: .max).map(\.seq) == Array(1...UInt64(2 * perThread + 5)))
    _ = directory
  }

  /// Changes made on the loop and elsewhere, durable timers, snapshots, and an fsync with a
  /// checkpoint every 20 ms, all at once: the loop and the writer thread take the
  /// connection from each other all the time, and the journal still holds every change once, in
  /// order, and every reply came.
  @Test func commitsOnTheLoopAndOnTheWritersThreadInterleaveLosingAndReorderingNothing() async throws {
    let (journal, directory) = try self.journal(.batched)
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    let writer = JournalWriter(
      journal: journal, mode: .batched, interval: .milliseconds(20), snapshots: SnapshotPolicy(every: 97, keep: 2, retention: 1_000_000),
      lastSeq: 0, lastSnapshotSeq: 0, loop: EventLoopCommits(loop), logger: Self.logger, released: { _ in }
    )
    // One sequence, as the change log numbers it: under a lock, from the loop and from threads.
    let seq = Mutex<UInt64>(0)
    let replies = Mutex<(count: Int, onLoop: Int)>((0, 0))
    @Sendable func submitNext() {
      seq.withLock { seq in
        seq += 1
        writer.submit(self.setCount(seq))
        if writer.isSnapshotDue(at: seq) { writer.snapshot(["count": .int(Int64(seq))], at: seq) }
        writer.whenDurable(seq) { _ in
          let onLoop = loop.inEventLoop
          replies.withLock { $0 = ($0.count + 1, $0.onLoop + (onLoop ? 1 : 0)) }
        }
      }
    }
    // Bursts from threads, and lone changes on the loop with pauses between, long enough now
    // and then for the writer thread to fall asleep: both commit, in turns.
    let perSource = 1_000
    let threads = (0..<2).map { index in
      Thread {
        for round in 0..<perSource {
          submitNext()
          if round.isMultiple(of: 50) {
            writer.submit(.cancel(feature: "f", id: "thread-\(index)-\(round)"))
            Thread.sleep(forTimeInterval: 0.002)
          }
        }
      }
    }
    for thread in threads { thread.start() }
    for round in 0..<perSource {
      try await loop.submit { submitNext() }.get()
      if round.isMultiple(of: 4) { try await Task.sleep(for: .microseconds(300)) }
      if round.isMultiple(of: 50) { try await Task.sleep(for: .milliseconds(10)) }
    }
    let total = 3 * perSource
    try await eventually(within: .seconds(30)) { replies.withLock { $0.count } == total }
    await writer.close(final: nil)
    let recovered = try await Recovery.recover(from: journal)
    #expect(recovered.seq == UInt64(total), "every change, and no gap: recovery stops at one")
    #expect(recovered.state == ["count": .int(Int64(total))])
    await #expect(try journal.changes(after: 0, through: nil, feature: nil, limit: .max).map(\.seq) == Array(1...UInt64(total)))
    let (count, onLoop) = replies.withLock { ($0.count, $0.onLoop) }
    #expect(onLoop > 0 && onLoop < count, "both committed: \(onLoop) of \(count) replies on the loop")
    _ = directory
  }
}
