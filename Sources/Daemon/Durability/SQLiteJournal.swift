import Foundation
import GRDB

/// The journal in one SQLite database (`journal.sqlite` in the state directory), in WAL mode,
/// through GRDB: a `change` row per published change, a `snapshot` row per kept state.
///
/// ```swift
/// let journal = try SQLiteJournal(path: "/var/lib/switchyard/journal.sqlite", mode: .strict,
///                                 initialState: initialJSON.serializedBytes())
/// try journal.append([JournaledChange(seq: 1, patch: patchText, time: now)])
/// ```
///
/// The mode sets SQLite's `synchronous`: `FULL` for ``DurabilityMode/strict`` (every commit
/// fsyncs the WAL), `NORMAL` for ``DurabilityMode/batched`` (``sync()`` fsyncs it), `OFF` for
/// ``DurabilityMode/off``. In WAL mode a commit is in the kernel's hands once `append` returns,
/// so a crash of the process loses nothing in any mode; only a power cut tells them apart.
final class SQLiteJournal: Journal {
  let id: String
  let path: String
  private let database: DatabaseQueue

  /// Opens the journal at `path`, creating it (with `initialState` as its snapshot at 0 and a
  /// new id) when there is none.
  init(path: String, mode: DurabilityMode, initialState: () throws -> [UInt8]) throws {
    self.path = path
    var configuration = Configuration()
    configuration.label = "switchyard-journal"
    let synchronous =
      switch mode {
      case .strict: "FULL"
      case .batched: "NORMAL"
      case .off: "OFF"
      }
    configuration.prepareDatabase { db in
      _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
      try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
    }
    self.database = try DatabaseQueue(path: path, configuration: configuration)
    try Self.migrator.migrate(self.database)
    self.id = try self.database.write { db in
      if let id = try String.fetchOne(db, sql: "SELECT value FROM journal WHERE key = 'id'") { return id }
      let state = try initialState()
      let id = UUID().uuidString.lowercased()
      try db.execute(sql: "INSERT INTO journal (key, value) VALUES ('id', ?)", arguments: [id])
      try db.execute(sql: "INSERT INTO snapshot (seq, state) VALUES (0, ?)", arguments: [Data(state)])
      return id
    }
  }

  /// The schema, one migration a version; a journal written by an older daemon is brought up
  /// to date when it is opened.
  private static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1") { db in
      try db.create(table: "journal") { table in
        table.column("key", .text).primaryKey()
        table.column("value", .text).notNull()
      }
      try db.create(table: "change") { table in
        table.column("seq", .integer).primaryKey()
        table.column("patch", .blob).notNull()
        table.column("time", .double).notNull()
      }
      try db.create(table: "snapshot") { table in
        table.column("seq", .integer).primaryKey()
        table.column("state", .blob).notNull()
      }
    }
    return migrator
  }

  func append(_ changes: [JournaledChange]) throws {
    try self.database.write { db in
      let insert = try db.cachedStatement(sql: "INSERT INTO change (seq, patch, time) VALUES (?, ?, ?)")
      for change in changes {
        try insert.execute(arguments: [Int64(change.seq), Data(change.patch), change.time])
      }
    }
  }

  func sync() throws {
    // The WAL holds every commit since the last checkpoint; forcing it out is forcing them out.
    for file in [self.path + "-wal", self.path] {
      let fd = open(file, O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else { continue }
      defer { close(fd) }
      guard fsync(fd) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
  }

  func recoveryPoint(before seq: UInt64?) throws -> (snapshot: JournalSnapshot?, changes: [JournaledChange]) {
    try self.database.read { db in
      let snapshot = try Row.fetchOne(
        db, sql: "SELECT seq, state FROM snapshot WHERE seq < ? ORDER BY seq DESC LIMIT 1",
        arguments: [seq.map { Int64($0) } ?? Int64.max]
      ).map { row in
        JournalSnapshot(seq: UInt64(row["seq"] as Int64), state: Array(row["state"] as Data))
      }
      let changes = try Row.fetchAll(
        db, sql: "SELECT seq, patch, time FROM change WHERE seq > ? ORDER BY seq",
        arguments: [Int64(snapshot?.seq ?? 0)]
      ).map { row in
        JournaledChange(seq: UInt64(row["seq"] as Int64), patch: Array(row["patch"] as Data), time: row["time"])
      }
      return (snapshot, changes)
    }
  }

  func lastChanges(_ count: Int) throws -> [JournaledChange] {
    try self.database.read { db in
      try Row.fetchAll(
        db, sql: "SELECT seq, patch, time FROM (SELECT * FROM change ORDER BY seq DESC LIMIT ?) ORDER BY seq",
        arguments: [count]
      ).map { row in
        JournaledChange(seq: UInt64(row["seq"] as Int64), patch: Array(row["patch"] as Data), time: row["time"])
      }
    }
  }

  func write(_ snapshot: JournalSnapshot) throws {
    try self.database.write { db in
      try db.execute(
        sql: "INSERT OR REPLACE INTO snapshot (seq, state) VALUES (?, ?)",
        arguments: [Int64(snapshot.seq), Data(snapshot.state)]
      )
    }
  }

  func prune(keepingSnapshots snapshots: Int, keepingChanges changes: Int) throws {
    try self.database.write { db in
      try db.execute(
        sql: """
          DELETE FROM snapshot WHERE seq < (SELECT seq FROM snapshot ORDER BY seq DESC LIMIT 1 OFFSET ?)
          """,
        arguments: [max(1, snapshots) - 1]
      )
      try db.execute(
        sql: """
          DELETE FROM change WHERE seq <= MIN(
            (SELECT MIN(seq) FROM snapshot),
            (SELECT COALESCE(MAX(seq), 0) FROM change) - ?
          )
          """,
        arguments: [changes]
      )
    }
  }
}
