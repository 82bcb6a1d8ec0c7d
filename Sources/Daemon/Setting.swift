import Configuration
import SwitchyardJSON

/// One setting of the configuration: its key, how it is read and checked, and whether a reload
/// may change it. Loading and the reload's comparison both go through it, so a key is spelled
/// once.
///
/// ```swift
/// Setting.positive("maxConnections", \.maximumConnections, reloadable: true)  // limits.maxConnections
/// ```
struct Setting {
  /// The section the setting is in (`limits`), whose scoped reader reads it; empty for a
  /// setting read from the whole configuration.
  var section = ""
  /// Its name within the section (`maxConnections`).
  let name: String
  /// Whether a reload applies a new value; otherwise the running value is kept until a restart.
  let reloadable: Bool
  /// Reads the setting into a configuration.
  var read: (SettingInput, inout DaemonConfiguration) throws -> Void
  /// The running value and the new one, as text, when they differ.
  let change: (_ current: DaemonConfiguration, _ new: DaemonConfiguration) -> (old: String, new: String)?
  /// Takes the new value in place of the running one.
  let adopt: (_ current: inout DaemonConfiguration, _ new: DaemonConfiguration) -> Void

  /// The whole key: `limits.maxConnections`.
  var key: String {
    self.section.isEmpty ? self.name : "\(self.section).\(self.name)"
  }

  /// A setting held at `path`: `read` gets the value so far (the default) and returns the one read.
  init<Value: Equatable>(
    _ name: String,
    _ path: WritableKeyPath<DaemonConfiguration, Value>,
    reloadable: Bool,
    read: @escaping (SettingInput, Value) throws -> Value
  ) {
    self.name = name
    self.reloadable = reloadable
    self.read = { input, configuration in configuration[keyPath: path] = try read(input, configuration[keyPath: path]) }
    self.change = { current, new in
      current[keyPath: path] == new[keyPath: path] ? nil : ("\(current[keyPath: path])", "\(new[keyPath: path])")
    }
    self.adopt = { current, new in current[keyPath: path] = new[keyPath: path] }
  }
}

/// What a setting reads from: the reader scoped to its section, and what the reader cannot give.
struct SettingInput {
  /// Scoped to the setting's section: `config.int(forKey: name)`.
  let config: ConfigReader
  /// The setting's whole key, for messages.
  let key: String
  /// Its name within the section, the key `config` reads.
  let name: String
  /// The configuration file, parsed (for the settings that are objects: access rules, features).
  let file: JSONValue?
  let environment: [String: String]
  /// The application's features, whose `features.NAME` settings are read.
  let featureNames: [String]
}

extension SettingInput {
  /// The setting's name as the scoped reader's key.
  var configKey: ConfigKey { ConfigKey(self.name) }
}

extension Setting {
  /// A whole number above zero.
  static func positive(_ name: String, _ path: WritableKeyPath<DaemonConfiguration, Int>, reloadable: Bool) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.int(forKey: input.configKey, default: value)
      guard read > 0 else { throw ConfigurationError.invalidValue(input.key, mustBe: "positive", not: read) }
      return read
    }
  }

  /// A whole number, zero or above.
  static func nonNegative(_ name: String, _ path: WritableKeyPath<DaemonConfiguration, Int>, reloadable: Bool) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.int(forKey: input.configKey, default: value)
      guard read >= 0 else { throw ConfigurationError.invalidValue(input.key, mustBe: "0 or more", not: read) }
      return read
    }
  }

  /// A number of seconds in `range` (the lower bound excluded), written as `expectation` in errors.
  static func seconds(
    _ name: String, _ path: WritableKeyPath<DaemonConfiguration, Duration>, reloadable: Bool,
    upTo limit: Double? = 86_400, expectation: String = "a number of seconds in (0, 86400]"
  ) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.double(forKey: input.configKey, default: value.seconds)
      guard read > 0, read <= (limit ?? .infinity) else { throw ConfigurationError.invalidValue(input.key, mustBe: expectation, not: read) }
      return .milliseconds(Int64(read * 1000))
    }
  }

  /// A number of seconds where 0 means none.
  static func optionalSeconds(_ name: String, _ path: WritableKeyPath<DaemonConfiguration, Duration?>, reloadable: Bool) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.double(forKey: input.configKey, default: value?.seconds ?? 0)
      guard read >= 0, read.isFinite else {
        throw ConfigurationError.invalidValue(input.key, mustBe: "0 (none) or a number of seconds", not: read)
      }
      return read == 0 ? nil : .milliseconds(Int64(read * 1000))
    }
  }

  /// One of the names of `Value`'s cases.
  static func choice<Value: RawRepresentable<String> & CaseIterable & Equatable>(
    _ name: String, _ path: WritableKeyPath<DaemonConfiguration, Value>, reloadable: Bool
  ) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.string(forKey: input.configKey, default: value.rawValue)
      guard let chosen = Value(rawValue: read) else {
        let names = Value.allCases.map(\.rawValue).joined(separator: ", ")
        throw ConfigurationError.invalidValue(input.key, mustBe: "one of \(names)", not: read)
      }
      return chosen
    }
  }
}

extension Duration {
  /// The duration in seconds, as the configuration writes it.
  fileprivate var seconds: Double {
    Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18
  }
}
