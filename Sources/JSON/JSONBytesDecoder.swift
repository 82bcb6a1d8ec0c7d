/// Decodes `Decodable` values straight from UTF-8 JSON text, without a ``JSONValue`` tree, and
/// refuses object keys the type does not have.
///
/// It decodes what ``JSONValueDecoder`` decodes from the same text parsed by
/// ``JSONValue/init(parsing:maximumDepth:)``, and fails where either of those would, with the same
/// errors: ``JSONParseError`` for text that is not JSON (with its byte offset), `DecodingError`s
/// whose coding paths point at the offending value for what does not fit the type. Integers,
/// floating-point numbers, unlabeled enum payloads (`{"loaded":[2,3]}` or
/// `{"loaded":{"_0":[2,3]}}`) and Foundation types follow ``JSONValueDecoder``'s rules, through
/// the same code.
///
/// What it adds, unless ``refusesUnknownKeys`` is off: an object member whose key the type never
/// asked for, and whose value is not `null`, fails the decoding with ``JSONUnknownKeyError``,
/// found in the same pass. And then, where an enum meets an object whose one key is none of its
/// cases (Swift's synthesized decoding throws `DecodingError.typeMismatch` at the object), the
/// error's `underlyingError` is a ``JSONUnknownCaseError`` naming that key. (The objects of Foundation
/// types, such as an `IndexSet`'s ranges, are read by the decoder's own checked code, which
/// looks only at the keys it needs.)
///
/// ```swift
/// enum Counter: Codable { case incrTapped, set(to: Int) }
/// enum Action: Codable { case counter(Counter) }
///
/// let action = try JSONBytesDecoder().decode(Action.self, from: #"{"counter":{"set":{"to":3}}}"#)
///
/// do {
///   _ = try JSONBytesDecoder().decode(Action.self, from: #"{"counter":{"set":{"to":3,"by":1}}}"#)
/// } catch let error as JSONUnknownKeyError {
///   error.key                              // "by"
///   jsonPathDescription(error.codingPath)  // "counter.set.by"
/// }
/// ```
///
/// To decode from part of a text, or from text already checked, make its ``JSONLayout`` once and
/// use ``decode(_:from:layout:at:)``.
public struct JSONBytesDecoder: Sendable {
  /// Contextual information handed to the values being decoded, like `JSONDecoder.userInfo`.
  public var userInfo: [CodingUserInfoKey: any Sendable]

  /// The most indexes a decoded `IndexSet` may hold; see ``JSONValueDecoder/maximumIndexSetCount``.
  public var maximumIndexSetCount: Int

  /// How many arrays and objects may be nested inside each other; see
  /// ``JSONValue/init(parsing:maximumDepth:)``.
  public var maximumDepth: Int

  /// Whether an object member the type never asked for, and whose value is not `null`, fails the
  /// decoding with ``JSONUnknownKeyError``. On unless turned off.
  public var refusesUnknownKeys: Bool

  /// Creates a decoder.
  ///
  /// ```swift
  /// let lenient = JSONBytesDecoder(refusesUnknownKeys: false)
  /// ```
  public init(
    userInfo: [CodingUserInfoKey: any Sendable] = [:],
    maximumIndexSetCount: Int = 1 << 16,
    maximumDepth: Int = JSONValue.defaultMaximumDepth,
    refusesUnknownKeys: Bool = true
  ) {
    self.userInfo = userInfo
    self.maximumIndexSetCount = maximumIndexSetCount
    self.maximumDepth = maximumDepth
    self.refusesUnknownKeys = refusesUnknownKeys
  }

  /// Decodes a value of the given type from UTF-8 JSON text, such as a NIO `ByteBuffer`'s
  /// readable bytes (`buffer.withUnsafeReadableBytes { try decoder.decode(T.self, from: $0) }`).
  ///
  /// - Throws: ``JSONParseError`` if the bytes are not JSON; `DecodingError` for the first value
  ///   that does not fit the type; ``JSONUnknownKeyError`` for a key it does not have.
  public func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
    let layout = try JSONLayout(scanning: bytes, maximumDepth: maximumDepth)
    return try decode(type, from: bytes, layout: layout, at: layout.root)
  }

  /// Decodes a value of the given type from UTF-8 JSON text, as from an `UnsafeRawBufferPointer`.
  ///
  /// ```swift
  /// let user = try JSONBytesDecoder().decode(User.self, from: Array(#"{"name":"Blob"}"#.utf8))
  /// ```
  public func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
    if let result = try bytes.withContiguousStorageIfAvailable({ buffer in
      try decode(type, from: UnsafeRawBufferPointer(buffer))
    }) {
      return result
    }
    return try Array(bytes).withUnsafeBytes { try decode(type, from: $0) }
  }

  /// Decodes a value of the given type from JSON text.
  ///
  /// ```swift
  /// let user = try JSONBytesDecoder().decode(User.self, from: #"{"name":"Blob"}"#)
  /// ```
  public func decode<T: Decodable>(_ type: T.Type, from string: String) throws -> T {
    var string = string
    return try string.withUTF8 { try decode(type, from: UnsafeRawBufferPointer($0)) }
  }

  /// Decodes a value of the given type from one value of a text already checked: `value`, in
  /// the `layout` made from `bytes`. Coding paths start at `value`.
  ///
  /// ```swift
  /// let layout = try JSONLayout(scanning: bytes)
  /// if let action = layout.member("action", of: layout.root, in: bytes) {
  ///   try JSONBytesDecoder().decode(Action.self, from: bytes, layout: layout, at: action)
  /// }
  /// ```
  ///
  /// - Throws: as decoding from the whole text does, and ``JSONParseError`` if `bytes` is not as
  ///   long as the text `layout` was made from.
  public func decode<T: Decodable>(
    _ type: T.Type, from bytes: UnsafeRawBufferPointer, layout: JSONLayout, at value: JSONLayout.Value
  ) throws -> T {
    guard bytes.count == layout.byteCount, layout.tape.indices.contains(value.index) else {
      throw JSONParseError(offset: 0, reason: "the layout was made from other bytes")
    }
    let context = _JSONDecodingContext(
      userInfo: userInfo.isEmpty ? [:] : userInfo.mapValues { $0 as Any },
      maximumIndexSetCount: maximumIndexSetCount,
      input: bytes.assumingMemoryBound(to: UInt8.self),
      layout: layout,
      maximumDepth: maximumDepth,
      refusesUnknownKeys: refusesUnknownKeys
    )
    let root = _JSONDecoderNode(context: context, value: .tape(value.index), parent: nil, component: .current)
    if let primitive = try root.unboxPrimitive(root.value, as: T.self, .current) {
      return primitive
    }
    return try root.decodeSelf(T.self)
  }
}

/// An object member that the type being decoded does not have: its key was never asked for, and
/// its value is not `null`. Thrown by ``JSONBytesDecoder`` (unless
/// ``JSONBytesDecoder/refusesUnknownKeys`` is off).
///
/// ```swift
/// catch let error as JSONUnknownKeyError {
///   print("unknown key \(error.key) at \(jsonPathDescription(error.codingPath))")  // counter.set.by
/// }
/// ```
public struct JSONUnknownKeyError: Error, CustomStringConvertible {
  /// The path of the member: its object's path, then its key.
  public var codingPath: [any CodingKey]
  /// The member's key.
  public var key: String

  public init(codingPath: [any CodingKey], key: String) {
    self.codingPath = codingPath
    self.key = key
  }

  public var description: String {
    "unknown key \"\(key)\" at \(jsonPathDescription(codingPath))"
  }
}

/// The key of an object that an enum met where it expected one of its cases, and that is none
/// of them: the `underlyingError` of the `DecodingError.typeMismatch` that Swift's synthesized
/// decoding throws there, when ``JSONBytesDecoder`` decodes.
///
/// ```swift
/// catch let DecodingError.typeMismatch(_, context) {
///   if let unknown = context.underlyingError as? JSONUnknownCaseError {
///     unknown.name  // "bogus", from {"counter":{"bogus":{}}}
///   }
/// }
/// ```
public struct JSONUnknownCaseError: Error, CustomStringConvertible {
  /// The object's one key.
  public var name: String

  public init(name: String) {
    self.name = name
  }

  public var description: String { "unknown case \"\(name)\"" }
}

// MARK: - Decoding from a layout

extension _JSONDecoderNode {
  /// Objects with more members than this are looked up through ``memberIndex``.
  static let smallObjectCount: UInt64 = 16

  /// The value of the member `key` of the object at `object` in the tape, marked as asked for.
  func tapeMember(_ key: String, of object: Int) -> _JSONNodeValue? {
    let layout = context.layout
    guard layout.tape[object].kind == .object else { return nil }
    if layout.tape[object].payload > Self.smallObjectCount {
      return lookUp(key, in: object)
    }
    // The last of repeated keys wins, as in a JSONValue; all of them are asked for.
    var found: Int?
    layout.forEachMember(of: object) { ordinal, keyIndex, valueIndex in
      if layout.keyEquals(keyIndex, key, in: context.input) {
        found = valueIndex
        asked |= 1 << UInt64(ordinal)
      }
    }
    return found.map { .tape($0) }
  }

  /// The keys of the object at `object` in the tape that are `Key`s, each once, where it first
  /// stands (as a JSONObject's keys); they are asked for.
  func tapeMemberKeys<Key: CodingKey>(_ type: Key.Type, of object: Int) -> [Key] {
    let layout = context.layout
    guard layout.tape[object].kind == .object else { return [] }
    var keys: [Key] = []
    let count = layout.tape[object].payload
    keys.reserveCapacity(Int(count))
    var seen: Set<String> = []
    layout.forEachMember(of: object) { ordinal, keyIndex, _ in
      let name = layout.string(at: keyIndex, in: context.input)
      guard let key = Key(stringValue: name) else { return }
      let isFirst: Bool
      if count <= Self.smallObjectCount {
        asked |= 1 << UInt64(ordinal)
        isFirst = !layout.isRepeatedKey(keyIndex, in: object, input: context.input)
      } else {
        _ = lookUp(name, in: object)
        isFirst = seen.insert(name).inserted
      }
      if isFirst {
        keys.append(key)
      }
    }
    if keys.isEmpty { hadNoKnownKeys = true }
    return keys
  }

  /// A large object's member `key`, marked as asked for.
  private func lookUp(_ key: String, in object: Int) -> _JSONNodeValue? {
    if memberIndex == nil {
      let layout = context.layout
      var members: [String: (value: Int, asked: Bool)] = [:]
      members.reserveCapacity(Int(layout.tape[object].payload))
      layout.forEachMember(of: object) { _, keyIndex, valueIndex in
        members[layout.string(at: keyIndex, in: context.input)] = (valueIndex, false)
      }
      memberIndex = members
    }
    guard let value = memberIndex?[key]?.value else { return nil }
    memberIndex?[key]?.asked = true
    return .tape(value)
  }

  private func wasAsked(_ ordinal: Int, key: @autoclosure () -> String) -> Bool {
    guard let memberIndex else { return asked & (1 << UInt64(ordinal)) != 0 }
    return memberIndex[key()]?.asked ?? false
  }

  /// Decodes `T` through its own `init(from:)`, then checks that every member of the objects it
  /// read was asked for; names the key of an object whose one key is no case of an enum.
  func decodeSelfCheckingKeys<T: Decodable>(_ type: T.Type) throws -> T {
    // Nested containers' decoders hold their parents: let them go once this value is done.
    defer { releaseNested() }
    do {
      let result = try T(from: self)
      try checkUnknownKeys()
      return result
    } catch DecodingError.typeMismatch(let type, let context)
      where hadNoKnownKeys && context.underlyingError == nil
    {
      // Swift's synthesized enum decoding found no case among the object's one key.
      guard let name = soleKey(), context.codingPath.count == codingPath.count else {
        throw DecodingError.typeMismatch(type, context)
      }
      throw DecodingError.typeMismatch(
        type,
        DecodingError.Context(
          codingPath: context.codingPath, debugDescription: context.debugDescription,
          underlyingError: JSONUnknownCaseError(name: name)
        )
      )
    }
  }

  private func releaseNested() {
    let decoders = nested
    nested = []
    for decoder in decoders {
      decoder.releaseNested()
    }
  }

  /// The key of this decoder's object when it has exactly one.
  private func soleKey() -> String? {
    guard case .tape(let object) = value, context.layout.tape[object].kind == .object,
      context.layout.tape[object].payload == 1
    else { return nil }
    return context.layout.string(at: object + 1, in: context.input)
  }

  /// Throws for the first member of this decoder's object, then of its nested containers' values,
  /// that was never asked for and is not `null`.
  private func checkUnknownKeys() throws {
    if isKeyed, !isHandedOn, case .tape(let object) = value, context.layout.tape[object].kind == .object {
      let layout = context.layout
      try layout.forEachMember(of: object) { ordinal, keyIndex, valueIndex in
        guard layout.tape[valueIndex].kind != .null,
          !wasAsked(ordinal, key: layout.string(at: keyIndex, in: context.input))
        else { return }
        let key = layout.string(at: keyIndex, in: context.input)
        throw JSONUnknownKeyError(codingPath: codingPath(appending: .key(_JSONStringKey(key))), key: key)
      }
    }
    for decoder in nested {
      try decoder.checkUnknownKeys()
    }
  }
}
