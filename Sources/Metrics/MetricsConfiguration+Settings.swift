import SwitchyardSettings

extension MetricsConfiguration {
  /// `metrics.*`: the endpoint is bound once, at start, so neither changes before a restart.
  package static var settings: SettingsSection<Self> {
    SettingsSection("metrics", Self.listen, .seconds("requestTimeout", \.requestTimeout, reloadable: false))
  }

  /// `http.listen`: the endpoint's address under the name that fits all it serves (the metrics
  /// and the inspector); read after `metrics.listen`, which stays its other name, and wins over it.
  package static var httpSettings: SettingsSection<Self> {
    SettingsSection("http", Self.listen)
  }

  /// The endpoint's address, in whichever section; an error names the key it was read from.
  private static var listen: Setting<Self> {
    Setting("listen", \.listen, reloadable: false) { input, value in
      guard let listen = input.config.string(forKey: input.configKey), !listen.isEmpty else { return value }
      return try MetricsAddress(parsing: listen, key: input.key)
    }
  }
}
