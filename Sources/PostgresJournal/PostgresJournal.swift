import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import SwitchyardJSON
import SwitchyardJournal
import SwitchyardSynchronization

/// The journal in a PostgreSQL database, through postgres-nio: the same tables as SQLite's (a
/// `change` row per published change, a `snapshot` row per kept state, the durable timers, the
/// runs and histories), and a `lease` row that makes one daemon the leader.
///
/// Opening takes the lease (waiting while another holder's lease runs), and a task renews it;
/// every write checks, inside its transaction, the epoch it took: a daemon deposed or cut off
/// can never commit again (``PostgresFenceError``).
///
/// ```swift
/// let journal = try await PostgresJournal.open(
///   try PostgresConnectionSettings(parsing: "host=/run/postgresql dbname=switchyard user=switchyard"),
///   mode: .strict, lease: PostgresLeaseTerms(holder: "node-a"), initialState: { Array("{}".utf8) }, logger: logger
/// )
/// try await journal.append([JournaledChange(seq: 1, patch: patchText, time: now)], timers: [])
/// ```
///
/// The mode sets `synchronous_commit` for its connections: `on` for ``DurabilityMode/strict``
/// (a commit returns once PostgreSQL flushed it), `off` otherwise, where ``sync()`` flushes
/// what was committed before it.
package final class PostgresJournal: Journal {
  package var id: String {
    self.currentID.withLock { $0 }
  }

  package let settings: PostgresConnectionSettings
  /// The lease this journal took: every write checks it still holds.
  package let lease: PostgresLease
  let client: PostgresClient
  let mode: DurabilityMode
  let logger: Logger
  private let currentID: Mutex<String>
  private let tasks: [Task<Void, Never>]

  private init(
    settings: PostgresConnectionSettings, client: PostgresClient, mode: DurabilityMode, lease: PostgresLease, id: String,
    tasks: [Task<Void, Never>], logger: Logger
  ) {
    self.settings = settings
    self.client = client
    self.mode = mode
    self.lease = lease
    self.currentID = Mutex(id)
    self.tasks = tasks
    self.logger = logger
  }

  /// The journal's connections' own loop: never one that serves the daemon's clients, whose
  /// `Send`s are read, reduced and answered on theirs.
  static let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)

  deinit {
    // Cancelling the client's run closes its connections.
    for task in self.tasks { task.cancel() }
  }

  /// Connects, brings the schema up to date, creates the journal (with `initialState` as its
  /// snapshot at 0, at the state `versions`, and a new id) when the database holds none, and
  /// takes the lease as `terms` say. A server that has not answered within `answerWithin` fails
  /// the start (``PostgresJournalError/unreachable(location:after:)``), where postgres-nio would
  /// try again for ever. Without `takingLease` (a standby) it takes no lease: it reads, and
  /// every write is refused as a deposed leader's.
  package static func open(
    _ settings: PostgresConnectionSettings, mode: DurabilityMode, lease terms: PostgresLeaseTerms,
    takingLease: Bool = true, versions: StateVersions = [:], answerWithin limit: Duration = .seconds(10),
    initialState: () throws -> [UInt8], logger: Logger
  ) async throws -> PostgresJournal {
    let client = PostgresClient(
      configuration: settings.clientConfiguration(parameters: [
        ("synchronous_commit", mode == .strict ? "on" : "off"), ("application_name", "switchyard"),
        // A daemon cut off inside an append holds the lease row's lock: the server ends its
        // session after a lease (five seconds at least), so that a standby can take the lease.
        // Not sooner: a busy daemon between two statements of its own is not cut off, and a
        // session the server ended leaves the pool's next query on it waiting.
        ("idle_in_transaction_session_timeout", "\(Int64(max(terms.seconds, 5) * 1000))"),
      ]),
      eventLoopGroup: Self.eventLoops, backgroundLogger: logger
    )
    // Leases asked for before `run()` began wait for it, with a warning in the log: the start
    // waits until the task has begun it.
    let (started, starting) = AsyncStream<Void>.makeStream()
    let running = Task {
      starting.finish()
      await client.run()
    }
    for await _ in started {}
    do {
      // At once, not when the migration ends: a lease postgres-nio's pool is trying to connect
      // for ends only with the pool, which is closed then.
      try await Self.answer(within: limit, orThrow: { PostgresJournalError.unreachable(location: settings.location, after: limit) }) {
        try await Self.migrate(client, logger: logger)
      }
      let state = try await Self.hasID(client, logger: logger) ? nil : try initialState()
      let id = try await Self.create(client, initialState: state, versions: versions, logger: logger)
      let lease =
        takingLease
        ? try await PostgresLease.take(terms, client: client, logger: logger) : PostgresLease(holder: terms.holder, epoch: -1, terms: terms)
      let renewing = terms.renews && takingLease ? Task { await lease.renew(client: client, logger: logger) } : nil
      return PostgresJournal(
        settings: settings, client: client, mode: mode, lease: lease, id: id, tasks: [running] + (renewing.map { [$0] } ?? []),
        logger: logger
      )
    } catch {
      running.cancel()
      throw error
    }
  }

  private static func hasID(_ client: PostgresClient, logger: Logger) async throws -> Bool {
    for try await _ in try await client.query("SELECT 1 FROM journal WHERE key = 'id'", logger: logger) { return true }
    return false
  }

  /// The journal's id, after making it with its first snapshot and version mark when there is
  /// none: in one transaction, so a journal is never half made.
  private static func create(
    _ client: PostgresClient, initialState: [UInt8]?, versions: StateVersions, logger: Logger
  ) async throws -> String {
    try await Self.transaction(client, logger: logger) { connection in
      if let initialState {
        let id = UUID().uuidString.lowercased()
        let inserted = try await connection.query(
          "INSERT INTO journal (key, value) VALUES ('id', \(id)) ON CONFLICT DO NOTHING RETURNING value", logger: logger
        )
        for try await _ in inserted {
          try await connection.query(
            "INSERT INTO snapshot (seq, state) VALUES (0, \(ByteBuffer(bytes: initialState)))", logger: logger
          )
          try await connection.query(
            "INSERT INTO version_mark (seq, versions) VALUES (0, \(versions.text))", logger: logger
          )
        }
      }
      for try await id in try await connection.query("SELECT value FROM journal WHERE key = 'id'", logger: logger).decode(String.self) {
        return id
      }
      throw PostgresJournalError.noIdentity
    }
  }

  package var location: String { self.settings.location }

  /// Nothing to open: the pool connects as it needs.
  package func prepareForWriting() async throws {}

  /// Flushes the commits made with `synchronous_commit = off`: a transaction that has an id
  /// and commits with it on waits for the WAL up to its commit, every earlier commit included.
  package func sync() async throws {
    guard self.mode != .strict else { return }
    try await self.withinWriteLimit {
      try await self.transaction { connection in
        try await connection.query("SET LOCAL synchronous_commit = on", logger: self.logger)
        try await connection.query("SELECT pg_current_xact_id()", logger: self.logger)
      }
    }
  }

  /// PostgreSQL checkpoints by itself.
  package func checkpoint() async throws {}

  /// A `pg_dump` of the database is the copy: the journal makes none of its own.
  package func backup() async throws -> JournalBackup {
    throw PostgresJournalError.backupByPgDump(location: self.location)
  }

  func transaction<Result: Sendable>(
    _ body: (PostgresConnection) async throws -> Result
  ) async throws -> Result {
    try await Self.transaction(self.client, logger: self.logger, body)
  }

  /// Runs `body` in a transaction on a connection of the pool: committed when it returns,
  /// rolled back when it throws, with its error.
  static func transaction<Result: Sendable>(
    _ client: PostgresClient, logger: Logger, _ body: (PostgresConnection) async throws -> Result
  ) async throws -> Result {
    try await client.withConnection { connection in
      try await connection.query("BEGIN", logger: logger)
      do {
        let result = try await body(connection)
        try await connection.query("COMMIT", logger: logger)
        return result
      } catch {
        _ = try? await connection.query("ROLLBACK", logger: logger)
        throw error
      }
    }
  }

  func setID(_ id: String) {
    self.currentID.withLock { $0 = id }
  }
}

/// Why the PostgreSQL journal refused a call, when PostgreSQL's own error does not say it.
package enum PostgresJournalError: Error, Equatable, CustomStringConvertible {
  /// The journal is in PostgreSQL: the database is copied with `pg_dump`.
  case backupByPgDump(location: String)
  /// The database has the schema and no journal id.
  case noIdentity
  /// The server did not answer the start within the time it had.
  case unreachable(location: String, after: Duration)

  package var description: String {
    switch self {
    case let .backupByPgDump(location):
      "the journal is in PostgreSQL (\(location)): back up its database with pg_dump (pg_dump --format=custom --dbname=…), "
        + "restore it with pg_restore into an empty database"
    case .noIdentity: "the database holds the journal's tables but no journal id"
    case let .unreachable(location, limit): "PostgreSQL (\(location)) did not answer within \(limit): is it running, and reachable?"
    }
  }
}
