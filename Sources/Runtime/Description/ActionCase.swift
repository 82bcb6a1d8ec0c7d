/// One case of an action enum, as ``DescribedAction()`` reads it from the declaration: its name
/// and its associated values.
///
/// ```swift
/// case nthPrimeResponse(n: Int, prime: Int?)
/// // ActionCase("nthPrimeResponse", payload: [
/// //   ActionPayload(label: "n", type: Int.self, typeName: "Int"),
/// //   ActionPayload(label: "prime", type: Int?.self, typeName: "Int?"),
/// // ])
/// ```
public struct ActionCase: Sendable, Equatable, CustomStringConvertible {
  /// The case's name, which is also its key in the action's JSON.
  public let name: String
  /// The case's associated values, in order; empty for a case without one.
  public let payload: [ActionPayload]

  public init(_ name: String, payload: [ActionPayload] = []) {
    self.name = name
    self.payload = payload
  }

  /// The case as it is declared: `decrTapped`, `deleteFavoritePrimes(IndexSet)`,
  /// `nthPrimeResponse(n: Int, prime: Int?)`.
  public var description: String {
    self.payload.isEmpty ? self.name : "\(self.name)(\(self.payload.map(\.description).joined(separator: ", ")))"
  }
}

/// One associated value of an action case: its label, and its type.
public struct ActionPayload: Sendable, Equatable, CustomStringConvertible {
  /// The label, when the declaration gives one (`n` in `nthPrimeResponse(n: Int, prime: Int?)`).
  public let label: String?
  /// The type as the declaration spells it: `IndexSet`, `Int?`, `Counter.Action`.
  public let typeName: String
  /// The type itself.
  public let type: any Any.Type

  public init(label: String? = nil, type: any Any.Type, typeName: String) {
    self.label = label
    self.type = type
    self.typeName = typeName
  }

  /// The cases of the payload's type when it is a described action itself, as `Counter.Action`
  /// is in `case counter(Counter.Action)`; `nil` for any other type.
  public var actionCases: [ActionCase]? {
    (self.type as? any DescribedAction.Type)?.actionCases
  }

  /// `label: Type`, or `Type` without a label.
  public var description: String {
    self.label.map { "\($0): \(self.typeName)" } ?? self.typeName
  }

  public static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.label == rhs.label && lhs.typeName == rhs.typeName && ObjectIdentifier(lhs.type) == ObjectIdentifier(rhs.type)
  }
}
