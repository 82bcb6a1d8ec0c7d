#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
@_spi(Reflection) import Swift
import SwitchyardJSON
import SwitchyardSynchronization

/// The stored properties of a struct, by where they lie in its memory, so that a scope along a
/// key path that is not one stored property — a computed property that assembles the child's
/// state from several fields of the parent, `\.self` — can tell which of the parent's fields its
/// child changed, and have only those re-encoded instead of the whole parent.
///
/// ```swift
/// struct Primes: Codable {
///   var count = 0
///   var favoritePrimes: [Int] = []
///   var counter: Counter.State {  // computed: {count}
///     get { Counter.State(count: self.count) }
///     set { self.count = newValue.count }
///   }
/// }
/// // Scope(state: \.counter, …) then a counter action: the scope keeps a copy of the parent,
/// // runs the child, and compares the two field by field: only "count" differs, so only
/// // "/count" is re-encoded and diffed, not the favorites.
/// ```
///
/// A field whose bytes are the same in the copy taken before the child ran and in the parent
/// after it holds the same value: the copy keeps a reference to every buffer the parent had, so
/// a mutation of an array, a string or a dictionary there copies it first and changes the
/// field's bytes. What bytes cannot show is an object mutated in place through a class
/// reference; such a field is also re-encoded whenever the child's state has a stored property
/// of its name, which is where a child could reach it (see ``Projection``).
///
/// The fields are only trusted when the parent's encoding is each stored property under its
/// name and nothing else — checked once per type by encoding a value, as
/// ``_StateMember/isFaithful(parent:child:count:)`` does for one member.
@usableFromInline
final class _StoredFields: Sendable {
  struct Field: Sendable {
    let name: String
    /// Where the field's value lies in the parent, without the padding inside it, which a copy
    /// need not preserve.
    let ranges: [Range<Int>]
    /// Whether the field's type holds no references at all, so that equal bytes are equal values
    /// however the child reached them.
    let isTrivial: Bool
    /// The field's value read from the parent's bytes; `nil` when its type is not `Encodable`.
    // Immutable, and it captures nothing but a type and an offset.
    nonisolated(unsafe) let read: ((UnsafeRawPointer) -> any Encodable)?
  }

  let fields: [Field]
  private let verification = Atomic<UInt8>(Verification.unknown)

  private enum Verification {
    static let unknown: UInt8 = 0
    static let faithful: UInt8 = 1
    static let unfaithful: UInt8 = 2
  }

  private init(fields: [Field]) {
    self.fields = fields
  }

  /// The stored fields of `Root`; `nil` when it is not a struct with at least one, or when a
  /// field's place in memory is not known.
  static func of<Root>(_ root: Root.Type) -> _StoredFields? {
    let key = ObjectIdentifier(root)
    if let known = Self.registry.withLock({ $0[key] }) { return known }
    // Lists nothing, and says false, for a type that is not a struct.
    let isStruct = _forEachFieldWithKeyPath(of: Root.self) { _, _ in true }
    var fields: [Field] = []
    if isStruct {
      _ = _forEachField(of: Root.self) { name, offset, type, kind in
        fields.append(Self.field(String(cString: name), type, kind, at: offset))
        return true
      }
    }
    // Fields of no size at all would leave the parent's bytes without an address.
    let found = fields.isEmpty || MemoryLayout<Root>.size == 0 ? nil : _StoredFields(fields: fields)
    Self.registry.withLock { $0[key] = found }
    return found
  }

  private static func field(_ name: String, _ type: Any.Type, _ kind: _MetadataKind, at offset: Int) -> Field {
    func field<Value>(_ type: Value.Type) -> Field {
      var ranges: [Range<Int>] = []
      Self.appendRanges(of: Value.self, kind, at: offset, to: &ranges)
      return Field(
        name: name, ranges: ranges, isTrivial: _isPOD(Value.self),
        read: (Value.self as? any Encodable.Type).map { Self.reader($0, at: offset) }
      )
    }
    return field(type)
  }

  private static func reader<Value: Encodable>(
    _ type: Value.Type, at offset: Int
  ) -> (UnsafeRawPointer) -> any Encodable {
    { parent in (parent + offset).assumingMemoryBound(to: Value.self).pointee }
  }

  /// The byte ranges of a value of `type` at `offset`: a struct's fields one by one, anything
  /// else whole; adjacent ranges merged.
  private static func appendRanges(
    of type: Any.Type, _ kind: _MetadataKind, at offset: Int, to ranges: inout [Range<Int>]
  ) {
    if kind == .struct {
      _ = _forEachField(of: type) { _, fieldOffset, fieldType, fieldKind in
        Self.appendRanges(of: fieldType, fieldKind, at: offset + fieldOffset, to: &ranges)
        return true
      }
      return
    }
    let size = Self.size(of: type)
    guard size > 0 else { return }
    if let last = ranges.last, last.upperBound == offset {
      ranges[ranges.count - 1] = last.lowerBound..<(offset + size)
    } else {
      ranges.append(offset..<(offset + size))
    }
  }

  private static func size(of type: Any.Type) -> Int {
    func size<Value>(_ type: Value.Type) -> Int { MemoryLayout<Value>.size }
    return size(type)
  }

  private static let registry = Mutex<[ObjectIdentifier: _StoredFields?]>([:])

  /// Whether the verification already failed: the fields are then never used.
  var isKnownUnfaithful: Bool {
    self.verification.load(ordering: .relaxed) == Verification.unfaithful
  }

  /// Whether `parent` encodes as an object of its stored properties, each under its name: an
  /// optional that is `nil` may be left out. Checked once; the answer then stands for the type.
  func isFaithful<Parent>(_ parent: Parent) -> Bool {
    switch self.verification.load(ordering: .acquiring) {
    case Verification.faithful: return true
    case Verification.unfaithful: return false
    default: break
    }
    if self.encodes(parent) {
      _ = self.verification.compareExchange(
        expected: Verification.unknown, desired: Verification.faithful, ordering: .acquiringAndReleasing
      )
      return self.verification.load(ordering: .acquiring) == Verification.faithful
    }
    self.verification.store(Verification.unfaithful, ordering: .releasing)
    return false
  }

  private func encodes<Parent>(_ parent: Parent) -> Bool {
    let encoder = JSONValueEncoder()
    guard
      let encodable = parent as? any Encodable,
      case let .object(members)? = try? encoder.encode(encodable)
    else { return false }
    let names = Set(self.fields.map(\.name))
    guard members.keys.allSatisfy(names.contains) else { return false }
    for field in self.fields {
      guard
        let read = field.read,
        case let value = withUnsafeBytes(of: parent, { read($0.baseAddress!) }),
        let encoded = try? encoder.encode(value)
      else { return false }
      guard members[field.name] == encoded || (members[field.name] == nil && encoded == .null) else {
        return false
      }
    }
    return true
  }

  /// The fields of the parent that a child whose state has the stored properties `childFields`
  /// may have changed without their bytes showing it.
  @usableFromInline
  struct Projection: Sendable {
    let fields: _StoredFields
    /// For each field, whether it holds references and shares its name with a stored property of
    /// the child: such a field is re-encoded whenever the child ran.
    let isReachable: [Bool]

    init(_ fields: _StoredFields, childFields: [String]) {
      self.fields = fields
      let names = Set(childFields)
      self.isReachable = fields.fields.map { !$0.isTrivial && names.contains($0.name) }
    }

    /// The fields to re-encode after the child ran on `after`, whose value before was `before`:
    /// those whose bytes differ, and the reachable ones; `nil` when the parent's encoding is not
    /// its fields.
    func touched<Parent>(from before: Parent, to after: Parent) -> [(name: String, value: any Encodable)]? {
      guard self.fields.isFaithful(after) else { return nil }
      var touched: [(name: String, value: any Encodable)] = []
      let isComplete = withUnsafeBytes(of: before) { old in
        withUnsafeBytes(of: after) { new in
          for (index, field) in self.fields.fields.enumerated() {
            let isSame =
              !self.isReachable[index]
              && field.ranges.allSatisfy { range in
                memcmp(old.baseAddress! + range.lowerBound, new.baseAddress! + range.lowerBound, range.count) == 0
              }
            if isSame { continue }
            // A field that does not encode cannot be patched on its own: the parent is, whole.
            guard let read = field.read else { return false }
            touched.append((field.name, read(new.baseAddress!)))
          }
          return true
        }
      }
      return isComplete ? touched : nil
    }
  }
}
