import Configuration
import SwitchyardJSON

/// One setting of a part's configuration `Root`: its key, how it is read and checked, and
/// whether a reload may change it. Loading and the reload's comparison both go through it, so a
/// key is spelled once.
///
/// ```swift
/// Setting.positive("maxConnections", \ServerLimits.maximumConnections, reloadable: true)
/// ```
package struct Setting<Root> {
  /// The section the setting is in (`limits`), whose scoped reader reads it; empty for a
  /// setting read from the whole configuration.
  package var section = ""
  /// Its name within the section (`maxConnections`).
  package let name: String
  /// Whether a reload applies a new value; otherwise the running value is kept until a restart.
  package let reloadable: Bool
  /// Reads the setting into a configuration.
  package var read: (SettingInput, inout Root) throws -> Void
  /// The running value and the new one, as text, when they differ.
  package let change: (_ current: Root, _ new: Root) -> (old: String, new: String)?
  /// Takes the new value in place of the running one.
  package let adopt: (_ current: inout Root, _ new: Root) -> Void

  /// The whole key: `limits.maxConnections`.
  package var key: String {
    self.section.isEmpty ? self.name : "\(self.section).\(self.name)"
  }

  /// A setting held at `path`: `read` gets the value so far (the default) and returns the one read.
  package init<Value: Equatable>(
    _ name: String,
    _ path: WritableKeyPath<Root, Value>,
    reloadable: Bool,
    read: @escaping (SettingInput, Value) throws -> Value
  ) {
    self.name = name
    self.reloadable = reloadable
    self.read = { input, root in root[keyPath: path] = try read(input, root[keyPath: path]) }
    self.change = { current, new in
      current[keyPath: path] == new[keyPath: path] ? nil : ("\(current[keyPath: path])", "\(new[keyPath: path])")
    }
    self.adopt = { current, new in current[keyPath: path] = new[keyPath: path] }
  }

  private init(
    section: String, name: String, reloadable: Bool, read: @escaping (SettingInput, inout Root) throws -> Void,
    change: @escaping (Root, Root) -> (old: String, new: String)?, adopt: @escaping (inout Root, Root) -> Void
  ) {
    self.section = section
    self.name = name
    self.reloadable = reloadable
    self.read = read
    self.change = change
    self.adopt = adopt
  }

  /// The same setting of a configuration that holds `Root` at `path`, as TCA's `Scope` runs a
  /// child's reducer on its part of the parent's state.
  package func pullback<Parent>(_ path: WritableKeyPath<Parent, Root>) -> Setting<Parent> {
    let (read, change, adopt) = (self.read, self.change, self.adopt)
    return Setting<Parent>(
      section: self.section, name: self.name, reloadable: self.reloadable,
      read: { input, parent in try read(input, &parent[keyPath: path]) },
      change: { current, new in change(current[keyPath: path], new[keyPath: path]) },
      adopt: { current, new in adopt(&current[keyPath: path], new[keyPath: path]) }
    )
  }
}

/// What a setting reads from: the reader scoped to its section, and what the reader cannot give.
package struct SettingInput {
  /// Scoped to the setting's section: `config.int(forKey: name)`.
  package let config: ConfigReader
  /// The setting's whole key, for messages.
  package let key: String
  /// Its name within the section, the key `config` reads.
  package let name: String
  /// The configuration file, parsed (for the settings that are objects: access rules, features).
  package let file: JSONValue?
  package let environment: [String: String]
  /// The application's features, whose `features.NAME` settings are read.
  package let featureNames: [String]

  /// The setting's name as the scoped reader's key.
  package var configKey: ConfigKey { ConfigKey(self.name) }
}
