import SwitchyardSettings
import SwitchyardWorkers
import Testing

/// `supervision.*` is the supervisor's own section, read into `SupervisionConfiguration`.
@Suite struct SupervisionSettingsTests {
  @Test func theSectionReadsItsKeys() throws {
    var supervision = SupervisionConfiguration()
    let source = SettingsSource(file: nil, environment: [
      "SWITCHYARD_SUPERVISION_STRATEGY": "rest_for_one", "SWITCHYARD_SUPERVISION_INTENSITY": "0",
      "SWITCHYARD_SUPERVISION_PERIOD": "90000", "SWITCHYARD_SUPERVISION_PROBE_TIMEOUT": "0.5",
    ])
    try source.read([SupervisionConfiguration.settings], into: &supervision)
    #expect(supervision.strategy == .restForOne)
    #expect(supervision.intensity == 0)
    #expect(supervision.period == .seconds(90_000), "the period has no upper bound")
    #expect(supervision.probeTimeout == .milliseconds(500))
    #expect(!SupervisionConfiguration.settings.settings.contains { $0.reloadable }, "the supervisor is built once")
  }

  @Test func aBadValueIsRejectedWithItsKey() throws {
    var supervision = SupervisionConfiguration()
    let source = SettingsSource(file: nil, environment: ["SWITCHYARD_SUPERVISION_STRATEGY": "all_at_once"])
    let error = try #require(throws: ConfigurationError.self) {
      try source.read([SupervisionConfiguration.settings], into: &supervision)
    }
    #expect(error.key == "supervision.strategy")
    #expect(error.description == "supervision.strategy must be one of one_for_one, one_for_all, rest_for_one, not all_at_once")
  }
}
