import Foundation
import PostgresNIO
import SwitchyardJournal

/// The runs that had the journal, the last change known flushed, and the histories retired: rows
/// of `journal` and `history`, as in SQLite.
extension PostgresJournal {
  package func lastRun() async throws -> (run: RunRecord, synced: SyncPoint)? {
    let values = try await self.values(["run", "synced"])
    guard let run = values["run"].flatMap(RunRecord.init(text:)) else { return nil }
    return (run, values["synced"].flatMap(SyncPoint.init(text:)) ?? SyncPoint(seq: 0, time: run.started))
  }

  /// Never a copy: a database restored by `pg_restore` is the journal itself.
  package func backupMark() async throws -> SyncPoint? {
    try await self.values(["backup"])["backup"].flatMap(SyncPoint.init(text:))
  }

  package func beginRun(_ run: RunRecord, synced: SyncPoint, retiring reason: String?) async throws {
    let newID = UUID().uuidString.lowercased()
    try await self.fencedWrite { connection in
      try await connection.query("DELETE FROM journal WHERE key = 'backup'", logger: self.logger)
      if let reason {
        try await connection.query(
          """
          INSERT INTO history (id, last_seq, reason, time) VALUES (\(self.id), \(Int64(clamping: synced.seq)), \(reason), \(synced.time))
          ON CONFLICT (id) DO UPDATE SET last_seq = excluded.last_seq, reason = excluded.reason, time = excluded.time
          """,
          logger: self.logger
        )
        try await self.set("id", to: newID, on: connection)
      }
      try await self.set("run", to: run.text, on: connection)
      try await self.set("synced", to: synced.text, on: connection)
    }
    if reason != nil { self.setID(newID) }
  }

  package func recordSynced(_ point: SyncPoint) async throws {
    try await self.fencedWrite { connection in try await self.set("synced", to: point.text, on: connection) }
  }

  package func endRun(_ run: RunRecord, synced: SyncPoint) async throws {
    var run = run
    run.clean = true
    try await self.fencedWrite { [run] connection in
      try await self.set("run", to: run.text, on: connection)
      try await self.set("synced", to: synced.text, on: connection)
    }
  }

  package func retiredHistories() async throws -> [RetiredHistory] {
    var histories: [RetiredHistory] = []
    let rows = try await self.client.query("SELECT id, last_seq FROM history ORDER BY time", logger: self.logger)
    for try await (id, lastSeq) in rows.decode((String, Int64).self) {
      histories.append(RetiredHistory(id: id, lastSeq: UInt64(max(0, lastSeq))))
    }
    return histories
  }

  private func values(_ keys: [String]) async throws -> [String: String] {
    var values: [String: String] = [:]
    let rows = try await self.client.query("SELECT key, value FROM journal WHERE key = ANY(\(keys))", logger: self.logger)
    for try await (key, value) in rows.decode((String, String).self) { values[key] = value }
    return values
  }

  private func set(_ key: String, to value: String, on connection: PostgresConnection) async throws {
    try await connection.query(
      "INSERT INTO journal (key, value) VALUES (\(key), \(value)) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      logger: self.logger
    )
  }
}
