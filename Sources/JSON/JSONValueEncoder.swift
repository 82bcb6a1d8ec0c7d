import Foundation
import OrderedCollections

/// Encodes `Encodable` values straight into a ``JSONValue`` tree, without producing JSON text.
///
/// The output matches what `Foundation.JSONEncoder` would write (with default strategies), but as a
/// tree: structs and `[String: V]`/`[Int: V]` dictionaries become objects, arrays and other
/// sequences (including `IdentifiedArray`) become arrays, an `IndexSet` is the array of its
/// indexes (`[0,2]`, readable on the wire), `nil` optionals are omitted, `URL`s
/// become their `absoluteString`, `Decimal`s become numbers, and everything else (`Data`, …)
/// uses its own `Codable` conformance.
///
/// ```swift
/// enum Action: Codable { case incrTapped(by: Int), reset }
/// struct State: Codable { var count = 0; var last: Action? }
///
/// let value = try JSONValueEncoder().encode(State(count: 2, last: .incrTapped(by: 1)))
/// value.serialized()  // {"count":2,"last":{"incrTapped":{"by":1}}}
/// ```
///
/// Two things differ from Foundation, so that actions and state read naturally on the wire, in
/// any language: an enum case with a single unlabeled associated value is written as that value,
/// not wrapped in `"_0"` — `.counter(.incrTapped)` is `{"counter":{"incrTapped":{}}}` and
/// `.loaded([2, 3])` is `{"loaded":[2,3]}` (``JSONValueDecoder`` reads both forms); and a `Date`
/// is RFC 3339 text in UTC, `"2024-05-01T12:00:00.25Z"` (``RFC3339``), not a number of seconds
/// since 2001. A date RFC 3339 cannot write (outside the years 0000–9999) throws
/// `EncodingError.invalidValue`.
///
/// Non-finite floating-point values cannot be represented in JSON; encoding one throws
/// `EncodingError.invalidValue` whose coding path points at the offending value.
public struct JSONValueEncoder: Sendable {
  /// Contextual information handed to the values being encoded, like `JSONEncoder.userInfo`.
  ///
  /// ```swift
  /// var encoder = JSONValueEncoder()
  /// encoder.userInfo[.init(rawValue: "redact")!] = true
  /// ```
  public var userInfo: [CodingUserInfoKey: any Sendable]

  /// Creates an encoder.
  ///
  /// ```swift
  /// let encoder = JSONValueEncoder()
  /// ```
  public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
    self.userInfo = userInfo
  }

  /// Encodes `value` as a ``JSONValue``.
  ///
  /// ```swift
  /// try JSONValueEncoder().encode([1, 2, 3])           // [1,2,3]
  /// try JSONValueEncoder().encode(["a": Optional(1)])  // {"a":1}
  /// ```
  ///
  /// - Throws: `EncodingError.invalidValue` for values JSON cannot represent (non-finite numbers,
  ///   integers too large for both `Int64` and exact `Double`), or if `value` encodes nothing.
  public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
    // The commonest values need no encoder: a tracked change is often one number or flag.
    if T.self == Int.self {
      return .int(Int64(unsafeBitCast(value, to: Int.self)))
    } else if T.self == Bool.self {
      return .bool(unsafeBitCast(value, to: Bool.self))
    } else if T.self == String.self {
      return .string(unsafeBitCast(value, to: String.self))
    }
    let encoder = _JSONTreeEncoder(
      parent: nil,
      component: .current,
      userInfo: userInfo.isEmpty ? [:] : userInfo.mapValues { $0 as Any }
    )
    if let boxed = try encoder.boxPrimitive(value, .current) {
      return boxed
    }
    try value.encode(to: encoder)
    guard let result = encoder.takeValue() else {
      throw EncodingError.invalidValue(
        value,
        EncodingError.Context(
          codingPath: [],
          debugDescription: "Top-level \(T.self) did not encode any values."
        )
      )
    }
    return result
  }
}

// MARK: - Storage

/// What an encoder has produced so far. Containers are reference types so that nested containers
/// handed out earlier keep writing into the tree.
enum _JSONEncodingStorage {
  case empty
  case value(JSONValue)
  case object(_JSONObjectBuilder)
  case array(_JSONArrayBuilder)
}

/// A value that will only be known once encoding finishes: a nested container or a super encoder.
enum _JSONPendingValue {
  case object(_JSONObjectBuilder)
  case array(_JSONArrayBuilder)
  case encoder(_JSONTreeEncoder)

  func finish() -> JSONValue {
    switch self {
    case .object(let builder): return builder.finish()
    case .array(let builder): return builder.finish()
    case .encoder(let encoder): return encoder.takeValue() ?? .object([:])
    }
  }
}

/// An object under construction. Values are stored directly; nested containers and super encoders
/// get a placeholder that is filled in by ``finish()``.
final class _JSONObjectBuilder {
  var members: JSONObject = JSONObject(minimumCapacity: 4)
  var pending: [String: _JSONPendingValue]?

  @inline(__always)
  func set(_ key: String, _ value: JSONValue) {
    members[key] = value
    if pending != nil {
      pending![key] = nil
    }
  }

  func setPending(_ key: String, _ value: _JSONPendingValue) {
    members[key] = .null
    if pending == nil {
      pending = [key: value]
    } else {
      pending![key] = value
    }
  }

  func finish() -> JSONValue {
    if let pending {
      self.pending = nil
      for (key, value) in pending {
        members[key] = value.finish()
      }
    }
    // The payload container of an enum case with one unlabeled associated value: the value alone.
    if members.count == 1, let payload = members[_unlabeledPayloadKey] {
      return payload
    }
    return .object(members)
  }
}

/// The key Swift's synthesized `Codable` gives the single unlabeled associated value of an enum case.
let _unlabeledPayloadKey = "_0"

/// An array under construction; see ``_JSONObjectBuilder``.
final class _JSONArrayBuilder {
  var elements: [JSONValue] = []
  var pending: [Int: _JSONPendingValue]?

  func appendPending(_ value: _JSONPendingValue) {
    if pending == nil {
      pending = [elements.count: value]
    } else {
      pending![elements.count] = value
    }
    elements.append(.null)
  }

  func finish() -> JSONValue {
    if let pending {
      self.pending = nil
      for (index, value) in pending {
        elements[index] = value.finish()
      }
    }
    return .array(elements)
  }
}

// MARK: - Encoder

/// The `Encoder` handed to `encode(to:)`. Each encoder is also a node of the coding path: its path
/// is its parent's path plus `component`, computed only when somebody asks.
final class _JSONTreeEncoder: Encoder {
  let parent: _JSONTreeEncoder?
  let component: _JSONPathComponent
  /// The full path, for encoders that do not keep their parent alive (super encoders).
  let fixedPath: [any CodingKey]?
  let userInfo: [CodingUserInfoKey: Any]
  var storage: _JSONEncodingStorage = .empty

  init(
    parent: _JSONTreeEncoder?,
    component: _JSONPathComponent,
    userInfo: [CodingUserInfoKey: Any],
    fixedPath: [any CodingKey]? = nil
  ) {
    self.parent = parent
    self.component = component
    self.userInfo = userInfo
    self.fixedPath = fixedPath
  }

  var codingPath: [any CodingKey] {
    if let fixedPath { return fixedPath }
    var components: [_JSONPathComponent] = []
    var node: _JSONTreeEncoder? = self
    while let current = node {
      if let fixedPath = current.fixedPath {
        return fixedPath + components.reversed().compactMap(\.codingKey)
      }
      components.append(current.component)
      node = current.parent
    }
    return components.reversed().compactMap(\.codingKey)
  }

  func codingPath(appending component: _JSONPathComponent) -> [any CodingKey] {
    var path = codingPath
    if let key = component.codingKey {
      path.append(key)
    }
    return path
  }

  func takeValue() -> JSONValue? {
    switch storage {
    case .empty: return nil
    case .value(let value): return value
    case .object(let builder): return builder.finish()
    case .array(let builder): return builder.finish()
    }
  }

  func child(_ component: _JSONPathComponent) -> _JSONTreeEncoder {
    _JSONTreeEncoder(parent: self, component: component, userInfo: userInfo)
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let builder: _JSONObjectBuilder
    switch storage {
    case .object(let existing):
      builder = existing
    case .value(.object(let members)):
      builder = _JSONObjectBuilder()
      builder.members = members
      storage = .object(builder)
    default:
      builder = _JSONObjectBuilder()
      storage = .object(builder)
    }
    return KeyedEncodingContainer(_JSONKeyedEncodingContainer<Key>(encoder: self, builder: builder))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    let builder: _JSONArrayBuilder
    switch storage {
    case .array(let existing):
      builder = existing
    case .value(.array(let elements)):
      builder = _JSONArrayBuilder()
      builder.elements = elements
      storage = .array(builder)
    default:
      builder = _JSONArrayBuilder()
      storage = .array(builder)
    }
    return _JSONUnkeyedEncodingContainer(encoder: self, builder: builder)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    self
  }

  // MARK: Boxing

  /// Encodes a nested value: primitives directly, anything else through a child encoder.
  @inline(__always)
  func box<T: Encodable>(_ value: T, _ component: _JSONPathComponent) throws -> JSONValue {
    if let boxed = try boxPrimitive(value, component) {
      return boxed
    }
    let encoder = child(component)
    try value.encode(to: encoder)
    return encoder.takeValue() ?? .object([:])
  }

  /// Fast paths for the types the runtime sees most, plus the types JSONEncoder special-cases.
  /// Returns `nil` for anything that must go through its own `encode(to:)`.
  func boxPrimitive<T: Encodable>(_ value: T, _ component: _JSONPathComponent) throws -> JSONValue? {
    if T.self == String.self {
      return .string(unsafeBitCast(value, to: String.self))
    } else if T.self == Int.self {
      return .int(Int64(unsafeBitCast(value, to: Int.self)))
    } else if T.self == Bool.self {
      return .bool(unsafeBitCast(value, to: Bool.self))
    } else if T.self == Double.self {
      return try boxDouble(unsafeBitCast(value, to: Double.self), component)
    } else if T.self == JSONValue.self {
      return unsafeBitCast(value, to: JSONValue.self)
    } else if T.self == Int64.self {
      return .int(unsafeBitCast(value, to: Int64.self))
    } else if T.self == UUID.self {
      return .string(unsafeBitCast(value, to: UUID.self).uuidString)
    } else if T.self == Int32.self {
      return .int(Int64(unsafeBitCast(value, to: Int32.self)))
    } else if T.self == UInt.self {
      return try boxUnsigned(UInt64(unsafeBitCast(value, to: UInt.self)), value, component)
    } else if T.self == UInt64.self {
      return try boxUnsigned(unsafeBitCast(value, to: UInt64.self), value, component)
    } else if T.self == UInt32.self {
      return .int(Int64(unsafeBitCast(value, to: UInt32.self)))
    } else if T.self == Int16.self {
      return .int(Int64(unsafeBitCast(value, to: Int16.self)))
    } else if T.self == UInt16.self {
      return .int(Int64(unsafeBitCast(value, to: UInt16.self)))
    } else if T.self == Int8.self {
      return .int(Int64(unsafeBitCast(value, to: Int8.self)))
    } else if T.self == UInt8.self {
      return .int(Int64(unsafeBitCast(value, to: UInt8.self)))
    } else if T.self == Float.self {
      return try boxFloat(unsafeBitCast(value, to: Float.self), component)
    } else if T.self == URL.self {
      return .string(unsafeBitCast(value, to: URL.self).absoluteString)
    } else if T.self == IndexSet.self, let indexes = value as? IndexSet {
      return .array(indexes.map { .int(Int64($0)) })
    } else if T.self == Decimal.self {
      return try boxDecimal(unsafeBitCast(value, to: Decimal.self), component)
    } else if T.self == Date.self {
      return try boxDate(unsafeBitCast(value, to: Date.self), component)
    }
    return nil
  }

  /// A date as RFC 3339 text (``RFC3339``), not as `Date`'s own seconds since 2001.
  func boxDate(_ value: Date, _ component: _JSONPathComponent) throws -> JSONValue {
    guard let text = RFC3339.string(from: value) else {
      throw EncodingError.invalidValue(
        value,
        EncodingError.Context(
          codingPath: codingPath(appending: component),
          debugDescription: "\(value.timeIntervalSinceReferenceDate) seconds since 2001 is not a date RFC 3339 can write (years 0000 to 9999)."
        )
      )
    }
    return .string(text)
  }

  @inline(__always)
  func boxDouble(_ value: Double, _ component: _JSONPathComponent) throws -> JSONValue {
    guard value.isFinite else {
      throw EncodingError.invalidValue(
        value,
        EncodingError.Context(
          codingPath: codingPath(appending: component),
          debugDescription: "Unable to encode Double.\(value) directly in JSON."
        )
      )
    }
    return .double(value)
  }

  func boxFloat(_ value: Float, _ component: _JSONPathComponent) throws -> JSONValue {
    guard value.isFinite else {
      throw EncodingError.invalidValue(
        value,
        EncodingError.Context(
          codingPath: codingPath(appending: component),
          debugDescription: "Unable to encode Float.\(value) directly in JSON."
        )
      )
    }
    // Go through the shortest decimal form so that `Float(0.1)` becomes `0.1`, as JSONEncoder
    // writes it, rather than `0.10000000149011612`.
    return .double(Double(value.description) ?? Double(value))
  }

  func boxUnsigned(
    _ value: UInt64, _ original: Any, _ component: _JSONPathComponent
  ) throws -> JSONValue {
    if let exact = Int64(exactly: value) {
      return .int(exact)
    }
    if let exact = Double(exactly: value) {
      return .double(exact)
    }
    throw EncodingError.invalidValue(
      original,
      EncodingError.Context(
        codingPath: codingPath(appending: component),
        debugDescription: "\(value) cannot be represented exactly as a JSONValue number."
      )
    )
  }

  func boxWide<I: BinaryInteger>(_ value: I, _ component: _JSONPathComponent) throws -> JSONValue {
    if let exact = Int64(exactly: value) {
      return .int(exact)
    }
    if let exact = Double(exactly: value) {
      return .double(exact)
    }
    throw EncodingError.invalidValue(
      value,
      EncodingError.Context(
        codingPath: codingPath(appending: component),
        debugDescription: "\(value) cannot be represented exactly as a JSONValue number."
      )
    )
  }

  func boxDecimal(_ value: Decimal, _ component: _JSONPathComponent) throws -> JSONValue {
    guard !value.isNaN else {
      throw EncodingError.invalidValue(
        value,
        EncodingError.Context(
          codingPath: codingPath(appending: component),
          debugDescription: "Unable to encode Decimal.nan directly in JSON."
        )
      )
    }
    let text = value.description
    if let exact = Int64(text) {
      return .int(exact)
    }
    if let double = Double(text), double.isFinite {
      return .double(double)
    }
    throw EncodingError.invalidValue(
      value,
      EncodingError.Context(
        codingPath: codingPath(appending: component),
        debugDescription: "Decimal \(text) cannot be represented as a JSONValue number."
      )
    )
  }
}

// MARK: - Single value container

extension _JSONTreeEncoder: SingleValueEncodingContainer {
  func encodeNil() throws { storage = .value(.null) }
  func encode(_ value: Bool) throws { storage = .value(.bool(value)) }
  func encode(_ value: String) throws { storage = .value(.string(value)) }
  func encode(_ value: Double) throws { storage = .value(try boxDouble(value, .current)) }
  func encode(_ value: Float) throws { storage = .value(try boxFloat(value, .current)) }
  func encode(_ value: Int) throws { storage = .value(.int(Int64(value))) }
  func encode(_ value: Int8) throws { storage = .value(.int(Int64(value))) }
  func encode(_ value: Int16) throws { storage = .value(.int(Int64(value))) }
  func encode(_ value: Int32) throws { storage = .value(.int(Int64(value))) }
  func encode(_ value: Int64) throws { storage = .value(.int(value)) }
  func encode(_ value: Int128) throws { storage = .value(try boxWide(value, .current)) }
  func encode(_ value: UInt) throws { storage = .value(try boxUnsigned(UInt64(value), value, .current)) }
  func encode(_ value: UInt8) throws { storage = .value(.int(Int64(value))) }
  func encode(_ value: UInt16) throws { storage = .value(.int(Int64(value))) }
  func encode(_ value: UInt32) throws { storage = .value(.int(Int64(value))) }
  func encode(_ value: UInt64) throws { storage = .value(try boxUnsigned(value, value, .current)) }
  func encode(_ value: UInt128) throws { storage = .value(try boxWide(value, .current)) }

  func encode<T: Encodable>(_ value: T) throws {
    if let boxed = try boxPrimitive(value, .current) {
      storage = .value(boxed)
      return
    }
    // The value has the same coding path as this encoder, so let it encode into this encoder.
    storage = .empty
    try value.encode(to: self)
    if case .empty = storage {
      storage = .value(.object([:]))
    }
  }
}

// MARK: - Keyed container

struct _JSONKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let encoder: _JSONTreeEncoder
  let builder: _JSONObjectBuilder

  var codingPath: [any CodingKey] { encoder.codingPath }

  mutating func encodeNil(forKey key: Key) throws { builder.set(key.stringValue, .null) }
  mutating func encode(_ value: Bool, forKey key: Key) throws {
    builder.set(key.stringValue, .bool(value))
  }
  mutating func encode(_ value: String, forKey key: Key) throws {
    builder.set(key.stringValue, .string(value))
  }
  mutating func encode(_ value: Double, forKey key: Key) throws {
    builder.set(key.stringValue, try encoder.boxDouble(value, .key(key)))
  }
  mutating func encode(_ value: Float, forKey key: Key) throws {
    builder.set(key.stringValue, try encoder.boxFloat(value, .key(key)))
  }
  mutating func encode(_ value: Int, forKey key: Key) throws {
    builder.set(key.stringValue, .int(Int64(value)))
  }
  mutating func encode(_ value: Int8, forKey key: Key) throws {
    builder.set(key.stringValue, .int(Int64(value)))
  }
  mutating func encode(_ value: Int16, forKey key: Key) throws {
    builder.set(key.stringValue, .int(Int64(value)))
  }
  mutating func encode(_ value: Int32, forKey key: Key) throws {
    builder.set(key.stringValue, .int(Int64(value)))
  }
  mutating func encode(_ value: Int64, forKey key: Key) throws {
    builder.set(key.stringValue, .int(value))
  }
  mutating func encode(_ value: Int128, forKey key: Key) throws {
    builder.set(key.stringValue, try encoder.boxWide(value, .key(key)))
  }
  mutating func encode(_ value: UInt, forKey key: Key) throws {
    builder.set(key.stringValue, try encoder.boxUnsigned(UInt64(value), value, .key(key)))
  }
  mutating func encode(_ value: UInt8, forKey key: Key) throws {
    builder.set(key.stringValue, .int(Int64(value)))
  }
  mutating func encode(_ value: UInt16, forKey key: Key) throws {
    builder.set(key.stringValue, .int(Int64(value)))
  }
  mutating func encode(_ value: UInt32, forKey key: Key) throws {
    builder.set(key.stringValue, .int(Int64(value)))
  }
  mutating func encode(_ value: UInt64, forKey key: Key) throws {
    builder.set(key.stringValue, try encoder.boxUnsigned(value, value, .key(key)))
  }
  mutating func encode(_ value: UInt128, forKey key: Key) throws {
    builder.set(key.stringValue, try encoder.boxWide(value, .key(key)))
  }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    builder.set(key.stringValue, try encoder.box(value, .key(key)))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested = _JSONObjectBuilder()
    builder.setPending(key.stringValue, .object(nested))
    return KeyedEncodingContainer(
      _JSONKeyedEncodingContainer<NestedKey>(encoder: encoder.child(.key(key)), builder: nested)
    )
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let nested = _JSONArrayBuilder()
    builder.setPending(key.stringValue, .array(nested))
    return _JSONUnkeyedEncodingContainer(encoder: encoder.child(.key(key)), builder: nested)
  }

  mutating func superEncoder() -> any Encoder {
    superEncoder(stringKey: _JSONStringKey.super)
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    superEncoder(stringKey: key)
  }

  private func superEncoder(stringKey key: some CodingKey) -> any Encoder {
    // A super encoder is stored in `builder.pending`, so it must not retain `encoder` (that would
    // be a cycle); it remembers its full path instead.
    let superEncoder = _JSONTreeEncoder(
      parent: nil,
      component: .current,
      userInfo: encoder.userInfo,
      fixedPath: encoder.codingPath + [key]
    )
    builder.setPending(key.stringValue, .encoder(superEncoder))
    return superEncoder
  }
}

// MARK: - Unkeyed container

struct _JSONUnkeyedEncodingContainer: UnkeyedEncodingContainer {
  let encoder: _JSONTreeEncoder
  let builder: _JSONArrayBuilder

  var codingPath: [any CodingKey] { encoder.codingPath }
  var count: Int { builder.elements.count }

  @inline(__always)
  private var nextComponent: _JSONPathComponent { .index(builder.elements.count) }

  mutating func encodeNil() throws { builder.elements.append(.null) }
  mutating func encode(_ value: Bool) throws { builder.elements.append(.bool(value)) }
  mutating func encode(_ value: String) throws { builder.elements.append(.string(value)) }
  mutating func encode(_ value: Double) throws {
    builder.elements.append(try encoder.boxDouble(value, nextComponent))
  }
  mutating func encode(_ value: Float) throws {
    builder.elements.append(try encoder.boxFloat(value, nextComponent))
  }
  mutating func encode(_ value: Int) throws { builder.elements.append(.int(Int64(value))) }
  mutating func encode(_ value: Int8) throws { builder.elements.append(.int(Int64(value))) }
  mutating func encode(_ value: Int16) throws { builder.elements.append(.int(Int64(value))) }
  mutating func encode(_ value: Int32) throws { builder.elements.append(.int(Int64(value))) }
  mutating func encode(_ value: Int64) throws { builder.elements.append(.int(value)) }
  mutating func encode(_ value: Int128) throws {
    builder.elements.append(try encoder.boxWide(value, nextComponent))
  }
  mutating func encode(_ value: UInt) throws {
    builder.elements.append(try encoder.boxUnsigned(UInt64(value), value, nextComponent))
  }
  mutating func encode(_ value: UInt8) throws { builder.elements.append(.int(Int64(value))) }
  mutating func encode(_ value: UInt16) throws { builder.elements.append(.int(Int64(value))) }
  mutating func encode(_ value: UInt32) throws { builder.elements.append(.int(Int64(value))) }
  mutating func encode(_ value: UInt64) throws {
    builder.elements.append(try encoder.boxUnsigned(value, value, nextComponent))
  }
  mutating func encode(_ value: UInt128) throws {
    builder.elements.append(try encoder.boxWide(value, nextComponent))
  }

  mutating func encode<T: Encodable>(_ value: T) throws {
    let boxed = try encoder.box(value, nextComponent)
    builder.elements.append(boxed)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type
  ) -> KeyedEncodingContainer<NestedKey> {
    let child = encoder.child(nextComponent)
    let nested = _JSONObjectBuilder()
    builder.appendPending(.object(nested))
    return KeyedEncodingContainer(
      _JSONKeyedEncodingContainer<NestedKey>(encoder: child, builder: nested)
    )
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let child = encoder.child(nextComponent)
    let nested = _JSONArrayBuilder()
    builder.appendPending(.array(nested))
    return _JSONUnkeyedEncodingContainer(encoder: child, builder: nested)
  }

  mutating func superEncoder() -> any Encoder {
    let superEncoder = _JSONTreeEncoder(
      parent: nil,
      component: .current,
      userInfo: encoder.userInfo,
      fixedPath: encoder.codingPath + [_JSONIndexKey(builder.elements.count)]
    )
    builder.appendPending(.encoder(superEncoder))
    return superEncoder
  }
}
