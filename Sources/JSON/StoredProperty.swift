@_spi(Reflection) import Swift

/// The stored properties behind key paths, for the places that map a key path to a JSON member:
/// the runtime's change tracking, and the client's typed paths (`\.flags[id: "beta"]`).
///
/// ```swift
/// struct App: Codable { var counter: Counter.State; var isOn: Bool; var double: Int { 2 } }
/// StoredProperty.name(of: \App.counter)        // "counter"
/// StoredProperty.name(of: \App.counter.count)  // nil: two components, not one property
/// StoredProperty.name(of: \App.double)         // nil: computed
/// ```
///
/// Swift has no public reflection from a key path to a property's name, so the name comes from
/// the standard library's `_forEachFieldWithKeyPath`, which lists a struct's stored properties
/// with their key paths (present on Linux, under `@_spi(Reflection)`). Synthesized `Codable`
/// writes each property under its name; custom `CodingKeys` or a custom `encode(to:)` need not,
/// which those who use the name check or document.
public enum StoredProperty {
  /// The name of the stored property `keyPath` is; `nil` when it is not exactly one stored
  /// property of a struct `Root`.
  public static func name<Root, Value>(of keyPath: KeyPath<Root, Value>) -> String? {
    var name: String?
    // Lists nothing (and returns false) for a type that is not a struct.
    _ = _forEachFieldWithKeyPath(of: Root.self) { field, fieldKeyPath in
      guard fieldKeyPath == keyPath else { return true }
      name = String(cString: field)
      return false
    }
    return name
  }

  /// The names of `Root`'s stored properties, in declaration order; empty when it is not a
  /// struct.
  public static func names<Root>(of root: Root.Type) -> [String] {
    var names: [String] = []
    _ = _forEachFieldWithKeyPath(of: Root.self) { field, _ in
      names.append(String(cString: field))
      return true
    }
    return names
  }
}
