import Configuration
import Foundation
import Logging
import SwitchyardAccess
import SwitchyardJournal
import SwitchyardRuntime
import SwitchyardWorkers

extension DaemonConfiguration {
  /// Every setting, section by section, in the order they are read; the defaults are the
  /// properties' initial values.
  static var settings: [Setting] {
    let sections: [[Setting]] = [
      section(
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
      section(
        "limits",
        .positive("maxMessageBytes", \.maximumMessageBytes, reloadable: true),
        .positive("maxConnections", \.maximumConnections, reloadable: true),
        .positive("maxQueuedCalls", \.maximumQueuedCalls, reloadable: true),
        .positive("maxUnwrittenBytes", \.maximumUnwrittenBytes, reloadable: true),
        .seconds("frameTimeout", \.frameTimeout, reloadable: true),
        .seconds("idleTimeout", \.idleTimeout, reloadable: true)
      ),
      section(
        "subscriptions",
        .positive("queueLimit", \.subscriptionQueueLimit, reloadable: true),
        .positive("historyLimit", \.historyLimit, reloadable: true),
        .positive("historyBytes", \.historyBytes, reloadable: true)
      ),
      section("log", .choice("level", \.logLevel, reloadable: true)),
      section(
        "supervision",
        .choice("strategy", \.supervision.strategy, reloadable: false),
        .nonNegative("intensity", \.supervision.intensity, reloadable: false),
        .seconds("period", \.supervision.period, reloadable: false, upTo: nil, expectation: "a positive number of seconds"),
        .seconds("probeTimeout", \.supervision.probeTimeout, reloadable: false, upTo: 3600, expectation: "a number of seconds in (0, 3600]")
      ),
      section(
        "state",
        Setting("directory", \.stateDirectory, reloadable: false) { input, _ in
          // systemd's StateDirectory= sets $STATE_DIRECTORY (a list when there are several; the
          // first is the daemon's).
          let systemd = input.environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
          let directory = input.config.string(forKey: input.configKey) ?? systemd
          return directory == "" ? nil : directory
        }
      ),
      section(
        "durability",
        .choice("mode", \.durabilityMode, reloadable: false),
        .seconds("interval", \.durabilityInterval, reloadable: false)
      ),
      section(
        "snapshots",
        .positive("every", \.snapshots.every, reloadable: false),
        .positive("keep", \.snapshots.keep, reloadable: false),
        .optionalSeconds("interval", \.snapshots.interval, reloadable: false)
      ),
      section(
        "journal",
        .nonNegative("retention", \.snapshots.retention, reloadable: false),
        .optionalSeconds("retentionAge", \.snapshots.retentionAge, reloadable: false)
      ),
      section("timers", .positive("maxPending", \.timersMaxPending, reloadable: false)),
      section(
        "metrics",
        Setting("listen", \.metricsListen, reloadable: false) { input, value in
          guard let listen = input.config.string(forKey: input.configKey), !listen.isEmpty else { return value }
          return try MetricsAddress(parsing: listen)
        },
        .seconds("requestTimeout", \.metricsRequestTimeout, reloadable: false)
      ),
      [Setting.features, Setting.access],
    ]
    return sections.flatMap { $0 }
  }

  private static func section(_ name: String, _ settings: Setting...) -> [Setting] {
    settings.map { setting in
      var setting = setting
      setting.section = name
      return setting
    }
  }
}

extension Setting {
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

  /// `access.rules`: a list of objects, which the reader has no accessor for, read from the
  /// parsed file.
  fileprivate static var access: Self {
    var setting = Self("rules", \.access, reloadable: true) { input, value in
      guard let file = input.file else { return value }
      do {
        return try AccessPolicy.load(from: file)
      } catch let error as AccessConfigurationError {
        throw ConfigurationError(.invalidAccessRule, key: input.key, error.description)
      }
    }
    setting.section = "access"
    return setting
  }
}
