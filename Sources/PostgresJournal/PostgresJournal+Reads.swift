import Foundation
import Logging
import NIOCore
import PostgresNIO
import SwitchyardJSON
import SwitchyardJournal

/// Reading the journal: by pages bounded in rows and in bytes, so that no read holds more than a
/// page, or its one change larger than a page, however many changes it runs over.
extension PostgresJournal {
  /// The most rows, and bytes of changes (``JournaledChange/byteCount``), one page reads.
  static let pageRows = 256
  static let pageBytes = 1 << 20

  /// What a change weighs in SQL, as ``JournaledChange/byteCount`` counts it, near enough.
  private static let byteCount = "octet_length(patch) + coalesce(octet_length(action), 0) + coalesce(octet_length(dependencies), 0)"

  package func lastChanges(_ count: Int, maxBytes: Int) async throws -> [JournaledChange] {
    // The running sum stops the server at the bound: it sends no change past it.
    let rows = try await self.client.query(
      PostgresQuery(
        unsafeSQL: """
          SELECT \(Self.changeColumns) FROM (
            SELECT *, sum(\(Self.byteCount)) OVER (ORDER BY seq DESC) AS running, \(Self.byteCount) AS bytes
            FROM change ORDER BY seq DESC LIMIT $1
          ) page WHERE running = bytes OR running <= $2 ORDER BY seq
          """,
        binds: Self.bindings(Int64(max(0, count)), Int64(clamping: maxBytes))
      ),
      logger: self.logger
    )
    var changes: [JournaledChange] = []
    for try await row in rows { changes.append(try JournaledChange(row)) }
    return changes
  }

  /// Reads in one read-only transaction that sees the journal as at its start, a page at a time
  /// from after the last change the page before ended at.
  package func forEachChange(
    after seq: UInt64, through last: UInt64?, feature: String?, _ body: (JournaledChange) throws -> Bool
  ) async throws {
    try await self.client.withConnection { connection in
      try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: self.logger)
      do {
        var after = seq
        paging: while true {
          let page = try await Self.page(after: after, through: last, feature: feature, on: connection, logger: self.logger)
          guard let end = page.last else { break }
          for change in page {
            if try !body(change) { break paging }
          }
          after = end.seq
        }
        try await connection.query("COMMIT", logger: self.logger)
      } catch {
        _ = try? await connection.query("ROLLBACK", logger: self.logger)
        throw error
      }
    }
  }

  /// The changes after `seq` and up to `last`, only those of `feature` when one is named, in
  /// order: at most ``pageRows`` of them and ``pageBytes`` of changes, though always the first.
  static func page(
    after seq: UInt64, through last: UInt64?, feature: String?, on connection: PostgresConnection, logger: Logger
  ) async throws -> [JournaledChange] {
    let rows = try await connection.query(
      PostgresQuery(
        unsafeSQL: """
          SELECT \(Self.changeColumns) FROM (
            SELECT *, sum(\(Self.byteCount)) OVER (ORDER BY seq) AS running, \(Self.byteCount) AS bytes
            FROM change WHERE seq > $1 AND seq <= $2 AND ($3::text IS NULL OR feature = $3::text) ORDER BY seq LIMIT $4
          ) page WHERE running = bytes OR running <= $5 ORDER BY seq
          """,
        binds: Self.bindings(
          Int64(clamping: seq), Int64(clamping: last ?? .max), feature, Int64(Self.pageRows), Int64(Self.pageBytes)
        )
      ),
      logger: logger
    )
    var page: [JournaledChange] = []
    for try await row in rows { page.append(try JournaledChange(row)) }
    return page
  }

  package func snapshot(atOrBefore seq: UInt64) async throws -> JournalSnapshot? {
    let rows = try await self.client.query(
      "SELECT seq, state FROM snapshot WHERE seq <= \(Int64(clamping: seq)) ORDER BY seq DESC LIMIT 1", logger: self.logger
    )
    for try await (seq, state) in rows.decode((Int64, ByteBuffer).self) {
      return JournalSnapshot(seq: UInt64(max(0, seq)), state: Array(state.readableBytesView))
    }
    return nil
  }

  package func extent() async throws -> JournalExtent {
    let rows = try await self.client.query(
      "SELECT (SELECT min(seq) FROM snapshot), (SELECT min(seq) FROM change), (SELECT max(seq) FROM change)", logger: self.logger
    )
    for try await (oldestSnapshot, firstChange, lastChange) in rows.decode((Int64?, Int64?, Int64?).self) {
      func seq(_ value: Int64?) -> UInt64? { value.map { UInt64(max(0, $0)) } }
      return JournalExtent(oldestSnapshot: seq(oldestSnapshot), firstChange: seq(firstChange), lastChange: seq(lastChange))
    }
    return JournalExtent(oldestSnapshot: nil, firstChange: nil, lastChange: nil)
  }

  package func versionMarks() async throws -> [VersionMark] {
    var marks: [VersionMark] = []
    let rows = try await self.client.query("SELECT seq, versions FROM version_mark ORDER BY seq", logger: self.logger)
    for try await (seq, versions) in rows.decode((Int64, String).self) {
      marks.append(VersionMark(seq: UInt64(max(0, seq)), versions: StateVersions(text: versions)))
    }
    return marks
  }

  package func pendingTimers() async throws -> [JournaledTimer] {
    var timers: [JournaledTimer] = []
    let rows = try await self.client.query(
      "SELECT feature, key, ids, deadline, action FROM timer ORDER BY deadline, scheduled", logger: self.logger
    )
    for try await (feature, key, ids, deadline, action) in rows.decode((String, String, [String], Double, ByteBuffer).self) {
      timers.append(JournaledTimer(feature: feature, key: key, ids: ids, deadline: deadline, action: Array(action.readableBytesView)))
    }
    return timers
  }

  private static func bindings(_ values: (any PostgresDynamicTypeEncodable)?...) -> PostgresBindings {
    var bindings = PostgresBindings(capacity: values.count)
    for value in values {
      if let value { bindings.append(value) } else { bindings.appendNull() }
    }
    return bindings
  }
}

extension JournaledChange {
  /// A row as ``PostgresJournal/changeColumns`` selects it.
  init(_ row: PostgresRow) throws {
    let (seq, feature, origin, action, uid, pid, patch, time, dependencies, certificate) = try row.decode(
      (Int64, String?, String?, ByteBuffer?, Int64?, Int64?, ByteBuffer, Double, ByteBuffer?, String?).self
    )
    let peer = uid.map { uid in
      ChangeCause.Peer(uid: UInt32(truncatingIfNeeded: uid), pid: Int32(truncatingIfNeeded: pid ?? 0), certificate: certificate)
    }
    let readings = dependencies.flatMap { try? JSONValue(parsing: Array($0.readableBytesView)) }.map(DependencyReadings.init(json:))
    self.init(
      seq: UInt64(max(0, seq)),
      feature: feature,
      cause: origin.flatMap(ChangeCause.Origin.init(rawValue:)).map { origin in
        ChangeCause(origin: origin, action: action.map { Array($0.readableBytesView) }, peer: peer, dependencies: readings)
      },
      patch: Array(patch.readableBytesView),
      time: time
    )
  }
}
