import Configuration
import SwitchyardJSON

/// Where settings are read from: the environment (`SWITCHYARD_LIMITS_MAX_CONNECTIONS` overrides
/// `limits.maxConnections`), then the configuration file, both under `switchyard`.
///
/// ```swift
/// var limits = ServerLimits()
/// try SettingsSource(file: file).read([ServerLimits.settings], into: &limits)
/// ```
package struct SettingsSource {
  private let config: ConfigReader
  private let file: JSONValue?
  private let environment: [String: String]
  private let featureNames: [String]

  /// - Parameter featureNames: The application's features, whose `features.NAME` settings are read.
  package init(file: ConfigurationFile?, environment: [String: String] = [:], featureNames: [String] = []) {
    var providers: [any ConfigProvider] = [EnvironmentVariablesProvider(environmentVariables: environment)]
    if let file { providers.append(file.provider) }
    self.config = ConfigReader(providers: providers).scoped(to: "switchyard")
    self.file = file?.json
    self.environment = environment
    self.featureNames = featureNames
  }

  /// Reads every setting of `sections` into `root`, whose values so far are the defaults.
  ///
  /// - Throws: ``ConfigurationError`` naming the setting at fault.
  package func read<Root>(_ sections: [SettingsSection<Root>], into root: inout Root) throws {
    for section in sections {
      let config = section.name.isEmpty ? self.config : self.config.scoped(to: ConfigKey(section.name))
      for setting in section.settings {
        let input = SettingInput(
          config: config, key: setting.key, name: setting.name, file: self.file, environment: self.environment,
          featureNames: self.featureNames
        )
        try setting.read(input, &root)
      }
    }
  }
}
