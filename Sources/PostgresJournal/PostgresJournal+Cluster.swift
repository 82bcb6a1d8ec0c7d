import Logging
import PostgresNIO

/// What the daemons sharing the journal read of each other: the lease (who leads, where, at
/// which epoch and seq) and the `member` rows each of them keeps fresh.
extension PostgresJournal {
  /// The lease row as it is now, by the server's clock.
  package func leaseState() async throws -> PostgresLeaseState {
    let rows = try await self.client.query(
      """
      SELECT holder, address, epoch, last_seq, expires_at <= now(), extract(epoch FROM expires_at - now())::double precision
      FROM lease WHERE id = 1
      """,
      logger: self.logger
    )
    for try await (holder, address, epoch, lastSeq, expired, left) in rows.decode((String, String, Int64, Int64, Bool, Double).self) {
      return PostgresLeaseState(
        holder: holder, address: address, epoch: epoch, lastSeq: UInt64(max(0, lastSeq)), expired: expired,
        expiresIn: .milliseconds(Int64((left * 1000).rounded(.up)))
      )
    }
    throw PostgresJournalError.noIdentity
  }

  /// Takes the lease under this journal's terms if it is free now: the lease taken, or `nil`
  /// while another daemon holds it.
  package func takeLeaseIfFree() async throws -> PostgresLease? {
    try await PostgresLease.takeIfFree(self.lease.terms, client: self.client, logger: self.logger)
  }

  /// Says how this daemon is doing in its `member` row, seen now by the server's clock.
  package func heartbeat(_ member: PostgresMember) async throws {
    try await self.client.query(
      """
      INSERT INTO member (holder, address, role, seq, lag_ms, seen)
      VALUES (\(member.holder), \(member.address), \(member.role), \(Int64(clamping: member.seq)), \(member.lagMilliseconds), now())
      ON CONFLICT (holder) DO UPDATE SET address = excluded.address, role = excluded.role, seq = excluded.seq,
        lag_ms = excluded.lag_ms, seen = excluded.seen
      """,
      logger: self.logger
    )
  }

  /// Every daemon that said how it was doing, by name, with how long ago it last did.
  package func members() async throws -> [PostgresMember] {
    let rows = try await self.client.query(
      """
      SELECT holder, address, role, seq, lag_ms, extract(epoch FROM now() - seen)::double precision * 1000
      FROM member ORDER BY holder
      """,
      logger: self.logger
    )
    var members: [PostgresMember] = []
    for try await (holder, address, role, seq, lag, ago) in rows.decode((String, String, String, Int64, Double, Double).self) {
      members.append(
        PostgresMember(
          holder: holder, address: address, role: role, seq: UInt64(max(0, seq)), lagMilliseconds: lag, seenMillisecondsAgo: ago
        )
      )
    }
    return members
  }
}

/// The journal's lease as a standby reads it: who leads, where clients reach it, its epoch,
/// the last seq it appended, whether it ran out unrenewed, and how long it has left.
package struct PostgresLeaseState: Sendable, Equatable {
  package let holder: String
  package let address: String
  package let epoch: Int64
  package let lastSeq: UInt64
  package let expired: Bool
  /// How long until it runs out unless renewed, by the server's clock as it was read (negative
  /// once it has): a standby reads the lease again then.
  package let expiresIn: Duration

  package init(holder: String, address: String, epoch: Int64, lastSeq: UInt64, expired: Bool, expiresIn: Duration = .zero) {
    self.holder = holder
    self.address = address
    self.epoch = epoch
    self.lastSeq = lastSeq
    self.expired = expired
    self.expiresIn = expiresIn
  }

  /// The same lease in the same state; how long it had left, which changes with each read, is
  /// not compared.
  package static func == (lhs: Self, rhs: Self) -> Bool {
    (lhs.holder, lhs.address, lhs.epoch, lhs.lastSeq, lhs.expired) == (rhs.holder, rhs.address, rhs.epoch, rhs.lastSeq, rhs.expired)
  }
}

/// One daemon sharing the journal, as its `member` row says.
package struct PostgresMember: Sendable, Equatable {
  package let holder: String
  package let address: String
  /// `leader` or `standby`.
  package let role: String
  /// The seq its state reflects.
  package let seq: UInt64
  /// How long after the leader numbered it the daemon applied its last change.
  package let lagMilliseconds: Double
  /// How long ago it last said so; 0 in what a daemon says of itself.
  package let seenMillisecondsAgo: Double

  package init(holder: String, address: String, role: String, seq: UInt64, lagMilliseconds: Double, seenMillisecondsAgo: Double = 0) {
    self.holder = holder
    self.address = address
    self.role = role
    self.seq = seq
    self.lagMilliseconds = lagMilliseconds
    self.seenMillisecondsAgo = seenMillisecondsAgo
  }
}
