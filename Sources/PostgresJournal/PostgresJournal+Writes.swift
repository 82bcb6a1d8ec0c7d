import Foundation
import NIOCore
import PostgresNIO
import SwitchyardJSON
import SwitchyardJournal

/// Appending changes, with the durable timers, behind the lease's fence.
extension PostgresJournal {
  /// The columns of `change`, in the order every statement here writes and reads them. A
  /// reduction's duration (`ChangeCause.reduceNanoseconds`) is not among them: the SQLite
  /// journal keeps it, for the inspector's timeline, which shows none for a change read here.
  static let changeColumns = "seq, feature, origin, action, uid, pid, patch, time, dependencies, certificate"
  /// Rows a multi-row INSERT carries: its binds stay well under the protocol's 65,535.
  private static let rowsPerInsert = 1000

  /// Moves the lease row's `last_seq` from the one before `changes` to their last, where this
  /// daemon's epoch still holds and has not expired, then inserts them: one transaction, which
  /// wakes the followers (``PostgresJournalFollower``) as it commits. A group this daemon already
  /// committed (the reply to its COMMIT was lost) is not written twice.
  package func append(_ changes: [JournaledChange], timers: [TimerOperation]) async throws {
    try await self.withinWriteLimit { try await self.appendNow(changes, timers: timers) }
  }

  private func appendNow(_ changes: [JournaledChange], timers: [TimerOperation]) async throws {
    guard let first = changes.first?.seq else {
      if !timers.isEmpty { try await self.fencedWrite { connection in try await self.apply(timers, on: connection) } }
      return
    }
    for (offset, change) in changes.enumerated() where change.seq != first + UInt64(offset) {
      throw PostgresFenceError.outOfSequence(first: change.seq, last: first + UInt64(offset) - 1)
    }
    let last = Int64(clamping: changes[changes.count - 1].seq)
    let committed = try await self.transaction { connection -> Bool in
      let moved = try await connection.query(
        """
        UPDATE lease SET last_seq = \(last) WHERE id = 1 AND epoch = \(self.lease.epoch) AND expires_at > clock_timestamp()
          AND last_seq = \(Int64(clamping: first) - 1) RETURNING last_seq, pg_notify('switchyard_journal', last_seq::text)
        """,
        logger: self.logger
      )
      var held = false
      for try await _ in moved { held = true }
      guard held else { return false }
      try await self.apply(timers, on: connection)
      for start in stride(from: 0, to: changes.count, by: Self.rowsPerInsert) {
        try await connection.query(Self.insert(changes[start..<min(start + Self.rowsPerInsert, changes.count)]), logger: self.logger)
      }
      return true
    }
    if !committed { try await self.refusal(first: first, last: UInt64(last)) }
  }

  /// Why the lease refused an append; nothing when the group is in already, committed by this
  /// epoch: the one writer under it is this daemon.
  private func refusal(first: UInt64, last: UInt64) async throws {
    let rows = try await self.client.query(
      "SELECT holder, epoch, expires_at > now(), last_seq FROM lease WHERE id = 1", logger: self.logger
    )
    for try await (holder, epoch, unexpired, lastSeq) in rows.decode((String, Int64, Bool, Int64).self) {
      guard epoch == self.lease.epoch else {
        throw PostgresFenceError.deposed(holder: holder, epoch: epoch, held: self.lease.epoch)
      }
      if lastSeq == Int64(clamping: last) { return }
      // Following on, under this epoch: the lease had run out as the append checked it, though
      // a renewal may have come since.
      if !unexpired || lastSeq == Int64(clamping: first) - 1 { throw PostgresFenceError.expired(epoch: epoch) }
      throw PostgresFenceError.outOfSequence(first: first, last: UInt64(max(0, lastSeq)))
    }
    throw PostgresFenceError.deposed(holder: "", epoch: 0, held: self.lease.epoch)
  }

  private static func insert(_ changes: ArraySlice<JournaledChange>) -> PostgresQuery {
    var bindings = PostgresBindings(capacity: changes.count * 10)
    var rows: [String] = []
    rows.reserveCapacity(changes.count)
    for change in changes {
      let base = bindings.count
      rows.append("(" + (1...10).map { "$\(base + $0)" }.joined(separator: ", ") + ")")
      let cause = change.cause
      bindings.append(Int64(clamping: change.seq))
      bindings.append(change.feature)
      bindings.append(cause?.origin.rawValue)
      bindings.append(cause?.action.map { ByteBuffer(bytes: $0) })
      bindings.append(cause?.peer.map { Int64($0.uid) })
      bindings.append(cause?.peer.map { Int64($0.pid) })
      bindings.append(ByteBuffer(bytes: change.patch))
      bindings.append(change.time)
      bindings.append(cause?.dependencies.map { ByteBuffer(bytes: $0.json.serializedBytes()) })
      bindings.append(cause?.peer?.certificate)
    }
    return PostgresQuery(
      unsafeSQL: "INSERT INTO change (\(Self.changeColumns)) VALUES \(rows.joined(separator: ", "))", binds: bindings
    )
  }

  private func apply(_ timers: [TimerOperation], on connection: PostgresConnection) async throws {
    for operation in timers {
      switch operation {
      case let .schedule(timer):
        // Replaced as a new timer, after those scheduled before it that fall due with it.
        try await connection.query(
          "DELETE FROM timer WHERE feature = \(timer.feature) AND key = \(timer.key)", logger: self.logger
        )
        try await connection.query(
          """
          INSERT INTO timer (feature, key, ids, deadline, action)
          VALUES (\(timer.feature), \(timer.key), \(timer.ids), \(timer.deadline), \(ByteBuffer(bytes: timer.action)))
          """,
          logger: self.logger
        )
      case let .cancel(feature, id):
        try await connection.query("DELETE FROM timer WHERE feature = \(feature) AND \(id) = ANY(ids)", logger: self.logger)
      case let .fired(feature, key, deadline):
        try await connection.query(
          "DELETE FROM timer WHERE feature = \(feature) AND key = \(key) AND deadline = \(deadline)", logger: self.logger
        )
      }
    }
  }

  /// Runs `body` in a transaction that first checks the lease is still this daemon's, within a
  /// lease.
  func fencedWrite(_ body: @escaping @Sendable (PostgresConnection) async throws -> Void) async throws {
    try await self.withinWriteLimit {
      try await self.transaction { connection in
        try await self.lease.check(on: connection, logger: self.logger)
        try await body(connection)
      }
    }
  }

  /// Keeps the composed state at `snapshot.seq`: only a state of changes this journal holds.
  package func write(_ snapshot: JournalSnapshot) async throws {
    try await self.fencedWrite { connection in try await self.upsert(snapshot, on: connection) }
  }

  package func record(_ versions: StateVersions, snapshot: JournalSnapshot) async throws {
    try await self.fencedWrite { connection in
      try await connection.query(
        """
        INSERT INTO version_mark (seq, versions) VALUES (\(Int64(clamping: snapshot.seq)), \(versions.text))
        ON CONFLICT (seq) DO UPDATE SET versions = excluded.versions
        """,
        logger: self.logger
      )
      try await self.upsert(snapshot, on: connection)
    }
  }

  private func upsert(_ snapshot: JournalSnapshot, on connection: PostgresConnection) async throws {
    try await connection.query(
      """
      INSERT INTO snapshot (seq, state) VALUES (\(Int64(clamping: snapshot.seq)), \(ByteBuffer(bytes: snapshot.state)))
      ON CONFLICT (seq) DO UPDATE SET state = excluded.state
      """,
      logger: self.logger
    )
  }

  package func prune(keepingSnapshots snapshots: Int, keepingChanges changes: Int, changedBefore time: Double?) async throws {
    try await self.fencedWrite { connection in
      try await connection.query(
        """
        DELETE FROM snapshot WHERE seq < (SELECT seq FROM snapshot ORDER BY seq DESC LIMIT 1 OFFSET \(Int64(max(1, snapshots) - 1)))
        """,
        logger: self.logger
      )
      try await connection.query(
        """
        DELETE FROM change WHERE seq <= (SELECT min(seq) FROM snapshot) AND (
          seq <= (SELECT coalesce(max(seq), 0) FROM change) - \(Int64(changes)) OR time < \(time)::double precision
        )
        """,
        logger: self.logger
      )
    }
  }
}
