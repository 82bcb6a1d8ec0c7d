
/// The keys an action encodes as, along the paths an ``ActionVisibility`` declares internal and
/// nowhere else: enough to tell whether it is one of them, at a fraction of the cost of encoding it.
///
/// Whether a client may send an action is decided on its case names as it encodes. Encoding the
/// whole action with `JSONValueEncoder` to read two keys cost a `Send` as much as decoding it;
/// this encoder builds no values, and records a member only when its key is the next step of a
/// declared path: everything else it counts and passes over without calling its `encode(to:)`.
/// Every `Send` goes through it once per feature that takes the action.
///
/// It sees what `JSONValueEncoder` writes: an object whose only member is `_0` (the payload of a
/// case with one unlabeled associated value) stands for that payload, and so takes no level.
///
/// ```swift
/// let paths = ActionShape.Paths(["counter.nthPrimeResponse", "favoritePrimes.loaded"])
/// let shape = try ActionShape(of: Primes.Action.counter(.nthPrimeResponse(n: 3, prime: 7)), along: paths)
/// shape.firstMatch  // "counter.nthPrimeResponse"
/// ```
struct ActionShape {
  /// Declared paths as a tree of their steps: what the encoder follows.
  final class Paths: Sendable {
    /// The next steps, by key.
    let steps: [String: Paths]
    /// The declared path that ends here and its place among the declarations, if one does.
    let end: (path: String, order: Int)?

    /// The tree of `paths`, each a dot-separated list of case names.
    convenience init(_ paths: [String]) {
      self.init(paths.enumerated().map { (order: $0.offset, names: $0.element.split(separator: ".").map(String.init)) }, depth: 0)
    }

    private init(_ paths: [(order: Int, names: [String])], depth: Int) {
      let ending = paths.filter { $0.names.count == depth }
      self.end = ending.min { $0.order < $1.order }.map { ($0.names.joined(separator: "."), $0.order) }
      let longer = Dictionary(grouping: paths.filter { $0.names.count > depth }) { $0.names[depth] }
      self.steps = longer.mapValues { Paths($0, depth: depth + 1) }
    }

    /// Whether nothing is declared below here: a member found here needs no look inside.
    var isLeaf: Bool { self.steps.isEmpty }

    /// The first declared path (in the order of declaration) that `action`'s cases follow, one
    /// inside the other; `nil` when none does. What ``ActionShape/firstMatch`` finds of the
    /// action's encoding, for paths that go through unlabeled payloads only.
    func firstMatch(following action: some DescribedAction) -> String? {
      var step = self
      var best = step.end
      var value: (any DescribedAction)? = action
      while let current = value {
        let described = current.describedCase
        guard let next = step.steps[described.name] else { break }
        best = ActionShape.earlier(best, next.end)
        step = next
        value = described.payload
      }
      return best?.path
    }

    static let none = Paths([])
  }

  /// An object met along the declared paths: its members that are next steps, and how many
  /// members it has in all (an object of `_0` alone stands for its payload).
  fileprivate final class Node {
    let paths: Paths
    var memberCount = 0
    /// The members whose keys are next steps: their objects, or `nil` for anything else.
    var members: [(key: String, node: Node?)] = []
    /// The `_0` member's object, when it is one.
    var payload: Node?
    var hasPayload = false

    init(paths: Paths) {
      self.paths = paths
    }

    /// The object this one stands for: its payload when `_0` is all it has.
    var resolved: Node {
      if self.memberCount == 1, self.hasPayload {
        return self.payload?.resolved ?? self
      }
      return self
    }
  }

  private let paths: Paths
  private let root: Node?

  /// Records the keys of `action` along `paths`.
  init(of action: some Encodable, along paths: Paths) throws {
    let encoder = _ShapeEncoder(paths: paths)
    try action.encode(to: encoder)
    self.paths = paths
    self.root = encoder.node
  }

  /// The first declared path (in the order of declaration) whose keys are objects' keys, one
  /// under the other; `nil` when none is.
  var firstMatch: String? {
    Self.earlier(self.paths.end, self.root.flatMap { Self.firstMatch(in: $0.resolved) })?.path
  }

  private static func firstMatch(in node: Node) -> (path: String, order: Int)? {
    var best: (path: String, order: Int)?
    for (key, member) in node.members {
      guard let step = node.paths.steps[key] else { continue }
      // A path may end at this member (whatever its value) and longer ones go on inside it.
      let inside = member.flatMap { Self.firstMatch(in: $0.resolved) }
      best = Self.earlier(best, Self.earlier(step.end, inside))
    }
    return best
  }

  fileprivate static func earlier(
    _ one: (path: String, order: Int)?, _ other: (path: String, order: Int)?
  ) -> (path: String, order: Int)? {
    guard let one else { return other }
    guard let other else { return one }
    return one.order <= other.order ? one : other
  }
}

private let _payloadKey = "_0"

/// Records the objects of one value along the declared paths; see ``ActionShape``.
private final class _ShapeEncoder: Encoder {
  let paths: ActionShape.Paths
  var node: ActionShape.Node?

  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  init(paths: ActionShape.Paths) {
    self.paths = paths
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let node = self.node ?? ActionShape.Node(paths: self.paths)
    self.node = node
    return KeyedEncodingContainer(_ShapeKeyedContainer<Key>(node: node))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer { _ShapeIgnoredContainer() }
  func singleValueContainer() -> any SingleValueEncodingContainer { _ShapeIgnoredContainer() }
}

/// An object's keys: a member whose key is a next step is recorded (and, when steps go on below
/// it, its own keys too); any other member is only counted.
private struct _ShapeKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let node: ActionShape.Node

  var codingPath: [any CodingKey] { [] }

  /// Counts a member that has no keys of its own, and records it when it is a next step.
  private func leaf(_ key: Key) {
    self.node.memberCount += 1
    let name = key.stringValue
    if name == _payloadKey { self.node.hasPayload = true }
    if self.node.paths.steps[name] != nil { self.node.members.append((name, nil)) }
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

  /// Where a member's own keys are recorded: the same steps for the payload, which stands in
  /// this object's place, the steps below its key for a next step; `nil` for anything else.
  private func paths(under key: Key) -> ActionShape.Paths? {
    let name = key.stringValue
    if name == _payloadKey { return self.node.paths }
    guard let step = self.node.paths.steps[name], !step.isLeaf else { return nil }
    return step
  }

  /// Records the object made under `key` where it belongs.
  private func record(_ child: ActionShape.Node?, under key: Key) {
    let name = key.stringValue
    self.node.memberCount += 1
    if name == _payloadKey {
      self.node.hasPayload = true
      self.node.payload = child
    }
    if self.node.paths.steps[name] != nil { self.node.members.append((name, child)) }
  }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    guard let paths = self.paths(under: key) else { return self.record(nil, under: key) }
    let encoder = _ShapeEncoder(paths: paths)
    try value.encode(to: encoder)
    self.record(encoder.node, under: key)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let child = ActionShape.Node(paths: self.paths(under: key) ?? .none)
    self.record(child, under: key)
    return KeyedEncodingContainer(_ShapeKeyedContainer<NestedKey>(node: child))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    self.leaf(key)
    return _ShapeIgnoredContainer()
  }

  mutating func superEncoder() -> any Encoder { _ShapeEncoder(paths: .none) }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    self.leaf(key)
    return _ShapeEncoder(paths: .none)
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
    KeyedEncodingContainer(_ShapeKeyedContainer<NestedKey>(node: ActionShape.Node(paths: .none)))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
  mutating func superEncoder() -> any Encoder { _ShapeEncoder(paths: .none) }
}
