import Foundation
import GRDB
import SwitchyardJSON
import Testing

@testable import SwitchyardJournal

/// The journal on a real SQLite database in a temporary directory.
@Suite struct SQLiteJournalTests {
  private func temporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  private func change(_ seq: UInt64, _ patch: String) -> JournaledChange {
    JournaledChange(seq: seq, patch: Array(patch.utf8), time: 1_700_000_000 + Double(seq))
  }

  /// The change numbered `seq`, which sets `/count` to `seq`.
  private func setCount(_ seq: UInt64) -> JournaledChange {
    self.change(seq, #"[{"op":"replace","path":"/count","value":\#(seq)}]"#)
  }

  /// A strict journal in `directory` whose initial state is `{"count": 0}`.
  private func countingJournal(in directory: String) throws -> SQLiteJournal {
    try SQLiteJournal(path: directory + "/journal.sqlite", mode: .strict, initialState: { Array(#"{"count":0}"#.utf8) })
  }

  @Test(arguments: DurabilityMode.allCases)
  func aNewJournalStartsFromTheInitialStateAndKeepsItsIdAndChangesWhenReopened(_ mode: DurabilityMode) async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/journal.sqlite"
    let first = try SQLiteJournal(path: path, mode: mode, initialState: { Array(#"{"count":0}"#.utf8) })
    try await first.append([change(1, #"[{"op":"replace","path":"/count","value":1}]"#)])
    try await first.append([
      change(2, #"[{"op":"replace","path":"/count","value":2}]"#), change(3, #"[{"op":"add","path":"/name","value":"x"}]"#),
    ])
    try first.sync()

    let reopened = try SQLiteJournal(path: path, mode: mode, initialState: { Array("{}".utf8) })
    #expect(reopened.id == first.id, "a journal keeps its id when reopened")
    let point = try await reopened.recoveryPoint()
    #expect(point.snapshot == JournalSnapshot(seq: 0, state: Array(#"{"count":0}"#.utf8)), "the first initial state, not the second")
    #expect(point.changes.map(\.seq) == [1, 2, 3])
    #expect(point.changes[2] == change(3, #"[{"op":"add","path":"/name","value":"x"}]"#))
    let recovered = try await Recovery.recover(from: reopened)
    #expect(recovered.seq == 3)
    #expect(recovered.state == ["count": 2, "name": "x"])
    #expect(recovered.replayed == 3)
  }

  /// GRDB's pool sets `synchronous = NORMAL` on its writer as it opens, after the connection's
  /// own preparation, and a setting made there is lost: the journal never relies on SQLite's
  /// `FULL`. A strict append is on the disk when it returns (an fdatasync of the WAL of its
  /// own); the other modes leave the fsync to checkpoints and `sync()`, never to `OFF`.
  @Test(arguments: DurabilityMode.allCases)
  func aStrictAppendForcesTheLogOutAndNoModeRunsWithoutFsyncs(_ mode: DurabilityMode) async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try SQLiteJournal(path: directory + "/journal.sqlite", mode: mode, initialState: { Array("{}".utf8) })
    let synchronous = try await journal.database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
    #expect(synchronous == 1, "NORMAL")
    try await journal.append([setCount(1)])
    try await journal.append([setCount(2), setCount(3)])
    #expect(journal.logSyncs == (mode == .strict ? 2 : 0))
    try journal.appendUnsynced([setCount(4)], timers: [])
    #expect(journal.logSyncs == (mode == .strict ? 2 : 0), "a commit left to syncCommits()")
    try journal.syncCommits()
    #expect(journal.logSyncs == (mode == .strict ? 3 : 1))
  }

  /// The journal is opened through an SQLite URI (`unix-excl`): a path with the characters a
  /// URI gives a meaning to opens the same file, and again.
  @Test func aPathWithURICharactersOpensAndReopensTheSameJournal() async throws {
    let parent = try self.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: parent) }
    let directory = parent + "/a %41?b#c"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/journal.sqlite"
    let id = try self.countingJournal(in: directory).id
    #expect(FileManager.default.fileExists(atPath: path))
    #expect(try self.countingJournal(in: directory).id == id, "the same file")
  }

  @Test func twoJournalsHaveTwoIds() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let one = try SQLiteJournal(path: directory + "/one.sqlite", mode: .strict, initialState: { Array("{}".utf8) })
    let other = try SQLiteJournal(path: directory + "/other.sqlite", mode: .strict, initialState: { Array("{}".utf8) })
    #expect(one.id != other.id)
  }

  @Test func recoveryStartsFromTheLatestSnapshot() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try self.countingJournal(in: directory)
    try await journal.append([change(1, #"[{"op":"replace","path":"/count","value":1}]"#)])
    try journal.write(JournalSnapshot(seq: 1, state: Array(#"{"count":1}"#.utf8)))
    try await journal.append([change(2, #"[{"op":"replace","path":"/count","value":2}]"#)])
    let point = try await journal.recoveryPoint()
    #expect(point.snapshot?.seq == 1)
    #expect(point.changes.map(\.seq) == [2])
    await #expect(try Recovery.recover(from: journal).state == ["count": 2])
  }

  @Test func aChangeNumberedOutOfOrderIsRefusedAndAGapStopsRecovery() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try self.countingJournal(in: directory)
    try await journal.append([change(1, #"[{"op":"replace","path":"/count","value":1}]"#)])
    await #expect(throws: (any Error).self, "a number is kept once") { try await journal.append([change(1, "[]")]) }
    try await journal.append([change(3, #"[{"op":"replace","path":"/count","value":3}]"#)])
    await #expect(throws: RecoveryError.self) { try await Recovery.recover(from: journal) }
    do {
      _ = try await Recovery.recover(from: journal)
    } catch {
      #expect(error.description == "the journal skips from 1 to 3")
    }
  }

  @Test func aFailedGroupLeavesNoneOfItsChanges() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try SQLiteJournal(path: directory + "/journal.sqlite", mode: .strict, initialState: { Array("{}".utf8) })
    try await journal.append([change(1, "[]")])
    // The second change of the group repeats a number: the whole group is rolled back.
    await #expect(throws: (any Error).self) { try await journal.append([change(2, "[]"), change(1, "[]")]) }
    await #expect(try journal.recoveryPoint().changes.map(\.seq) == [1])
  }

  @Test func pruningKeepsTheNewestSnapshotsAndTheChangesSinceTheOldestOrWithinTheRetention() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try self.countingJournal(in: directory)
    for seq in 1...12 as ClosedRange<UInt64> {
      try await journal.append([self.setCount(seq)])
      if seq == 5 || seq == 10 { try journal.write(JournalSnapshot(seq: seq, state: Array(#"{"count":\#(seq)}"#.utf8))) }
    }
    try await journal.prune(keepingSnapshots: 2, keepingChanges: 3)
    // Snapshots 5 and 10 stay; changes up to 5 are behind the oldest and older than 12 - 3.
    var point = try await journal.recoveryPoint()
    #expect(point.snapshot?.seq == 10)
    #expect(point.changes.map(\.seq) == [11, 12])
    await #expect(try Recovery.recover(from: journal).state == ["count": 12])
    // A long retention keeps changes even behind the oldest snapshot.
    try await journal.prune(keepingSnapshots: 1, keepingChanges: 100)
    point = try await journal.recoveryPoint()
    #expect(point.snapshot?.seq == 10)
    try await journal.prune(keepingSnapshots: 1, keepingChanges: 0)
    await #expect(try journal.recoveryPoint().changes.map(\.seq) == [11, 12])
  }

  /// A change behind the oldest snapshot is pruned once it is older than the age, however few
  /// changes there are; a change the oldest snapshot still needs is kept whatever its age.
  @Test func pruningByAgeDropsOldChangesBehindTheOldestSnapshot() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try self.countingJournal(in: directory)
    // setCount(seq) is made at 1_700_000_000 + seq.
    try await journal.append((1...6).map(self.setCount))
    try journal.write(JournalSnapshot(seq: 4, state: Array(#"{"count":4}"#.utf8)))
    try journal.prune(keepingSnapshots: 1, keepingChanges: 100, changedBefore: 1_700_000_000 + 3)
    #expect(try journal.extent() == JournalExtent(oldestSnapshot: 4, firstChange: 3, lastChange: 6), "1 and 2 were too old")
    try journal.prune(keepingSnapshots: 1, keepingChanges: 100, changedBefore: 1_700_000_000 + 100)
    #expect(try journal.extent() == JournalExtent(oldestSnapshot: 4, firstChange: 5, lastChange: 6), "never past the snapshot")
  }

  @Test func anUnreadableSnapshotIsPassedOverForTheOneBeforeItAndTheJournalAfterThat() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try self.countingJournal(in: directory)
    for seq in 1...4 as ClosedRange<UInt64> {
      try await journal.append([self.setCount(seq)])
    }
    try journal.write(JournalSnapshot(seq: 2, state: Array(#"{"count":2}"#.utf8)))
    try journal.write(JournalSnapshot(seq: 4, state: Array(#"{"count":4"#.utf8)))  // cut short
    var skipped: [UInt64] = []
    let recovered = try await Recovery.recover(from: journal) { seq, _ in skipped.append(seq) }
    #expect(skipped == [4])
    #expect(recovered.state == ["count": 4])
    #expect(recovered.seq == 4)
    #expect(recovered.replayed == 2, "from the snapshot at 2, the changes 3 and 4")
  }

  /// A crash in the middle of a commit leaves a WAL whose last frames are incomplete: SQLite
  /// drops that transaction and keeps every one before it.
  @Test func aTornLastTransactionIsDroppedAndEveryEarlierOneKept() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/journal.sqlite"
    let journal = try SQLiteJournal(path: path, mode: .strict, initialState: { Array(#"{"count":0}"#.utf8) })
    for seq in 1...3 as ClosedRange<UInt64> {
      try await journal.append([self.setCount(seq)])
    }
    // What a crash would leave, taken while the journal is open (closing it would checkpoint
    // the WAL into the database): the files as they are, the WAL cut inside its last frame.
    let crashed = directory + "/crashed"
    try FileManager.default.createDirectory(atPath: crashed, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: path, toPath: crashed + "/journal.sqlite")
    var wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
    wal.removeLast(100)
    try wal.write(to: URL(fileURLWithPath: crashed + "/journal.sqlite-wal"))
    _ = journal

    let reopened = try SQLiteJournal(path: crashed + "/journal.sqlite", mode: .strict, initialState: { Array("{}".utf8) })
    let recovered = try await Recovery.recover(from: reopened)
    #expect(recovered.seq == 2, "the third commit was torn")
    #expect(recovered.state == ["count": 2])
    #expect(reopened.id == journal.id)
  }

  @Test func eachChangeKeepsItsFeatureAndCauseAndReadsBackInRanges() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try countingJournal(in: directory)
    let request = ChangeCause.request(Array(#"{"counter":{"incrTapped":{}}}"#.utf8), peer: .init(uid: 1000, pid: 4242))
    var timed = request
    timed.reduceNanoseconds = 1_800
    let changes = (1...6).map { seq in
      JournaledChange(
        seq: seq, feature: seq.isMultiple(of: 2) ? "even" : "odd", cause: seq == 3 ? .effect(nil) : seq == 5 ? timed : request,
        patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8), time: Double(seq)
      )
    }
    try await journal.append(changes)
    try journal.write(JournalSnapshot(seq: 4, state: Array(#"{"count":4}"#.utf8)))

    await #expect(try journal.changes(after: 0, through: nil, feature: nil, limit: 100) == changes, "feature and cause (its reduction's time too) read back")
    await #expect(try journal.changes(after: 1, through: 4, feature: nil, limit: 100).map(\.seq) == [2, 3, 4])
    await #expect(try journal.changes(after: 1, through: nil, feature: nil, limit: 2).map(\.seq) == [2, 3])
    await #expect(try journal.changes(after: 0, through: nil, feature: "even", limit: 100).map(\.seq) == [2, 4, 6])
    #expect(try journal.snapshot(atOrBefore: 3)?.seq == 0)
    #expect(try journal.snapshot(atOrBefore: 5)?.seq == 4)
    #expect(try journal.extent() == JournalExtent(oldestSnapshot: 0, firstChange: 1, lastChange: 6))
    try await journal.prune(keepingSnapshots: 1, keepingChanges: 0)
    #expect(try journal.extent() == JournalExtent(oldestSnapshot: 4, firstChange: 5, lastChange: 6))
  }

  /// Reads are bounded in bytes as well as in changes, and one at a time underneath: a page
  /// stops once it holds `maxBytes` (always one change, whatever its size), the history read at
  /// start keeps the newest that fit, and a read that has seen enough stops reading.
  @Test func readsStopAtABoundInBytesAndOneChangeIsReadAtATime() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try countingJournal(in: directory)
    // Changes 1 to 6 weigh 100, 200, …, 600 bytes.
    let changes = (1...6).map { seq in
      JournaledChange(seq: seq, patch: Array(repeating: UInt8(ascii: " "), count: Int(seq) * 100), time: Double(seq))
    }
    try await journal.append(changes)
    await #expect(try journal.changes(after: 0, through: nil, feature: nil, limit: 100, maxBytes: 250).map(\.seq) == [1, 2])
    await #expect(try journal.changes(after: 2, through: nil, feature: nil, limit: 100, maxBytes: 10).map(\.seq) == [3], "always one")
    await #expect(try journal.changes(after: 2, through: nil, feature: nil, limit: 1, maxBytes: 10_000).map(\.seq) == [3])
    #expect(try journal.lastChanges(5, maxBytes: 1_200).map(\.seq) == [5, 6], "the newest that fit")
    #expect(try journal.lastChanges(5, maxBytes: 10).map(\.seq) == [6], "always the last")
    #expect(try journal.lastChanges(2, maxBytes: .max).map(\.seq) == [5, 6])
    var seen: [UInt64] = []
    try journal.forEachChange(after: 1, through: 5, feature: nil) { change in
      seen.append(change.seq)
      return change.seq < 3
    }
    #expect(seen == [2, 3], "stopped where the body said")
  }

  /// A journal written before changes had causes is brought up to date when it is opened: its
  /// old changes read back without one.
  @Test func aJournalOfTheFirstSchemaGainsCausesWhenOpened() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/journal.sqlite"
    let old = try DatabaseQueue(path: path)
    try await old.write { db in
      try db.execute(sql: """
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        INSERT INTO grdb_migrations VALUES ('v1');
        CREATE TABLE journal (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE change (seq INTEGER PRIMARY KEY, patch BLOB NOT NULL, time DOUBLE NOT NULL);
        CREATE TABLE snapshot (seq INTEGER PRIMARY KEY, state BLOB NOT NULL);
        INSERT INTO journal VALUES ('id', 'old-journal');
        INSERT INTO snapshot VALUES (0, CAST('{"count":0}' AS BLOB));
        INSERT INTO change VALUES (1, CAST('[{"op":"replace","path":"/count","value":1}]' AS BLOB), 1.0);
        """)
    }
    try old.close()

    let journal = try countingJournal(in: directory)
    #expect(journal.id == "old-journal")
    await #expect(try journal.changes(after: 0, through: nil, feature: nil, limit: 10) == [change(1, #"[{"op":"replace","path":"/count","value":1}]"#).withTime(1)])
    try await journal.append([JournaledChange(seq: 2, feature: "counter", cause: .effect(nil), patch: Array("[]".utf8), time: 2)])
    await #expect(try journal.changes(after: 1, through: nil, feature: nil, limit: 10).first?.cause == .effect(nil))
    await #expect(try Recovery.recover(from: journal).state == ["count": 1])
  }

  @Test func durableTimersAreKeptUntilTheyFireOrAreCancelledByAnyOfTheirIds() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try countingJournal(in: directory)
    func timer(_ key: String, _ deadline: Double, in row: String = "row1", feature: String = "reminders") -> JournaledTimer {
      JournaledTimer(feature: feature, key: key, ids: [row, key], deadline: deadline, action: Array(#"{"due":"\#(key)"}"#.utf8))
    }
    try journal.append([], timers: [
      .schedule(timer("b", 20)), .schedule(timer("a", 10)), .schedule(timer("c", 30, in: "row2")),
      .schedule(timer("a", 10, feature: "other")),
    ])
    #expect(try journal.pendingTimers().map(\.key) == ["a", "a", "b", "c"], "in the order they fall due")
    try journal.append([], timers: [.schedule(timer("b", 25))])
    #expect(try journal.pendingTimers().filter { $0.key == "b" }.map(\.deadline) == [25], "one timer per id")
    try journal.append([], timers: [.fired(feature: "reminders", key: "b", deadline: 20)])
    #expect(try journal.pendingTimers().count == 4, "the firing of a timer since replaced removes nothing")
    try journal.append([], timers: [.cancel(feature: "reminders", id: "row1")])
    #expect(try journal.pendingTimers().map(\.key) == ["a", "c"], "cancelled with the row around them, in that feature only")
    try journal.append([], timers: [.fired(feature: "reminders", key: "c", deadline: 30)])
    #expect(try journal.pendingTimers() == [timer("a", 10, feature: "other")])
  }
}

extension JournaledChange {
  fileprivate func withTime(_ time: Double) -> Self {
    JournaledChange(seq: self.seq, feature: self.feature, cause: self.cause, patch: self.patch, time: time)
  }
}
