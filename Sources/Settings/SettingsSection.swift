/// The settings of one section of the configuration (`limits`, `supervision`…), declared by the
/// part they configure; the daemon pulls each back into its own configuration and reads them all.
///
/// ```swift
/// extension ServerLimits {
///   package static var settings: SettingsSection<Self> {
///     SettingsSection("limits", .positive("maxConnections", \.maximumConnections, reloadable: true))
///   }
/// }
/// let section = ServerLimits.settings.pullback(\DaemonConfiguration.limits)
/// ```
package struct SettingsSection<Root> {
  /// The section's name, the first component of its settings' keys; empty for settings read
  /// from the whole configuration.
  package let name: String
  /// Its settings, in the order they are read.
  package let settings: [Setting<Root>]

  package init(_ name: String, _ settings: Setting<Root>...) {
    self.init(name, settings)
  }

  package init(_ name: String, _ settings: [Setting<Root>]) {
    self.name = name
    self.settings = settings.map { setting in
      var setting = setting
      setting.section = name
      return setting
    }
  }

  /// The same section of a configuration that holds `Root` at `path`.
  package func pullback<Parent>(_ path: WritableKeyPath<Parent, Root>) -> SettingsSection<Parent> {
    SettingsSection<Parent>(self.name, self.settings.map { $0.pullback(path) })
  }
}
