import SwitchyardSettings

extension MetricsConfiguration {
  /// `metrics.*`: the endpoint is bound once, at start, so neither changes before a restart.
  package static var settings: SettingsSection<Self> {
    SettingsSection("metrics", Self.listen(\.listen), .seconds("requestTimeout", \.requestTimeout, reloadable: false))
  }

  /// `http.listen`: the endpoint's address under the name that fits all it serves (the metrics
  /// and the inspector); `metrics.listen` stays its other name, and gives way to it.
  /// `http.inspector`: where the inspector is served. `http.inspectorSend`: whether its page
  /// may send actions, as the policy lets the identity `inspector`.
  package static var httpSettings: SettingsSection<Self> {
    SettingsSection(
      "http", Self.listen(\.httpListen), .choice("inspector", \.inspector, reloadable: false),
      .choice("inspectorSend", \.inspectorSend, reloadable: true)
    )
  }

  /// The endpoint's address, in whichever section; an error names the key it was read from.
  private static func listen(_ path: WritableKeyPath<Self, MetricsAddress?>) -> Setting<Self> {
    Setting("listen", path, reloadable: false) { input, value in
      guard let listen = input.config.string(forKey: input.configKey), !listen.isEmpty else { return value }
      return try MetricsAddress(parsing: listen, key: input.key)
    }
  }
}
