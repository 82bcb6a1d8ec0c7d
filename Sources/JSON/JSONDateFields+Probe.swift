import Foundation

/// One search of ``JSONDateFields``: the dates found, and what keeps the search finite.
final class _DateProbe {
  /// The places a `Date` was asked for.
  var dates: [_ProbeNode] = []
  var isComplete = true
  /// The types being decoded, outermost first: a type met a second time inside itself is
  /// followed with its optionals and collections empty, a third time not at all.
  private var types: [ObjectIdentifier] = []
  /// How many more values the search may make up: a bound for types that are large or nest
  /// deeply, whatever their shape.
  private var budget = 20_000

  /// A made-up `T`, decoded at the place `token` names below `parent` (`nil`: the same place as
  /// the parent, as in a single value container).
  func value<T: Decodable>(_ type: T.Type, parent: _ProbeNode?, token: String?) throws -> T {
    budget -= 1
    guard budget > 0 else { throw _ProbeStop.budget }
    if T.self == Date.self {
      dates.append(_ProbeNode(probe: self, parent: parent, token: token, choice: 0, isPruned: false))
      return unsafeBitCast(Date(timeIntervalSinceReferenceDate: 0), to: T.self)
    }
    if let value = Self.madeUp(T.self) { return value }
    // An enum without payloads holds no date, and its own decoding may refuse a made-up value
    // (a String-backed enum and ""): any of its cases will do.
    if let first = _NoPayloadEnum.cases(of: T.self)?.first { return first }

    let id = ObjectIdentifier(T.self)
    let seen = types.count { $0 == id }
    guard seen < 2 else { throw _ProbeStop.recursion }
    types.append(id)
    defer { types.removeLast() }
    // Once for each case when `T` is an enum: its first decoding says how many there are.
    var result: T?
    var failure: (any Error)?
    var choice = 0
    repeat {
      let node = _ProbeNode(
        probe: self, parent: parent, token: token, choice: choice, isPruned: seen > 0 || parent?.isPruned == true
      )
      do {
        let value = try T(from: node)
        if result == nil { result = value }
        // Inside itself, one case is enough.
        if seen > 0 { break }
      } catch _ProbeStop.budget {
        throw _ProbeStop.budget
      } catch {
        isComplete = false
        failure = error
      }
      choice += 1
      if choice >= node.caseCount { break }
    } while true
    if let result { return result }
    throw failure ?? _ProbeStop.recursion
  }

  /// The values of the types whose own decoding would refuse the made-up ones.
  private static func madeUp<T>(_ type: T.Type) -> T? {
    if T.self == JSONValue.self { return unsafeBitCast(JSONValue.null, to: T.self) }
    if T.self == URL.self { return unsafeBitCast(URL(string: "http://localhost")!, to: T.self) }
    if T.self == UUID.self { return unsafeBitCast(UUID(), to: T.self) }
    if T.self == Decimal.self { return unsafeBitCast(Decimal(0), to: T.self) }
    if T.self == Data.self { return Data() as? T }
    if T.self == IndexSet.self { return IndexSet() as? T }
    return nil
  }
}

/// Why a search stops short.
enum _ProbeStop: Error {
  case budget
  case recursion
}

/// One place in the made-up value: the `Decoder` a type decodes itself from, and, through its
/// parents, the JSON Pointer of the place.
final class _ProbeNode: Decoder, SingleValueDecodingContainer {
  let probe: _DateProbe
  let parent: _ProbeNode?
  /// The step from the parent: a member's key, `*` for an element, `nil` for the same place.
  let token: String?
  /// Which case an enum decoded here is to take.
  let choice: Int
  /// Inside a type met again inside itself: no optionals, empty collections.
  let isPruned: Bool
  /// How many cases the enum decoded here has; 1 for anything else.
  var caseCount = 1
  /// Whether the object here was asked for its keys, and they are not an enum's cases: a
  /// dictionary, whose every member is `*`.
  var isMap = false
  /// The keys asked of the object here.
  var askedKeys: Set<String> = []

  init(probe: _DateProbe, parent: _ProbeNode?, token: String?, choice: Int, isPruned: Bool) {
    self.probe = probe
    self.parent = parent
    self.token = token
    self.choice = choice
    self.isPruned = isPruned
  }

  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// The place as a JSON Pointer, as ``JSONValueEncoder`` writes it: the `_0` of an enum case's
  /// single unlabeled value is not there, since the value stands in for the case's object.
  var pointer: String {
    var tokens: [String] = []
    var node: _ProbeNode? = self
    while let current = node {
      if let token = current.token,
        token != _unlabeledPayloadKey || current.parent?.askedKeys != [_unlabeledPayloadKey]
      {
        tokens.append(token)
      }
      node = current.parent
    }
    return JSONPointer(tokens: tokens.reversed()).description
  }

  func child<T: Decodable>(_ type: T.Type, _ token: String?) throws -> T {
    try probe.value(T.self, parent: self, token: token)
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(_ProbeKeyedContainer<Key>(node: self))
  }

  func unkeyedContainer() -> any UnkeyedDecodingContainer {
    _ProbeUnkeyedContainer(node: self)
  }

  func singleValueContainer() -> any SingleValueDecodingContainer { self }

  // MARK: Single value

  func decodeNil() -> Bool { isPruned }
  func decode(_ type: Bool.Type) -> Bool { false }
  func decode(_ type: String.Type) -> String { "" }
  func decode(_ type: Double.Type) -> Double { 0 }
  func decode(_ type: Float.Type) -> Float { 0 }
  func decode(_ type: Int.Type) -> Int { 0 }
  func decode(_ type: Int8.Type) -> Int8 { 0 }
  func decode(_ type: Int16.Type) -> Int16 { 0 }
  func decode(_ type: Int32.Type) -> Int32 { 0 }
  func decode(_ type: Int64.Type) -> Int64 { 0 }
  func decode(_ type: UInt.Type) -> UInt { 0 }
  func decode(_ type: UInt8.Type) -> UInt8 { 0 }
  func decode(_ type: UInt16.Type) -> UInt16 { 0 }
  func decode(_ type: UInt32.Type) -> UInt32 { 0 }
  func decode(_ type: UInt64.Type) -> UInt64 { 0 }
  func decode<T: Decodable>(_ type: T.Type) throws -> T { try child(T.self, nil) }
}

/// An object of the made-up value. It has whatever key its type asks for. Asked for its keys,
/// it has, when they are an enum's cases (an enum's own object), the one its node's `choice`
/// picks; otherwise (a dictionary's) one key, which stands for every member.
struct _ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let node: _ProbeNode

  var codingPath: [any CodingKey] { [] }

  var allKeys: [Key] {
    if let cases = _NoPayloadEnum.cases(of: Key.self) {
      node.caseCount = cases.count
      return node.choice < cases.count ? [cases[node.choice]] : []
    }
    node.isMap = true
    return node.isPruned ? [] : [Key(intValue: 0) ?? Key(stringValue: "0")].compactMap { $0 }
  }

  private func token(_ key: Key) -> String {
    node.askedKeys.insert(key.stringValue)
    return node.isMap ? "*" : key.stringValue
  }

  func contains(_ key: Key) -> Bool {
    _ = token(key)
    return !node.isPruned
  }

  func decodeNil(forKey key: Key) -> Bool {
    _ = token(key)
    return node.isPruned
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try node.child(T.self, token(key))
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    let token = token(key)
    guard !node.isPruned else { return nil }
    do {
      return try node.child(T.self, token)
    } catch _ProbeStop.budget {
      throw _ProbeStop.budget
    } catch {
      // What an optional holds is missed; what stands beside it is still found.
      node.probe.isComplete = false
      return nil
    }
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) -> KeyedDecodingContainer<NestedKey> {
    _ProbeNode(probe: node.probe, parent: node, token: token(key), choice: 0, isPruned: node.isPruned)
      .container(keyedBy: NestedKey.self)
  }

  func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer {
    _ProbeNode(probe: node.probe, parent: node, token: token(key), choice: 0, isPruned: node.isPruned)
      .unkeyedContainer()
  }

  func superDecoder() -> any Decoder {
    _ProbeNode(probe: node.probe, parent: node, token: "super", choice: 0, isPruned: node.isPruned)
  }

  func superDecoder(forKey key: Key) -> any Decoder {
    _ProbeNode(probe: node.probe, parent: node, token: token(key), choice: 0, isPruned: node.isPruned)
  }
}

/// An array of the made-up value: one element, `*`, or none inside a type met again.
struct _ProbeUnkeyedContainer: UnkeyedDecodingContainer {
  let node: _ProbeNode
  private(set) var currentIndex = 0

  init(node: _ProbeNode) {
    self.node = node
  }

  var codingPath: [any CodingKey] { [] }
  var count: Int? { node.isPruned ? 0 : 1 }
  var isAtEnd: Bool { currentIndex >= count! }

  private mutating func next() throws -> _ProbeNode {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "The made-up array has one element."))
    }
    currentIndex += 1
    return node
  }

  mutating func decodeNil() -> Bool { false }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try next().child(T.self, "*")
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
    _ProbeNode(probe: node.probe, parent: try next(), token: "*", choice: 0, isPruned: node.isPruned)
      .container(keyedBy: NestedKey.self)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    _ProbeNode(probe: node.probe, parent: try next(), token: "*", choice: 0, isPruned: node.isPruned)
      .unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder {
    _ProbeNode(probe: node.probe, parent: try next(), token: "*", choice: 0, isPruned: node.isPruned)
  }
}
