/// How `@DescribedAction` has an action decoded from a client's JSON (``DescribedAction(decoding:)``).
public enum ActionDecoding {
  /// Through the action's `Codable` conformance only. The default: it is the conformance the
  /// type has, whatever it says.
  case codable
  /// Case by case, straight from the bytes, where the JSON is the plain form of nested cases
  /// (`{"counter":{"incrTapped":{}}}`), and through `Codable` for everything else. For an enum
  /// whose `Codable` conformance is the synthesized one, the compiler's own.
  case fromCases
}

/// An action that reads the plain form of its cases straight from the bytes of a checked JSON
/// text, without `Codable`'s containers. `@DescribedAction(decoding: .fromCases)` writes the
/// conformance from the enum's declaration.
///
/// It is a fast path that only ever agrees with the synthesized `Codable` conformance: it takes a
/// case without a payload written as `{"name":{}}` and a case whose one unlabeled payload is
/// itself a case-decoded action, written unwrapped (`{"counter":{"incrTapped":{}}}`) or wrapped
/// as the synthesized conformance writes it (`{"counter":{"_0":{"incrTapped":{}}}}`); for
/// anything else — another payload, a key with escape sequences that is no case, extra
/// members, a malformed value — it answers `nil`, and the
/// caller decodes the whole action through `Codable`, which also writes the errors.
///
/// ```swift
/// @DescribedAction(decoding: .fromCases)
/// enum Action: Codable { case counter(Counter.Action), reset }
///
/// let text = Array(#"{"counter":{"incrTapped":{}}}"#.utf8)
/// let action = try text.withUnsafeBytes { bytes in
///   let layout = try JSONLayout(scanning: bytes)
///   return Action.decodeCases(from: ActionBytes(bytes: bytes, layout: layout, value: layout.root))
/// }
/// // .counter(.incrTapped)
/// ```
public protocol CaseDecodedAction: Decodable, SendableMetatype {
  /// The action `value` is written as, when it is the plain form of nested cases; `nil` for
  /// anything else, which `Codable` decodes (or refuses) instead.
  static func decodeCases(from value: ActionBytes) -> Self?
}

/// What reads `Action` case by case from its bytes when it is a ``CaseDecodedAction``; `nil`
/// for any other type, which `Codable` decodes. Made once per type by a decoder that takes
/// actions of a type it knows only as a generic parameter.
///
/// ```swift
/// let decodeCases = caseDecoder(of: Primes.Action.self)
/// let action = decodeCases?(ActionBytes(bytes: bytes, layout: layout, value: layout.root))
/// ```
public func caseDecoder<Action>(of _: Action.Type) -> (@Sendable (ActionBytes) -> Action?)? {
  guard let type = Action.self as? any CaseDecodedAction.Type else { return nil }
  return caseDecoder(of: type, as: Action.self)
}

private func caseDecoder<Cases: CaseDecodedAction, Action>(
  of _: Cases.Type, as _: Action.Type
) -> @Sendable (ActionBytes) -> Action? {
  precondition(Cases.self == Action.self, "\(Cases.self) is not \(Action.self)")
  // The same type under two names: a cast would ask the runtime to check that for every action.
  return { bytes in Cases.decodeCases(from: bytes).map { unsafeBitCast($0, to: Action.self) } }
}

/// One value of a checked JSON text, read as an action's case: what the decoder that
/// `@DescribedAction(decoding: .fromCases)` writes works with.
public struct ActionBytes {
  /// The text.
  public let bytes: UnsafeRawBufferPointer
  /// The text's layout, made from `bytes`.
  public let layout: JSONLayout
  /// The value read.
  public let value: JSONLayout.Value

  public init(bytes: UnsafeRawBufferPointer, layout: JSONLayout, value: JSONLayout.Value) {
    self.bytes = bytes
    self.layout = layout
    self.value = value
  }

  /// The key and value of this object's only member: a case's name and what it carries. `nil`
  /// for anything but an object of one member.
  public func onlyMember() -> (key: JSONLayout.Value, payload: ActionBytes)? {
    guard let (key, payload) = self.layout.onlyMember(of: self.value) else { return nil }
    return (key, ActionBytes(bytes: self.bytes, layout: self.layout, value: payload))
  }

  /// Whether the key `key` is `name`.
  public func key(_ key: JSONLayout.Value, is name: StaticString) -> Bool {
    self.layout.string(key, is: name, in: self.bytes)
  }

  /// Whether this is `{}`: what a case without a payload carries.
  public var isEmptyObject: Bool {
    self.layout.memberCount(of: self.value) == 0
  }

  /// This value as the one unlabeled payload of a case, when the payload's type is a
  /// case-decoded action: written unwrapped, as clients write it, or wrapped (`{"_0":…}`), as the
  /// synthesized `Encodable` conformance writes it (and the daemon hands a worker its actions).
  /// `nil` when it is not the plain form of that action's cases.
  public func payload<Payload: CaseDecodedAction>(_ type: Payload.Type) -> Payload? {
    if let (key, wrapped) = self.onlyMember(), self.key(key, is: "_0") { return Payload.decodeCases(from: wrapped) }
    return Payload.decodeCases(from: self)
  }

  /// Any other payload: not read here; the action is decoded through `Codable`.
  public func payload<Payload>(_ type: Payload.Type) -> Payload? {
    nil
  }
}
