import SwitchyardJournal
import SwitchyardSettings
import Testing

/// `durability.*`, `snapshots.*`, `journal.*` and `timers.*` are the journal's own sections,
/// read into `JournalConfiguration`.
@Suite struct JournalSettingsTests {
  @Test func theSectionsReadTheirKeys() throws {
    var journal = JournalConfiguration()
    let source = SettingsSource(file: nil, environment: [
      "SWITCHYARD_DURABILITY_MODE": "batched", "SWITCHYARD_DURABILITY_INTERVAL": "2",
      "SWITCHYARD_SNAPSHOTS_EVERY": "50", "SWITCHYARD_SNAPSHOTS_KEEP": "3", "SWITCHYARD_SNAPSHOTS_INTERVAL": "60",
      "SWITCHYARD_JOURNAL_RETENTION": "0", "SWITCHYARD_JOURNAL_RETENTION_AGE": "3600",
      "SWITCHYARD_TIMERS_MAX_PENDING": "100",
    ])
    try source.read(JournalConfiguration.settings, into: &journal)
    #expect(journal.mode == .batched)
    #expect(journal.interval == .seconds(2))
    #expect(journal.snapshots == SnapshotPolicy(every: 50, interval: .seconds(60), keep: 3, retention: 0, retentionAge: .seconds(3600)))
    #expect(journal.timersMaxPending == 100)
  }

  @Test func thePostgreSQLEngineIsChosenWithItsDatabaseAndLease() throws {
    var journal = JournalConfiguration()
    #expect(journal.engine == .sqlite, "SQLite by default")
    let source = SettingsSource(file: nil, environment: [
      "SWITCHYARD_JOURNAL_ENGINE": "postgresql", "SWITCHYARD_JOURNAL_POSTGRESQL": "host=/run/postgresql dbname=switchyard",
      "SWITCHYARD_JOURNAL_LEASE_HOLDER": "node-a", "SWITCHYARD_JOURNAL_LEASE_DURATION": "2.5",
    ])
    try source.read(JournalConfiguration.settings, into: &journal)
    #expect(journal.engine == .postgresql)
    #expect(journal.postgresql?.value == "host=/run/postgresql dbname=switchyard")
    #expect("\(journal.postgresql!)" == "(secret)", "never shown")
    #expect(journal.leaseHolder == "node-a")
    #expect(journal.leaseDuration == .milliseconds(2500))
  }

  @Test func aBadValueIsRejectedWithItsKey() throws {
    var journal = JournalConfiguration()
    let source = SettingsSource(file: nil, environment: ["SWITCHYARD_SNAPSHOTS_INTERVAL": "-1"])
    let error = try #require(throws: ConfigurationError.self) { try source.read(JournalConfiguration.settings, into: &journal) }
    #expect(error.key == "snapshots.interval")
    #expect(error.description == "snapshots.interval must be 0 (none) or a number of seconds, not -1.0")
  }
}
