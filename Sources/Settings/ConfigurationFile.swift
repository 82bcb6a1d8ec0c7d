import Configuration
import Foundation
import SwitchyardJSON

/// The configuration file, read and parsed once: the settings' reader and the access rules
/// (objects the reader has no accessor for) both read this one value.
package struct ConfigurationFile: Sendable {
  package let path: String
  package let json: JSONValue

  /// Reads and parses the file at `path`.
  ///
  /// - Throws: ``ConfigurationError`` with the code `unreadableFile` or `invalidFile`.
  package init(path: String) throws {
    let bytes: Data
    do {
      bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
      throw ConfigurationError(.unreadableFile, key: path, "\(path) cannot be read: \(error.localizedDescription)")
    }
    do {
      self.json = try JSONValue(parsing: Array(bytes))
    } catch {
      throw ConfigurationError(.invalidFile, key: path, "\(path) is not valid JSON: \(error)")
    }
    guard case .object = self.json else {
      throw ConfigurationError(.invalidFile, key: path, "\(path) must hold a JSON object")
    }
    self.path = path
  }

  /// The file as a provider for swift-configuration's `ConfigReader`.
  package var provider: some ConfigProvider {
    JSONValueProvider(name: self.path, root: self.json)
  }
}

/// A `ConfigProvider` over a parsed JSON document: a key's components walk its objects. A number
/// reads as an `Int` when it is whole and as a `Double` always, as swift-configuration's own JSON
/// file provider reads it.
struct JSONValueProvider: ConfigProvider {
  let name: String
  let root: JSONValue

  var providerName: String { "JSONValueProvider[\(self.name)]" }

  func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
    let encodedKey = key.components.joined(separator: ".")
    var node = self.root
    for component in key.components {
      guard let child = node[component] else { return LookupResult(encodedKey: encodedKey, value: nil) }
      node = child
    }
    if node.isNull { return LookupResult(encodedKey: encodedKey, value: nil) }
    guard let content = Self.content(node, as: type) else {
      throw ConfigurationError.invalidValue(encodedKey, mustBe: "a value of type \(type)", not: node)
    }
    return LookupResult(encodedKey: encodedKey, value: ConfigValue(content, isSecret: false))
  }

  func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
    try self.value(forKey: key, type: type)
  }

  nonisolated(nonsending) func watchValue<Return: ~Copyable>(
    forKey key: AbsoluteConfigKey,
    type: ConfigType,
    updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
  ) async throws -> Return {
    try await self.watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
  }

  func snapshot() -> any ConfigSnapshot { self }

  nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
    updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
  ) async throws -> Return {
    try await self.watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
  }

  private static func content(_ value: JSONValue, as type: ConfigType) -> ConfigContent? {
    switch type {
    case .string: string(value).map(ConfigContent.string)
    case .int: int(value).map(ConfigContent.int)
    case .double: double(value).map(ConfigContent.double)
    case .bool: bool(value).map(ConfigContent.bool)
    case .stringArray: array(value, string).map(ConfigContent.stringArray)
    case .intArray: array(value, int).map(ConfigContent.intArray)
    case .doubleArray: array(value, double).map(ConfigContent.doubleArray)
    case .boolArray: array(value, bool).map(ConfigContent.boolArray)
    default: nil
    }
  }

  private static func string(_ value: JSONValue) -> String? {
    if case let .string(string) = value { string } else { nil }
  }

  private static func int(_ value: JSONValue) -> Int? {
    switch value {
    case let .int(int): Int(exactly: int)
    case let .double(double): Int(exactly: double)
    default: nil
    }
  }

  private static func double(_ value: JSONValue) -> Double? {
    switch value {
    case let .int(int): Double(int)
    case let .double(double): double
    default: nil
    }
  }

  private static func bool(_ value: JSONValue) -> Bool? {
    if case let .bool(bool) = value { bool } else { nil }
  }

  private static func array<Element>(_ value: JSONValue, _ element: (JSONValue) -> Element?) -> [Element]? {
    guard case let .array(values) = value else { return nil }
    var elements: [Element] = []
    for value in values {
      guard let converted = element(value) else { return nil }
      elements.append(converted)
    }
    return elements
  }
}

extension JSONValueProvider: ConfigSnapshot {}
