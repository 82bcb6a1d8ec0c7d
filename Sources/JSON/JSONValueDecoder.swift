import Foundation

/// Decodes `Decodable` values straight from a ``JSONValue`` tree.
///
/// The inverse of ``JSONValueEncoder``. Errors are standard `DecodingError`s whose context's
/// `codingPath` points exactly at the offending value, which ``jsonPathDescription(_:)`` turns into
/// readable text:
///
/// ```swift
/// enum CounterAction: Codable { case incrTapped(x: Int) }
/// struct Envelope: Codable { var counter: CounterAction }
///
/// do {
///   _ = try JSONValueDecoder().decode(
///     Envelope.self, from: ["counter": ["incrTapped": ["x": "oops"]]]
///   )
/// } catch let DecodingError.typeMismatch(_, context) {
///   jsonPathDescription(context.codingPath)  // "counter.incrTapped.x"
/// }
/// ```
///
/// Integers decode from integral numbers: `.int`, or a nonzero `.double` that is an integer below
/// 2^53, where a `Double` holds it exactly (so `9007199254740993.0` and `1e-400` are errors, not
/// other numbers); floating-point types decode from any number.
///
/// Client input must never reach code that traps, so Foundation types decode through this
/// decoder's own checked code (`Date`, `Data`, `URL`, `UUID`, `Decimal`, `IndexSet`, whose size is
/// bounded by ``maximumIndexSetCount``); any other Foundation type is refused with
/// `DecodingError.dataCorrupted` rather than handed to its own `init(from:)`, some of which trap
/// on bad input (`IndexSet`'s on a negative length, `DateInterval`'s on a negative duration). An enum case with a single unlabeled
/// associated value decodes from that value alone (`{"loaded":[2,3]}`), as ``JSONValueEncoder``
/// writes it, or from Swift's own `{"loaded":{"_0":[2,3]}}`.
public struct JSONValueDecoder: Sendable {
  /// Contextual information handed to the values being decoded, like `JSONDecoder.userInfo`.
  ///
  /// ```swift
  /// var decoder = JSONValueDecoder()
  /// decoder.userInfo[.init(rawValue: "version")!] = 2
  /// ```
  public var userInfo: [CodingUserInfoKey: any Sendable]

  /// The most indexes a decoded `IndexSet` may hold.
  ///
  /// Foundation's form of an index set is a list of ranges, so about 40 bytes of JSON
  /// (`{"location":0,"length":10000000}`) stand for ten million indexes, which whatever reads the
  /// set goes through one by one. Decoding an index set with more throws
  /// `DecodingError.dataCorrupted`, whose coding path points at it.
  public var maximumIndexSetCount: Int

  /// Creates a decoder.
  ///
  /// ```swift
  /// let decoder = JSONValueDecoder()
  /// ```
  public init(userInfo: [CodingUserInfoKey: any Sendable] = [:], maximumIndexSetCount: Int = 1 << 16) {
    self.userInfo = userInfo
    self.maximumIndexSetCount = maximumIndexSetCount
  }

  /// Decodes a value of the given type from `value`.
  ///
  /// ```swift
  /// struct User: Codable { var name: String; var age: Int? }
  /// let user = try JSONValueDecoder().decode(User.self, from: ["name": "Blob"])
  /// user.age  // nil
  /// ```
  ///
  /// - Throws: `DecodingError` describing the first mismatch, with its coding path.
  public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
    let decoder = _JSONTreeDecoder(
      value: value,
      parent: nil,
      component: .current,
      userInfo: userInfo.isEmpty ? [:] : userInfo.mapValues { $0 as Any },
      maximumIndexSetCount: maximumIndexSetCount
    )
    return try decoder.decode(T.self)
  }
}

/// Renders a coding path the way a JavaScript programmer would write it: `counter.incrTapped.x`,
/// `items[3].name`, `headers["content-type"]`.
///
/// Keys that are valid identifiers are joined with dots, array indices (and integer dictionary
/// keys) are written in brackets, and other keys are written as quoted strings in brackets. The
/// empty path (the root) renders as the empty string.
///
/// ```swift
/// catch let DecodingError.typeMismatch(_, context) {
///   print("bad value at \(jsonPathDescription(context.codingPath))")  // bad value at items[3].name
/// }
/// ```
public func jsonPathDescription(_ codingPath: [any CodingKey]) -> String {
  var result = ""
  for key in codingPath {
    if let index = key.intValue,
      key.stringValue == "Index \(index)" || key.stringValue == String(index)
    {
      result += "[\(index)]"
      continue
    }
    let name = key.stringValue
    // Unlabeled payloads are written unwrapped, so their key is not part of the wire's path.
    if name == _unlabeledPayloadKey { continue }
    if _isIdentifier(name) {
      if !result.isEmpty { result += "." }
      result += name
    } else {
      result += "["
      result += JSONValue.string(name).serialized()
      result += "]"
    }
  }
  return result
}

private func _isIdentifier(_ name: String) -> Bool {
  guard let first = name.utf8.first else { return false }
  func isStart(_ byte: UInt8) -> Bool {
    (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F || byte == 0x24
  }
  guard isStart(first) else { return false }
  return name.utf8.allSatisfy { isStart($0) || ($0 >= 0x30 && $0 <= 0x39) }
}

// MARK: - Coding paths

/// One step of a coding path, kept unboxed until somebody needs the `[any CodingKey]` form.
enum _JSONPathComponent {
  /// No step: the value lives at the same path as its parent (single value containers).
  case current
  case key(any CodingKey)
  case index(Int)

  var codingKey: (any CodingKey)? {
    switch self {
    case .current: nil
    case .key(let key): key
    case .index(let index): _JSONIndexKey(index)
    }
  }
}

// MARK: - Decoder

final class _JSONTreeDecoder: Decoder {
  let value: JSONValue
  let parent: _JSONTreeDecoder?
  let component: _JSONPathComponent
  let userInfo: [CodingUserInfoKey: Any]
  let maximumIndexSetCount: Int

  init(
    value: JSONValue,
    parent: _JSONTreeDecoder?,
    component: _JSONPathComponent,
    userInfo: [CodingUserInfoKey: Any],
    maximumIndexSetCount: Int
  ) {
    self.value = value
    self.parent = parent
    self.component = component
    self.userInfo = userInfo
    self.maximumIndexSetCount = maximumIndexSetCount
  }

  var codingPath: [any CodingKey] {
    var keys: [any CodingKey] = []
    var node: _JSONTreeDecoder? = self
    while let current = node {
      if let key = current.component.codingKey {
        keys.append(key)
      }
      node = current.parent
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

  func child(_ value: JSONValue, _ component: _JSONPathComponent) -> _JSONTreeDecoder {
    _JSONTreeDecoder(
      value: value, parent: self, component: component, userInfo: userInfo,
      maximumIndexSetCount: maximumIndexSetCount
    )
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    switch value {
    case .object(let object):
      return KeyedDecodingContainer(_JSONKeyedDecodingContainer<Key>(decoder: self, object: object))
    case .null:
      throw DecodingError.valueNotFound(
        KeyedDecodingContainer<Key>.self,
        DecodingError.Context(
          codingPath: codingPath,
          debugDescription: "Cannot get keyed decoding container -- found null value instead."
        )
      )
    default:
      throw typeMismatch([String: Any].self, value, .current, expected: "an object")
    }
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    switch value {
    case .array(let array):
      return _JSONUnkeyedDecodingContainer(decoder: self, array: array)
    case .null:
      throw DecodingError.valueNotFound(
        (any UnkeyedDecodingContainer).self,
        DecodingError.Context(
          codingPath: codingPath,
          debugDescription: "Cannot get unkeyed decoding container -- found null value instead."
        )
      )
    default:
      throw typeMismatch([Any].self, value, .current, expected: "an array")
    }
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
  func unbox<T: Decodable>(_ value: JSONValue, as type: T.Type, _ component: _JSONPathComponent) throws -> T {
    if let primitive = try unboxPrimitive(value, as: T.self, component) {
      return primitive
    }
    return try T(from: child(value, component))
  }

  /// Fast paths for common types and the types JSONDecoder special-cases; `nil` for anything that
  /// must go through its own `init(from:)`.
  func unboxPrimitive<T: Decodable>(
    _ value: JSONValue, as type: T.Type, _ component: _JSONPathComponent
  ) throws -> T? {
    if T.self == String.self {
      return unsafeBitCast(try unboxString(value, component), to: T.self)
    } else if T.self == Int.self {
      return unsafeBitCast(try unboxInteger(value, as: Int.self, component), to: T.self)
    } else if T.self == Bool.self {
      return unsafeBitCast(try unboxBool(value, component), to: T.self)
    } else if T.self == Double.self {
      return unsafeBitCast(try unboxDouble(value, component), to: T.self)
    } else if T.self == JSONValue.self {
      return unsafeBitCast(value, to: T.self)
    } else if T.self == Int64.self {
      return unsafeBitCast(try unboxInteger(value, as: Int64.self, component), to: T.self)
    } else if T.self == UUID.self {
      return unsafeBitCast(try unboxUUID(value, component), to: T.self)
    } else if T.self == Int32.self {
      return unsafeBitCast(try unboxInteger(value, as: Int32.self, component), to: T.self)
    } else if T.self == UInt.self {
      return unsafeBitCast(try unboxInteger(value, as: UInt.self, component), to: T.self)
    } else if T.self == UInt64.self {
      return unsafeBitCast(try unboxInteger(value, as: UInt64.self, component), to: T.self)
    } else if T.self == UInt32.self {
      return unsafeBitCast(try unboxInteger(value, as: UInt32.self, component), to: T.self)
    } else if T.self == Int16.self {
      return unsafeBitCast(try unboxInteger(value, as: Int16.self, component), to: T.self)
    } else if T.self == UInt16.self {
      return unsafeBitCast(try unboxInteger(value, as: UInt16.self, component), to: T.self)
    } else if T.self == Int8.self {
      return unsafeBitCast(try unboxInteger(value, as: Int8.self, component), to: T.self)
    } else if T.self == UInt8.self {
      return unsafeBitCast(try unboxInteger(value, as: UInt8.self, component), to: T.self)
    } else if T.self == Float.self {
      return unsafeBitCast(try unboxFloat(value, component), to: T.self)
    } else if T.self == URL.self {
      return unsafeBitCast(try unboxURL(value, component), to: T.self)
    } else if T.self == IndexSet.self {
      return try unboxIndexSet(value, component) as? T
    } else if T.self == Decimal.self {
      return unsafeBitCast(try unboxDecimal(value, component), to: T.self)
    } else if T.self == Date.self {
      return unsafeBitCast(try unboxDate(value, component), to: T.self)
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

extension _JSONTreeDecoder: SingleValueDecodingContainer {
  func decodeNil() -> Bool {
    if case .null = value { return true }
    return false
  }

  func decode(_ type: Bool.Type) throws -> Bool { try unboxBool(value, .current) }
  func decode(_ type: String.Type) throws -> String { try unboxString(value, .current) }
  func decode(_ type: Double.Type) throws -> Double { try unboxDouble(value, .current) }
  func decode(_ type: Float.Type) throws -> Float { try unboxFloat(value, .current) }
  func decode(_ type: Int.Type) throws -> Int { try unboxInteger(value, as: Int.self, .current) }
  func decode(_ type: Int8.Type) throws -> Int8 { try unboxInteger(value, as: Int8.self, .current) }
  func decode(_ type: Int16.Type) throws -> Int16 { try unboxInteger(value, as: Int16.self, .current) }
  func decode(_ type: Int32.Type) throws -> Int32 { try unboxInteger(value, as: Int32.self, .current) }
  func decode(_ type: Int64.Type) throws -> Int64 { try unboxInteger(value, as: Int64.self, .current) }
  func decode(_ type: Int128.Type) throws -> Int128 { try unboxInteger(value, as: Int128.self, .current) }
  func decode(_ type: UInt.Type) throws -> UInt { try unboxInteger(value, as: UInt.self, .current) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try unboxInteger(value, as: UInt8.self, .current) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try unboxInteger(value, as: UInt16.self, .current) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try unboxInteger(value, as: UInt32.self, .current) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try unboxInteger(value, as: UInt64.self, .current) }
  func decode(_ type: UInt128.Type) throws -> UInt128 {
    try unboxInteger(value, as: UInt128.self, .current)
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

struct _JSONKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: _JSONTreeDecoder
  let object: JSONObject

  var codingPath: [any CodingKey] { decoder.codingPath }

  var allKeys: [Key] {
    object.keys.compactMap { Key(stringValue: $0) }
  }

  func contains(_ key: Key) -> Bool {
    object.index(forKey: key.stringValue) != nil
  }

  @inline(__always)
  private func value(forKey key: Key) throws -> JSONValue {
    guard let value = object[key.stringValue] else {
      // An unlabeled payload written unwrapped: this container's object is the payload itself.
      if key.stringValue == _unlabeledPayloadKey { return .object(object) }
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

  func decodeNil(forKey key: Key) throws -> Bool {
    if case .null = try value(forKey: key) { return true }
    return false
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try decoder.unboxBool(value(forKey: key), .key(key))
  }
  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try decoder.unboxString(value(forKey: key), .key(key))
  }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try decoder.unboxDouble(value(forKey: key), .key(key))
  }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
    try decoder.unboxFloat(value(forKey: key), .key(key))
  }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
    try decoder.unboxInteger(value(forKey: key), as: Int.self, .key(key))
  }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
    try decoder.unboxInteger(value(forKey: key), as: Int8.self, .key(key))
  }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
    try decoder.unboxInteger(value(forKey: key), as: Int16.self, .key(key))
  }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
    try decoder.unboxInteger(value(forKey: key), as: Int32.self, .key(key))
  }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
    try decoder.unboxInteger(value(forKey: key), as: Int64.self, .key(key))
  }
  func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
    try decoder.unboxInteger(value(forKey: key), as: Int128.self, .key(key))
  }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
    try decoder.unboxInteger(value(forKey: key), as: UInt.self, .key(key))
  }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
    try decoder.unboxInteger(value(forKey: key), as: UInt8.self, .key(key))
  }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
    try decoder.unboxInteger(value(forKey: key), as: UInt16.self, .key(key))
  }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
    try decoder.unboxInteger(value(forKey: key), as: UInt32.self, .key(key))
  }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
    try decoder.unboxInteger(value(forKey: key), as: UInt64.self, .key(key))
  }
  func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
    try decoder.unboxInteger(value(forKey: key), as: UInt128.self, .key(key))
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try decoder.unbox(value(forKey: key), as: T.self, .key(key))
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let value = try value(forKey: key)
    switch value {
    case .object:
      return try decoder.child(value, .key(key)).container(keyedBy: NestedKey.self)
    default:
      // An enum case's unlabeled payload written unwrapped (`{"loaded":[2,3]}`): present it as
      // Swift's synthesized decoding expects it, under "_0".
      guard NestedKey(stringValue: _unlabeledPayloadKey) != nil else {
        return try decoder.child(value, .key(key)).container(keyedBy: NestedKey.self)
      }
      return try decoder.child(.object([_unlabeledPayloadKey: value]), .key(key)).container(keyedBy: NestedKey.self)
    }
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try decoder.child(value(forKey: key), .key(key)).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    decoder.child(object[_JSONStringKey.super.stringValue] ?? .null, .key(_JSONStringKey.super))
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    decoder.child(object[key.stringValue] ?? .null, .key(key))
  }
}

// MARK: - Unkeyed container

struct _JSONUnkeyedDecodingContainer: UnkeyedDecodingContainer {
  let decoder: _JSONTreeDecoder
  let array: [JSONValue]
  private(set) var currentIndex = 0

  init(decoder: _JSONTreeDecoder, array: [JSONValue]) {
    self.decoder = decoder
    self.array = array
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { array.count }
  var isAtEnd: Bool { currentIndex >= array.count }

  @inline(__always)
  private mutating func next(_ type: Any.Type) throws -> JSONValue {
    guard currentIndex < array.count else {
      throw DecodingError.valueNotFound(
        type,
        DecodingError.Context(
          codingPath: decoder.codingPath(appending: .index(currentIndex)),
          debugDescription: "Unkeyed container is at end."
        )
      )
    }
    return array[currentIndex]
  }

  mutating func decodeNil() throws -> Bool {
    if case .null = try next((Any?).self) {
      currentIndex += 1
      return true
    }
    return false
  }

  private mutating func decodeNext<T>(
    _ type: T.Type, _ unbox: (JSONValue, _JSONPathComponent) throws -> T
  ) throws -> T {
    let result = try unbox(next(T.self), .index(currentIndex))
    currentIndex += 1
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
    let result = try decoder.unboxInteger(next(I.self), as: I.self, .index(currentIndex))
    currentIndex += 1
    return result
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let result = try decoder.unbox(next(T.self), as: T.self, .index(currentIndex))
    currentIndex += 1
    return result
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let value = try next(KeyedDecodingContainer<NestedKey>.self)
    let container = try decoder.child(value, .index(currentIndex)).container(keyedBy: NestedKey.self)
    currentIndex += 1
    return container
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let value = try next((any UnkeyedDecodingContainer).self)
    let container = try decoder.child(value, .index(currentIndex)).unkeyedContainer()
    currentIndex += 1
    return container
  }

  mutating func superDecoder() throws -> any Decoder {
    let value = try next((any Decoder).self)
    let superDecoder = decoder.child(value, .index(currentIndex))
    currentIndex += 1
    return superDecoder
  }
}
