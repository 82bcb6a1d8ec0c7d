import Foundation

/// What ``JSONValueDecoder`` and ``JSONBytesDecoder`` share: one decoder per value decoded
/// through its own `init(from:)`, the containers over it, and the checked decoding of numbers,
/// strings and Foundation types, written once. A value is in a ``JSONValue`` tree or at a place in
/// a ``JSONLayout``; the few methods that reach it switch between the two (one concrete decoder
/// rather than one per storage, so that the containers, generic over the caller's keys only, stay
/// as fast as a decoder of one kind).
enum _JSONNodeValue {
  /// A value of a tree.
  case tree(JSONValue)
  /// The value at this index of the layout's tape.
  case tape(Int)
  /// `{"_0": value}` for the value at this index of the tape: an enum case's payload written
  /// unwrapped.
  case payload(Int)
}

/// What every decoder of one decoding shares.
final class _JSONDecodingContext {
  let userInfo: [CodingUserInfoKey: Any]
  let maximumIndexSetCount: Int
  /// The text decoded from, and its layout; empty when decoding a tree.
  let input: UnsafeBufferPointer<UInt8>
  let layout: JSONLayout
  let maximumDepth: Int
  let refusesUnknownKeys: Bool
  /// Whether a `Date` may be a number of seconds since 2001 too (``JSONValueDecoder/acceptsSecondsSince2001``).
  let acceptsSecondsSince2001: Bool

  init(
    userInfo: [CodingUserInfoKey: Any], maximumIndexSetCount: Int,
    input: UnsafeBufferPointer<UInt8> = UnsafeBufferPointer(start: nil, count: 0), layout: JSONLayout = .empty,
    maximumDepth: Int = 0, refusesUnknownKeys: Bool = false, acceptsSecondsSince2001: Bool = false
  ) {
    self.userInfo = userInfo
    self.maximumIndexSetCount = maximumIndexSetCount
    self.input = input
    self.layout = layout
    self.maximumDepth = maximumDepth
    self.refusesUnknownKeys = refusesUnknownKeys
    self.acceptsSecondsSince2001 = acceptsSecondsSince2001
  }
}

/// An array's elements: a tree's, by offset, or a layout's, by tape index (each one's successor
/// where its `next` says).
struct _JSONNodeElements: Collection {
  let array: [JSONValue]
  let tape: [_JSONTapeEntry]
  let startIndex: Int
  let endIndex: Int
  let count: Int

  init(_ array: [JSONValue]) {
    self.array = array
    self.tape = []
    self.startIndex = 0
    self.endIndex = array.count
    self.count = array.count
  }

  init(tape: [_JSONTapeEntry], array index: Int) {
    self.array = []
    self.tape = tape
    self.startIndex = index + 1
    self.endIndex = tape[index].next
    self.count = Int(tape[index].payload)
  }

  subscript(position: Int) -> _JSONNodeValue {
    tape.isEmpty ? .tree(array[position]) : .tape(position)
  }

  func index(after index: Int) -> Int {
    tape.isEmpty ? index + 1 : tape[index].next
  }
}

final class _JSONDecoderNode: Decoder, SingleValueDecodingContainer {
  let context: _JSONDecodingContext
  /// The value this decoder decodes.
  let value: _JSONNodeValue
  let parentNode: _JSONDecoderNode?
  /// This decoder's step in the coding path, below its parent's.
  let component: _JSONPathComponent

  // What unknown keys are checked with, when decoding bytes and the value is an object (see
  // JSONBytesDecoder.swift).
  /// A keyed container was made of the object.
  var isKeyed = false
  /// The object was handed whole to another decoder, as an unwrapped payload; that one checks it.
  var isHandedOn = false
  /// Which members of a small object were asked for, a bit for each, by ordinal.
  var asked: UInt64 = 0
  /// A large object's members by key: the value (the last, if the key is repeated) and whether
  /// the key was asked for. Made at the first lookup, so that lookups stay linear in all.
  var memberIndex: [String: (value: Int, asked: Bool)]?
  /// `allKeys` found none of the object's keys to be the container's.
  var hadNoKnownKeys = false
  /// The decoders of nested containers, checked when this one is, and let go then (each holds
  /// its parent).
  var nested: [_JSONDecoderNode] = []

  init(context: _JSONDecodingContext, value: _JSONNodeValue, parent: _JSONDecoderNode?, component: _JSONPathComponent) {
    self.context = context
    self.value = value
    self.parentNode = parent
    self.component = component
  }

  var userInfo: [CodingUserInfoKey: Any] { context.userInfo }
  var maximumIndexSetCount: Int { context.maximumIndexSetCount }

  /// A decoder of `value`, one step below this one.
  @inline(__always)
  func child(_ value: _JSONNodeValue, _ component: _JSONPathComponent) -> _JSONDecoderNode {
    _JSONDecoderNode(context: context, value: value, parent: self, component: component)
  }

  /// A decoder for a nested container of this one's value.
  func nestedChild(_ value: _JSONNodeValue, _ component: _JSONPathComponent) -> _JSONDecoderNode {
    let child = child(value, component)
    if context.refusesUnknownKeys {
      nested.append(child)
    }
    return child
  }

  /// `value` itself if it is a scalar; if not, something of its kind (which is what errors say).
  @inline(__always)
  func scalar(_ value: _JSONNodeValue) -> JSONValue {
    switch value {
    case .tree(let value): value
    case .tape(let index): context.layout.scalar(at: index, in: context.input)
    case .payload: .object([:])
    }
  }

  func isNull(_ value: _JSONNodeValue) -> Bool {
    switch value {
    case .tree(let value): if case .null = value { true } else { false }
    case .tape(let index): context.layout.tape[index].kind == .null
    case .payload: false
    }
  }

  func isObject(_ value: _JSONNodeValue) -> Bool {
    switch value {
    case .tree(let value): if case .object = value { true } else { false }
    case .tape(let index): context.layout.tape[index].kind == .object
    case .payload: true
    }
  }

  /// The whole of `value`, as a tree.
  func jsonValue(_ value: _JSONNodeValue) throws -> JSONValue {
    switch value {
    case .tree(let value):
      value
    case .tape(let index):
      try context.layout.jsonValue(at: index, in: context.input, maximumDepth: context.maximumDepth)
    case .payload(let index):
      .object([_unlabeledPayloadKey: try jsonValue(.tape(index))])
    }
  }

  /// The elements of `value`, if it is an array.
  func elements(_ value: _JSONNodeValue) -> _JSONNodeElements? {
    switch value {
    case .tree(.array(let array)): _JSONNodeElements(array)
    case .tape(let index) where context.layout.tape[index].kind == .array:
      _JSONNodeElements(tape: context.layout.tape, array: index)
    default: nil
    }
  }

  /// The value of this decoder's object's member `key`; `nil` if it has none.
  @inline(__always)
  func member(_ key: String) -> _JSONNodeValue? {
    switch value {
    case .tree(.object(let object)): object[key].map { .tree($0) }
    case .tree: nil
    case .tape(let index): tapeMember(key, of: index)
    case .payload(let index): key == _unlabeledPayloadKey ? .tape(index) : nil
    }
  }

  /// This decoder's object's keys that are `Key`s.
  func memberKeys<Key: CodingKey>(_ type: Key.Type) -> [Key] {
    switch value {
    case .tree(.object(let object)): object.keys.compactMap { Key(stringValue: $0) }
    case .tree: []
    case .tape(let index): tapeMemberKeys(Key.self, of: index)
    case .payload: Key(stringValue: _unlabeledPayloadKey).map { [$0] } ?? []
    }
  }

  /// This decoder's object, as the payload of an enum case written unwrapped.
  func payloadItself() -> _JSONNodeValue {
    isHandedOn = true
    return value
  }

  /// `{"_0": value}`: a payload written unwrapped, as Swift's synthesized decoding reads it.
  func wrappedAsPayload(_ value: _JSONNodeValue) -> _JSONNodeValue {
    switch value {
    case .tree(let value): .tree(.object([_unlabeledPayloadKey: value]))
    case .tape(let index): .payload(index)
    case .payload: value
    }
  }

  /// Decodes `T` through its own `init(from:)`, from this decoder.
  @inline(__always)
  func decodeSelf<T: Decodable>(_ type: T.Type) throws -> T {
    guard context.refusesUnknownKeys else { return try T(from: self) }
    return try decodeSelfCheckingKeys(T.self)
  }
}

extension _JSONDecoderNode {
  var codingPath: [any CodingKey] {
    var keys: [any CodingKey] = []
    var node: _JSONDecoderNode? = self
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
      isKeyed = true
      return KeyedDecodingContainer(_JSONKeyedDecodingContainer<Key>(decoder: self))
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
  func unbox<T: Decodable>(_ value: _JSONNodeValue, as type: T.Type, _ component: _JSONPathComponent) throws -> T {
    if let primitive = try unboxPrimitive(value, as: T.self, component) {
      return primitive
    }
    return try child(value, component).decodeSelf(T.self)
  }

  /// Fast paths for common types and the types JSONDecoder special-cases; `nil` for anything that
  /// must go through its own `init(from:)`.
  func unboxPrimitive<T: Decodable>(
    _ value: _JSONNodeValue, as type: T.Type, _ component: _JSONPathComponent
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

extension _JSONDecoderNode {
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

struct _JSONKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: _JSONDecoderNode

  var codingPath: [any CodingKey] { decoder.codingPath }

  var allKeys: [Key] { decoder.memberKeys(Key.self) }

  func contains(_ key: Key) -> Bool {
    decoder.member(key.stringValue) != nil
  }

  @inline(__always)
  private func value(forKey key: Key) throws -> _JSONNodeValue {
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
    decoder.nestedChild(decoder.member(_JSONStringKey.super.stringValue) ?? .tree(.null), .key(_JSONStringKey.super))
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    decoder.nestedChild(decoder.member(key.stringValue) ?? .tree(.null), .key(key))
  }
}

// MARK: - Unkeyed container

struct _JSONUnkeyedDecodingContainer: UnkeyedDecodingContainer {
  let decoder: _JSONDecoderNode
  let elements: _JSONNodeElements
  private var position: Int
  private let elementCount: Int
  private(set) var currentIndex = 0

  init(decoder: _JSONDecoderNode, elements: _JSONNodeElements) {
    self.decoder = decoder
    self.elements = elements
    self.position = elements.startIndex
    self.elementCount = elements.count
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { elementCount }
  var isAtEnd: Bool { currentIndex >= elementCount }

  @inline(__always)
  private func next(_ type: Any.Type) throws -> _JSONNodeValue {
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
