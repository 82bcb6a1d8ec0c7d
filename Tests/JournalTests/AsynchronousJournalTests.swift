import Dispatch
import Foundation
import Logging
import SwitchyardSynchronization
import Testing

@testable import SwitchyardJournal

/// An engine that answers asynchronously, as one over the network does: the writer, the reader
/// and recovery drive it as they drive SQLite, each call runs and resumes on the journal's own
/// thread, and the batched mode never commits it on an event loop.
@Suite struct AsynchronousJournalTests {
  private static func change(_ seq: UInt64) -> JournaledChange {
    JournaledChange(seq: seq, patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8), time: Double(seq))
  }

  @Test func aTaskOnAJournalThreadRunsThereNamedAndResumesThereAfterAnEngineSuspends() async throws {
    try await JournalEngine.sqlite.withSuspending { journal in
      let thread = JournalThread(name: "journal-test")
      defer { thread.stop() }
      let threads = try await withTaskExecutorPreference(thread) {
        let before = pthread_self()
        try await journal.append([Self.change(1)], timers: [])
        return [before, pthread_self()]
      }
      let name = try await Task(executorPreference: thread) { try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) }.value
      #expect(name == "journal-test\n", "named for top -H")
      let expected = try #require(thread.pthread.withLock { $0 })
      #expect(threads == [expected, expected], "resumed on the journal's thread, not the one that answered")
      #expect(journal.threads.withLock { $0 } == [expected])
      #expect(pthread_self() != expected)
    }
  }

  @Test(arguments: DurabilityMode.allCases)
  func theWriterCommitsThroughAnEngineThatSuspendsAndTheLoopNeverCommitsIt(_ mode: DurabilityMode) async throws {
    try await JournalEngine.sqlite.withSuspending { journal in
      let loop = RecordingLoop()
      let writer = JournalWriter(
        journal: journal, mode: mode, interval: .milliseconds(10), lastSeq: 0, lastSnapshotSeq: 0, loop: loop,
        logger: Logger(label: "test"), released: { _ in }
      )
      for seq in 1...3 as ClosedRange<UInt64> { writer.submit(Self.change(seq)) }
      let unavailable = await withCheckedContinuation { continuation in
        writer.whenCommitted(after: 2) { _ in writer.whenDurable(3) { continuation.resume(returning: $0) } }
      }
      #expect(unavailable == nil)
      #expect(loop.executed.withLock { $0 } == 0, "no commit scheduled on the loop")
      await writer.close(final: nil)
      let kept = try journal.base.lastChanges(3, maxBytes: .max)
      #expect(kept.map(\.seq) == [1, 2, 3])
      #expect(journal.threads.withLock { Set($0) } == Set([writer.thread.pthread.withLock { $0 }]), "every call on the writer's thread")
    }
  }

  @Test func theReaderAndRecoveryReadThroughAnEngineThatSuspends() async throws {
    try await JournalEngine.sqlite.withSuspending { journal in
      try journal.base.append((1...4).map(Self.change), timers: [])
      let writer = JournalWriter(
        journal: journal, mode: .strict, interval: .seconds(1), lastSeq: 4, lastSnapshotSeq: 0, logger: Logger(label: "test"),
        released: { _ in }
      )
      let reader = JournalReader(writer: writer)
      let state = await withCheckedContinuation { continuation in
        reader.read { continuation.resume(returning: try? await reader.state(at: 3)) }
      }
      #expect(state == ["count": 3])
      #expect(journal.threads.withLock { Set($0) } == Set([reader.thread.pthread.withLock { $0 }]))
      #expect(try await Recovery.recover(from: journal).state == ["count": 4])
      await writer.close(final: nil)
    }
  }
}

/// A loop that says every caller is on it, and counts what is scheduled on it.
private final class RecordingLoop: CommitLoop {
  let executed = Mutex(0)
  var inEventLoop: Bool { true }

  func execute(_ task: @escaping @Sendable () -> Void) {
    self.executed.withLock { $0 += 1 }
    task()
  }
}

/// A journal whose every call suspends until another thread answers, as a network engine's
/// does, then runs on SQLite: it records the thread each call resumed on.
final class SuspendingJournal: Journal {
  let base: SQLiteJournal
  let threads = Mutex<[pthread_t]>([])

  init(_ base: SQLiteJournal) {
    self.base = base
  }

  /// Suspends until a thread of Dispatch's answers.
  private func answer<Result>(_ call: () throws -> Result) async throws -> Result {
    await withCheckedContinuation { continuation in DispatchQueue.global().async { continuation.resume() } }
    let thread = pthread_self()
    self.threads.withLock { $0.append(thread) }
    return try call()
  }

  var id: String { self.base.id }
  var location: String { self.base.location }
  func prepareForWriting() async throws { try await self.answer { try self.base.prepareForWriting() } }
  func append(_ changes: [JournaledChange], timers: [TimerOperation]) async throws {
    try await self.answer { try self.base.append(changes, timers: timers) }
  }
  func pendingTimers() async throws -> [JournaledTimer] { try await self.answer { try self.base.pendingTimers() } }
  func sync() async throws { try await self.answer { try self.base.sync() } }
  func checkpoint() async throws { try await self.answer { try self.base.checkpoint() } }
  func lastRun() async throws -> (run: RunRecord, synced: SyncPoint)? { try await self.answer { try self.base.lastRun() } }
  func backupMark() async throws -> SyncPoint? { try await self.answer { try self.base.backupMark() } }
  func beginRun(_ run: RunRecord, synced: SyncPoint, retiring reason: String?) async throws {
    try await self.answer { try self.base.beginRun(run, synced: synced, retiring: reason) }
  }
  func recordSynced(_ point: SyncPoint) async throws { try await self.answer { try self.base.recordSynced(point) } }
  func endRun(_ run: RunRecord, synced: SyncPoint) async throws { try await self.answer { try self.base.endRun(run, synced: synced) } }
  func retiredHistories() async throws -> [RetiredHistory] { try await self.answer { try self.base.retiredHistories() } }
  func lastChanges(_ count: Int, maxBytes: Int) async throws -> [JournaledChange] {
    try await self.answer { try self.base.lastChanges(count, maxBytes: maxBytes) }
  }
  func forEachChange(
    after seq: UInt64, through last: UInt64?, feature: String?, _ body: (JournaledChange) throws -> Bool
  ) async throws {
    try await self.answer { try self.base.forEachChange(after: seq, through: last, feature: feature, body) }
  }
  func snapshot(atOrBefore seq: UInt64) async throws -> JournalSnapshot? {
    try await self.answer { try self.base.snapshot(atOrBefore: seq) }
  }
  func extent() async throws -> JournalExtent { try await self.answer { try self.base.extent() } }
  func versionMarks() async throws -> [VersionMark] { try await self.answer { try self.base.versionMarks() } }
  func record(_ versions: StateVersions, snapshot: JournalSnapshot) async throws {
    try await self.answer { try self.base.record(versions, snapshot: snapshot) }
  }
  func write(_ snapshot: JournalSnapshot) async throws { try await self.answer { try self.base.write(snapshot) } }
  func prune(keepingSnapshots snapshots: Int, keepingChanges changes: Int, changedBefore time: Double?) async throws {
    try await self.answer { try self.base.prune(keepingSnapshots: snapshots, keepingChanges: changes, changedBefore: time) }
  }
  func backup() async throws -> JournalBackup { try await self.answer { try self.base.backup() } }
}

extension JournalEngine {
  /// Runs `body` with a new SQLite journal behind a ``SuspendingJournal``.
  func withSuspending(_ body: (SuspendingJournal) async throws -> Void) async throws {
    let (journal, remove) = try await self.make(self.initialState)
    defer { remove() }
    try await body(SuspendingJournal(journal as! SQLiteJournal))
  }
}
