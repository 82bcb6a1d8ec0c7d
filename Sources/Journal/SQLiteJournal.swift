import Foundation
import GRDB
import Glibc
import SwitchyardJSON
import SwitchyardSynchronization

/// The journal in one SQLite database (`journal.sqlite` in the state directory), in WAL mode,
/// through GRDB: a `change` row per published change, a `snapshot` row per kept state.
///
/// A pool of connections: one writes while others read, so that reading the journal (`Journal`,
/// `Get` at a seq) never holds up the group commit of the next changes.
///
/// ```swift
/// let journal = try SQLiteJournal(path: "/var/lib/switchyard/journal.sqlite", mode: .strict,
///                                 initialState: initialJSON.serializedBytes())
/// try journal.append([JournaledChange(seq: 1, patch: patchText, time: now)])
/// ```
///
/// In ``DurabilityMode/strict`` ``append(_:timers:)`` returns once its commit is on the disk
/// (an fdatasync of the WAL); the writer commits with ``appendUnsynced(_:timers:)`` and forces
/// groups out with ``syncCommits()`` from another thread, so that the next group's commit runs
/// during the last one's fsync. ``DurabilityMode/batched`` and ``DurabilityMode/off`` leave the
/// fsync to ``sync()`` and checkpoints. In WAL mode a commit is in the kernel's hands once `append` returns,
/// so a crash of the process loses nothing in any mode; only a power cut tells them apart.
package final class SQLiteJournal: InlineCommitting, SyncingApart {
  package var id: String {
    self.currentID.withLock { $0 }
  }

  package let path: String
  private let currentID: Mutex<String>
  private let mode: DurabilityMode
  /// The connections: a pool as a rule; one connection when the disk was too full to open a
  /// pool, until ``prepareForWriting()`` replaces it with one.
  private let connections: Mutex<(database: any DatabaseWriter, isPool: Bool)>
  package var database: any DatabaseWriter { self.connections.withLock { $0.database } }
  /// The database and its WAL, open for as long as the journal is, for ``sync()``. Never
  /// opened and closed again meanwhile: closing any descriptor of a file drops every POSIX lock
  /// the process holds on it, SQLite's own locks on the database included.
  private let files: JournalFiles

  /// Opens the journal at `path`, creating it (with `initialState` as its snapshot at 0, at the
  /// state `versions`, and a new id) when there is none.
  ///
  /// On a disk too full to open a pool (GRDB writes to the database as it opens one), an
  /// existing journal is opened on one connection rather than not at all: what it holds can be
  /// served, its writes fail until there is room, and ``prepareForWriting()`` opens the pool then.
  package init(path: String, mode: DurabilityMode, versions: StateVersions = [:], initialState: () throws -> [UInt8]) throws {
    self.path = path
    self.mode = mode
    // SQLite creates the WAL with the database's mode, and GRDB cannot ask it for
    // `SQLITE_OPEN_NOFOLLOW`: the files are made and checked first.
    try StateFile.prepareDatabase(atPath: path)
    var database: any DatabaseWriter
    let id: String
    var isPool = true
    do {
      let pool = try Self.openPool(path, mode: mode)
      database = pool
      try Self.migrator.migrate(pool)
      id = try pool.write { db in
        if let id = try String.fetchOne(db, sql: "SELECT value FROM journal WHERE key = 'id'") { return id }
        let state = try initialState()
        let id = UUID().uuidString.lowercased()
        try db.execute(sql: "INSERT INTO journal (key, value) VALUES ('id', ?)", arguments: [id])
        try db.execute(sql: "INSERT INTO snapshot (seq, state) VALUES (0, ?)", arguments: [Data(state)])
        try db.execute(sql: "INSERT INTO version_mark (seq, versions) VALUES (0, ?)", arguments: [versions.text])
        return id
      }
    } catch where DiskFull.isCause(of: error) {
      // Only a journal this daemon can read as it is: none to create, no schema to bring up.
      // (SQLite cannot open it read-only: a journal left by a crash needs its WAL recovered,
      // which only a connection that may write does, in memory with `unix-excl`.)
      database = try DatabaseQueue(path: Self.exclusiveURI(path), configuration: Self.configuration(mode: mode))
      guard try database.read(Self.migrator.hasCompletedMigrations),
        let existing = try database.read({ try String.fetchOne($0, sql: "SELECT value FROM journal WHERE key = 'id'") })
      else { throw error }
      id = existing
      isPool = false
    }
    self.connections = Mutex((database, isPool))
    self.currentID = Mutex(id)
    self.files = try JournalFiles(database: path)
  }

  package var location: String { self.path }

  /// Opens the pool when the journal is on one connection (the disk was full); nothing when it
  /// is not. Reads still on the connection finish on it.
  package func prepareForWriting() throws {
    guard !self.connections.withLock({ $0.isPool }) else { return }
    let pool = try Self.openPool(self.path, mode: self.mode)
    self.connections.withLock { $0 = (pool, true) }
  }

  private static func openPool(_ path: String, mode: DurabilityMode) throws -> DatabasePool {
    // A pool puts the database in WAL mode itself, and sets `synchronous = NORMAL` as it does,
    // after `prepareDatabase`: the writer's own setting comes after that.
    let pool = try DatabasePool(path: Self.exclusiveURI(path), configuration: Self.configuration(mode: mode))
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(Self.synchronous(mode))") }
    return pool
  }

  /// SQLite's `synchronous` for `mode`: `NORMAL` in every mode, where SQLite fsyncs at
  /// checkpoints and when it writes the WAL's header again; strict's commits are forced out by
  /// ``syncCommits()`` (what `FULL` does, an fdatasync of the WAL, apart from the commit). Never
  /// `OFF`: SQLite then skips the header's fsync, and a power cut can corrupt the database.
  static func synchronous(_ mode: DurabilityMode) -> String {
    "NORMAL"
  }

  private static func configuration(mode: DurabilityMode) -> Configuration {
    var configuration = Configuration()
    configuration.label = "switchyard-journal"
    configuration.prepareDatabase { db in
      // For the one connection of a journal opened on a full disk; a pool sets it again.
      try db.execute(sql: "PRAGMA synchronous = \(Self.synchronous(mode))")
      // The batched mode commits on the event loop: no commit there may run a checkpoint,
      // which forces the WAL and the database onto the disk. The writer thread checkpoints
      // after each fsync instead (``checkpoint()``).
      if mode == .batched { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
    }
    return configuration
  }

  /// `path` as an SQLite URI that opens it through the `unix-excl` VFS: the process takes an
  /// exclusive lock on the database at its first read and keeps the WAL index in its own memory,
  /// so that a transaction takes and drops no lock of the file's: with the default VFS those
  /// `fcntl` calls were much of what the batched mode's commit on the event loop cost.
  /// Connections of this process still share the database (the pool's readers); another
  /// process cannot open it while the daemon runs (a backup goes through `Backup`), and the
  /// state directory is the daemon's alone anyway (``StateDirectory``).
  static func exclusiveURI(_ path: String) -> String {
    var escaped = ""
    for character in path.unicodeScalars {
      switch character {
      case "%", "?", "#": escaped += String(format: "%%%02X", character.value)
      default: escaped.unicodeScalars.append(character)
      }
    }
    return "file:\(escaped)?vfs=unix-excl"
  }

  deinit {
    // SQLite's connections first, then the files' own descriptors (``JournalFiles``).
    try? self.database.close()
  }

  package func versionMarks() throws -> [VersionMark] {
    try self.database.read { db in
      try Row.fetchAll(db, sql: "SELECT seq, versions FROM version_mark ORDER BY seq").map { row in
        VersionMark(seq: UInt64(row["seq"] as Int64), versions: StateVersions(text: row["versions"]))
      }
    }
  }

  package func record(_ versions: StateVersions, snapshot: JournalSnapshot) throws {
    try self.database.write { db in
      try db.execute(
        sql: "INSERT OR REPLACE INTO version_mark (seq, versions) VALUES (?, ?)",
        arguments: [Int64(snapshot.seq), versions.text]
      )
      try db.execute(
        sql: "INSERT OR REPLACE INTO snapshot (seq, state) VALUES (?, ?)",
        arguments: [Int64(snapshot.seq), Data(snapshot.state)]
      )
    }
  }

  static let changeColumns = "seq, feature, origin, action, uid, pid, patch, time, dependencies, certificate, reduceNanoseconds"

  package func append(_ changes: [JournaledChange], timers: [TimerOperation]) throws {
    try self.appendUnsynced(changes, timers: timers)
    if self.mode == .strict { try self.syncCommits() }
  }

  /// The group's transaction, in the kernel's page cache once it returns.
  package func appendUnsynced(_ changes: [JournaledChange], timers: [TimerOperation]) throws {
    // The batched mode runs this on the event loop for every group: its BEGIN and COMMIT are
    // statements prepared once, where `write` would compile both again each time.
    try self.database.writeWithoutTransaction { db in
      try db.cachedStatement(sql: "BEGIN IMMEDIATE").execute()
      do {
        for operation in timers { try Self.apply(operation, in: db) }
        let insert = try db.cachedStatement(
          sql: "INSERT INTO change (\(Self.changeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        for change in changes {
          let cause = change.cause
          try insert.execute(arguments: [
            Int64(change.seq), change.feature, cause?.origin.rawValue, cause?.action.map { Data($0) },
            cause?.peer.map { Int64($0.uid) }, cause?.peer.map { Int64($0.pid) }, Data(change.patch), change.time,
            cause?.dependencies.map { Data($0.json.serializedBytes()) }, cause?.peer?.certificate,
            cause?.reduceNanoseconds.map { Int64(clamping: $0) },
          ])
        }
        try db.cachedStatement(sql: "COMMIT").execute()
      } catch {
        // All of the group or none: SQLite may have rolled back already (a full disk).
        try? db.rollback()
        throw error
      }
    }
  }

  /// A commit writes into the WAL, in the page cache: the batched mode makes it on the loop.
  package func appendInline(_ changes: [JournaledChange], timers: [TimerOperation]) throws {
    try self.append(changes, timers: timers)
  }

  /// Every commit made before the call is in the WAL, and SQLite's own fsyncs (checkpoints,
  /// a new WAL header) cover what the WAL no longer holds: forcing the WAL out forces them out.
  package func syncCommits() throws {
    try self.files.syncLog()
  }

  /// How many times ``syncCommits()`` forced the WAL out: for the tests.
  package var logSyncs: Int { self.files.logSyncs.load(ordering: .relaxed) }

  private static func apply(_ operation: TimerOperation, in db: Database) throws {
    switch operation {
    case let .schedule(timer):
      let ids = String(decoding: JSONValue.array(timer.ids.map(JSONValue.string)).serializedBytes(), as: UTF8.self)
      try db.execute(
        sql: "INSERT OR REPLACE INTO timer (feature, key, ids, deadline, action) VALUES (?, ?, ?, ?, ?)",
        arguments: [timer.feature, timer.key, ids, timer.deadline, Data(timer.action)]
      )
    case let .cancel(feature, id):
      try db.execute(
        sql: "DELETE FROM timer WHERE feature = ? AND EXISTS (SELECT 1 FROM json_each(timer.ids) WHERE value = ?)",
        arguments: [feature, id]
      )
    case let .fired(feature, key, deadline):
      try db.execute(
        sql: "DELETE FROM timer WHERE feature = ? AND key = ? AND deadline = ?", arguments: [feature, key, deadline]
      )
    }
  }

  package func pendingTimers() throws -> [JournaledTimer] {
    try self.database.read { db in
      try Row.fetchAll(db, sql: "SELECT feature, key, ids, deadline, action FROM timer ORDER BY deadline, rowid").map { row in
        let ids = (try? JSONValue(parsing: Array((row["ids"] as String).utf8))).flatMap { value -> [String]? in
          guard case let .array(ids) = value else { return nil }
          return ids.compactMap { if case let .string(id) = $0 { id } else { nil } }
        }
        return JournaledTimer(
          feature: row["feature"], key: row["key"], ids: ids ?? [row["key"]], deadline: row["deadline"],
          action: Array(row["action"] as Data)
        )
      }
    }
  }

  package func sync() throws {
    // The WAL holds every commit since the last checkpoint; forcing it out is forcing them out.
    try self.files.sync()
  }

  /// What SQLite's quick check finds in the database: `ok`, or up to ten problems, one per
  /// line. It reads every page once (without comparing the indexes with their tables, as the
  /// full integrity check does): a damaged page is found at start, not by the first read of it.
  package func quickCheck() -> String {
    do {
      return try self.database.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check(10)") }.joined(separator: "\n")
    } catch {
      return "\(error)"
    }
  }

  package func checkpoint() throws {
    try self.database.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
  }

  package func lastRun() throws -> (run: RunRecord, synced: SyncPoint)? {
    try self.database.read { db in
      let rows = try Row.fetchAll(db, sql: "SELECT key, value FROM journal WHERE key IN ('run', 'synced')")
      let values = Dictionary(rows.map { ($0["key"] as String, $0["value"] as String) }, uniquingKeysWith: { first, _ in first })
      guard let run = values["run"].flatMap(RunRecord.init(text:)) else { return nil }
      return (run, values["synced"].flatMap(SyncPoint.init(text:)) ?? SyncPoint(seq: 0, time: run.started))
    }
  }

  package func backupMark() throws -> SyncPoint? {
    try self.database.read { db in
      try String.fetchOne(db, sql: "SELECT value FROM journal WHERE key = 'backup'").flatMap(SyncPoint.init(text:))
    }
  }

  package func beginRun(_ run: RunRecord, synced: SyncPoint, retiring reason: String?) throws {
    let newID = UUID().uuidString.lowercased()
    try self.database.write { db in
      try db.execute(sql: "DELETE FROM journal WHERE key = 'backup'")
      if let reason {
        try db.execute(
          sql: "INSERT OR REPLACE INTO history (id, lastSeq, reason, time) VALUES (?, ?, ?, ?)",
          arguments: [self.id, Int64(clamping: synced.seq), reason, synced.time]
        )
        try db.execute(sql: "UPDATE journal SET value = ? WHERE key = 'id'", arguments: [newID])
      }
      try Self.set("run", to: run.text, in: db)
      try Self.set("synced", to: synced.text, in: db)
    }
    if reason != nil { self.currentID.withLock { $0 = newID } }
  }

  package func recordSynced(_ point: SyncPoint) throws {
    try self.database.write { db in try Self.set("synced", to: point.text, in: db) }
  }

  package func endRun(_ run: RunRecord, synced: SyncPoint) throws {
    var run = run
    run.clean = true
    try self.database.write { db in
      try Self.set("run", to: run.text, in: db)
      try Self.set("synced", to: synced.text, in: db)
    }
  }

  package func retiredHistories() throws -> [RetiredHistory] {
    try self.database.read { db in
      try Row.fetchAll(db, sql: "SELECT id, lastSeq FROM history ORDER BY time").map { row in
        RetiredHistory(id: row["id"], lastSeq: UInt64(max(0, row["lastSeq"] as Int64)))
      }
    }
  }

  package static func set(_ key: String, to value: String, in db: Database) throws {
    try db.execute(sql: "INSERT OR REPLACE INTO journal (key, value) VALUES (?, ?)", arguments: [key, value])
  }

  package func write(_ snapshot: JournalSnapshot) throws {
    try self.database.write { db in
      try db.execute(
        sql: "INSERT OR REPLACE INTO snapshot (seq, state) VALUES (?, ?)",
        arguments: [Int64(snapshot.seq), Data(snapshot.state)]
      )
    }
  }

  package func prune(keepingSnapshots snapshots: Int, keepingChanges changes: Int, changedBefore time: Double?) throws {
    try self.database.write { db in
      try db.execute(
        sql: """
          DELETE FROM snapshot WHERE seq < (SELECT seq FROM snapshot ORDER BY seq DESC LIMIT 1 OFFSET ?)
          """,
        arguments: [max(1, snapshots) - 1]
      )
      try db.execute(
        sql: """
          DELETE FROM change WHERE seq <= (SELECT MIN(seq) FROM snapshot) AND (
            seq <= (SELECT COALESCE(MAX(seq), 0) FROM change) - ?1 OR time < ?2
          )
          """,
        arguments: [changes, time]
      )
    }
  }
}
