import SwitchyardSettings

extension MetricsConfiguration {
  /// `metrics.*`: the endpoint is bound once, at start, so neither changes before a restart.
  package static var settings: SettingsSection<Self> {
    SettingsSection(
      "metrics",
      Setting("listen", \.listen, reloadable: false) { input, value in
        guard let listen = input.config.string(forKey: input.configKey), !listen.isEmpty else { return value }
        return try MetricsAddress(parsing: listen)
      },
      .seconds("requestTimeout", \.requestTimeout, reloadable: false)
    )
  }
}
