import Foundation
import Logging
import SwitchyardJSON
import SwitchyardPostgresJournal
import SwitchyardTestSupport
import Testing

@testable import SwitchyardJournal

/// What every journal engine promises, through the ``Journal`` protocol alone and from a task on
/// a ``JournalThread`` as the writer and the reader call it. Another engine runs this suite by
/// adding itself to ``JournalEngine/all``.
@Suite struct JournalContractTests {
  private static func change(_ seq: UInt64, feature: String? = "counter", cause: ChangeCause? = nil) -> JournaledChange {
    JournaledChange(
      seq: seq, feature: feature, cause: cause, patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8),
      time: 1_700_000_000 + Double(seq)
    )
  }

  private static func timer(_ key: String, due deadline: Double, ids: [String]? = nil) -> JournaledTimer {
    JournaledTimer(feature: "clock", key: key, ids: ids ?? [key], deadline: deadline, action: Array(#"{"tick":{}}"#.utf8))
  }

  @Test(arguments: JournalEngine.all)
  func aNewJournalHoldsItsInitialStateAndTheChangesAppendedInOrder(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      #expect(try await journal.snapshot(atOrBefore: .max) == JournalSnapshot(seq: 0, state: engine.initialState))
      #expect(try await journal.extent() == JournalExtent(oldestSnapshot: 0, firstChange: nil, lastChange: nil))
      #expect(!journal.location.isEmpty, "it says where it is")
      try await journal.prepareForWriting()
      let caused = Self.change(2, cause: .request(Array(#"{"increment":{}}"#.utf8), peer: .init(uid: 1000, pid: 42)))
      let remote = Self.change(4, cause: .request(Array(#"{"increment":{}}"#.utf8), peer: .init(uid: .max, pid: 0, certificate: "operator")))
      try await journal.append([Self.change(1, feature: nil)], timers: [])
      try await journal.append([caused, Self.change(3), remote], timers: [])
      #expect(try await journal.changes(after: 0, through: nil, feature: nil, limit: .max) == [
        Self.change(1, feature: nil), caused, Self.change(3), remote,
      ])
      #expect(try await journal.extent() == JournalExtent(oldestSnapshot: 0, firstChange: 1, lastChange: 4))
    }
  }

  @Test(arguments: JournalEngine.all)
  func aGroupIsKeptWholeOrNotAtAll(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      try await journal.append([Self.change(1)], timers: [])
      await #expect(throws: (any Error).self, "a number is given once") {
        try await journal.append([Self.change(2), Self.change(1)], timers: [.schedule(Self.timer("a", due: 1))])
      }
      #expect(try await journal.lastChanges(10).map(\.seq) == [1])
      #expect(try await journal.pendingTimers().isEmpty, "the group's timers went with it")
    }
  }

  @Test(arguments: JournalEngine.all)
  func readsRunFromAfterASeqThroughALastOfOneFeatureUntilTheBodyStops(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      try await journal.append((1...6).map { Self.change($0, feature: $0 % 2 == 0 ? "even" : "odd") }, timers: [])
      #expect(try await journal.changes(after: 1, through: 4, feature: nil, limit: .max).map(\.seq) == [2, 3, 4])
      #expect(try await journal.changes(after: 0, through: nil, feature: "even", limit: .max).map(\.seq) == [2, 4, 6])
      #expect(try await journal.changes(after: 0, through: nil, feature: nil, limit: 2).map(\.seq) == [1, 2])
      var seen: [UInt64] = []
      try await journal.forEachChange(after: 2, through: nil, feature: nil) { change in
        seen.append(change.seq)
        return change.seq < 4
      }
      #expect(seen == [3, 4], "no change after the body said stop")
      let size = Self.change(5).byteCount
      #expect(try await journal.lastChanges(3, maxBytes: 2 * size).map(\.seq) == [5, 6], "as many as fit")
      #expect(try await journal.lastChanges(3, maxBytes: 1).map(\.seq) == [6], "always the last")
    }
  }

  @Test(arguments: JournalEngine.all)
  func snapshotsAreFoundAtOrBeforeASeqAndPruningKeepsTheNewest(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      for seq in 1...12 as ClosedRange<UInt64> {
        try await journal.append([Self.change(seq)], timers: [])
        if seq == 5 || seq == 10 { try await journal.write(JournalSnapshot(seq: seq, state: Array(#"{"count":\#(seq)}"#.utf8))) }
      }
      #expect(try await journal.snapshot(atOrBefore: 9)?.seq == 5)
      #expect(try await journal.snapshot(atOrBefore: 10)?.seq == 10)
      try await journal.prune(keepingSnapshots: 2, keepingChanges: 3, changedBefore: nil)
      #expect(try await journal.extent() == JournalExtent(oldestSnapshot: 5, firstChange: 6, lastChange: 12))
      try await journal.prune(keepingSnapshots: 1, keepingChanges: 0, changedBefore: nil)
      #expect(try await journal.extent() == JournalExtent(oldestSnapshot: 10, firstChange: 11, lastChange: 12))
      #expect(try await Recovery.recover(from: journal).seq == 12)
    }
  }

  @Test(arguments: JournalEngine.all)
  func timersAreScheduledReplacedCancelledAndFiredWithTheChanges(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      try await journal.append(
        [Self.change(1)],
        timers: [
          .schedule(Self.timer("late", due: 30)), .schedule(Self.timer("soon", due: 10)),
          .schedule(Self.timer("inner", due: 20, ids: ["inner", "outer"])),
        ]
      )
      #expect(try await journal.pendingTimers().map(\.key) == ["soon", "inner", "late"], "in the order they fall due")
      try await journal.append([], timers: [.schedule(Self.timer("soon", due: 40)), .cancel(feature: "clock", id: "outer")])
      #expect(try await journal.pendingTimers().map(\.deadline) == [30, 40], "replaced by its id; cancelled by an outer id")
      try await journal.append([], timers: [.fired(feature: "clock", key: "soon", deadline: 10)])
      #expect(try await journal.pendingTimers().count == 2, "a firing of an earlier deadline leaves the new one")
      try await journal.append([], timers: [.fired(feature: "clock", key: "soon", deadline: 40)])
      #expect(try await journal.pendingTimers().map(\.key) == ["late"])
    }
  }

  @Test(arguments: JournalEngine.all)
  func runsAreRecordedAndRetiringAHistoryChangesTheId(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      #expect(try await journal.lastRun() == nil)
      let run = RunRecord(boot: "boot", mode: .strict, interval: .seconds(1), pid: 7, started: 1_700_000_000)
      try await journal.beginRun(run, synced: SyncPoint(seq: 0, time: 1), retiring: nil)
      try await journal.append([Self.change(1)], timers: [])
      try await journal.recordSynced(SyncPoint(seq: 1, time: 2))
      #expect(try await journal.lastRun()?.synced == SyncPoint(seq: 1, time: 2))
      #expect(try await journal.lastRun()?.run.clean == false)
      try await journal.endRun(run, synced: SyncPoint(seq: 1, time: 3))
      #expect(try await journal.lastRun()?.run.clean == true)
      let first = journal.id
      try await journal.beginRun(run, synced: SyncPoint(seq: 1, time: 4), retiring: "changes may be lost")
      #expect(journal.id != first)
      #expect(try await journal.retiredHistories() == [RetiredHistory(id: first, lastSeq: 1)])
    }
  }

  @Test(arguments: JournalEngine.all)
  func versionMarksSayFromWhichSeqTheStatesAreAtWhichVersions(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      try await journal.append([Self.change(1)], timers: [])
      try await journal.record(["counter": 2], snapshot: JournalSnapshot(seq: 1, state: Array("{}".utf8)))
      #expect(try await journal.versionMarks() == [
        VersionMark(seq: 0, versions: [:]), VersionMark(seq: 1, versions: ["counter": 2]),
      ])
      #expect(try await journal.snapshot(atOrBefore: 1)?.seq == 1)
    }
  }

  @Test(arguments: JournalEngine.all)
  func aBackupHoldsEveryChangeAppendedBeforeIt(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      try await journal.append([Self.change(1), Self.change(2)], timers: [])
      try await journal.sync()
      guard engine.copiesItself else {
        await #expect(throws: PostgresJournalError.backupByPgDump(location: journal.location), "pg_dump copies it") {
          try await journal.backup()
        }
        return
      }
      #expect(try await journal.backup().seq == 2)
    }
  }
}

/// A journal engine the contract runs against: how to make a new, empty journal.
struct JournalEngine: Sendable, CustomTestStringConvertible {
  let name: String
  /// Whether ``Journal/backup()`` writes a copy (SQLite), or says how to make one (PostgreSQL).
  var copiesItself = true
  /// A new journal holding `initialState` as its snapshot at 0, and how to remove it after.
  let make: @Sendable (_ initialState: [UInt8]) async throws -> (journal: any Journal, remove: @Sendable () -> Void)

  var testDescription: String { self.name }
  let initialState = Array(#"{"count":0}"#.utf8)

  static let all = [Self.sqlite, Self.postgres]

  static let sqlite = JournalEngine(name: "SQLite") { initialState in
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let journal = try SQLiteJournal(path: directory + "/journal.sqlite", mode: .strict, initialState: { initialState })
    return (journal, { try? FileManager.default.removeItem(atPath: directory) })
  }

  /// A database of its own on the test run's PostgreSQL.
  static let postgres = JournalEngine(name: "PostgreSQL", copiesItself: false) { initialState in
    let parameters = try await PostgresServer.shared().makeDatabase()
    let journal = try await PostgresJournal.open(
      PostgresConnectionSettings(parsing: parameters), mode: .strict, lease: PostgresLeaseTerms(holder: "contract"),
      answerWithin: PostgresServer.answerWithin, initialState: { initialState }, logger: Logger(label: "contract")
    )
    return (journal, {})
  }

  /// Runs `body` with a new journal, from a task on a ``JournalThread``, as the daemon does.
  func withJournal(_ body: @Sendable (any Journal) async throws -> Void) async throws {
    let (journal, remove) = try await self.make(self.initialState)
    defer { remove() }
    let thread = JournalThread(name: "journal-contract")
    defer { thread.stop() }
    try await withTaskExecutorPreference(thread) { try await body(journal) }
  }
}
