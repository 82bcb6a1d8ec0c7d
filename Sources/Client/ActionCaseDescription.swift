/// A case of a feature's action, as `Describe` reports it: read from the action enum's
/// declaration by the daemon.
///
/// ```swift
/// let counter = features[0].cases?.first { $0.name == "counter" }
/// counter?.payload.first?.cases?.map(\.description)
/// // ["decrTapped", "incrTapped", …, "nthPrimeResponse(n: Int, prime: Int?) (internal)", …]
/// ```
public struct ActionCaseDescription: Sendable, Equatable, Codable, CustomStringConvertible {
  /// The case's name: its key in the action's JSON.
  public var name: String
  /// Whether only the feature's effects may send it; the daemon refuses it from clients.
  public var `internal`: Bool
  /// The case's associated values, in order.
  public var payload: [ActionPayloadDescription]

  public init(name: String, internal: Bool = false, payload: [ActionPayloadDescription] = []) {
    self.name = name
    self.internal = `internal`
    self.payload = payload
  }

  /// The case as declared, such as `nthPrimeResponse(n: Int, prime: Int?)`, and `(internal)`
  /// after an internal one.
  public var description: String {
    let declaration = self.payload.isEmpty ? self.name : "\(self.name)(\(self.payload.map(\.description).joined(separator: ", ")))"
    return self.internal ? "\(declaration) (internal)" : declaration
  }
}

/// An associated value of an action case, as `Describe` reports it.
///
/// In the action's JSON, a case without associated values is `{}`, one unlabeled value stands
/// for itself (`{"deleteFavoritePrimes": [0]}`), and several are an object keyed by label
/// (`{"nthPrimeResponse": {"n": 3, "prime": 5}}`; `_0`, `_1`… for unlabeled ones).
public struct ActionPayloadDescription: Sendable, Equatable, Codable, CustomStringConvertible {
  /// The label, when the declaration gives one.
  public var label: String?
  /// The Swift type as declared, such as `Int?` or `Counter.Action`.
  public var type: String
  /// The type's cases when it is an action itself.
  public var cases: [ActionCaseDescription]?

  public init(label: String? = nil, type: String, cases: [ActionCaseDescription]? = nil) {
    self.label = label
    self.type = type
    self.cases = cases
  }

  /// `label: Type`, or `Type`.
  public var description: String {
    self.label.map { "\($0): \(self.type)" } ?? self.type
  }
}
