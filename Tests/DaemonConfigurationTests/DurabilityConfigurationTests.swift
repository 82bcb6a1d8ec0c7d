import Testing

@testable import SwitchyardDaemonConfiguration

/// `state.directory`, `durability.mode`, `durability.interval` and `timers.maxPending`, from the
/// environment.
@Suite struct DurabilityConfigurationTests {
  @Test func eachFeatureMayHaveTenThousandTimersPendingUnlessSetOtherwise() async throws {
    #expect(try await DaemonConfiguration.load(file: nil, environment: [:]).timersMaxPending == 10_000)
    let configured = try await DaemonConfiguration.load(file: nil, environment: ["SWITCHYARD_TIMERS_MAX_PENDING": "50"])
    #expect(configured.timersMaxPending == 50)
    await #expect {
      try await DaemonConfiguration.load(file: nil, environment: ["SWITCHYARD_TIMERS_MAX_PENDING": "0"])
    } throws: { error in
      "\(error)" == "timers.maxPending must be positive, not 0"
    }
  }

  @Test func withoutAStateDirectoryNothingIsJournaledAndStrictIsTheMode() async throws {
    let configuration = try await DaemonConfiguration.load(file: nil, environment: [:])
    #expect(configuration.stateDirectory == nil)
    #expect(configuration.durabilityMode == .strict)
    #expect(configuration.durabilityInterval == .seconds(1))
  }

  @Test func systemdsStateDirectoryIsTheDefaultAndTheSettingOverridesIt() async throws {
    let systemd = try await DaemonConfiguration.load(file: nil, environment: ["STATE_DIRECTORY": "/var/lib/switchyard:/var/lib/other"])
    #expect(systemd.stateDirectory == "/var/lib/switchyard", "the first of systemd's directories")
    let configured = try await DaemonConfiguration.load(
      file: nil,
      environment: [
        "STATE_DIRECTORY": "/var/lib/switchyard", "SWITCHYARD_STATE_DIRECTORY": "/srv/state",
        "SWITCHYARD_DURABILITY_MODE": "batched", "SWITCHYARD_DURABILITY_INTERVAL": "0.25",
      ]
    )
    #expect(configured.stateDirectory == "/srv/state")
    #expect(configured.durabilityMode == .batched)
    #expect(configured.durabilityInterval == .milliseconds(250))
  }

  @Test func snapshotsByTimeAndRetentionByAgeAreOffUnlessSet() async throws {
    let defaults = try await DaemonConfiguration.load(file: nil, environment: [:])
    #expect(defaults.journal.snapshots.interval == nil && defaults.journal.snapshots.retentionAge == nil)
    let configured = try await DaemonConfiguration.load(
      file: nil, environment: ["SWITCHYARD_SNAPSHOTS_INTERVAL": "300", "SWITCHYARD_JOURNAL_RETENTION_AGE": "86400"]
    )
    #expect(configured.journal.snapshots.interval == .seconds(300) && configured.journal.snapshots.retentionAge == .seconds(86400))
  }

  @Test(arguments: [
    ("SWITCHYARD_DURABILITY_MODE", "always", "durability.mode must be one of strict, batched, off, not always"),
    ("SWITCHYARD_DURABILITY_INTERVAL", "0", "durability.interval must be a number of seconds in (0, 86400], not 0.0"),
    ("SWITCHYARD_SNAPSHOTS_INTERVAL", "-1", "snapshots.interval must be 0 (none) or a number of seconds, not -1.0"),
    ("SWITCHYARD_JOURNAL_RETENTION_AGE", "-5", "journal.retentionAge must be 0 (none) or a number of seconds, not -5.0"),
  ])
  func invalidSettingsAreRefusedByName(_ variable: String, _ value: String, _ message: String) async throws {
    await #expect {
      try await DaemonConfiguration.load(file: nil, environment: [variable: value])
    } throws: { error in
      "\(error)" == message
    }
  }
}
