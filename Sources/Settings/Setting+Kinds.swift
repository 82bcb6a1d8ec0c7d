import Configuration

extension Setting {
  /// A whole number above zero.
  package static func positive(_ name: String, _ path: WritableKeyPath<Root, Int>, reloadable: Bool) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.int(forKey: input.configKey, default: value)
      guard read > 0 else { throw ConfigurationError.invalidValue(input.key, mustBe: "positive", not: read) }
      return read
    }
  }

  /// A whole number, zero or above.
  package static func nonNegative(_ name: String, _ path: WritableKeyPath<Root, Int>, reloadable: Bool) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.int(forKey: input.configKey, default: value)
      guard read >= 0 else { throw ConfigurationError.invalidValue(input.key, mustBe: "0 or more", not: read) }
      return read
    }
  }

  /// A number of seconds in `range` (the lower bound excluded), written as `expectation` in errors.
  package static func seconds(
    _ name: String, _ path: WritableKeyPath<Root, Duration>, reloadable: Bool,
    upTo limit: Double? = 86_400, expectation: String = "a number of seconds in (0, 86400]"
  ) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.double(forKey: input.configKey, default: value.seconds)
      guard read > 0, read <= (limit ?? .infinity) else { throw ConfigurationError.invalidValue(input.key, mustBe: expectation, not: read) }
      return .milliseconds(Int64(read * 1000))
    }
  }

  /// A number of seconds where 0 means none.
  package static func optionalSeconds(_ name: String, _ path: WritableKeyPath<Root, Duration?>, reloadable: Bool) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.double(forKey: input.configKey, default: value?.seconds ?? 0)
      guard read >= 0, read.isFinite else {
        throw ConfigurationError.invalidValue(input.key, mustBe: "0 (none) or a number of seconds", not: read)
      }
      return read == 0 ? nil : .milliseconds(Int64(read * 1000))
    }
  }

  /// Text where empty means none.
  package static func optionalText(_ name: String, _ path: WritableKeyPath<Root, String?>, reloadable: Bool) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.string(forKey: input.configKey, default: value ?? "")
      return read.isEmpty ? nil : read
    }
  }

  /// Text that may hold a password, where empty means none: kept out of the configuration's
  /// access log and of the reload's messages.
  package static func secret(_ name: String, _ path: WritableKeyPath<Root, SecretText?>, reloadable: Bool) -> Self {
    Self(name, path, reloadable: reloadable) { input, value in
      let read = input.config.string(forKey: input.configKey, isSecret: true, default: value?.value ?? "")
      return read.isEmpty ? nil : SecretText(read)
    }
  }

  /// One of the names of `Value`'s cases.
  package static func choice<Value: RawRepresentable<String> & CaseIterable & Equatable>(
    _ name: String, _ path: WritableKeyPath<Root, Value>, reloadable: Bool
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

/// A setting's text that the logs must not show (a password in a connection URL): compared as
/// text, described as `(secret)`.
package struct SecretText: Sendable, Equatable, CustomStringConvertible {
  package let value: String

  package init(_ value: String) {
    self.value = value
  }

  package var description: String { "(secret)" }
}
