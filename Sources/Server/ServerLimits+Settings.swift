import SwitchyardSettings

extension ServerLimits {
  /// `limits.*`: each applies to the next connection and, for the timeouts, at the next check of
  /// every open one, so a reload may change them all.
  package static var settings: SettingsSection<Self> {
    SettingsSection(
      "limits",
      .positive("maxMessageBytes", \.maximumMessageBytes, reloadable: true),
      .positive("maxConnections", \.maximumConnections, reloadable: true),
      .positive("maxQueuedCalls", \.maximumQueuedCalls, reloadable: true),
      .positive("maxUnwrittenBytes", \.maximumUnwrittenBytes, reloadable: true),
      .seconds("frameTimeout", \.frameTimeout, reloadable: true),
      .seconds("idleTimeout", \.idleTimeout, reloadable: true)
    )
  }
}
