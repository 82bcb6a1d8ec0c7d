import Foundation
import Logging
import PostgresNIO

/// How a daemon holds the journal's lease: under which name, for how long at a time, and
/// whether it renews it (a standby that only reads never takes it).
package struct PostgresLeaseTerms: Sendable, Equatable {
  /// Who holds it, as other daemons see it: the host's name by default. A daemon that finds the
  /// lease held under its own name takes it at once (it is the same daemon, restarted).
  package var holder: String
  /// How long a taking or renewal holds, by the server's clock.
  package var duration: Duration
  /// Whether a task renews it, every third of ``duration``.
  package var renews: Bool
  /// Where clients reach the holder (`journal.advertise`): a standby names it when it refuses
  /// a `Send`.
  package var address: String

  package init(
    holder: String = ProcessInfo.processInfo.hostName, duration: Duration = .seconds(5), renews: Bool = true, address: String = ""
  ) {
    self.holder = holder
    self.duration = duration
    self.renews = renews
    self.address = address
  }

  var seconds: Double {
    Double(self.duration.components.seconds) + Double(self.duration.components.attoseconds) / 1e18
  }

  /// How long a write may go unanswered before it is given up: a lease, and at least five
  /// seconds, as long as the server lets a session sit idle in a transaction (a busy machine's
  /// pause between two statements is not taken for a server gone silent).
  package var writeLimit: Duration {
    max(self.duration, .seconds(5))
  }
}

/// The lease a journal took: its epoch, one more than any taken before it. Every write
/// transaction checks the row still has it (``PostgresFenceError``); the row's lock orders a
/// taking after the writes in flight, and every write after the taking fails.
package struct PostgresLease: Sendable, Equatable {
  package let holder: String
  package let epoch: Int64
  package let terms: PostgresLeaseTerms

  /// Takes the lease once it is free: expired by the server's clock, or held under the same
  /// name. Waits meanwhile, polling a few times a lease.
  static func take(_ terms: PostgresLeaseTerms, client: PostgresClient, logger: Logger) async throws -> PostgresLease {
    var toldWaiting = false
    while true {
      if let lease = try await Self.takeIfFree(terms, client: client, logger: logger) { return lease }
      if !toldWaiting {
        toldWaiting = true
        logger.notice("waiting for the journal's lease, which another daemon holds", metadata: ["holder": "\(terms.holder)"])
      }
      try await Task.sleep(for: terms.duration / 4)
    }
  }

  /// Takes the lease when it is free (expired by the server's clock, or held under the same
  /// name), at once; `nil` while another daemon holds it.
  static func takeIfFree(_ terms: PostgresLeaseTerms, client: PostgresClient, logger: Logger) async throws -> PostgresLease? {
    let taken = try await client.query(
      """
      UPDATE lease SET holder = \(terms.holder), address = \(terms.address), epoch = epoch + 1,
        expires_at = now() + make_interval(secs => \(terms.seconds))
      WHERE id = 1 AND (holder = \(terms.holder) OR expires_at <= now()) RETURNING epoch
      """,
      logger: logger
    )
    for try await epoch in taken.decode(Int64.self) {
      logger.info("took the journal's lease", metadata: ["holder": "\(terms.holder)", "epoch": "\(epoch)"])
      return PostgresLease(holder: terms.holder, epoch: epoch, terms: terms)
    }
    return nil
  }

  /// Renews the lease every third of its duration until the task is cancelled or another daemon
  /// took it. A renewal that fails is tried at the next tick; the appends check the expiry
  /// themselves, so a daemon that cannot renew stops committing when its lease ends.
  func renew(client: PostgresClient, logger: Logger) async {
    while !Task.isCancelled {
      do {
        try await Task.sleep(for: self.terms.duration / 3)
        let renewed = try await client.query(
          """
          UPDATE lease SET expires_at = now() + make_interval(secs => \(self.terms.seconds))
          WHERE id = 1 AND epoch = \(self.epoch) RETURNING epoch
          """,
          logger: logger
        )
        var held = false
        for try await _ in renewed { held = true }
        if !held {
          logger.critical(
            "another daemon took the journal's lease: this one commits nothing more",
            metadata: ["holder": "\(self.holder)", "epoch": "\(self.epoch)"]
          )
          return
        }
      } catch is CancellationError {
        return
      } catch {
        logger.warning("cannot renew the journal's lease", metadata: ["error": "\(String(reflecting: error))"])
      }
    }
  }

  /// Locks the lease row for the transaction and checks it is still this lease, unexpired: the
  /// fence of every write but an append (which moves the row on instead).
  func check(on connection: PostgresConnection, logger: Logger) async throws {
    let rows = try await connection.query(
      "SELECT holder, epoch, expires_at > clock_timestamp(), last_seq FROM lease WHERE id = 1 FOR SHARE", logger: logger
    )
    for try await (holder, epoch, unexpired, _) in rows.decode((String, Int64, Bool, Int64).self) {
      guard epoch == self.epoch else { throw PostgresFenceError.deposed(holder: holder, epoch: epoch, held: self.epoch) }
      guard unexpired else { throw PostgresFenceError.expired(epoch: self.epoch) }
      return
    }
    throw PostgresFenceError.deposed(holder: "", epoch: 0, held: self.epoch)
  }
}

/// A write refused because this daemon is not, or no longer, the journal's leader: nothing of
/// it was committed.
package enum PostgresFenceError: Error, Equatable, CustomStringConvertible {
  /// Another daemon took the lease since (`holder`, at `epoch`): this one never commits again.
  case deposed(holder: String, epoch: Int64, held: Int64)
  /// The lease ran out unrenewed: nothing is committed until it is renewed (if nobody took it).
  case expired(epoch: Int64)
  /// The changes do not follow the last one appended (`last`): another writer, or a bug.
  case outOfSequence(first: UInt64, last: UInt64)

  package var description: String {
    switch self {
    case let .deposed(holder, epoch, held):
      "the journal's lease was taken by \(holder.isEmpty ? "another daemon" : holder) (epoch \(epoch), this daemon's was \(held)): "
        + "this daemon is no longer the leader and commits nothing"
    case let .expired(epoch):
      "the journal's lease (epoch \(epoch)) expired unrenewed: nothing is committed until it is renewed"
    case let .outOfSequence(first, last):
      "changes from seq \(first) do not follow the journal's last, \(last)"
    }
  }
}
