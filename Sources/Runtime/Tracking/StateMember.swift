import SwitchyardJSON
import SwitchyardSynchronization

/// Where the state at a key path lives in its parent's JSON: the member named like the stored
/// property, if the parent's encoding puts it there.
///
/// ```swift
/// struct App: Codable { var counter: Counter.State; var isOn: Bool }
/// _StateMember.at(\App.counter)?.name  // "counter"
/// _StateMember.at(\App.counter.count)  // nil: two components, not one field
/// ```
///
/// The name comes from ``StoredProperty`` (the standard library's `_forEachFieldWithKeyPath`). A
/// computed property has no field, hence no member. Synthesized `Codable` uses the property's
/// name as the key, but custom `CodingKeys` or a custom `encode(to:)` need not: the
/// first time a child behind this key path changes, ``isFaithful(parent:child:count:)`` compares
/// the child's encoding with the parent's member, and a mismatch marks the member unfaithful for
/// good, which makes change tracking re-encode the parent instead.
///
/// One instance per key path, shared by every store, so that each key path is looked up and
/// verified once per process.
@usableFromInline
final class _StateMember: Sendable {
  /// The JSON member name, or `nil` when the key path is not one stored property.
  let name: String?
  private let verification = Atomic<UInt8>(Verification.unknown)

  private enum Verification {
    static let unknown: UInt8 = 0
    static let faithful: UInt8 = 1
    static let unfaithful: UInt8 = 2
  }

  private init(name: String?) {
    self.name = name
  }

  /// The member for `keyPath`; `nil` when `keyPath` is not a stored property of `Root`.
  static func at<Root, Value>(_ keyPath: KeyPath<Root, Value>) -> _StateMember? {
    let key = Key(keyPath: keyPath)
    let member = Self.registry.withLock { registry in
      if let member = registry[key] { return member }
      let member = _StateMember(name: StoredProperty.name(of: keyPath))
      registry[key] = member
      return member
    }
    return member.name == nil ? nil : member
  }

  private static let registry = Mutex<[Key: _StateMember]>([:])

  private struct Key: Hashable, @unchecked Sendable {
    // Unchecked: a key path is immutable.
    let keyPath: AnyKeyPath
  }

  /// Whether the verification already failed: the member is then never used.
  var isKnownUnfaithful: Bool {
    self.verification.load(ordering: .relaxed) == Verification.unfaithful
  }

  /// Whether `parent` encodes `child` as its member ``name`` — and, with `count`, as an array of
  /// `count` elements, so that element *i* of the child is element *i* of the member. Checked
  /// once, by encoding both; the answer then stands for the key path.
  ///
  /// The check also wants every member of the parent's encoding to be one of its stored
  /// properties, which rules out a custom `encode(to:)` that adds derived members (a count of
  /// the child's elements, say): those would change without the child's subtree showing it.
  /// What it cannot see is a custom encoding that writes one property's member from another's.
  func isFaithful<Parent, Child>(
    parent: @autoclosure () -> Parent,
    child: @autoclosure () -> Child,
    count: @autoclosure () -> Int? = nil
  ) -> Bool {
    switch self.verification.load(ordering: .acquiring) {
    case Verification.faithful: return true
    case Verification.unfaithful: return false
    default: break
    }
    let isFaithful = self.encodes(parent: parent(), child: child(), count: count())
    if isFaithful {
      _ = self.verification.compareExchange(
        expected: Verification.unknown, desired: Verification.faithful, ordering: .acquiringAndReleasing
      )
      // Another store may have found a mismatch meanwhile: a mismatch wins.
      return self.verification.load(ordering: .acquiring) == Verification.faithful
    }
    self.verification.store(Verification.unfaithful, ordering: .releasing)
    return false
  }

  private func encodes<Parent, Child>(parent: Parent, child: Child, count: Int?) -> Bool {
    guard
      let name,
      let encodableParent = parent as? any Encodable,
      let encodableChild = child as? any Encodable
    else { return false }
    let encoder = JSONValueEncoder()
    guard
      case let .object(members)? = try? encoder.encode(encodableParent),
      let member = members[name],
      let encodedChild = try? encoder.encode(encodableChild),
      encodedChild != .null,
      member == encodedChild
    else { return false }
    if let count {
      guard case let .array(elements) = encodedChild, elements.count == count else { return false }
    }
    let fields = Set(StoredProperty.names(of: Parent.self))
    return members.keys.allSatisfy(fields.contains)
  }
}
