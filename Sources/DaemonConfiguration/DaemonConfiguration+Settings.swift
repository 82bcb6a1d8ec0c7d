import Configuration
import Foundation
import SwitchyardAccess
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardServer
import SwitchyardSettings
import SwitchyardWorkers

extension DaemonConfiguration {
  /// Every section, in the order they are read: the daemon's own and each part's, pulled back
  /// into this configuration. The defaults are the values' initial ones.
  package static var sections: [SettingsSection<Self>] {
    var sections: [SettingsSection<Self>] = [
      SettingsSection(
        "socket",
        Setting("path", \.socketPath, reloadable: false) { input, value in input.config.string(forKey: input.configKey, default: value) },
        Setting("mode", \.socketMode, reloadable: false) { input, value in
          let mode = input.config.string(forKey: input.configKey, default: String(value, radix: 8))
          guard let read = mode_t(mode, radix: 8), read <= 0o777 else {
            throw ConfigurationError.invalidValue(input.key, mustBe: "octal permission bits such as 0660", not: mode)
          }
          return read
        }
      ),
      ServerLimits.settings.pullback(\.limits),
      TLSSettings.settings.pullback(\.tls),
      SettingsSection(
        "subscriptions",
        .positive("queueLimit", \.subscriptionQueueLimit, reloadable: true),
        .positive("historyLimit", \.historyLimit, reloadable: true),
        .positive("historyBytes", \.historyBytes, reloadable: true)
      ),
      SettingsSection("log", .choice("level", \.logLevel, reloadable: true)),
      SupervisionConfiguration.settings.pullback(\.supervision),
      SettingsSection(
        "state",
        Setting("directory", \.stateDirectory, reloadable: false) { input, _ in
          // systemd's StateDirectory= sets $STATE_DIRECTORY (a list when there are several; the
          // first is the daemon's).
          let systemd = input.environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
          let directory = input.config.string(forKey: input.configKey) ?? systemd
          return directory == "" ? nil : directory
        }
      ),
    ]
    sections += JournalConfiguration.settings.map { $0.pullback(\.journal) }
    sections += [
      MetricsConfiguration.settings.pullback(\.metrics),
      MetricsConfiguration.httpSettings.pullback(\.metrics),
      SettingsSection("", .features),
      AccessPolicy.settings.pullback(\.access),
    ]
    return sections
  }

  /// Every setting, section by section, in the order they are read.
  package static var settings: [Setting<Self>] {
    Self.sections.flatMap(\.settings)
  }
}

extension Setting<DaemonConfiguration> {
  /// `features.NAME.isolation` and `features.NAME.restart`, for each of the application's
  /// features (names known only at run time, so read from the unscoped reader); the file's
  /// other features are noted in `unknownFeatures`.
  fileprivate static var features: Self {
    var setting = Self("features", \.features, reloadable: false) { input, _ in
      var features: [String: DaemonConfiguration.FeatureSettings] = [:]
      for name in input.featureNames {
        var settings = DaemonConfiguration.FeatureSettings()
        if let isolation = input.config.string(forKey: ConfigKey([input.name, name, "isolation"])) {
          guard let value = FeatureIsolation(rawValue: isolation) else {
            throw ConfigurationError.invalidValue("\(input.key).\(name).isolation", mustBe: "actor or process", not: isolation)
          }
          settings.isolation = value
        }
        if let restart = input.config.string(forKey: ConfigKey([input.name, name, "restart"])) {
          guard let value = RestartPolicy(rawValue: restart) else {
            throw ConfigurationError.invalidValue("\(input.key).\(name).restart", mustBe: "permanent, transient or temporary", not: restart)
          }
          settings.restart = value
        }
        if settings != DaemonConfiguration.FeatureSettings() { features[name] = settings }
      }
      return features
    }
    let readFeatures = setting.read
    setting.read = { input, configuration in
      try readFeatures(input, &configuration)
      if case let .object(named)? = input.file?["switchyard"]?["features"] {
        configuration.unknownFeatures = named.keys.filter { !input.featureNames.contains($0) }.sorted()
      }
    }
    return setting
  }
}
