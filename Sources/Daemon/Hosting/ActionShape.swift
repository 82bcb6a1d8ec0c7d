/// The keys an action encodes as, down to a depth: enough to tell which case it is, at a fraction
/// of the cost of encoding it.
///
/// Whether a client may send an action is decided on its case names as it encodes
/// (``ActionVisibility``). Encoding the whole action with `JSONValueEncoder` to read two keys
/// cost a `Send` as much as decoding it; this encoder records only the objects' keys, builds no
/// values and does not even call the `encode(to:)` of what lies deeper than asked.
///
/// It sees what `JSONValueEncoder` writes: an object whose only member is `_0` (the payload of a
/// case with one unlabeled associated value) stands for that payload, and so takes no level.
///
/// ```swift
/// let shape = try ActionShape(of: Primes.Action.counter(.nthPrimeResponse(7)), depth: 2)
/// shape.contains(["counter", "nthPrimeResponse"])  // true
/// ```
struct ActionShape {
  /// An object's members by key; `nil` for anything that is not an object, or lies too deep.
  fileprivate final class Node {
    var members: [String: Node?] = [:]

    /// The object this one stands for: its payload when `_0` is all it has.
    var resolved: Node {
      if self.members.count == 1, let payload = self.members[_payloadKey] {
        return payload?.resolved ?? self
      }
      return self
    }
  }

  private let root: Node?

  /// Records the keys of `action`'s objects down to `depth` levels (the root's keys are level 1).
  init(of action: some Encodable, depth: Int) throws {
    let encoder = _ShapeEncoder(level: 0, depth: depth)
    try action.encode(to: encoder)
    self.root = encoder.node
  }

  /// Whether following `path`, key after key from the root, finds a member at each step.
  func contains(_ path: [String]) -> Bool {
    var node = self.root?.resolved
    for (index, key) in path.enumerated() {
      guard let object = node, let member = object.members[key] else { return false }
      node = index == path.count - 1 ? nil : member?.resolved
      if index < path.count - 1 && node == nil { return false }
    }
    return true
  }
}

private let _payloadKey = "_0"

/// Records the objects of one value; see ``ActionShape``.
private final class _ShapeEncoder: Encoder {
  let level: Int
  let depth: Int
  var node: ActionShape.Node?

  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  init(level: Int, depth: Int) {
    self.level = level
    self.depth = depth
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let node = self.node ?? ActionShape.Node()
    self.node = node
    return KeyedEncodingContainer(_ShapeKeyedContainer<Key>(node: node, level: self.level, depth: self.depth))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer { _ShapeIgnoredContainer() }
  func singleValueContainer() -> any SingleValueEncodingContainer { _ShapeIgnoredContainer() }
}

/// An object's keys: each member's own keys are recorded while they lie within the depth.
private struct _ShapeKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let node: ActionShape.Node
  /// The object's own level: its members are one deeper, except a payload (`_0`), which stands
  /// in the object's place.
  let level: Int
  let depth: Int

  var codingPath: [any CodingKey] { [] }

  private func memberLevel(_ key: Key) -> Int {
    key.stringValue == _payloadKey ? self.level : self.level + 1
  }

  private func leaf(_ key: Key) {
    self.node.members[key.stringValue] = .some(nil)
  }

  mutating func encodeNil(forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: Bool, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: String, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: Double, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: Float, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: Int, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: UInt, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { self.leaf(key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws { self.leaf(key) }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    let level = self.memberLevel(key)
    guard level < self.depth else { return self.leaf(key) }
    let encoder = _ShapeEncoder(level: level, depth: self.depth)
    try value.encode(to: encoder)
    self.node.members[key.stringValue] = .some(encoder.node)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let child = ActionShape.Node()
    self.node.members[key.stringValue] = .some(child)
    return KeyedEncodingContainer(_ShapeKeyedContainer<NestedKey>(node: child, level: self.memberLevel(key), depth: self.depth))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    self.leaf(key)
    return _ShapeIgnoredContainer()
  }

  mutating func superEncoder() -> any Encoder { _ShapeEncoder(level: self.depth, depth: self.depth) }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    self.leaf(key)
    return _ShapeEncoder(level: self.depth, depth: self.depth)
  }
}

/// Arrays and single values: nothing in them is a case name.
private struct _ShapeIgnoredContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
  var codingPath: [any CodingKey] { [] }
  var count: Int { 0 }

  mutating func encodeNil() throws {}
  mutating func encode<T: Encodable>(_ value: T) throws {}
  mutating func encode(_ value: Bool) throws {}
  mutating func encode(_ value: String) throws {}
  mutating func encode(_ value: Double) throws {}
  mutating func encode(_ value: Float) throws {}
  mutating func encode(_ value: Int) throws {}
  mutating func encode(_ value: Int8) throws {}
  mutating func encode(_ value: Int16) throws {}
  mutating func encode(_ value: Int32) throws {}
  mutating func encode(_ value: Int64) throws {}
  mutating func encode(_ value: UInt) throws {}
  mutating func encode(_ value: UInt8) throws {}
  mutating func encode(_ value: UInt16) throws {}
  mutating func encode(_ value: UInt32) throws {}
  mutating func encode(_ value: UInt64) throws {}

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
    KeyedEncodingContainer(_ShapeKeyedContainer<NestedKey>(node: ActionShape.Node(), level: .max, depth: 0))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
  mutating func superEncoder() -> any Encoder { _ShapeEncoder(level: .max, depth: 0) }
}
