import SwitchyardSettings

extension SupervisionConfiguration {
  /// `supervision.*`: the supervisor is built once, at start, so none changes before a restart.
  package static var settings: SettingsSection<Self> {
    SettingsSection(
      "supervision",
      .choice("strategy", \.strategy, reloadable: false),
      .nonNegative("intensity", \.intensity, reloadable: false),
      .seconds("period", \.period, reloadable: false, upTo: nil, expectation: "a positive number of seconds"),
      .seconds("probeTimeout", \.probeTimeout, reloadable: false, upTo: 3600, expectation: "a number of seconds in (0, 3600]")
    )
  }
}
