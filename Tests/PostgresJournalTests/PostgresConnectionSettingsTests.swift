import SwitchyardPostgresJournal
import Testing

/// `journal.postgresql`, as a URL or as libpq's parameters.
@Suite struct PostgresConnectionSettingsTests {
  @Test func aURLNamesTheServerTheUserTheDatabaseAndTheTLSMode() throws {
    let settings = try PostgresConnectionSettings(parsing: "postgresql://journal:s3cret@db.internal:6432/switchyard?sslmode=verify-full")
    #expect(settings == PostgresConnectionSettings(
      host: "db.internal", port: 6432, user: "journal", password: "s3cret", database: "switchyard", tls: .verifyFull
    ))
    #expect(settings.location == "postgresql://db.internal:6432/switchyard", "never the password")
    #expect(try PostgresConnectionSettings(parsing: "postgres://u@h/d").tls == .prefer, "TLS when offered, over TCP")
  }

  @Test func libpqParametersMayNameASocketDirectoryAndQuoteValues() throws {
    let settings = try PostgresConnectionSettings(parsing: "host=/run/postgresql  dbname=journal user=switchyard password='a b\\'c'")
    #expect(settings.isUnixSocket)
    #expect(settings.socketPath == "/run/postgresql/.s.PGSQL.5432")
    #expect(settings.password == "a b'c")
    #expect(settings.tls == .disable)
    #expect(try PostgresConnectionSettings(parsing: "postgresql://%2Frun%2Fpostgresql/journal").socketPath == "/run/postgresql/.s.PGSQL.5432")
  }

  @Test(arguments: ["host=h port=99999", "host=h sslmode=sometimes", "host=h colour=blue", "mysql://h/d", "host", "password='open"])
  func whatCannotBeReadIsRefusedWithAReason(_ text: String) {
    #expect(throws: PostgresConnectionSettingsError.self) { try PostgresConnectionSettings(parsing: text) }
  }
}
