import Foundation

/// What ``JSONValueDecoder`` and ``JSONBytesDecoder`` share: one decoder per value decoded
/// through its own `init(from:)`, the containers over it, and the checked decoding of numbers,
/// strings and Foundation types. A node says how its values are stored (a ``JSONValue`` tree, or
/// places in a ``JSONLayout``); everything else, errors and their coding paths included, is
/// written once, here.
protocol _JSONDecodingNode: AnyObject, Decoder, SingleValueDecodingContainer {
  /// A value as this kind of decoder holds it.
  associatedtype Value
  /// An array's elements.
  associatedtype Elements: Collection where Elements.Element == Value

  /// The value this decoder decodes.
  var value: Value { get }
  var parentNode: Self? { get }
  /// This decoder's step in the coding path, below its parent's.
  var component: _JSONPathComponent { get }
  var maximumIndexSetCount: Int { get }

  /// A decoder of `value`, one step below this one.
  func child(_ value: Value, _ component: _JSONPathComponent) -> Self
  /// A decoder for a nested container of this one's value.
  func nestedChild(_ value: Value, _ component: _JSONPathComponent) -> Self
  /// `value` itself if it is a scalar; an empty array or object in its place otherwise (which is
  /// enough to say what kind it is).
  func scalar(_ value: Value) -> JSONValue
  func isNull(_ value: Value) -> Bool
  func isObject(_ value: Value) -> Bool
  /// The whole of `value`, as a tree.
  func jsonValue(_ value: Value) throws -> JSONValue
  /// The elements of `value`, if it is an array.
  func elements(_ value: Value) -> Elements?
  /// The value of this decoder's object's member `key`; `nil` if it has none.
  func member(_ key: String) -> Value?
  /// This decoder's object's keys that are `Key`s.
  func memberKeys<Key: CodingKey>(_ type: Key.Type) -> [Key]
  /// This decoder's object, as the payload of an enum case written unwrapped.
  func payloadItself() -> Value
  /// `{"_0": value}`: a payload written unwrapped, as Swift's synthesized decoding reads it.
  func wrappedAsPayload(_ value: Value) -> Value
  var nullValue: Value { get }
  /// A keyed container is being made of this decoder's object.
  func willMakeKeyedContainer()
  /// Decodes `T` through its own `init(from:)`, from this decoder.
  func decodeSelf<T: Decodable>(_ type: T.Type) throws -> T
}

extension _JSONDecodingNode {
  var codingPath: [any CodingKey] {
    var keys: [any CodingKey] = []
    var node: Self? = self
    while let current = node {
      if let key = current.component.codingKey {
        keys.append(key)
      }
      node = current.parentNode
    }
    keys.reverse()
    return keys
  }

  func codingPath(appending component: _JSONPathComponent) -> [any CodingKey] {
    var path = codingPath
    if let key = component.codingKey {
      path.append(key)
    }
    return path
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    if isObject(value) {
      willMakeKeyedContainer()
      return KeyedDecodingContainer(_JSONKeyedDecodingContainer<Key, Self>(decoder: self))
    }
    if isNull(value) {
      throw DecodingError.valueNotFound(
        KeyedDecodingContainer<Key>.self,
        DecodingError.Context(
          codingPath: codingPath,
          debugDescription: "Cannot get keyed decoding container -- found null value instead."
        )
      )
    }
    throw typeMismatch([String: Any].self, scalar(value), .current, expected: "an object")
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    if let elements = elements(value) {
      return _JSONUnkeyedDecodingContainer(decoder: self, elements: elements)
    }
    if isNull(value) {
      throw DecodingError.valueNotFound(
        (any UnkeyedDecodingContainer).self,
        DecodingError.Context(
          codingPath: codingPath,
          debugDescription: "Cannot get unkeyed decoding container -- found null value instead."
        )
      )
    }
    throw typeMismatch([Any].self, scalar(value), .current, expected: "an array")
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    self
  }

  // MARK: Errors

  func typeMismatch(
    _ type: Any.Type, _ value: JSONValue, _ component: _JSONPathComponent, expected: String? = nil
  ) -> DecodingError {
    if case .null = value {
      return DecodingError.valueNotFound(
        type,
        DecodingError.Context(
          codingPath: codingPath(appending: component),
          debugDescription: "Expected \(type) value but found null instead."
        )
      )
    }
    return DecodingError.typeMismatch(
      type,
      DecodingError.Context(
        codingPath: codingPath(appending: component),
        debugDescription: "Expected to decode \(type)\(expected.map { " (\($0))" } ?? "") but found \(value.kindDescription) instead."
      )
    )
  }

  func dataCorrupted(_ component: _JSONPathComponent, _ description: String) -> DecodingError {
    DecodingError.dataCorrupted(
      DecodingError.Context(codingPath: codingPath(appending: component), debugDescription: description)
    )
  }

  // MARK: Unboxing

  /// Decodes a nested value: primitives directly, anything else through a child decoder.
  @inline(__always)
  func unbox<T: Decodable>(_ value: Value, as type: T.Type, _ component: _JSONPathComponent) throws -> T {
    if let primitive = try unboxPrimitive(value, as: T.self, component) {
      return primitive
    }
    return try child(value, component).decodeSelf(T.self)
  }

  /// Fast paths for common types and the types JSONDecoder special-cases; `nil` for anything that
  /// must go through its own `init(from:)`.
  func unboxPrimitive<T: Decodable>(
    _ value: Value, as type: T.Type, _ component: _JSONPathComponent
  ) throws -> T? {
    if T.self == String.self {
      return unsafeBitCast(try unboxString(scalar(value), component), to: T.self)
    } else if T.self == Int.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: Int.self, component), to: T.self)
    } else if T.self == Bool.self {
      return unsafeBitCast(try unboxBool(scalar(value), component), to: T.self)
    } else if T.self == Double.self {
      return unsafeBitCast(try unboxDouble(scalar(value), component), to: T.self)
    } else if T.self == JSONValue.self {
      return unsafeBitCast(try jsonValue(value), to: T.self)
    } else if T.self == Int64.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: Int64.self, component), to: T.self)
    } else if T.self == UUID.self {
      return unsafeBitCast(try unboxUUID(scalar(value), component), to: T.self)
    } else if T.self == Int32.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: Int32.self, component), to: T.self)
    } else if T.self == UInt.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: UInt.self, component), to: T.self)
    } else if T.self == UInt64.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: UInt64.self, component), to: T.self)
    } else if T.self == UInt32.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: UInt32.self, component), to: T.self)
    } else if T.self == Int16.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: Int16.self, component), to: T.self)
    } else if T.self == UInt16.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: UInt16.self, component), to: T.self)
    } else if T.self == Int8.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: Int8.self, component), to: T.self)
    } else if T.self == UInt8.self {
      return unsafeBitCast(try unboxInteger(scalar(value), as: UInt8.self, component), to: T.self)
    } else if T.self == Float.self {
      return unsafeBitCast(try unboxFloat(scalar(value), component), to: T.self)
    } else if T.self == URL.self {
      return unsafeBitCast(try unboxURL(scalar(value), component), to: T.self)
    } else if T.self == IndexSet.self {
      return try unboxIndexSet(value, component) as? T
    } else if T.self == Decimal.self {
      return unsafeBitCast(try unboxDecimal(scalar(value), component), to: T.self)
    } else if T.self == Date.self {
      return unsafeBitCast(try unboxDate(scalar(value), component), to: T.self)
    } else if T.self == Data.self {
      return try unboxData(value, component) as? T
    }
    try _FoundationTypes.refuseUnchecked(T.self, at: codingPath(appending: component))
    return nil
  }

  @inline(__always)
  func unboxString(_ value: JSONValue, _ component: _JSONPathComponent) throws -> String {
    guard case .string(let string) = value else {
      throw typeMismatch(String.self, value, component)
    }
    return string
  }

  @inline(__always)
  func unboxBool(_ value: JSONValue, _ component: _JSONPathComponent) throws -> Bool {
    guard case .bool(let bool) = value else {
      throw typeMismatch(Bool.self, value, component)
    }
    return bool
  }

  func unboxInteger<I: FixedWidthInteger>(
    _ value: JSONValue, as type: I.Type, _ component: _JSONPathComponent
  ) throws -> I {
    switch value {
    case .int(let int):
      if let exact = I(exactly: int) { return exact }
      throw dataCorrupted(component, "Number \(int) does not fit in \(I.self).")
    case .double(let double):
      // A number written with a fraction or an exponent went through a Double, which holds
      // integers exactly only below 2^53, and turns 1e-400 into 0: only what it holds exactly
      // decodes, so that a client's number is never silently changed into another one.
      guard double.isFinite, double.rounded(.towardZero) == double else {
        throw dataCorrupted(component, "Number \(double) is not an integer, so it cannot be decoded as \(I.self).")
      }
      guard double != 0 else {
        throw dataCorrupted(
          component,
          "A number with a fraction or an exponent that reads as zero (0.0, or one too small for a Double such as 1e-400) is not decoded as \(I.self); write 0."
        )
      }
      guard double.magnitude < 0x1p53, let exact = I(exactly: double) else {
        throw dataCorrupted(component, "Number \(double) does not fit in \(I.self) exactly; write it as an integer without a fraction or an exponent.")
      }
      return exact
    default:
      throw typeMismatch(I.self, value, component)
    }
  }

  @inline(__always)
  func unboxDouble(_ value: JSONValue, _ component: _JSONPathComponent) throws -> Double {
    switch value {
    case .double(let double): return double
    case .int(let int): return Double(int)
    default: throw typeMismatch(Double.self, value, component)
    }
  }

  func unboxFloat(_ value: JSONValue, _ component: _JSONPathComponent) throws -> Float {
    let double = try unboxDouble(value, component)
    let float = Float(double)
    if float.isInfinite, double.isFinite {
      throw dataCorrupted(component, "Number \(double) does not fit in Float.")
    }
    return float
  }

  func unboxUUID(_ value: JSONValue, _ component: _JSONPathComponent) throws -> UUID {
    let string = try unboxString(value, component)
    guard let uuid = UUID(uuidString: string) else {
      throw dataCorrupted(component, "Attempted to decode UUID from invalid UUID string.")
    }
    return uuid
  }

  func unboxURL(_ value: JSONValue, _ component: _JSONPathComponent) throws -> URL {
    let string = try unboxString(value, component)
    guard let url = URL(string: string) else {
      throw dataCorrupted(component, "Invalid URL string.")
    }
    return url
  }

  func unboxDecimal(_ value: JSONValue, _ component: _JSONPathComponent) throws -> Decimal {
    switch value {
    case .int(let int):
      return Decimal(int)
    case .double(let double):
      // Going through the shortest decimal text keeps 0.1 as exactly 0.1.
      guard double.isFinite, let decimal = Decimal(string: double.description) else {
        throw dataCorrupted(component, "Number \(double) cannot be decoded as Decimal.")
      }
      return decimal
    default:
      throw typeMismatch(Decimal.self, value, component)
    }
  }
}

// MARK: - Single value container

extension _JSONDecodingNode {
  func decodeNil() -> Bool { isNull(value) }

  func decode(_ type: Bool.Type) throws -> Bool { try unboxBool(scalar(value), .current) }
  func decode(_ type: String.Type) throws -> String { try unboxString(scalar(value), .current) }
  func decode(_ type: Double.Type) throws -> Double { try unboxDouble(scalar(value), .current) }
  func decode(_ type: Float.Type) throws -> Float { try unboxFloat(scalar(value), .current) }
  func decode(_ type: Int.Type) throws -> Int { try unboxInteger(scalar(value), as: Int.self, .current) }
  func decode(_ type: Int8.Type) throws -> Int8 { try unboxInteger(scalar(value), as: Int8.self, .current) }
  func decode(_ type: Int16.Type) throws -> Int16 { try unboxInteger(scalar(value), as: Int16.self, .current) }
  func decode(_ type: Int32.Type) throws -> Int32 { try unboxInteger(scalar(value), as: Int32.self, .current) }
  func decode(_ type: Int64.Type) throws -> Int64 { try unboxInteger(scalar(value), as: Int64.self, .current) }
  func decode(_ type: Int128.Type) throws -> Int128 { try unboxInteger(scalar(value), as: Int128.self, .current) }
  func decode(_ type: UInt.Type) throws -> UInt { try unboxInteger(scalar(value), as: UInt.self, .current) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try unboxInteger(scalar(value), as: UInt8.self, .current) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try unboxInteger(scalar(value), as: UInt16.self, .current) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try unboxInteger(scalar(value), as: UInt32.self, .current) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try unboxInteger(scalar(value), as: UInt64.self, .current) }
  func decode(_ type: UInt128.Type) throws -> UInt128 {
    try unboxInteger(scalar(value), as: UInt128.self, .current)
  }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    if let primitive = try unboxPrimitive(value, as: T.self, .current) {
      return primitive
    }
    // Same value, same coding path: no need for a child decoder.
    return try T(from: self)
  }
}

// MARK: - Keyed container

struct _JSONKeyedDecodingContainer<Key: CodingKey, Node: _JSONDecodingNode>: KeyedDecodingContainerProtocol {
  let decoder: Node

  var codingPath: [any CodingKey] { decoder.codingPath }

  var allKeys: [Key] { decoder.memberKeys(Key.self) }

  func contains(_ key: Key) -> Bool {
    decoder.member(key.stringValue) != nil
  }

  @inline(__always)
  private func value(forKey key: Key) throws -> Node.Value {
    guard let value = decoder.member(key.stringValue) else {
      // An unlabeled payload written unwrapped: this container's object is the payload itself.
      if key.stringValue == _unlabeledPayloadKey { return decoder.payloadItself() }
      throw DecodingError.keyNotFound(
        key,
        DecodingError.Context(
          codingPath: decoder.codingPath,
          debugDescription: "No value associated with key \"\(key.stringValue)\"."
        )
      )
    }
    return value
  }

  @inline(__always)
  private func scalar(forKey key: Key) throws -> JSONValue {
    decoder.scalar(try value(forKey: key))
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    decoder.isNull(try value(forKey: key))
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try decoder.unboxBool(scalar(forKey: key), .key(key))
  }
  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try decoder.unboxString(scalar(forKey: key), .key(key))
  }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try decoder.unboxDouble(scalar(forKey: key), .key(key))
  }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
    try decoder.unboxFloat(scalar(forKey: key), .key(key))
  }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
    try decoder.unboxInteger(scalar(forKey: key), as: Int.self, .key(key))
  }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
    try decoder.unboxInteger(scalar(forKey: key), as: Int8.self, .key(key))
  }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
    try decoder.unboxInteger(scalar(forKey: key), as: Int16.self, .key(key))
  }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
    try decoder.unboxInteger(scalar(forKey: key), as: Int32.self, .key(key))
  }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
    try decoder.unboxInteger(scalar(forKey: key), as: Int64.self, .key(key))
  }
  func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
    try decoder.unboxInteger(scalar(forKey: key), as: Int128.self, .key(key))
  }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
    try decoder.unboxInteger(scalar(forKey: key), as: UInt.self, .key(key))
  }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
    try decoder.unboxInteger(scalar(forKey: key), as: UInt8.self, .key(key))
  }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
    try decoder.unboxInteger(scalar(forKey: key), as: UInt16.self, .key(key))
  }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
    try decoder.unboxInteger(scalar(forKey: key), as: UInt32.self, .key(key))
  }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
    try decoder.unboxInteger(scalar(forKey: key), as: UInt64.self, .key(key))
  }
  func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
    try decoder.unboxInteger(scalar(forKey: key), as: UInt128.self, .key(key))
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try decoder.unbox(value(forKey: key), as: T.self, .key(key))
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let value = try value(forKey: key)
    // An enum case's unlabeled payload written unwrapped (`{"loaded":[2,3]}`): present it as
    // Swift's synthesized decoding expects it, under "_0".
    guard !decoder.isObject(value), NestedKey(stringValue: _unlabeledPayloadKey) != nil else {
      return try decoder.nestedChild(value, .key(key)).container(keyedBy: NestedKey.self)
    }
    return try decoder.nestedChild(decoder.wrappedAsPayload(value), .key(key)).container(keyedBy: NestedKey.self)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try decoder.nestedChild(value(forKey: key), .key(key)).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    decoder.nestedChild(decoder.member(_JSONStringKey.super.stringValue) ?? decoder.nullValue, .key(_JSONStringKey.super))
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    decoder.nestedChild(decoder.member(key.stringValue) ?? decoder.nullValue, .key(key))
  }
}

// MARK: - Unkeyed container

struct _JSONUnkeyedDecodingContainer<Node: _JSONDecodingNode>: UnkeyedDecodingContainer {
  let decoder: Node
  let elements: Node.Elements
  private var position: Node.Elements.Index
  private let elementCount: Int
  private(set) var currentIndex = 0

  init(decoder: Node, elements: Node.Elements) {
    self.decoder = decoder
    self.elements = elements
    self.position = elements.startIndex
    self.elementCount = elements.count
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { elementCount }
  var isAtEnd: Bool { currentIndex >= elementCount }

  @inline(__always)
  private func next(_ type: Any.Type) throws -> Node.Value {
    guard currentIndex < elementCount else {
      throw DecodingError.valueNotFound(
        type,
        DecodingError.Context(
          codingPath: decoder.codingPath(appending: .index(currentIndex)),
          debugDescription: "Unkeyed container is at end."
        )
      )
    }
    return elements[position]
  }

  @inline(__always)
  private mutating func advance() {
    position = elements.index(after: position)
    currentIndex += 1
  }

  mutating func decodeNil() throws -> Bool {
    if decoder.isNull(try next((Any?).self)) {
      advance()
      return true
    }
    return false
  }

  private mutating func decodeNext<T>(
    _ type: T.Type, _ unbox: (JSONValue, _JSONPathComponent) throws -> T
  ) throws -> T {
    let result = try unbox(decoder.scalar(next(T.self)), .index(currentIndex))
    advance()
    return result
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool {
    try decodeNext(Bool.self, decoder.unboxBool)
  }
  mutating func decode(_ type: String.Type) throws -> String {
    try decodeNext(String.self, decoder.unboxString)
  }
  mutating func decode(_ type: Double.Type) throws -> Double {
    try decodeNext(Double.self, decoder.unboxDouble)
  }
  mutating func decode(_ type: Float.Type) throws -> Float {
    try decodeNext(Float.self, decoder.unboxFloat)
  }
  mutating func decode(_ type: Int.Type) throws -> Int { try decodeInteger(Int.self) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeInteger(Int8.self) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeInteger(Int16.self) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeInteger(Int32.self) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeInteger(Int64.self) }
  mutating func decode(_ type: Int128.Type) throws -> Int128 { try decodeInteger(Int128.self) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeInteger(UInt.self) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeInteger(UInt8.self) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeInteger(UInt16.self) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeInteger(UInt32.self) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeInteger(UInt64.self) }
  mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try decodeInteger(UInt128.self) }

  private mutating func decodeInteger<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
    let result = try decoder.unboxInteger(decoder.scalar(next(I.self)), as: I.self, .index(currentIndex))
    advance()
    return result
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let result = try decoder.unbox(next(T.self), as: T.self, .index(currentIndex))
    advance()
    return result
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let value = try next(KeyedDecodingContainer<NestedKey>.self)
    let container = try decoder.nestedChild(value, .index(currentIndex)).container(keyedBy: NestedKey.self)
    advance()
    return container
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let value = try next((any UnkeyedDecodingContainer).self)
    let container = try decoder.nestedChild(value, .index(currentIndex)).unkeyedContainer()
    advance()
    return container
  }

  mutating func superDecoder() throws -> any Decoder {
    let value = try next((any Decoder).self)
    let superDecoder = decoder.nestedChild(value, .index(currentIndex))
    advance()
    return superDecoder
  }
}
