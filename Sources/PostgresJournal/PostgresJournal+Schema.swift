import Logging
import PostgresNIO

/// The journal's schema in PostgreSQL, one migration a version, applied in order when the journal
/// is opened: under a transaction-level advisory lock, so that daemons opening one database at
/// once apply each migration once.
extension PostgresJournal {
  /// Each migration's name and statements. A name once released is never changed: a database
  /// records the names it has applied.
  static let migrations: [(name: String, statements: [String])] = [
    (
      "v1",
      [
        "CREATE TABLE journal (key text PRIMARY KEY, value text NOT NULL)",
        // seq is given by the one writer, `last_seq + 1` of the lease, inside its transaction: a
        // primary key, no sequence, so seq order is commit order and has no gaps.
        """
        CREATE TABLE change (
          seq bigint PRIMARY KEY, feature text, origin text, action bytea, uid bigint, pid bigint,
          patch bytea NOT NULL, time double precision NOT NULL, dependencies bytea
        )
        """,
        "CREATE TABLE snapshot (seq bigint PRIMARY KEY, state bytea NOT NULL)",
        """
        CREATE TABLE timer (
          feature text NOT NULL, key text NOT NULL, ids text[] NOT NULL, deadline double precision NOT NULL,
          action bytea NOT NULL, scheduled bigint GENERATED ALWAYS AS IDENTITY, PRIMARY KEY (feature, key)
        )
        """,
        "CREATE TABLE version_mark (seq bigint PRIMARY KEY, versions text NOT NULL)",
        "CREATE TABLE history (id text PRIMARY KEY, last_seq bigint NOT NULL, reason text NOT NULL, time double precision NOT NULL)",
        // The one leader: who holds the lease, its epoch (one more at each taking), until when
        // by the server's clock, and the last seq appended, which every append moves on.
        """
        CREATE TABLE lease (
          id int PRIMARY KEY CHECK (id = 1), holder text NOT NULL, epoch bigint NOT NULL,
          expires_at timestamptz NOT NULL, last_seq bigint NOT NULL
        )
        """,
        "INSERT INTO lease (id, holder, epoch, expires_at, last_seq) VALUES (1, '', 0, '-infinity', 0)",
      ]
    ),
    // The client certificate's name, for a request that came over TLS.
    ("certificate-identities", ["ALTER TABLE change ADD COLUMN certificate text"]),
    // The cluster: where clients reach the leader, and the members' rows.
    (
      "cluster-members",
      [
        // Where clients reach the leader: a standby names it when it refuses a `Send`.
        "ALTER TABLE lease ADD COLUMN address text NOT NULL DEFAULT ''",
        // Every daemon sharing the journal, as it last said: its role, the seq it reflects and
        // how far behind the leader's commits it applied the last change.
        """
        CREATE TABLE member (
          holder text PRIMARY KEY, address text NOT NULL, role text NOT NULL, seq bigint NOT NULL,
          lag_ms double precision NOT NULL, seen timestamptz NOT NULL
        )
        """,
      ]
    ),
  ]

  /// A key for `pg_advisory_xact_lock` that this schema's migrations take.
  private static let migrationLock: Int64 = 0x5357_4A4F_5552_4E4C

  static func migrate(_ client: PostgresClient, logger: Logger) async throws {
    try await client.withConnection { connection in
      try await connection.query("BEGIN", logger: logger)
      do {
        try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
        try await connection.query(
          "CREATE TABLE IF NOT EXISTS switchyard_migration (name text PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())",
          logger: logger
        )
        var applied: Set<String> = []
        for try await name in try await connection.query("SELECT name FROM switchyard_migration", logger: logger).decode(String.self) {
          applied.insert(name)
        }
        for migration in Self.migrations where !applied.contains(migration.name) {
          for statement in migration.statements {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
          }
          try await connection.query("INSERT INTO switchyard_migration (name) VALUES (\(migration.name))", logger: logger)
        }
        try await connection.query("COMMIT", logger: logger)
      } catch {
        _ = try? await connection.query("ROLLBACK", logger: logger)
        throw error
      }
    }
  }
}
