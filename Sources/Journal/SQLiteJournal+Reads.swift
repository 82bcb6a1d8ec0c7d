import Foundation
import GRDB
import SwitchyardJSON

/// Reading the journal's changes and snapshots: one row at a time where a read may be long.
extension SQLiteJournal {
  package func lastChanges(_ count: Int, maxBytes: Int) throws -> [JournaledChange] {
    try self.database.read { db in
      var changes: [JournaledChange] = []
      var bytes = 0
      let cursor = try Row.fetchCursor(
        db, sql: "SELECT \(Self.changeColumns) FROM change ORDER BY seq DESC LIMIT ?", arguments: [max(0, count)]
      )
      while let row = try cursor.next() {
        let change = JournaledChange(row: row)
        if !changes.isEmpty, bytes + change.byteCount > maxBytes { break }
        bytes += change.byteCount
        changes.append(change)
      }
      return changes.reversed()
    }
  }

  package func forEachChange(
    after seq: UInt64, through last: UInt64?, feature: String?, _ body: (JournaledChange) throws -> Bool
  ) throws {
    try self.database.read { db in
      // A cursor: SQLite steps to the next row only when asked, so one row is in memory at a
      // time, and a read that stops early reads no further.
      let cursor = try Row.fetchCursor(
        db,
        sql: """
          SELECT \(Self.changeColumns) FROM change
          WHERE seq > ?1 AND seq <= ?2 AND (?3 IS NULL OR feature = ?3) ORDER BY seq
          """,
        arguments: [Int64(clamping: seq), Int64(clamping: last ?? .max), feature]
      )
      while let row = try cursor.next() {
        if try !body(JournaledChange(row: row)) { return }
      }
    }
  }

  package func snapshot(atOrBefore seq: UInt64) throws -> JournalSnapshot? {
    try self.database.read { db in
      try Row.fetchOne(
        db, sql: "SELECT seq, state FROM snapshot WHERE seq <= ? ORDER BY seq DESC LIMIT 1",
        arguments: [Int64(clamping: seq)]
      ).map { row in
        JournalSnapshot(seq: UInt64(row["seq"] as Int64), state: Array(row["state"] as Data))
      }
    }
  }

  package func extent() throws -> JournalExtent {
    try self.database.read { db in
      let row = try Row.fetchOne(
        db,
        sql: "SELECT (SELECT MIN(seq) FROM snapshot), (SELECT MIN(seq) FROM change), (SELECT MAX(seq) FROM change)"
      )
      func seq(_ index: Int) -> UInt64? { (row?[index] as Int64?).map { UInt64($0) } }
      return JournalExtent(oldestSnapshot: seq(0), firstChange: seq(1), lastChange: seq(2))
    }
  }
}

extension JournaledChange {
  /// A row of the `change` table, as `SQLiteJournal.changeColumns` selects it.
  package init(row: Row) {
    let origin = (row["origin"] as String?).flatMap(ChangeCause.Origin.init(rawValue:))
    let peer = (row["uid"] as Int64?).map { uid in
      ChangeCause.Peer(
        uid: UInt32(truncatingIfNeeded: uid), pid: Int32(truncatingIfNeeded: row["pid"] as Int64? ?? 0), certificate: row["certificate"]
      )
    }
    let dependencies = (row["dependencies"] as Data?).flatMap { try? JSONValue(parsing: Array($0)) }.map(DependencyReadings.init(json:))
    self.init(
      seq: UInt64(row["seq"] as Int64),
      feature: row["feature"],
      cause: origin.map { origin in
        ChangeCause(
          origin: origin, action: (row["action"] as Data?).map { Array($0) }, peer: peer, dependencies: dependencies,
          reduceNanoseconds: (row["reduceNanoseconds"] as Int64?).map { UInt64(clamping: $0) }
        )
      },
      patch: Array(row["patch"] as Data),
      time: row["time"]
    )
  }
}
